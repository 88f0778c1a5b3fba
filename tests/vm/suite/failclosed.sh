#!/bin/sh
# audit.fail_closed (issue 16, docs/audit.md "Fail-closed auditing"): with
# the run's ring full, an action that would be allowed with a record is
# refused with the errno of a denial (EACCES for exec, EPERM for connect)
# and counted in the end record's audit_refused; without fail_closed the
# same actions succeed and only audit_lost counts their records.
#
# The ring is made to fill by stopping the controller (SIGSTOP: nothing
# drains the ring) while floodprobe, inside the run, makes thousands of
# denied write-opens and connects, more records than the 1 MiB ring holds.
# Every count is exact: each denial of the flood is in the stream (a
# coalesced record for its count) or in audit_lost.
. /ext/suite/lib.sh
. /ext/suite/netlib.sh

net_setup || { fail "network topology" "net_setup failed"; finish; exit 1; }

WS=/srv/failclosed-ws
COUNT=4000
NETCOUNT=$((COUNT / 4))
mkdir -p "$WS"

# fc_envelope FILE AUDIT: the envelope, with AUDIT as its audit mapping.
fc_envelope() {
	cat > "$1" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace: {path: $WS}
  network_egress:
    default: deny
    allowed_destinations:
      - {cidr: $NET_HOSTA/32, ports: '80', protocol: tcp}
  audit: $2
EOT
}

# wait_line FILE LINE TENTHS: waits for LINE in FILE.
wait_line() {
	i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le "$3" ] || return 1
		sleep 0.1
	done
}

# end_num AUDIT FIELD: FIELD of the end record, or "none".
end_num() {
	v=$(grep '"kind":"run","event":"end"' "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p")
	echo "${v:-none}"
}

# stands_for AUDIT PATTERN: the kernel records the lines with PATTERN stand
# for: one each, a coalesced record its count.
stands_for() {
	grep -F "$2" "$1" | grep -v '"kind":"run"' | awk '
	{ if (match($0, /"coalesced":[0-9]+/)) n += substr($0, RSTART + 12, RLENGTH - 12); else n++ }
	END { print n + 0 }'
}

# flood_run ID ENVELOPE [EXEC]: floodprobe in a run whose controller is
# stopped while it floods, execs EXEC (floodprobe) and connects to hosta:80.  Sets RC,
# WHY (what went wrong with the choreography), $WS/out holds its results.
flood_run() {
	id=$1
	WHY=
	rm -f "$T/$id.audit" "$T/$id.out" "$T/$id.err" "$WS/out" "$WS/go" /etc/tether-flood
	net_clear_logs
	tether run --envelope "$2" --run-id "$id" --audit "$T/$id.audit" -- \
		"$BIN/floodprobe" "$WS" /etc/tether-flood "$COUNT" "$NET_HOSTB" \
		"${3:-$BIN/floodprobe}" "$NET_HOSTA" 80 >"$T/$id.out" 2>"$T/$id.err" &
	ctl=$!
	if ! wait_line "$WS/out" ready 300; then
		WHY="floodprobe never got ready;"
		: > "$WS/go"
	else
		kill -STOP "$ctl"
		: > "$WS/go"
		wait_line "$WS/out" end 600 || WHY="floodprobe did not finish;"
		kill -CONT "$ctl"
	fi
	wait "$ctl"
	RC=$?
	[ "$RC" = 0 ] || WHY="$WHY tether exited $RC;"
}

# counts_exact ID: every record of the flood is in the stream or in
# audit_lost, and so are the exec's and the connect's (2 more).
counts_exact() {
	a=$T/$1.audit
	fs_in=$(stands_for "$a" tether-flood)
	net_in=$(stands_for "$a" "\"address\":\"$NET_HOSTB\"")
	lost=$(end_num "$a" audit_lost)
	want=$((COUNT - fs_in + NETCOUNT - net_in + 2))
	[ "$lost" = "$want" ] ||
		WHY="$WHY audit_lost $lost, not $want ($COUNT - $fs_in fs, $NETCOUNT - $net_in net, + 2);"
	echo "  ($1: $fs_in of $COUNT denied opens and $net_in of $NETCOUNT denied connects recorded, audit_lost $lost)"
	[ "$fs_in" -lt "$COUNT" ] || WHY="$WHY the ring never filled ($fs_in of $COUNT recorded);"
	[ "$(end_num "$a" audit_records)" = "$(end_num "$a" audit_seq_last)" ] ||
		WHY="$WHY audit_records $(end_num "$a" audit_records) != audit_seq_last $(end_num "$a" audit_seq_last);"
}

# report NAME ID
report() {
	if [ -z "$WHY" ]; then
		pass "$1"
	else
		fail "$1" "$WHY"
		sed 's/^/    out: /' "$WS/out" 2>/dev/null
		grep '"kind":"run"' "$T/$2.audit" 2>/dev/null | cut -c1-700 | sed 's/^/    /'
		[ -s "$T/$2.err" ] && head -n 5 "$T/$2.err" | sed 's/^/    err: /'
	fi
}

