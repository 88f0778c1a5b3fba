#!/bin/sh
# The process tree and its limits, end to end: a run's whole tree stays in
# its cgroup, gets only its identity, cannot touch the controller or the rest
# of the host, and dies at the end however it ends.  Every case asserts the
# exit status of tether run, the end record's reason (and budget), the exact
# record of any denial, a verified cleanup record, and that nothing of the
# run is left: its cgroup, its /run/tether/runs file, its private trees, its entry
# in the pinned runs map, any process carrying the case's marker.  After
# every bomb a fresh small run must still succeed.  Runs inside the VM as
# root: tests/vm/run-suite.
. /ext/suite/lib.sh

P=$BIN/procprobe
EXE=$BIN/procprobe
WS=/srv/pws			# root's: the root-identity runs
NWS=/srv/pws-nobody		# made by tether for the default identity (65534)
mkdir -p "$WS"
CG=/sys/fs/cgroup/tether

# penv FILE WORKSPACE IDENTITY RESOURCES [EXTRA]: an envelope.  IDENTITY is a
# flow map ("" for the default), RESOURCES lines "key: value" ("" for none),
# EXTRA more lines under sandbox: (already indented).
penv() {
	{
		echo "sandbox:"
		[ -n "$3" ] && echo "  identity: $3"
		[ -n "$5" ] && printf '%s\n' "$5"
		echo "  filesystem:"
		echo "    root: read_only"
		echo "    workspace:"
		echo "      path: $2"
		if [ -n "$4" ]; then
			echo "  resources:"
			printf '%s\n' "$4" | sed 's/^/    /'
		fi
	} > "$1"
}
ROOT='{uid: 0, gid: 0}'
penv "$T/p-root.yaml" "$WS" "$ROOT" ""
penv "$T/p-bomb.yaml" "$WS" "$ROOT" "memory_bytes: 32MiB
process_count: 16"
penv "$T/p-limits.yaml" "$WS" "$ROOT" "cpu: 0.5
memory_bytes: 32MiB
process_count: 16"
penv "$T/p-wall.yaml" "$WS" "$ROOT" "wall_clock: 2s"
penv "$T/p-lease.yaml" "$WS" "$ROOT" "wall_clock: 1h" "  cleanup: {lease: 2s}"
penv "$T/p-out.yaml" "$WS" "$ROOT" "output_bytes: 10000"
penv "$T/p-files.yaml" "$WS" "$ROOT" "open_files: 16"
penv "$T/p-outwall.yaml" "$WS" "$ROOT" "output_bytes: 16MiB
wall_clock: 2s"
penv "$T/p-nobody.yaml" "$NWS" "" "open_files: 64" "  environment: [KEEP_ME]"
penv "$T/p-1234.yaml" "$NWS" "{uid: 1234, gid: 4321}" ""
ENV=$T/p-root.yaml

# prun ID CMD...: CMD in a fresh run under $ENV.  RC is tether's exit status;
# $T/ID.out and $T/ID.err its stdout and stderr, $T/ID.audit the stream.
prun() {
	id=$1
	shift
	rm -f "$T/$id.audit" "$T/$id.out" "$T/$id.err"
	tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$@" \
		>"$T/$id.out" 2>"$T/$id.err"
	RC=$?
}

# field ID EVENT NAME: a numeric field of the run's EVENT record.
field() {
	grep "\"event\":\"$2\"" "$T/$1.audit" | sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}

# verify ID EXIT REASON BUDGET MARKER: sets WHY to what is wrong, "" when
# tether exited EXIT, the end record says REASON (and BUDGET, or none), the
# cleanup record says everything was verified, and nothing of the run is
# left on the host.  MARKER ("" for none) must be in no process's argv.
verify() {
	v_id=$1 v_rc=$2 v_reason=$3 v_budget=$4 v_mark=$5
	WHY=
	[ "$RC" = "$v_rc" ] || WHY="$WHY tether exited $RC, not $v_rc;"
	v_end=$(grep '"event":"end"' "$T/$v_id.audit")
	echo "$v_end" | grep -qE "\"cleanup_verified\":true,\"reason\":\"$v_reason\"(,|\})" ||
		WHY="$WHY end record is not reason $v_reason with a verified cleanup: $v_end;"
	if [ -n "$v_budget" ]; then
		echo "$v_end" | grep -qF "\"budget\":\"$v_budget\"" || WHY="$WHY end record lacks budget $v_budget;"
	elif echo "$v_end" | grep -qF '"budget"'; then
		WHY="$WHY end record names a budget;"
	fi
	grep -qE '"event":"cleanup","killed":[0-9]+,"duration_us":[0-9]+,"tree_empty":true,"map_entries_removed":true,"cgroup_removed":true,"tmpdir_removed":true,"verified":true\}' "$T/$v_id.audit" ||
		WHY="$WHY cleanup record: $(grep '"event":"cleanup"' "$T/$v_id.audit");"
	[ -e "$CG/$v_id" ] && WHY="$WHY $CG/$v_id is left;"
	[ -e "/run/tether/runs/$v_id" ] && WHY="$WHY /run/tether/runs/$v_id is left;"
	v_cgid=$(sed -n 's/.*"event":"start".*"cgroup_id":\([0-9]*\).*/\1/p' "$T/$v_id.audit")
	if [ -z "$v_cgid" ]; then
		WHY="$WHY no start record with a cgroup_id;"
	elif ! "$BIN/runsmap" "$v_cgid" >/dev/null 2>"$T/runsmap.err"; then
		WHY="$WHY the runs map still holds cgroup $v_cgid (or cannot be read): $(cat "$T/runsmap.err");"
	fi
	if [ -n "$v_mark" ] && ! "$P" ok pgrep "$v_mark" >"$T/pgrep.out" 2>/dev/null; then
		WHY="$WHY processes of the run live on: $(cat "$T/pgrep.out");"
		# keep the next cases clean
		for v_pid in $(cut -d: -f1 "$T/pgrep.out"); do kill -9 "$v_pid" 2>/dev/null; done
	fi
	[ -z "$WHY" ]
}

