#!/bin/sh
# The run's own file system (issue 17): a fresh workspace (mode: fresh,
# workspace_lifetime: one_run) and resources.disk_bytes, disk_inodes and
# workspace.max_bytes, enforced by the kernel on one tmpfs per run that holds
# the workspace and the run's /tmp, /var/tmp, /dev/shm and HOME.  Floods stop
# with ENOSPC at the limit, the run ends budget_exhausted with the budget
# named, nothing reaches the host's file system, and a later run sees none
# of it.  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

FRESH=/srv/fresh
rm -rf "$FRESH"
mkdir -p /var/tmp
# fresh_env FILE [EXTRA-RESOURCES] [EXTRA-WORKSPACE]: a uid-1000 run with a fresh workspace
fresh_env() {
	cat > "$1" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $FRESH, mode: fresh$3}
  resources: {process_count: 64$2}
EOT
}
fresh_env "$T/fresh.yaml"
fresh_env "$T/disk.yaml" ", disk_bytes: 8MiB"
fresh_env "$T/inodes.yaml" ", disk_inodes: 100"
fresh_env "$T/max.yaml" ", disk_bytes: 8MiB" ", max_bytes: 4MiB"

# wrun ID ENVELOPE SCRIPT: the script in a run; RC, $T/ID.audit, $T/ID.out.
wrun() {
	rm -f "$T/$1.audit"
	tether run --envelope "$2" --run-id "$1" --audit "$T/$1.audit" -- /bin/sh -c "$3" \
		> "$T/$1.out" 2>&1
	RC=$?
}
# ended ID REASON [BUDGET]: the end record says so
ended() {
	grep '"event":"end"' "$T/$1.audit" | grep -qF "\"reason\":\"$2\"" || return 1
	[ -z "$3" ] || grep '"event":"end"' "$T/$1.audit" | grep -qF "\"budget\":\"$3\""
}
# flood FILE: fsprobe writes FILE until a write fails; it says how many
# bytes went in and exits 0 only when the failure was ENOSPC.  What the suite
# asserts is what the failing program printed itself, at once: the
# controller ends the run shortly after its file system is full.
flood() { echo "$BIN/fsprobe ENOSPC fill $1 || echo probe-mismatch"; }
# copied ID: the bytes fsprobe wrote; full ID: it failed with ENOSPC
copied() { sed -n 's/^fsprobe: fill .*: wrote \([0-9]*\) bytes$/\1/p' "$T/$1.out" | tail -n 1; }
full() { grep -q 'fsprobe: fill .*: ENOSPC' "$T/$1.out" && ! grep -q probe-mismatch "$T/$1.out"; }

