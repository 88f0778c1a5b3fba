#!/bin/sh
# tether daemon, crash safety: SIGKILL while a run keeps trying a denied write
# and a denied connect (enforcement goes on, every attempt is in the stream
# after the restart), kills between journal writes (failpoints), a second
# daemon, an orphaned run cgroup, an upgrade with a live run, a run whose
# command ends while no daemon is up, a lease that ends while none is.  Runs
# inside the VM as root.
. /ext/suite/lib.sh
. /ext/suite/daemonlib.sh

WS=/srv/crash-ws
mkdir -p "$WS"
envelope "$T/k.yaml" "$WS"
rm -rf /var/lib/tether /etc/tether/daemon.yaml
ip link set lo up 2>/dev/null

# A run that tries, once a second, a write outside its workspace and a
# connect to an address no rule allows, and writes inside its workspace.
ATTEMPTS=12
cat > "$WS/attempts.sh" <<EOF
i=1
while [ \$i -le $ATTEMPTS ]; do
	$BIN/fsprobe EACCES write /etc/crash-\$i > /dev/null 2>&1
	$BIN/netprobe EPERM tcp-connect 192.0.2.1 80 > /dev/null 2>&1
	echo \$i >> $WS/progress
	i=\$((i + 1))
	sleep 1
done
EOF
rm -f "$WS/progress"

start_daemon || { fail "daemon starts" "$(cat "$T/daemon.log")"; finish; exit 0; }
body "$T/k.yaml" '["/bin/sh","'"$WS"'/attempts.sh"]' '"run_id":"crash-1"' > "$T/k1.json"
code=$(api POST /v1/runs -d @"$T/k1.json")
[ "$code" = 201 ] || fail "create crash-1" "$code $(cat "$T/api.body")"
sleep 3
kill -KILL $DPID
wait $DPID 2>/dev/null
before=$(wc -l < "$WS/progress")
sleep 4
during=$(($(wc -l < "$WS/progress") - before))
ls /etc/crash-* > /dev/null 2>&1 && escaped=yes || escaped=no
[ "$during" -ge 2 ] && [ $escaped = no ] && [ -d /sys/fs/cgroup/tether/crash-1 ] &&
	pass "daemon SIGKILLed: the run goes on ($during attempts), still confined, nothing written outside" ||
	fail "confined while down" "during=$during escaped=$escaped"
# a standalone run meanwhile sweeps the node for runs whose controller died:
# the daemon's run is not one of them, it is the next daemon's
tether run --standalone --envelope "$T/k.yaml" --run-id sweeper -- /bin/true > "$T/sweeper.log" 2>&1
rc=$?
[ $rc -eq 0 ] && [ -d /sys/fs/cgroup/tether/crash-1 ] && [ -e /run/tether/daemon-runs/crash-1 ] &&
	! grep -q 'reclaimed run .*crash-1' "$T/sweeper.log" &&
	pass "a standalone tether run while no daemon is up leaves the daemon's live run alone" ||
	fail "standalone sweep" "rc=$rc $(cat "$T/sweeper.log")"

start_daemon || fail "daemon restarts" "$(tail -n 5 "$T/daemon.log")"
grep -q 'took over 1 live runs' "$T/daemon.log" && pass "the restarted daemon takes the live run over" ||
	fail "adopt" "$(tail -n 5 "$T/daemon.log")"
wait_state crash-1 ended || fail "crash-1 ends" "$(cat "$T/api.body")"
code=$(api GET /v1/runs/crash-1)
grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"exit_status":0' "$T/api.body" &&
	grep -q '"adopted":\[{"gap_ms":' "$T/api.body" && grep -q '"cleanup":{"verified":true' "$T/api.body" &&
	[ ! -e /run/tether/daemon-runs/crash-1 ] &&
	pass "after the restart the run ends normally: succeeded, exit 0 (from the kernel), cleanup verified, its mark gone" ||
	fail "crash-1 end" "$(cat "$T/api.body")"