# report NAME: pass, or fail with WHY and the run's streams.
report() {
	if [ -z "$WHY" ]; then
		pass "$1"
	else
		fail "$1" "$WHY"
		[ -n "$id" ] && for f in audit out err; do
			[ -s "$T/$id.$f" ] && { echo "  $id.$f:"; head -c 3000 "$T/$id.$f" | sed 's/^/    /'; echo; }
		done
	fi
}

# healthy SLUG NAME: a fresh small run right after a bomb succeeds and leaves nothing.
healthy() {
	ENV=$T/p-root.yaml
	prun "h-$1" /bin/true
	verify "h-$1" 0 succeeded "" ""
	report "after $2 the host still runs a fresh run"
}

# forbidden ID OP [UID] [SEQ]: the normalized record of an operation no rule grants.
forbidden() {
	echo "{\"seq\":${4:-2},\"run_id\":\"$1\",\"kind\":\"$(kind_of "$2")\",\"op\":\"$2\",\"path\":\"\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":${3:-0},\"comm\":\"procprobe\",\"exe\":\"$EXE\"}"
}

# capref ID CAP [UID] [SEQ]: the record of a capability check the capability
# module refused (before any BPF-LSM hook runs).
capref() {
	echo "{\"seq\":${4:-2},\"run_id\":\"$1\",\"kind\":\"capability\",\"op\":\"capability\",\"path\":\"$2\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":${3:-0},\"comm\":\"procprobe\",\"exe\":\"$EXE\"}"
}

# denials ID: how many deny records the run's stream holds.
denials() {
	grep -c '"decision":"deny"' "$T/$1.audit"
}

# attack NAME ID RECORD PROBE_ARGS...: procprobe (EXPECT first in
# PROBE_ARGS) as the first process of a root-identity run, whose parent is
# the controller.  The probe must see its errno (exit 0), the controller
# must survive and end the run succeeded, and the stream must hold RECORD
# as its only denial (RECORD "": no denial at all).
attack() {
	a_name=$1 a_id=$2 a_rec=$3
	shift 3
	ENV=$T/p-root.yaml
	prun "$a_id" "$P" "$@"
	verify "$a_id" 0 succeeded "" ""
	[ "$RC" -eq 0 ] || WHY="$WHY probe: $(grep procprobe: "$T/$a_id.err");"
	if [ "$a_rec" = ANY-EPERM ]; then
		[ "$(denials "$a_id")" -eq 1 ] && grep -q '"decision":"deny","errno":"EPERM"' "$T/$a_id.audit" ||
			WHY="$WHY $(denials "$a_id") denials, not one EPERM record;"
	elif [ "${a_rec#RE:}" != "$a_rec" ]; then
		# RE:PATTERN, an extended regex over the whole normalized record
		normalize "$T/$a_id.audit" | grep -qxE "${a_rec#RE:}" || WHY="$WHY no record matches ${a_rec#RE:};"
		[ "$(denials "$a_id")" -eq 1 ] || WHY="$WHY $(denials "$a_id") denials, not 1;"
	elif [ -n "$a_rec" ]; then
		expect_record "$a_name" "$T/$a_id.audit" "$a_rec" >/dev/null ||
			WHY="$WHY record missing: $a_rec;"
		[ "$(denials "$a_id")" -eq 1 ] || WHY="$WHY $(denials "$a_id") denials, not 1;"
	elif [ "$(denials "$a_id")" -ne 0 ]; then
		WHY="$WHY unexpected denials;"
	fi
	report "$a_name"
}

# wait_live ID: until the run's cgroup has a process (at most 10 s).
wait_live() {
	w=0
	while [ ! -s "$CG/$1/cgroup.procs" ] && [ $w -lt 200 ]; do sleep 0.05; w=$((w + 1)); done
	[ -s "$CG/$1/cgroup.procs" ]
}

"$BIN/runsmap" >/dev/null 2>&1
[ $? -le 1 ] || "$BIN/runsmap"	# shows why when the pins cannot be read yet (no run so far)

# --- identity: what the run's first process is -----------------------------
ENV=$T/p-nobody.yaml
exec 5</etc/passwd
prun id1 "$P" - ids
exec 5<&-
want="Uid=65534 65534 65534 65534 Gid=65534 65534 65534 65534 Groups= CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2 core=0/0 nofile=64/64 fds=0,1,2"
verify id1 0 succeeded "" ""
[ "$(cat "$T/id1.out")" = "$want" ] || WHY="$WHY got '$(cat "$T/id1.out")';"
[ "$(denials id1)" -eq 0 ] || WHY="$WHY denials;"
report "default identity: uid/gid 65534, no groups, no capabilities, no_new_privs, seccomp, core 0, nofile, fd 5 not inherited"

