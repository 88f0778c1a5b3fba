# Helpers of the real-toolchain suite (tests/vm/run-toolchain), on top of the
# VM suites' lib.sh.  Runs as root in the guest booted into the Debian image
# (vmrun --rootfs), under the image's /bin/sh (dash).
#
# A case is one `tether run` of a shell script under an envelope with a
# read-only root, a writable workspace, no network (no network_egress: deny
# everything) and uid 1000, as an agent's command would run.  A case that
# must work passes only when the command succeeded, what it made is right,
# and the run's audit stream holds no denial of any kind (see clean_stream).
. /opt/tether-tests/suite/lib.sh

TC=/opt/tether-tests/toolchain
WSROOT=/srv/ws		# workspaces: /srv/ws/CASE, made by tether for uid 1000
INPUT=/srv/input	# read-only inputs, made by root before the runs
CTL=/srv/ctl		# root's signals to running runs (readable, not writable, by them)
DIST=/usr/local/share/tether-tests/dist	# the image's wheel and sdist
mkdir -p "$WSROOT" "$INPUT" "$CTL"
chmod 0755 "$WSROOT" "$INPUT" "$CTL"

# How an envelope names executable trees.  The system trees as the default
# executable set has them (policyc: /usr /bin /sbin /lib /lib32 /lib64
# /libx32 /opt), written out: valid before and after issue 14 part 2.
EXEC_SYSTEM_TREES='"/usr/**", "/bin/**", "/sbin/**", "/lib/**", "/lib32/**", "/lib64/**", "/libx32/**", "/opt/**"'
# The keywords issue 14 part 2 adds (being built): the system trees, and
# the run's private temporary directory.  Change them here if they end up
# spelt otherwise.
EXEC_KW_SYSTEM='"@system"'
EXEC_KW_TMP='"@tmp"'

# tc_envelope FILE WORKSPACE [EXEC_ENTRIES] [FILESYSTEM_YAML]: the case's
# envelope.  EXEC_ENTRIES (a flow list's items) replace the default
# executable set; FILESYSTEM_YAML is more keys of filesystem, indented by
# four spaces.  The wall clock only ends a hung case before the boot's
# timeout: no case comes near it.
tc_envelope() {
	{
		cat <<EOT
sandbox:
  identity: {uid: 1000, gid: 1000}
  filesystem:
    root: read_only
    workspace: {path: $2}
EOT
		[ -z "${3:-}" ] || echo "    exec: [$3]"
		[ -z "${4:-}" ] || printf '%s\n' "$4"
		cat <<EOT
  resources:
    wall_clock: 10m
EOT
	} >"$1"
}

# env_for ID [EXEC_ENTRIES] [FILESYSTEM_YAML]: the envelope of case ID, with
# the workspace $WSROOT/ID; sets WS and ENV.
env_for() {
	WS=$WSROOT/$1 ENV=$T/$1.yaml
	tc_envelope "$ENV" "$WS" "${2:-}" "${3:-}"
}
# A workspace that is also executable: the system trees plus the workspace.
WS_EXEC="$EXEC_SYSTEM_TREES, \"**\""

# tc_run ID ENVELOPE CASE [ARGS...]: runs cases/CASE.sh with `sh -eu` and
# ARGS as one run; RC is tether's exit status, the run's output is in
# $T/ID.out, its audit stream in $T/ID.audit, its start time in STARTED.
# TC_TETHER replaces tether for the control (unconfined-run).
tc_run() {
	id=$1 env=$2 case=$3
	shift 3
	rm -f "$T/$id.audit" "$T/$id.out"
	STARTED=$(date +%s)
	${TC_TETHER:-tether} run --envelope "$env" --run-id "$id" --audit "$T/$id.audit" -- \
		/bin/sh -eu "$TC/cases/$case.sh" "$@" >"$T/$id.out" 2>&1 </dev/null
	RC=$?
}

# denials AUDIT: the stream's denials: every record that says deny or
# would_deny, whatever its kind (files, processes, network, DNS), without
# the fields that change from boot to boot.
denials() {
	[ -f "$1" ] && normalize "$1" | grep -E '"decision":"(deny|would_deny)"'
}

