#!/bin/sh
# Two runs with different policies in one process, served by one event loop
# (tests/vm/drivers/tworuns.c, over runtime/run/run.h): each is confined by
# its own rules, ends for its own reason, writes its own audit stream, and
# leaves nothing behind.  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WA=/srv/two-a
WB=/srv/two-b
CG=/sys/fs/cgroup/tether
mkdir -p "$WA" "$WB"
envelope "$T/two-a.yaml" "$WA"
envelope "$T/two-b.yaml" "$WB"
# B is the one with a wall clock: it ends timed_out while A succeeds
printf '  resources:\n    wall_clock: 3s\n' >> "$T/two-b.yaml"
rm -f "$T/two-a.audit" "$T/two-b.audit" "$WA/f" "$WB/f"

out=$("$BIN/tworuns" \
	"$T/two-a.yaml" "$T/two-a.audit" \
	"$BIN/fsprobe ok write $WA/f && sleep 1 && $BIN/fsprobe EACCES write $WB/x" \
	"$T/two-b.yaml" "$T/two-b.audit" \
	"$BIN/fsprobe ok write $WB/f && $BIN/fsprobe EACCES write $WA/y && exec sleep 30")
rc=$?
echo "$out" | sed 's/^/  tworuns: /'

# deny_rec ID PATH: run ID's record of its write under another run's workspace
deny_rec() {
	echo "{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"fs\",\"op\":\"create\",\"path\":\"$2\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"rule\",\"rule\":0,\"rule_path\":\"/\",\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
}

[ "$rc" -eq 0 ] && echo "$out" | grep -qx "two-a reason=succeeded exit=0 verified=1 concurrent=1" &&
	echo "$out" | grep -qx "two-b reason=timed_out exit=137 verified=1 concurrent=1" &&
	pass "two runs in one process and one loop: both live at once, each ends for its own reason" ||
	fail "two runs, one loop" "tworuns exit $rc"

[ "$(cat "$WA/f" 2>/dev/null)" = tether ] && [ "$(cat "$WB/f" 2>/dev/null)" = tether ] &&
	[ ! -e "$WA/y" ] && [ ! -e "$WB/x" ] &&
	pass "each run writes its own workspace and not the other's" ||
	fail "workspaces" "$(ls -l "$WA" "$WB" 2>&1 | tr '\n' ' ')"

expect_record "a" "$T/two-a.audit" "$(deny_rec two-a "$WB/x")" &&
	expect_record "b" "$T/two-b.audit" "$(deny_rec two-b "$WA/y")" &&
	pass "each run's denial is recorded exactly, in its own stream" ||
	fail "denial records" "see above"

! grep -q '"run_id":"two-b"' "$T/two-a.audit" && ! grep -q '"run_id":"two-a"' "$T/two-b.audit" &&
	grep -q '"event":"end".*"cleanup_verified":true,"reason":"succeeded"' "$T/two-a.audit" &&
	grep -q '"event":"end".*"cleanup_verified":true,"reason":"timed_out"' "$T/two-b.audit" &&
	pass "each stream holds its own run's records only, to its end record" ||
	fail "streams" "$(cat "$T/two-a.audit" "$T/two-b.audit")"

[ ! -e "$CG/two-a" ] && [ ! -e "$CG/two-b" ] && [ ! -e /run/tether/runs/two-a ] &&
	[ ! -e /run/tether/runs/two-b ] &&
	grep -q '"event":"cleanup",.*"tmpdir_removed":true,"verified":true' "$T/two-a.audit" &&
	grep -q '"event":"cleanup",.*"tmpdir_removed":true,"verified":true' "$T/two-b.audit" &&
	pass "nothing of either run is left: cgroups, run files, private trees" ||
	fail "leftovers" "$(ls "$CG" /run/tether/runs 2>&1 | tr '\n' ' ')"

finish