ENV=$T/p-1234.yaml
prun id2 "$P" - ids
verify id2 0 succeeded "" ""
case "$(cat "$T/id2.out")" in
"Uid=1234 1234 1234 1234 Gid=4321 4321 4321 4321 Groups= CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2 core=0/0 "*) ;;
*) WHY="$WHY got '$(cat "$T/id2.out")';" ;;
esac
report "identity {uid: 1234, gid: 4321}: exactly those ids, nothing else"

ENV=$T/p-nobody.yaml
export GITHUB_TOKEN=ghp_tethersecret1 AWS_SECRET_ACCESS_KEY=awstethersecret2 KEEP_ME=kept \
	LD_PRELOAD=/srv/evil.so HOME=/root
prun env1 "$P" - env
unset GITHUB_TOKEN AWS_SECRET_ACCESS_KEY KEEP_ME LD_PRELOAD
verify env1 0 succeeded "" ""
grep -q 'ghp_tethersecret1\|awstethersecret2\|LD_PRELOAD' "$T/env1.out" && WHY="$WHY a credential reached the run;"
grep -q 'ghp_tethersecret1\|awstethersecret2' "$T/env1.audit" "$T/env1.err" && WHY="$WHY a credential value is in the records;"
grep -qx 'KEEP_ME=kept' "$T/env1.out" || WHY="$WHY the listed KEEP_ME is missing;"
grep -qx "HOME=/run/tether/home" "$T/env1.out" || WHY="$WHY HOME is not the run's own;"
grep -qx "TMPDIR=/tmp" "$T/env1.out" || WHY="$WHY TMPDIR is not the run's /tmp;"
others=$(grep -v -e '^PATH=' -e '^LANG=' -e '^LANGUAGE=' -e '^LC_' -e '^TERM=' -e '^TZ=' -e '^HOME=' \
	-e '^TMPDIR=' -e '^KEEP_ME=' "$T/env1.out")
[ -z "$others" ] || WHY="$WHY variables beyond the allow list: $others;"
report "the environment: credentials dropped, listed names kept, HOME and TMPDIR the run's"

outer_key=$("$P" - keyring 2>/dev/null)
prun key1 "$P" - keyring
verify key1 0 succeeded "" ""
inner_key=$(cat "$T/key1.out")
case "$inner_key" in '' | *[!0-9]*) WHY="$WHY no keyring id in the run: '$inner_key' $(cat "$T/key1.err");" ;; esac
[ "$inner_key" != "$outer_key" ] || WHY="$WHY the run shares the controller's session keyring $outer_key;"
report "a fresh session keyring ($inner_key, the controller's is $outer_key)"

# setuid-root and file-capability binaries in an exec-allowed tree (/opt;
# the workspace is not executable), prepared by root outside the run.
mkdir -p /opt/tether-suid
cp "$P" /opt/tether-suid/suid && chown 0:0 /opt/tether-suid/suid && chmod 6755 /opt/tether-suid/suid
cp "$P" /opt/tether-suid/fcap && chmod 755 /opt/tether-suid/fcap
cp "$P" /opt/tether-suid/fcap-aware && chmod 755 /opt/tether-suid/fcap-aware
"$P" ok setfcap /opt/tether-suid/fcap 2>/dev/null && "$P" ok setfcap /opt/tether-suid/fcap-aware noeff 2>/dev/null ||
	fail "setfcap" "could not give the file capabilities"
zero_caps="CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1"
prun su1 /opt/tether-suid/suid - ids
verify su1 0 succeeded "" ""
case "$(cat "$T/su1.out")" in
"Uid=65534 65534 65534 65534 Gid=65534 65534 65534 65534 Groups= $zero_caps "*) ;;
*) WHY="$WHY got '$(cat "$T/su1.out")' $(cat "$T/su1.err");" ;;
esac
report "a setuid-root, setgid-root binary gains nothing (ids stay 65534, no capabilities)"
# A "legacy" file-capability binary (effective bit) that cannot have every
# capability it names is refused by execve itself (EPERM,
# security/commoncap.c): the bounding set is empty, so it never runs.
for who in nobody root; do
	ENV=$T/p-$who.yaml
	prun "fc-$who" /opt/tether-suid/fcap - ids
	verify "fc-$who" 126 failed "" ""
	[ ! -s "$T/fc-$who.out" ] || WHY="$WHY it ran: $(cat "$T/fc-$who.out");"
	grep -qx "tether run: cannot execute /opt/tether-suid/fcap: Operation not permitted" "$T/fc-$who.err" ||
		WHY="$WHY stderr: $(cat "$T/fc-$who.err");"
	report "a binary with every file capability (effective) is not executed, EPERM (126; $who run)"
	[ $who = nobody ] && u="65534 65534 65534 65534" g="65534 65534 65534 65534" || u="0 0 0 0" g="0 0 0 0"
	prun "fa-$who" /opt/tether-suid/fcap-aware - ids
	verify "fa-$who" 0 succeeded "" ""
	case "$(cat "$T/fa-$who.out")" in
	"Uid=$u Gid=$g Groups= $zero_caps "*) ;;
	*) WHY="$WHY got '$(cat "$T/fa-$who.out")' $(cat "$T/fa-$who.err");" ;;
	esac
	report "a binary with every file capability (permitted only) gains none ($who run)"