api GET "/v1/runs/crash-1/records" > /dev/null
cp "$T/api.body" "$T/crash-1.records"
writes=$(grep -c '"op":"create","path":"/etc/crash-[0-9]*","access":"write","decision":"deny"' "$T/crash-1.records")
conns=$(grep -c '"kind":"net","op":"connect".*"decision":"deny"' "$T/crash-1.records")
seqs=$(sed -n 's/^{"schema_version":[0-9]*,"seq":\([0-9]*\),.*/\1/p' "$T/crash-1.records" | tr '\n' ' ')
n=$(grep -c . "$T/crash-1.records")
expect=$(seq 1 "$n" | tr '\n' ' ')
lost=$(sed -n 's/.*"event":"end".*"audit_lost":\([0-9]*\).*/\1/p' "$T/crash-1.records")
[ "$writes" -eq $ATTEMPTS ] && [ "$conns" -eq $ATTEMPTS ] && [ "$seqs" = "$expect" ] && [ "$lost" = 0 ] &&
	pass "every attempt is in the stream ($writes writes, $conns connects), seq 1..$n consecutive, none lost" ||
	fail "stream after crash" "writes=$writes conns=$conns lost=$lost seqs=$seqs"
recs=$(sed -n 's/.*"event":"end".*"audit_records":\([0-9]*\).*/\1/p' "$T/crash-1.records")
last=$(sed -n 's/.*"event":"end".*"audit_seq_last":\([0-9]*\).*/\1/p' "$T/crash-1.records")
[ "$recs" = $((n - 1)) ] && [ "$last" = $((n - 1)) ] &&
	pass "the end record counts the records of both daemons: audit_records = audit_seq_last = $((n - 1))" ||
	fail "end counters after crash" "audit_records=$recs audit_seq_last=$last lines=$n"
grep -q '"kind":"run","event":"adopted","gap_ms":[0-9]*,"audit_lost":0,"backlog":[1-9][0-9]*,"command_alive":true' "$T/crash-1.records" &&
	pass "one record of the gap: how long, what the ring held, none lost" ||
	fail "gap record" "$(grep adopted "$T/crash-1.records")"
[ "$(sed -n 's/.*"event":"\([a-z]*\)".*/\1/p' /var/lib/tether/runs/crash-1/journal.jsonl | tr '\n' ' ')" = "created starting running adopted ended " ] &&
	pass "the journal is complete: created, starting, running, adopted, ended" ||
	fail "journal after crash" "$(cat /var/lib/tether/runs/crash-1/journal.jsonl)"

# ---- a second daemon ---------------------------------------------------------
tether daemon > "$T/second.log" 2>&1
rc=$?
[ $rc -eq 4 ] && grep -q "another tether daemon (pid $DPID) holds /var/lib/tether/lock" "$T/second.log" &&
	[ "$(api GET /v1/health)" = 200 ] &&
	pass "a second daemon is refused (exit 4, names the first), the first serves on" ||
	fail "second daemon" "rc=$rc $(cat "$T/second.log")"

# ---- the command ends while no daemon is up ------------------------------------
body "$T/k.yaml" '["/bin/sh","-c","sleep 2; exit 5"]' '"run_id":"crash-exit"' > "$T/k2.json"
api POST /v1/runs -d @"$T/k2.json" > /dev/null
kill -KILL $DPID
wait $DPID 2>/dev/null
sleep 4
start_daemon || fail "daemon restarts (2)" ""
wait_state crash-exit ended
grep -q '"reason":"failed"' "$T/api.body" && grep -q '"exit_status":5' "$T/api.body" &&
	[ ! -d /sys/fs/cgroup/tether/crash-exit ] &&
	pass "a command that exited while no daemon was up: its status from the kernel (5), the run cleaned up" ||
	fail "exit while down" "$(cat "$T/api.body")"
api GET /v1/runs/crash-exit/records > /dev/null
grep -q '"event":"adopted".*"command_alive":false' "$T/api.body" && grep -q '"event":"end","exit_status":5' "$T/api.body" &&
	pass "its stream: the gap record, then the end with exit 5" || fail "exit while down records" "$(cat "$T/api.body")"

# ---- artifacts across a daemon's death ------------------------------------------
# A fresh workspace lives in the run's mount namespace, which the adopting
# daemon cannot reach once the tree is empty (the first daemon's descriptor of
# the run's file system died with it): the artifact is not exported, and the
# records say so (never silently); GET answers 404.
cat > "$T/ka.yaml" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: /srv/crash-art, mode: fresh}
  artifacts: {allow: [out.txt]}
