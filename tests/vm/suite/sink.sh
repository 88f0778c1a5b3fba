#!/bin/sh
# The audit sink's failures reach the run's result and nothing else: a
# stream that cannot be written (a full filesystem) makes the run end
# unverified (exit 123, "writing audit records"), and the run is still
# confined, ended and cleaned up as any other.  Runs inside the VM as root:
# tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/sink-ws
FULL=/mnt/sink-full
CG=/sys/fs/cgroup/tether
mkdir -p "$WS" "$FULL"
mount -t tmpfs -o size=16k tmpfs "$FULL"
ENV=$T/sink.yaml
envelope "$ENV" "$WS"

# Some 300 denied creates outside the workspace: about 100 KB of records.
# Each from a process of its own (a subshell): one process's repeated
# denials would be coalesced into a few lines (docs/audit.md).
tether run --envelope "$ENV" --run-id sk1 --audit "$FULL/sk1.audit" -- /bin/sh -c \
	'i=0; while [ $i -lt 300 ]; do (echo x > /srv/sink-outside-$i) 2>/dev/null; i=$((i + 1)); done; exit 0' \
	2> "$T/sk1.err"
rc=$?
if [ "$rc" -eq 123 ] && grep -q "writing audit records: No space left on device" "$T/sk1.err" &&
	[ -s "$FULL/sk1.audit" ] && ! ls /srv/sink-outside-* >/dev/null 2>&1; then
	pass "a full audit file ends the run unverified (123) and says so; nothing was let through"
else
	fail "full audit file" "exit $rc: $(cat "$T/sk1.err")"
fi
# With room again, the next run appends to the same file: its records are
# whole lines of their own, never glued to the line the full disk cut.
mount -o remount,size=1m "$FULL"
tether run --envelope "$ENV" --run-id sk2 --audit "$FULL/sk1.audit" -- /bin/true
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c '"run_id":"sk2"' "$FULL/sk1.audit")" -eq 3 ] &&
	[ "$(grep -c '^{"schema_version":3,"seq":[0-9]*,"time":"[^"]*",.*"run_id":"sk2",.*}$' "$FULL/sk1.audit")" -eq 3 ] &&
	[ "$(tail -c 1 "$FULL/sk1.audit" | od -An -c | tr -d ' ')" = '\n' ]; then
	pass "the next run's records start on lines of their own after a cut one"
else
	fail "after a cut line" "exit $rc: $(grep -n 'sk2' "$FULL/sk1.audit" | cut -c1-120)"
fi
[ ! -e "$CG/sk1" ] && [ ! -e /run/tether/runs/sk1 ] &&
	pass "the run whose stream filled up is cleaned up all the same" ||
	fail "cleanup after a full stream" "$(ls "$CG" /run/tether/runs 2>&1 | tr '\n' ' ')"
umount "$FULL"

finish