# --- a fresh workspace: empty, the run's own, gone at the end ----------------------
wrun ws1 "$T/fresh.yaml" "
	[ -z \"\$(ls -A $FRESH)\" ] || { echo not empty; exit 3; }
	[ \"\$(stat -c %u:%a $FRESH)\" = 1000:755 ] || { stat -c %u:%a $FRESH; exit 4; }
	echo canary-ws1 > $FRESH/canary && mkdir $FRESH/d && echo x > $FRESH/d/f && cat $FRESH/canary"
if [ "$RC" -eq 0 ] && grep -qx canary-ws1 "$T/ws1.out" && ended ws1 succeeded &&
	[ ! -e "$FRESH" ] && no_denials "$T/ws1.audit"; then
	pass "a fresh workspace is empty and the run's uid's (0755); the mount point tether made is gone after"
else
	fail "fresh workspace" "exit $RC, $FRESH $(ls -ld "$FRESH" 2>&1): $(cat "$T/ws1.out")"
fi

# the host never sees the run's files, even while it runs
# (the signal to go on is in /srv: the run's /tmp is its own)
rm -f /srv/ws2.go
tether run --envelope "$T/fresh.yaml" --run-id ws2 --audit "$T/ws2.audit" -- /bin/sh -c "
	echo canary-ws2 > $FRESH/canary
	i=0; while [ ! -e /srv/ws2.go ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
	cat $FRESH/canary" > "$T/ws2.out" 2>&1 &
bg=$!
i=0
while [ ! -d "$FRESH" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
sleep 1
seen=$(ls -A "$FRESH" 2>&1)
found=$(find / -xdev -name canary 2>/dev/null | head -n 1)
: > /srv/ws2.go
wait "$bg"
RC=$?
rm -f /srv/ws2.go
if [ "$RC" -eq 0 ] && grep -qx canary-ws2 "$T/ws2.out" && [ -z "$seen" ] && [ -z "$found" ]; then
	pass "while a run writes its fresh workspace, the host's $FRESH stays empty and no file of it is on the host"
else
	fail "host view of a fresh workspace" "exit $RC, host saw '$seen' '$found': $(cat "$T/ws2.out")"
fi

# an existing directory at the path is hidden from the run and left as it was
mkdir -p "$FRESH"
echo host-file > "$FRESH/host-file"
wrun ws3 "$T/fresh.yaml" "[ ! -e $FRESH/host-file ] && echo run > $FRESH/host-file && rm $FRESH/host-file"
if [ "$RC" -eq 0 ] && [ "$(cat "$FRESH/host-file")" = host-file ] && [ "$(ls -A "$FRESH")" = host-file ]; then
	pass "a fresh workspace over an existing directory hides it from the run; the host's files are untouched and stay"
else
	fail "fresh over an existing directory" "exit $RC: $(ls -A "$FRESH") $(cat "$T/ws3.out")"
fi
rm -rf "$FRESH"

# run B finds nothing of run A, same identity and envelope
wrun ws4a "$T/disk.yaml" "echo a > $FRESH/canary-a; echo a > /tmp/canary-a; echo a > /var/tmp/canary-a;
	echo a > /dev/shm/canary-a; echo a > \$HOME/canary-a"
wrun ws4b "$T/disk.yaml" "for f in $FRESH /tmp /var/tmp /dev/shm \$HOME; do [ -e \$f/canary-a ] && echo found \$f; done; exit 0"
if [ "$RC" -eq 0 ] && ! grep -q found "$T/ws4b.out" && ! grep -q . "$T/ws4a.out"; then
	pass "a later run with the same identity and envelope finds none of the workspace, /tmp, /var/tmp, /dev/shm or HOME canaries"
else
	fail "canaries across runs" "exit $RC: $(cat "$T/ws4a.out" "$T/ws4b.out")"
fi

# --- disk_bytes: one limit over everything the run writes --------------------------
before=$(stat -f -c %a /)
wrun ws5 "$T/disk.yaml" "$(flood $FRESH/big)"
size=$(copied ws5)
if [ "$RC" -eq 125 ] && full ws5 &&
	[ -n "$size" ] && [ "$size" -le 8388608 ] && [ "$size" -ge 4194304 ] &&
	ended ws5 budget_exhausted disk_bytes; then
	pass "a workspace flood stops at disk_bytes with ENOSPC; the run ends budget_exhausted, budget disk_bytes (exit 125)"
else
	fail "workspace flood" "exit $RC, size $size: $(cat "$T/ws5.out") $(grep '"end"' "$T/ws5.audit")"
fi
after=$(stat -f -c %a /)
# the VM's root is a tmpfs (4 KiB blocks): 64 MiB there would be 16384 of them
if [ -n "$before" ] && [ -n "$after" ] && [ $((before - after)) -lt 1024 ] && [ ! -e "$FRESH" ]; then
	pass "the host's file system lost nothing to the flood (free blocks: $before before, $after after)"
else
	fail "host disk after the flood" "free blocks $before before, $after after; $(ls -la "$FRESH" 2>&1)"
fi

for dir in /tmp /var/tmp /dev/shm; do
	id=ws6$(echo "$dir" | tr -d /)
	wrun "$id" "$T/disk.yaml" "$(flood $dir/big)"
	size=$(copied "$id")
	if [ "$RC" -eq 125 ] && full "$id" &&
		[ -n "$size" ] && [ "$size" -le 8388608 ] && ended "$id" budget_exhausted disk_bytes &&
		[ ! -e "$dir/big" ]; then
		pass "a $dir flood counts against the same disk_bytes: ENOSPC, budget_exhausted, nothing on the host's $dir"
	else
		fail "$dir flood" "exit $RC, size $size: $(cat "$T/$id.out")"
	fi
done

# the limit is one for all: 5 MiB in the workspace leaves 3 for /tmp
wrun ws7 "$T/disk.yaml" "dd if=/dev/zero of=$FRESH/a bs=1M count=5 2>/dev/null || exit 3; $(flood /tmp/b)"
size=$(copied ws7)
if [ "$RC" -eq 125 ] && full ws7 &&
	[ -n "$size" ] && [ "$size" -le 3145728 ] && ended ws7 budget_exhausted disk_bytes; then
	pass "the workspace and /tmp share one disk_bytes: 5 MiB in one leave at most 3 for the other"
else
	fail "shared limit" "exit $RC, size $size: $(cat "$T/ws7.out")"
fi

# a sparse file costs nothing until written, and writing into it stops at the limit
wrun ws8 "$T/disk.yaml" "truncate -s 1G $FRESH/sparse || exit 3; dd if=/dev/zero of=$FRESH/sparse bs=1M count=64 conv=notrunc 2>&1; exit 0"
if [ "$RC" -eq 125 ] && grep -q 'No space left on device' "$T/ws8.out" && ended ws8 budget_exhausted disk_bytes; then
	pass "a 1 GiB sparse file is made, and filling it stops at disk_bytes with ENOSPC"
else
	fail "sparse file" "exit $RC: $(cat "$T/ws8.out")"
fi

# a run that ignores ENOSPC and goes on is ended by the controller
wrun ws9 "$T/disk.yaml" "dd if=/dev/zero of=$FRESH/big bs=1M count=64 2>/dev/null; sleep 120; exit 0"
if [ "$RC" -eq 125 ] && ended ws9 budget_exhausted disk_bytes; then
	pass "a run that ignores ENOSPC and sleeps on is ended by the controller (budget_exhausted, disk_bytes)"
else
	fail "ignoring ENOSPC" "exit $RC: $(grep '"end"' "$T/ws9.audit")"
fi

# under the limit, nothing is said
wrun ws10 "$T/disk.yaml" "dd if=/dev/zero of=$FRESH/small bs=1M count=2 2>/dev/null && dd if=/dev/zero of=/tmp/small bs=1M count=2 2>/dev/null"
if [ "$RC" -eq 0 ] && ended ws10 succeeded && no_denials "$T/ws10.audit"; then
	pass "4 MiB written under an 8 MiB disk_bytes: the run succeeds"
else
	fail "under the limit" "exit $RC: $(cat "$T/ws10.out") $(grep '"end"' "$T/ws10.audit")"
fi

# --- disk_inodes ------------------------------------------------------------------
# (the shell names the file it could not create: f0 to f99 were made)
wrun ws11 "$T/inodes.yaml" "n=0; while [ \$n -lt 300 ]; do
		true > $FRESH/f\$n || break; n=\$((n + 1)); done; exit 0"
made=$(sed -n "s|.*can't create $FRESH/f\\([0-9]*\\): .*|\\1|p" "$T/ws11.out")
if [ "$RC" -eq 125 ] && [ "$made" = 100 ] && grep -q 'No space left on device' "$T/ws11.out" &&
	ended ws11 budget_exhausted disk_inodes; then
	pass "disk_inodes: 100: the run makes exactly 100 files, the next fails with ENOSPC, budget disk_inodes"
else
	fail "inode flood" "exit $RC, made $made: $(cat "$T/ws11.out") $(grep '"end"' "$T/ws11.audit")"
fi

wrun ws12 "$T/inodes.yaml" "n=0; while [ \$n -lt 300 ]; do
		mkdir /tmp/d\$n 2>&1 || break; n=\$((n + 1)); done; exit 0"
made=$(sed -n "s|.*can't create directory '/tmp/d\\([0-9]*\\)': .*|\\1|p" "$T/ws12.out")
if [ "$RC" -eq 125 ] && [ "$made" = 100 ] &&
	grep -q 'No space left on device' "$T/ws12.out" && ended ws12 budget_exhausted disk_inodes; then
	pass "disk_inodes counts directories in /tmp too: exactly 100, then ENOSPC, budget disk_inodes"
else
	fail "inode flood in /tmp" "exit $RC, made $made: $(cat "$T/ws12.out")"
fi

# --- workspace.max_bytes ----------------------------------------------------------
wrun ws13 "$T/max.yaml" "$(flood $FRESH/big)"
size=$(copied ws13)
if [ "$RC" -eq 125 ] && full ws13 &&
	[ -n "$size" ] && [ "$size" -le 4194304 ] && ended ws13 budget_exhausted workspace_bytes; then
	pass "workspace.max_bytes: 4MiB stops a workspace flood first: ENOSPC, budget workspace_bytes"
else
	fail "max_bytes flood" "exit $RC, size $size: $(cat "$T/ws13.out") $(grep '"end"' "$T/ws13.audit")"
fi

# --- the start record names the limits -------------------------------------------
if grep '"event":"start"' "$T/ws13.audit" | grep -qF '"disk_bytes":8388608' &&
	grep '"event":"start"' "$T/ws13.audit" | grep -qF '"workspace_bytes":4194304' &&
	grep '"event":"start"' "$T/ws11.audit" | grep -qF '"disk_inodes":100'; then
	pass "the start record carries disk_bytes, workspace_bytes and disk_inodes"
else
	fail "start record limits" "$(grep '"start"' "$T/ws13.audit" "$T/ws11.audit")"
fi

# --- attacks on the run's file system ---------------------------------------------
# no capability: the run cannot unmount its workspace to reach the directory
# under it, nor remount it bigger
wrun ws14 "$T/disk.yaml" "umount $FRESH 2>&1; mount -o remount,size=1G $FRESH 2>&1;
	mkdir $FRESH/x; $BIN/fsprobe EPERM bind-mount /tmp $FRESH/x 2>&1 || echo probe-mismatch; dd if=/dev/zero of=$FRESH/big bs=1M count=16 2>&1; exit 0"
if [ "$RC" -eq 125 ] && grep -q 'No space left on device' "$T/ws14.out" && ! grep -q probe-mismatch "$T/ws14.out" &&
	ended ws14 budget_exhausted disk_bytes && [ ! -e "$FRESH" ]; then
	pass "umount and remount,size= of the run's file system fail without capabilities; the limit holds"
else
	fail "unmount/remount" "exit $RC: $(cat "$T/ws14.out")"
fi

# a hard link cannot bring a host file into the run's file system (nor one of
# its files out: the workspace and /tmp are separate mounts of it)
wrun ws15 "$T/disk.yaml" "echo x > $FRESH/f && ln $FRESH/f $FRESH/l 2>&1 && echo linked;
	ln /etc/passwd $FRESH/p 2>&1; [ -e $FRESH/p ] && echo cross; exit 0"
if [ "$RC" -eq 0 ] && grep -qx linked "$T/ws15.out" && ! grep -qx cross "$T/ws15.out" &&
	grep -q 'Invalid cross-device link' "$T/ws15.out"; then
	pass "a hard link from the host's /etc/passwd into the run's file system fails (EXDEV)"
else
	fail "hard links" "exit $RC: $(cat "$T/ws15.out")"
fi

finish
