# Helpers for the daemon suites (busybox sh), after lib.sh.
SOCK=/run/tether/tether.sock
AS=

# api METHOD /PATH [CURL ARGS...]: one API call; prints the status code, the
# body is in $T/api.body.  scripts/api-check matches these lines against
# docs/api.yaml: keep each call on one line, "api METHOD /path".  A call that
# gets no whole answer in 300 s (a --max-time in ARGS overrides) prints 000:
# a daemon that hangs fails the case instead of stalling the boot.
api() {
	m=$1 p=$2
	shift 2
	$AS curl -s --max-time 300 -w '%{stderr}%{http_code}' --unix-socket "$SOCK" -X "$m" "$@" "http://localhost$p" \
		> "$T/api.body" 2> "$T/api.code"
	cat "$T/api.code"
}

# as_user UID GID GROUPS|"" api ...: the call as another user.
as_user() {
	AS="$BIN/asuser $1 $2 ${3:--}"
	shift 3
	"$@"
	r=$?
	AS=
	return $r
}

# body ENVELOPE ARGV_JSON [EXTRA_MEMBERS]: a POST /v1/runs body.
body() {
	printf '{"envelope":"%s","argv":%s%s}\n' \
		"$(awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); printf "%s\\n", $0 }' "$1")" \
		"$2" "${3:+,$3}"
}

# start_daemon [ARGS...]: a daemon in the background ($DPID), up once its socket answers.
start_daemon() {
	"${TETHER_DAEMON_BIN:-tether}" daemon "$@" >> "$T/daemon.log" 2>&1 &
	DPID=$!
	i=0
	while [ $i -lt 300 ]; do
		[ "$(api GET /v1/health)" = 200 ] && return 0
		kill -0 $DPID 2>/dev/null || return 1
		i=$((i + 1))
		sleep 0.1
	done
	return 1
}

stop_daemon() {
	kill -TERM $DPID 2>/dev/null
	wait $DPID 2>/dev/null
}

# wait_state ID STATE: until the run's record says STATE (at most 60 s).
wait_state() {
	i=0
	while [ $i -lt 600 ]; do
		[ "$(api GET "/v1/runs/$1")" = 200 ] && grep -q "\"state\":\"$2\"" "$T/api.body" && return 0
		i=$((i + 1))
		sleep 0.1
	done
	return 1
}