done
ENV=$T/p-nobody.yaml
prun su2 "$P" EPERM setuid 0
verify su2 0 succeeded "" ""
# Refused CAP_SETUID/CAP_SETGID checks are not recorded: setuid(getuid())
# makes one before the unprivileged path on every BusyBox applet's start.
[ "$(denials su2)" -eq 0 ] || WHY="$WHY records: $(grep deny "$T/su2.audit");"
report "setuid(0) from uid 65534 fails EPERM"

# --- bombs ------------------------------------------------------------------
ENV=$T/p-bomb.yaml
prun fb "$P" - forkbomb mk-fb
verify fb 125 budget_exhausted process_count mk-fb
grep -qx 'fork refused: EAGAIN' "$T/fb.out" || WHY="$WHY the probe saw no EAGAIN: $(cat "$T/fb.out");"
k=$(field fb cleanup killed)
[ "${k:-0}" -ge 2 ] || WHY="$WHY cleanup killed ${k:-?} processes;"
report "fork bomb under process_count 16: EAGAIN, then budget_exhausted/process_count (125), all killed ($k)"
healthy fb "the fork bomb"

ENV=$T/p-bomb.yaml
prun tb "$P" - threadbomb mk-tb
verify tb 125 budget_exhausted process_count mk-tb
grep -qx 'threads created: 15, then EAGAIN' "$T/tb.out" || WHY="$WHY got '$(cat "$T/tb.out")';"
report "thread bomb: threads count in pids.max (15 beside the main thread), then 125/process_count"
healthy tb "the thread bomb"

ENV=$T/p-bomb.yaml
prun mb "$P" - membomb mk-mb
verify mb 125 budget_exhausted memory_bytes mk-mb
report "memory bomb under memory_bytes 32MiB: OOM kill, budget_exhausted/memory_bytes (125)"
healthy mb "the memory bomb"

# The limits as the kernel holds them, read while a run is live.
ENV=$T/p-limits.yaml
tether run --envelope "$ENV" --run-id lim --audit "$T/lim.audit" -- "$P" - linger mk-lim \
	>"$T/lim.out" 2>"$T/lim.err" &
bg=$!
WHY=
if wait_live lim; then
	got="$(cat $CG/lim/cpu.max) | $(cat $CG/lim/memory.max) | $(cat $CG/lim/memory.swap.max) | $(cat $CG/lim/memory.oom.group) | $(cat $CG/lim/pids.max)"
	[ "$got" = "50000 100000 | 33554432 | 0 | 1 | 16" ] || WHY="$WHY cgroup files: $got;"
else
	WHY="$WHY the run never went live;"
fi
kill -TERM $bg
wait $bg
RC=$?
id=lim
verify lim 130 cancelled "" mk-lim
report "cpu 0.5 -> cpu.max 50000 100000, memory.max, swap.max 0, oom.group 1, pids.max 16; SIGTERM cancels (130)"

# --- a tree that outlives its first process, or the clock --------------------
ENV=$T/p-wall.yaml
t0=$(date +%s)
prun wc1 "$P" - linger mk-wc1
t1=$(date +%s)
verify wc1 124 timed_out "" mk-wc1
[ $((t1 - t0)) -le 10 ] || WHY="$WHY it took $((t1 - t0)) s;"
report "wall_clock 2s on a process that ignores SIGTERM: timed_out (124), killed"

prun wc2 "$P" - daemonize mk-wc2 linger
verify wc2 124 timed_out "" mk-wc2
k=$(field wc2 cleanup killed)
[ "${k:-0}" -ge 2 ] || WHY="$WHY cleanup killed ${k:-?}, not both;"
report "a setsid double-forked daemon does not outlive wall_clock (timed_out, killed $k)"

# cleanup.lease: the run's whole life, whatever wall_clock allows
ENV=$T/p-lease.yaml
prun ls1 "$P" - daemonize mk-ls1 linger
verify ls1 124 timed_out lease mk-ls1
grep -q '"event":"start".*"lease_ms":2000' "$T/ls1.audit" || WHY="$WHY the start record lacks lease_ms 2000;"
report "cleanup.lease 2s under wall_clock 1h: timed_out (124) with budget lease, the daemonized tree killed"

# main exits 0 while a daemon keeps running, holding the output pipes open
ENV=$T/p-out.yaml
t0=$(date +%s)
prun dm1 "$P" ok daemonize mk-dm1 exit
t1=$(date +%s)
verify dm1 0 succeeded "" mk-dm1
k=$(field dm1 cleanup killed)
[ "${k:-0}" -ge 1 ] || WHY="$WHY cleanup killed ${k:-?};"
[ $((t1 - t0)) -le 10 ] || WHY="$WHY it took $((t1 - t0)) s;"
report "main exits 0, a daemon holding the output pipes lives on: succeeded, daemon killed ($k)"

ENV=$T/p-root.yaml
for how in clone-parent vfork-linger subreaper; do
	prun "lv-$how" "$P" ok "$how" "mk-$how"
	verify "lv-$how" 0 succeeded "" "mk-$how"
	k=$(field "lv-$how" cleanup killed)
	[ "${k:-0}" -ge 1 ] || WHY="$WHY cleanup killed ${k:-?};"
	[ "$(denials "lv-$how")" -eq 0 ] || WHY="$WHY denials;"
	report "a process left by $how dies with the run (killed $k)"
done