# clean_stream AUDIT: the stream holds no denial, ends with an end record,
# lost no record and dropped no packet at ingress (a drop is a denial too,
# only counted, not recorded); WHY says what was wrong.
clean_stream() {
	WHY=
	if denials "$1" >/dev/null; then
		WHY="$(denials "$1" | wc -l) denial record(s)"
	elif ! grep -q '"event":"end"' "$1"; then
		WHY="no end record"
	elif ! grep -q '"event":"end".*"audit_lost":0[,}]' "$1"; then
		WHY="records lost: $(grep -o '"audit_lost":[0-9]*' "$1")"
	elif grep '"event":"end"' "$1" | grep -q '"ingress_dropped":[1-9]'; then
		WHY="packets dropped at ingress: $(grep -o '"ingress_dropped":[0-9]*' "$1")"
	fi
	[ -z "$WHY" ]
}

# show_run ID: what a failing case's run said: the end of its output, its
# denial records (all of them, up to 12), its end record.
show_run() {
	if [ -s "$T/$1.out" ]; then
		echo "  output (last 15 lines):"
		tail -n 15 "$T/$1.out" | sed 's/^/    | /'
	fi
	if denials "$T/$1.audit" >/dev/null; then
		echo "  denial records ($(denials "$T/$1.audit" | wc -l)):"
		denials "$T/$1.audit" | head -n 12 | sed -E 's/"run_id":"[^"]*",//; s/^/    /'
	fi
	grep '"event":"end"' "$T/$1.audit" 2>/dev/null | sed -E 's/"time":"[^"]*",//; s/^/  end: /'
}

# works NAME ID ENVELOPE CHECK CASE [ARGS...]: a case that must work.
# Passes when the run exits 0, CHECK (shell commands root runs afterwards,
# each of which must succeed; empty for none) succeeds and the stream is
# clean.
works() {
	name=$1 wid=$2 wenv=$3 check=$4
	shift 4
	tc_run "$wid" "$wenv" "$@"
	took=$(($(date +%s) - STARTED))
	# Each line of CHECK must hold: set -e, in a subshell that is not a
	# condition (where -e would be ignored), with this file's functions.
	check_rc=0
	if [ -n "$check" ]; then
		(set -eu; eval "$check") >"$T/$wid.check" 2>&1
		check_rc=$?
	fi
	if [ "$RC" -ne 0 ]; then
		fail "$name (${took} s)" "tether run exited $RC"
		show_run "$wid"
	elif [ "$check_rc" -ne 0 ]; then
		fail "$name (${took} s)" "the result is wrong: $check"
		sed 's/^/    check| /' "$T/$wid.check"
		show_run "$wid"
	elif ! clean_stream "$T/$wid.audit"; then
		fail "$name (${took} s)" "it worked, but the stream is not clean: $WHY"
		show_run "$wid"
	else
		pass "$name (${took} s)"
	fi
}

# make_input_repo OWNER: $INPUT/upstream.git, a bare repository with one
# commit, owned by OWNER (a uid); sets UPSTREAM_HEAD.
make_input_repo() {
	rm -rf "$INPUT/upstream.git" "$T/upstream"
	git init -q -b main "$T/upstream"
	echo "upstream readme" >"$T/upstream/README"
	git -C "$T/upstream" add README
	git -C "$T/upstream" -c user.name=Root -c user.email=root@example.org commit -q -m upstream
	git clone -q --bare "$T/upstream" "$INPUT/upstream.git"
	chown -R "$1:$1" "$INPUT/upstream.git"
	UPSTREAM_HEAD=$(upstream_rev main)
}

# upstream_rev REF: REF of the input repository, read by root (who does not
# own it: safe.directory).
upstream_rev() {
	git -c safe.directory='*' -C "$INPUT/upstream.git" rev-parse -q --verify "$1"
}

# denied_record AUDIT OP PATH: the stream holds a deny record of OP on PATH.
denied_record() {
	denials "$1" | grep -F "\"op\":\"$2\"" | grep -qF "\"path\":\"$3\""
}