EOT
body "$T/ka.yaml" '["/bin/sh","-c","sleep 2; echo adopted-artifact > /srv/crash-art/out.txt"]' \
	'"run_id":"crash-art"' > "$T/ka.json"
api POST /v1/runs -d @"$T/ka.json" > /dev/null
kill -KILL $DPID
wait $DPID 2>/dev/null
start_daemon || fail "daemon restarts (artifacts)" ""
wait_state crash-art ended
code=$(api GET /v1/runs/crash-art/artifacts/out.txt)
api GET /v1/runs/crash-art/records > /dev/null
[ "$code" = 404 ] && grep '"event":"artifact"' "$T/api.body" | grep -F '"path":"out.txt"' |
	grep -qE '"decision":"(missing|failed)"' &&
	pass "a run adopted by a restarted daemon cannot export from its fresh workspace: its record says so, GET is 404" ||
	fail "artifacts after adoption" "$code $(grep artifact "$T/api.body")"

# ---- cleanup.lease across a daemon's death -------------------------------------
# The lease ends while no daemon runs: the run stays confined, and the next
# daemon ends it as soon as it adopts it (the end time is in the journal).
envelope "$T/kl.yaml" "$WS"
printf '  cleanup: {lease: 10s}\n' >> "$T/kl.yaml"
body "$T/kl.yaml" '["/bin/sleep","600"]' '"run_id":"crash-lease"' > "$T/kl.json"
api POST /v1/runs -d @"$T/kl.json" > /dev/null
wait_state crash-lease running
lease_end=$(sed -n 's/.*"lease_end_ns":\([0-9]*\).*/\1/p' "$T/api.body")
kill -KILL $DPID
wait $DPID 2>/dev/null
# CLOCK_MONOTONIC is /proc/uptime's clock less suspended time: none in the VM
until [ "$(awk '{ printf "%d", $1 }' /proc/uptime)" -gt $((${lease_end:-0} / 1000000000 + 1)) ]; do
	sleep 0.5
done
tail -n 1 /var/lib/tether/runs/crash-lease/journal.jsonl | grep -q '"event":"running"' &&
	[ -d /sys/fs/cgroup/tether/crash-lease ] && live=yes || live=no
start_daemon || fail "daemon restarts (lease)" ""
wait_state crash-lease ended
[ -n "$lease_end" ] && [ $live = yes ] && grep -q '"reason":"timed_out"' "$T/api.body" &&
	grep -q '"budget":"lease"' "$T/api.body" && grep -q '"adopted":\[{' "$T/api.body" &&
	grep -q '"cleanup":{"verified":true' "$T/api.body" && [ ! -d /sys/fs/cgroup/tether/crash-lease ] &&
	pass "cleanup.lease ended while no daemon ran: the run stayed live and confined; the next daemon adopts it and ends it (timed_out, budget lease)" ||
	fail "lease across restart" "lease_end=$lease_end live=$live $(cat "$T/api.body")"

# ---- kills between journal writes (failpoints) ---------------------------------
# failpoint EVENT:WHEN ID ARGV_JSON: the daemon dies there; then a clean restart.
failpoint() {
	stop_daemon
	export TETHER_DAEMON_FAILPOINT=$1
	start_daemon
	unset TETHER_DAEMON_FAILPOINT
	body "$T/k.yaml" "$3" "\"run_id\":\"$2\"" > "$T/fp.json"
	api POST /v1/runs -d @"$T/fp.json" > /dev/null
	i=0
	while kill -0 $DPID 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
	wait $DPID 2>/dev/null
	start_daemon || fail "restart after $1" "$(tail -n 3 "$T/daemon.log")"
	wait_state "$2" ended
	api GET "/v1/runs/$2" > /dev/null
}
failpoint created:torn fp-created-torn '["/bin/true"]'
[ "$(api GET /v1/runs/fp-created-torn)" = 404 ] && [ ! -d /sys/fs/cgroup/tether/fp-created-torn ] &&
	pass "killed while writing 'created' (torn line): the run never existed, nothing ran" ||
	fail "created torn" "$(cat "$T/api.body")"