# --- the boundary's own files: the cgroup tree ------------------------------
# cgfile NAME ID PATH CONTENT: writing PATH fails EACCES, recorded as
# protected (a kernel control file system, whatever the rules say).
cgfile() {
	c_rec="{\"seq\":2,\"run_id\":\"$2\",\"kind\":\"fs\",\"op\":\"open_write\",\"path\":\"$3\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"uid\":0,\"comm\":\"procprobe\",\"exe\":\"$EXE\"}"
	attack "$1" "$2" "$c_rec" EACCES write "$3" "$4"
}
# pcgfile NAME ID PATH CONTENT: the same for a file of the parent, which is
# also a protected path rule of every run (no run may read the other runs')
pcgfile() {
	c_rec="RE:\{\"seq\":2,\"run_id\":\"$2\",\"kind\":\"fs\",\"op\":\"open_write\",\"path\":\"$3\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"rule\":[0-9]+,\"rule_path\":\"$CG\",\"uid\":0,\"comm\":\"procprobe\",\"exe\":\"$EXE\"\}"
	attack "$1" "$2" "$c_rec" EACCES write "$3" "$4"
}
pcgfile "write the parent's cgroup.procs (leave the run)" cg1 $CG/cgroup.procs 0
cgfile "write the root's cgroup.procs" cg2 /sys/fs/cgroup/cgroup.procs 0
cgfile "write the run's own cgroup.procs" cg3 $CG/cg3/cgroup.procs 0
cgfile "write the run's cgroup.kill" cg4 $CG/cg4/cgroup.kill 1
pcgfile "write the parent's cgroup.kill (every run)" cg5 $CG/cgroup.kill 1
cgfile "write the run's cgroup.subtree_control" cg6 $CG/cg6/cgroup.subtree_control +pids
cgfile "raise the run's own pids.max" cg7 $CG/cg7/pids.max max
cgfile "raise the run's own memory.max" cg8 $CG/cg8/memory.max max
attack "mkdir in the run cgroup" cg9 \
	"{\"seq\":2,\"run_id\":\"cg9\",\"kind\":\"fs\",\"op\":\"mkdir\",\"path\":\"$CG/cg9/sub\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"uid\":0,\"comm\":\"procprobe\",\"exe\":\"$EXE\"}" \
	EACCES mkdir $CG/cg9/sub
# the parent's directory cannot even be opened now (protected): the root's can
attack "clone3(CLONE_INTO_CGROUP) with the root cgroup's fd" cg10 "$(forbidden cg10 clone_into_cgroup)" \
	EPERM clone-into-cgroup /sys/fs/cgroup

# --- the controller (the first process's parent), pid 1, the host -----------
# The suite shell is in the controller's process group: a signal that got
# through would show here.
trap 'fail "a run signalled the suite shell" "SIGTERM"' TERM
trap 'fail "a run signalled the suite shell" "SIGUSR1"' USR1
attack "kill(controller, SIGTERM)" sg1 "$(forbidden sg1 signal)" EPERM kill @ppid TERM
attack "kill(controller, SIGKILL)" sg2 "$(forbidden sg2 signal)" EPERM kill @ppid KILL
attack "kill(controller, 0) probes quietly" sg3 "" EPERM kill @ppid 0
attack "tgkill(controller, SIGTERM)" sg4 "$(forbidden sg4 signal)" EPERM tgkill @ppid TERM
attack "pidfd_send_signal(controller, SIGTERM)" sg5 "$(forbidden sg5 signal)" EPERM pidfd-kill @ppid TERM
attack "kill(1, SIGKILL)" sg6 "$(forbidden sg6 signal)" EPERM kill 1 KILL
# The guest's init leaves its descendants in process group 0: setsid gives
# the controller a group of its own (as a service manager would), and a
# member beside it.
ENV=$T/p-root.yaml
id=sg7
rm -f "$T/sg7.audit"
setsid /bin/sh -c "\"$P\" - linger mk-pgmate 2>/dev/null & exec tether run --envelope $ENV --run-id sg7 --audit $T/sg7.audit -- $P EPERM kill -@pgid TERM" >"$T/sg7.out" 2>"$T/sg7.err"
RC=$?
verify sg7 0 succeeded "" ""
"$P" ok pgrep mk-pgmate >/dev/null 2>&1 && WHY="$WHY the group member beside the controller died;"
n=$(denials sg7)
[ "$n" -eq 2 ] && [ "$(grep -c "\"op\":\"signal\",\"path\":\"\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\"" "$T/sg7.audit")" -eq 2 ] ||
	WHY="$WHY $n denials, not the two signal ones;"
report "kill(-pgid of the controller, SIGTERM): both members refused and recorded"
for v_pid in $("$P" - pgrep mk-pgmate 2>/dev/null | cut -d: -f1); do kill -9 "$v_pid"; done
# kill(-1) reports success when every target refused (kernel/signal.c): no
# outside process may receive it all the same.
"$P" - linger mk-victim 2>/dev/null &
victim=$!
prun sg8 "$P" ok kill -1 USR1
verify sg8 0 succeeded "" ""
kill -0 $victim 2>/dev/null || WHY="$WHY an outside process died of it;"
# One refusal per process outside the run, all of one key: the first in
# full, the rest one coalesced record (docs/audit.md), and the whole
# stream adds up.
n=$(denials sg8)
sig='"decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"procprobe"'
full=$(normalize "$T/sg8.audit" | grep -c "\"op\":\"signal\",\"path\":\"\",$sig")
more=$(normalize "$T/sg8.audit" | sed -n "s/.*\"op\":\"signal\",\"coalesced\":\([0-9]*\),.*\"path\":\"\",$sig.*/\1/p")
w_why=$WHY
stream_adds_up "$T/sg8.audit" || w_why="$w_why$WHY"
WHY=$w_why
[ "$n" -eq 2 ] && [ "$full" -eq 1 ] && [ "${more:-0}" -ge 2 ] ||
	WHY="$WHY $n denials ($full full signal records, a coalesced one of '$more'), not one of each;"