# 1. fail_closed: the exec and the connect behind the full ring are refused.
ENV=$T/failclosed.yaml
fc_envelope "$ENV" "{fail_closed: true}"
flood_run fc1 "$ENV"
for line in "flood $COUNT EACCES" "netflood $NETCOUNT EPERM" "exec EACCES" "connect EPERM"; do
	grep -qx "$line" "$WS/out" || WHY="$WHY no \"$line\";"
done
counts_exact fc1
refused=$(end_num "$T/fc1.audit" audit_refused)
[ "$refused" = 2 ] || WHY="$WHY audit_refused $refused, not 2 (the exec and the connect);"
net_log_empty "$NET_LOG_HOSTA" || WHY="$WHY hosta saw a connection: $(cat "$NET_LOG_HOSTA");"
report "fail_closed: with the ring full an allowed exec gets EACCES, a connect EPERM, both counted in audit_refused" fc1

# 1b. fail_closed records what it allows (the start's exec, the results file).
if normalize "$T/fc1.audit" | grep -q "\"kind\":\"fs\",\"op\":\"exec\",\"path\":\"$BIN/floodprobe\",.*\"decision\":\"allow\"" &&
	normalize "$T/fc1.audit" | grep -q "\"op\":\"open_write\",\"path\":\"$WS/out\",.*\"decision\":\"allow\""; then
	pass "fail_closed records allowed execs and writes while the ring has room"
else
	fail "fail_closed records allowed execs and writes" "$(grep -c . "$T/fc1.audit") lines, none of them"
fi

# 2. The same run without fail_closed (allowed actions recorded all the
#    same): the exec and the connect succeed, their records are lost.
ENV=$T/recorded.yaml
fc_envelope "$ENV" "{record_allowed: true}"
flood_run fc2 "$ENV"
for line in "flood $COUNT EACCES" "netflood $NETCOUNT EPERM" "exec ok" "connect ok"; do
	grep -qx "$line" "$WS/out" || WHY="$WHY no \"$line\";"
done
counts_exact fc2
[ "$(end_num "$T/fc2.audit" audit_refused)" = none ] ||
	WHY="$WHY an audit_refused in a run without fail_closed;"
net_wait_log "$NET_LOG_HOSTA" . || WHY="$WHY hosta saw no connection;"
report "without fail_closed the exec and the connect succeed with the ring full, audit_lost counts their records" fc2

# 3. mode: audit lets an exec no rule grants through for its record (the
#    workspace is not executable): with fail_closed and the ring full it is
#    refused like any other action whose record cannot be written.
ENV=$T/audit-mode.yaml
fc_envelope "$ENV" "{fail_closed: true}"
echo "  mode: audit" >> "$ENV"
cp "$BIN/floodprobe" "$WS/fp"
flood_run fc4 "$ENV" "$WS/fp"
for line in "flood $COUNT EACCES" "netflood $NETCOUNT EPERM" "exec EACCES" "connect EPERM"; do
	grep -qx "$line" "$WS/out" || WHY="$WHY no \"$line\";"
done
counts_exact fc4
refused=$(end_num "$T/fc4.audit" audit_refused)
[ "$refused" = 2 ] || WHY="$WHY audit_refused $refused, not 2 (the would-deny exec and the connect);"
report "fail_closed, mode: audit: a would-deny exec whose record cannot be written gets EACCES" fc4

# 4. The same would-deny exec with room in the ring: allowed, recorded.
rm -f "$T/fc5.audit"
tether run --envelope "$ENV" --run-id fc5 --audit "$T/fc5.audit" -- "$BIN/fsprobe" ok exec \
	"$WS/fp" >"$T/fc5.out" 2>&1
RC=$?
WHY=
[ "$RC" = 0 ] || WHY="tether exited $RC: $(cat "$T/fc5.out");"
normalize "$T/fc5.audit" | grep -q "\"op\":\"exec\",\"path\":\"$WS/fp\",.*\"decision\":\"would_deny\"" ||
	WHY="$WHY no would_deny record of the exec;"
[ "$(end_num "$T/fc5.audit" audit_refused)" = 0 ] || WHY="$WHY audit_refused $(end_num "$T/fc5.audit" audit_refused), not 0;"
report "fail_closed, mode: audit, room in the ring: the would-deny exec runs, recorded" fc5

# 5. A fail_closed run whose ring never fills refuses nothing and says so.
ENV=$T/failclosed.yaml
rm -f "$T/fc3.audit"
tether run --envelope "$ENV" --run-id fc3 --audit "$T/fc3.audit" -- "$BIN/fsprobe" ok exec \
	"$BIN/fsprobe" ok nop >"$T/fc3.out" 2>&1
RC=$?
stream_adds_up "$T/fc3.audit"
[ "$RC" = 0 ] || WHY="$WHY tether exited $RC: $(cat "$T/fc3.out");"
[ "$(end_num "$T/fc3.audit" audit_refused)" = 0 ] || WHY="$WHY audit_refused $(end_num "$T/fc3.audit" audit_refused), not 0;"
report "fail_closed with room in the ring: nothing refused, audit_refused 0" fc3

finish