failpoint created:after fp-created '["/bin/true"]'
grep -q '"reason":"cancelled"' "$T/api.body" && grep -q '"started":null' "$T/api.body" &&
	pass "killed after 'created': reconciled as ended (cancelled), never started" ||
	fail "created after" "$(cat "$T/api.body")"
failpoint running:torn fp-running-torn '["/bin/sleep","30"]'
grep -q '"reason":"cancelled"' "$T/api.body" && [ ! -d /sys/fs/cgroup/tether/fp-running-torn ] &&
	pass "killed while writing 'running': the started command is reclaimed, the run ends cancelled" ||
	fail "running torn" "$(cat "$T/api.body")"
failpoint running:after fp-running '["/bin/sh","-c","sleep 1; exit 3"]'
grep -q '"reason":"failed"' "$T/api.body" && grep -q '"exit_status":3' "$T/api.body" &&
	pass "killed after 'running': the run is taken over and ends with its own status (3)" ||
	fail "running after" "$(cat "$T/api.body")"
failpoint ended:before fp-ended '["/bin/true"]'
grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"exit_status":0' "$T/api.body" &&
	pass "killed before 'ended' (teardown done): the end record's reason completes the journal" ||
	fail "ended before" "$(cat "$T/api.body")"
failpoint ended:torn fp-ended-torn '["/bin/true"]'
grep -q '"reason":"succeeded"' "$T/api.body" && [ "$(grep -c '"event":"ended"' /var/lib/tether/runs/fp-ended-torn/journal.jsonl)" -eq 1 ] &&
	pass "killed while writing 'ended': the torn line is cut, one 'ended' written at restart" ||
	fail "ended torn" "$(cat /var/lib/tether/runs/fp-ended-torn/journal.jsonl)"
for j in /var/lib/tether/runs/*/journal.jsonl; do
	[ -z "$(tail -c 1 "$j")" ] || { fail "journals end in a newline" "$j"; break; }
done

# ---- an orphaned run cgroup ----------------------------------------------------
stop_daemon
mkdir -p /sys/fs/cgroup/tether/orphan-x
sh -c 'echo $$ > /sys/fs/cgroup/tether/orphan-x/cgroup.procs; exec sleep 300' &
opid=$!
sleep 0.5
start_daemon
sleep 0.5
kill -0 $opid 2>/dev/null && alive=yes || alive=no
wait $opid 2>/dev/null
[ $alive = no ] && [ ! -d /sys/fs/cgroup/tether/orphan-x ] &&
	grep -q '"event":"reclaimed".*orphan-x' /var/lib/tether/node.jsonl &&
	pass "a run cgroup no journal explains: killed, removed, a node record" ||
	fail "orphan" "alive=$alive $(cat /var/lib/tether/node.jsonl)"

# ---- an upgrade with a live run ----------------------------------------------
rm -f "$WS/progress" /etc/crash-*
body "$T/k.yaml" '["/bin/sh","'"$WS"'/attempts.sh"]' '"run_id":"upgrade-1"' > "$T/u.json"
api POST /v1/runs -d @"$T/u.json" > /dev/null
sleep 2
stop_daemon
cp "$(command -v tether)" /tmp/tether-new
echo >> /tmp/tether-new	# another binary: another digest, the same programs
TETHER_DAEMON_BIN=/tmp/tether-new
start_daemon || fail "the new binary starts" "$(tail -n 3 "$T/daemon.log")"
TETHER_DAEMON_BIN=
wait_state upgrade-1 ended
grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"adopted":\[{' "$T/api.body" &&
	! ls /etc/crash-* > /dev/null 2>&1 && [ "$(wc -l < "$WS/progress")" -eq $ATTEMPTS ] &&
	pass "upgrade: a new daemon binary adopts the live run, which stays confined to its end" ||
	fail "upgrade" "$(cat "$T/api.body")"
api GET /v1/runs/upgrade-1/records > /dev/null
[ "$(grep -c '"decision":"deny"' "$T/api.body")" -eq $((2 * ATTEMPTS)) ] &&
	pass "upgrade: every denial of the run is in its stream" || fail "upgrade records" "$(grep -c deny "$T/api.body")"
stop_daemon
rm -f /tmp/tether-new

finish