report "kill(-1, SIGUSR1) reaches no process outside the run ($((1 + ${more:-0})) refusals in 2 records)"
kill -9 $victim
attack "F_SETOWN(controller) + O_ASYNC (SIGIO)" sg9 "$(forbidden sg9 signal)" EPERM fsetown @ppid
id=sg10
rm -f "$T/sg10.audit"
setsid tether run --envelope "$T/p-root.yaml" --run-id sg10 --audit "$T/sg10.audit" -- "$P" EPERM fsetown -@pgid \
	>"$T/sg10.out" 2>"$T/sg10.err"
RC=$?
verify sg10 0 succeeded "" ""
expect_record sg10 "$T/sg10.audit" "$(forbidden sg10 signal)" >/dev/null && [ "$(denials sg10)" -eq 1 ] ||
	WHY="$WHY record;"
report "F_SETOWN(-controller's pgid)"
attack "PTRACE_ATTACH the controller" pt1 "$(capref pt1 cap_sys_ptrace)" EPERM ptrace-attach @ppid
attack "PTRACE_SEIZE the controller" pt2 "$(capref pt2 cap_sys_ptrace)" EPERM ptrace-seize @ppid
attack "PTRACE_ATTACH pid 1" pt3 "$(capref pt3 cap_sys_ptrace)" EPERM ptrace-attach 1
attack "process_vm_readv of the controller" pt4 "$(capref pt4 cap_sys_ptrace)" EPERM vm-readv @ppid
attack "process_vm_writev of the controller" pt5 "$(capref pt5 cap_sys_ptrace)" EPERM vm-writev @ppid
attack "pidfd_getfd of the controller's stdout" pt6 "$(capref pt6 cap_sys_ptrace)" EPERM pidfd-getfd @ppid 1
attack "kcmp with the controller" pt7 "$(capref pt7 cap_sys_ptrace)" EPERM kcmp @ppid
attack "a child of its own can be traced (PTRACE_SEIZE)" pt8 "" ok ptrace-child
ENV=$T/p-root.yaml
prun pe1 "$P" EACCES read /proc/@ppid/environ
verify pe1 0 succeeded "" ""
[ "$(denials pe1)" -eq 1 ] && grep -qE "\"op\":\"open_read\",\"path\":\"/proc/[0-9]+/environ\",\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\"" "$T/pe1.audit" ||
	WHY="$WHY record: $(grep deny "$T/pe1.audit");"
report "read the controller's /proc/PID/environ"
prun pe2 "$P" EACCES write /proc/@ppid/fd/1 x
verify pe2 0 succeeded "" ""
[ "$(denials pe2)" -eq 1 ] && expect_record pe2 "$T/pe2.audit" "$(capref pe2 cap_sys_ptrace)" >/dev/null ||
	WHY="$WHY record: $(grep deny "$T/pe2.audit");"
report "re-open the controller's stdout through /proc/PID/fd/1"
# Scheduling and limits of the controller: a uid-0 run passes the kernel's
# same-owner checks; the capability module refuses what needs the target's
# capabilities to be a subset of the caller's (nice, ioprio, scheduler,
# affinity: cap_safe_nice), but prlimit64 asks only for matching ids, so only
# an LSM stands between a root run and the controller's limits.
attack "prlimit(controller, RLIMIT_CORE)" rl1 "$(forbidden rl1 task_control 0)" EPERM prlimit @ppid
attack "setpriority(controller, 19)" rl2 "$(capref rl2 cap_sys_nice)" EPERM setpriority @ppid
attack "ioprio_set(controller, idle)" rl3 "$(capref rl3 cap_sys_nice)" EPERM ioprio @ppid
attack "sched_setscheduler(controller, SCHED_IDLE)" rl4 "$(capref rl4 cap_sys_nice)" EPERM sched-idle @ppid
attack "sched_setaffinity(controller)" rl5 "$(capref rl5 cap_sys_nice)" EPERM affinity @ppid
# A process outside every run with the run's own uid and no capabilities (as
# another run of the default identity is): the kernel's uid checks and the
# capability module let everything through, so these are the BPF-LSM's.
"$P" - as 65534 65534 linger mk-outsider 2>/dev/null &
outsider=$!
sleep 0.2
# nattack NAME ID RECORD PROBE_ARGS...: attack from a default-identity run.
nattack() {
	n_name=$1 n_id=$2 n_rec=$3
	shift 3
	ENV=$T/p-nobody.yaml
	prun "$n_id" "$P" "$@"
	verify "$n_id" 0 succeeded "" ""
	[ "$RC" -eq 0 ] || WHY="$WHY probe: $(grep procprobe: "$T/$n_id.err");"
	if [ "$n_rec" = ANY-EPERM ]; then
		[ "$(denials "$n_id")" -eq 1 ] && grep -q '"decision":"deny","errno":"EPERM"' "$T/$n_id.audit" ||
			WHY="$WHY $(denials "$n_id") denials, not one EPERM record;"
	else
		expect_record "$n_id" "$T/$n_id.audit" "$n_rec" >/dev/null && [ "$(denials "$n_id")" -eq 1 ] ||
			WHY="$WHY record missing or not the only one: $n_rec;"
	fi
	kill -0 $outsider 2>/dev/null || WHY="$WHY the outsider died;"
	report "$n_name"
}
nattack "same uid outside the run: kill(SIGTERM)" os1 "$(forbidden os1 signal 65534)" EPERM kill $outsider TERM
nattack "same uid outside the run: PTRACE_ATTACH" os2 "$(forbidden os2 ptrace 65534)" EPERM ptrace-attach $outsider
nattack "same uid outside the run: PTRACE_SEIZE" os3 "$(forbidden os3 ptrace 65534)" EPERM ptrace-seize $outsider
nattack "same uid outside the run: process_vm_readv" os4 "$(forbidden os4 ptrace 65534)" EPERM vm-readv $outsider
nattack "same uid outside the run: process_vm_writev" os5 "$(forbidden os5 ptrace 65534)" EPERM vm-writev $outsider
nattack "same uid outside the run: pidfd_getfd" os6 "$(forbidden os6 ptrace 65534)" EPERM pidfd-getfd $outsider 0
nattack "same uid outside the run: kcmp" os7 "$(forbidden os7 ptrace 65534)" EPERM kcmp $outsider
nattack "same uid outside the run: F_SETOWN + O_ASYNC" os8 "$(forbidden os8 signal 65534)" EPERM fsetown $outsider
nattack "same uid outside the run: prlimit (its RLIMIT_CORE)" os9 "$(forbidden os9 task_control 65534)" EPERM prlimit $outsider
nattack "same uid outside the run: setpriority 19" os10 "$(forbidden os10 task_control 65534)" EPERM setpriority $outsider
nattack "same uid outside the run: ioprio_set idle" os11 "$(forbidden os11 task_control 65534)" EPERM ioprio $outsider
nattack "same uid outside the run: sched_setscheduler SCHED_IDLE" os12 "$(forbidden os12 task_control 65534)" EPERM sched-idle $outsider
nattack "same uid outside the run: sched_setaffinity" os13 "$(forbidden os13 task_control 65534)" EPERM affinity $outsider
kill -9 $outsider
attack "unshare(CLONE_NEWUSER)" ns1 "$(forbidden ns1 userns_create)" EPERM unshare-user
trap - TERM USR1

# --- output_bytes -----------------------------------------------------------
# count_at FILE: how many '@' FILE holds (tether's own lines have none).
count_at() { tr -cd @ < "$1" | wc -c; }
ENV=$T/p-out.yaml
trunc_rec() { echo "{\"seq\":${3:-2},\"run_id\":\"$1\",\"kind\":\"run\",\"event\":\"output_truncated\",\"stream\":\"$2\",\"output_bytes_max\":10000}"; }
prun of1 "$P" - flood 1 0 @
verify of1 125 budget_exhausted output_bytes ""
[ "$(wc -c < "$T/of1.out")" -eq 10000 ] && [ "$(count_at "$T/of1.out")" -eq 10000 ] ||
	WHY="$WHY stdout got $(wc -c < "$T/of1.out") bytes;"
expect_record of1 "$T/of1.audit" "$(trunc_rec of1 stdout)" >/dev/null || WHY="$WHY no output_truncated record;"
grep -q '"output_bytes":10000,"output_truncated":true' "$T/of1.audit" || WHY="$WHY end record's output fields;"
report "a stdout flood: exactly output_bytes reach tether's stdout, then 125/output_bytes"

prun of2 "$P" - flood 2 0 @
verify of2 125 budget_exhausted output_bytes ""
[ "$(count_at "$T/of2.err")" -eq 10000 ] && [ ! -s "$T/of2.out" ] || WHY="$WHY stderr got $(count_at "$T/of2.err") bytes;"
expect_record of2 "$T/of2.audit" "$(trunc_rec of2 stderr)" >/dev/null || WHY="$WHY no output_truncated record;"
report "a stderr flood: exactly output_bytes reach tether's stderr, then 125/output_bytes"

prun of3 /bin/sh -c "$P - flood 1 6000 @ && $P - flood 2 6000 @; exec $P - linger mk-of3"
verify of3 125 budget_exhausted output_bytes mk-of3
[ $(($(count_at "$T/of3.out") + $(count_at "$T/of3.err"))) -eq 10000 ] ||
	WHY="$WHY stdout $(count_at "$T/of3.out") + stderr $(count_at "$T/of3.err") bytes;"
report "stdout and stderr count together: 6000 + 6000 is cut at 10000"

prun of4 "$P" - reopen-flood 0 @
verify of4 125 budget_exhausted output_bytes ""
[ "$(count_at "$T/of4.err")" -eq 10000 ] && [ ! -s "$T/of4.out" ] ||
	WHY="$WHY stdout $(wc -c < "$T/of4.out"), stderr $(count_at "$T/of4.err") bytes;"
report "stdout closed and re-opened from /proc/self/fd/2: still counted, cut at output_bytes"

# tether's own stdout is a pipe nobody reads (a stuck consumer): forwarding
# waits for room without holding up the controller, so the wall clock still
# ends the run, and the bytes that cannot go at the end are dropped.
ENV=$T/p-outwall.yaml
id=of5
rm -f "$T/stuck" "$T/of5.audit"
mkfifo "$T/stuck"
exec 7<>"$T/stuck"	# a reader that never reads: writes fill the pipe, then wait
tether run --envelope "$ENV" --run-id of5 --audit "$T/of5.audit" -- "$P" - flood 1 0 @ \
	>"$T/stuck" 2>"$T/of5.err" &
of5=$!
w=0
while kill -0 $of5 2>/dev/null && [ $w -lt 300 ]; do sleep 0.1; w=$((w + 1)); done
if kill -0 $of5 2>/dev/null; then
	kill -9 $of5
	WHY=" tether still ran 30 s after its 2 s wall clock;"
	RC=-1
else
	wait $of5
	RC=$?
	verify of5 124 timed_out "" ""
fi
exec 7<&-
report "a stuck reader of tether's stdout does not hold up the wall clock (timed_out, 124)"

# --- open_files -------------------------------------------------------------
ENV=$T/p-files.yaml
prun nf1 "$P" EMFILE nofile
verify nf1 0 succeeded "" ""
grep -qx 'opened 13, then EMFILE' "$T/nf1.out" || WHY="$WHY got '$(cat "$T/nf1.out")';"
report "open_files 16: 13 opens beside stdio, then EMFILE"
prun nf2 "$P" EPERM raise-nofile 17
verify nf2 0 succeeded "" ""
expect_record nf2 "$T/nf2.audit" "$(capref nf2 cap_sys_resource)" >/dev/null && [ "$(denials nf2)" -eq 1 ] ||
	WHY="$WHY record: $(grep deny "$T/nf2.audit");"
report "raising RLIMIT_NOFILE above open_files fails EPERM"

# --- cancellation -------------------------------------------------------------
ENV=$T/p-root.yaml
for sig in INT HUP; do
	id=c-$sig
	rm -f "$T/$id.audit"
	tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$P" - linger "mk-$id" \
		>"$T/$id.out" 2>"$T/$id.err" &
	bg=$!
	wait_live "$id"
	sleep 0.3
	kill -"$sig" $bg
	wait $bg
	RC=$?
	verify "$id" 130 cancelled "" "mk-$id"
	report "SIG$sig to tether cancels the run (130)"
done

id=kc
rm -f "$T/kc.audit"
tether run --envelope "$ENV" --run-id kc --audit "$T/kc.audit" -- "$P" - daemonize mk-kc linger \
	>"$T/kc.out" 2>"$T/kc.err" &
bg=$!
wait_live kc
sleep 0.5
tether kill kc 2>"$T/kc.kill"
krc=$?
# kill returned: the run must already be gone
WHY=
[ $krc -eq 0 ] || WHY="$WHY tether kill exited $krc: $(cat "$T/kc.kill");"
[ -e $CG/kc ] && WHY="$WHY the cgroup outlived tether kill;"
"$P" ok pgrep mk-kc >/dev/null 2>&1 || WHY="$WHY processes outlived tether kill;"
w_why=$WHY
wait $bg
RC=$?
verify kc 130 cancelled "" mk-kc
WHY="$w_why$WHY"
report "tether kill ID: exit 0 once the run is gone; the run exits 130 cancelled"

tether kill no-such-run 2>/dev/null
RC=$?
[ $RC -eq 3 ] && pass "tether kill of an unknown id exits 3" || fail "tether kill unknown" "exit $RC"

# --- other runs' cgroups: <cgroup2>/tether is protected, the run's own is readable
ENV=$T/p-root.yaml
tether run --envelope "$ENV" --run-id cgo -- "$P" - linger mk-cgo > /dev/null 2>&1 &
bg=$!
i=0
while [ ! -s $CG/cgo/cgroup.procs ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
prun cgs /bin/sh -c "$BIN/fsprobe EACCES readdir $CG && $BIN/fsprobe EACCES read $CG/cgo/cgroup.procs &&
	$BIN/fsprobe EACCES read $CG/cgo/memory.current && $BIN/fsprobe ok read $CG/cgs/cgroup.procs"
WHY=
[ "$RC" = 0 ] || WHY="$WHY tether exited $RC: $(cat "$T/cgs.out" "$T/cgs.err");"
grep -q '"op":"open_read","path":"'"$CG"'/cgo/cgroup.procs","access":"read","decision":"deny","errno":"EACCES","reason":"protected","rule":[0-9]*,"rule_path":"'"$CG"'"' "$T/cgs.audit" ||
	WHY="$WHY no protected denial of the other run's cgroup.procs: $(grep deny "$T/cgs.audit");"
tether kill cgo > /dev/null 2>&1
wait $bg
id=cgs
report "a run cannot list the run cgroups nor read another run's (cgroup.procs, memory.current), only its own"

# --- nothing is left ----------------------------------------------------------
healthy all "everything"
WHY=
n=$("$BIN/runsmap" 2>"$T/runsmap.err")
[ "$n" = 0 ] || WHY="$WHY the runs map holds $n entries: $(cat "$T/runsmap.err");"
left=$(ls -d $CG/*/ 2>/dev/null)
[ -z "$left" ] || WHY="$WHY run cgroups left: $left;"
left=$(ls /run/tether/runs 2>/dev/null)
[ -z "$left" ] || WHY="$WHY run files left: $left;"
"$P" ok pgrep mk- >"$T/pgrep.out" 2>/dev/null || WHY="$WHY processes left: $(cat "$T/pgrep.out");"
id=
report "after the suite: an empty runs map, no run cgroup, run file or marked process"

finish
