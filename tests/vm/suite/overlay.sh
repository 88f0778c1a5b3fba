#!/bin/sh
# fresh_overlay workspaces (issue 17): the source is copied, as it is hashed,
# onto the run's own file system and laid as the lower layer of an overlay
# mounted at the workspace in the run's mount namespace only; the run's
# writes go to the upper layer.  The run sees exactly the source's tree,
# owned by its uid; the source is never written, the start record holds the
# copy's digest, and nothing is left when the run ends.  Runs inside the VM
# as root: tests/vm/run-suite (which loads overlayfs).
. /ext/suite/lib.sh

WS=/srv/ov
SRC=/srv/ov-source
rm -rf "$WS" "$SRC"
# the source: root's, with a private file, a script, a link and a nested tree
mkdir -p "$SRC/sub/deep"
echo hello > "$SRC/hello.txt"
printf 'keep\n' > "$SRC/sub/keep.txt"
printf 'gone\n' > "$SRC/sub/gone.txt"
printf 'old\n' > "$SRC/sub/deep/old.txt"
printf '#!/bin/sh\necho script-ran\n' > "$SRC/run.sh"
chmod 0755 "$SRC/run.sh"
chmod 0600 "$SRC/sub/keep.txt"
ln -s hello.txt "$SRC/link"
chown -R 0:0 "$SRC"
src_digest=$(tether check --digest "$SRC" 2>/dev/null | cut -d' ' -f1)

# ov_env FILE [EXTRA-WORKSPACE] [EXTRA-RESOURCES] [SOURCE] [EXEC]
ov_env() {
	exec_list=${5:-'"@system", "'"$WS"'/**"'}
	cat > "$1" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $WS, mode: fresh_overlay, source: ${4:-$SRC}$2}
    exec: [$exec_list]
  resources: {process_count: 64$3}
EOT
}
ov_env "$T/ov.yaml"
ov_env "$T/ov-max.yaml" ", max_bytes: 4MiB"
ov_env "$T/ov-missing.yaml" "" "" /srv/no-such-source
# the workspace not executable, and writable only below sub/
ov_env "$T/ov-narrow.yaml" ', write: ["sub/**"]' "" "" '"@system"'

orun() {
	rm -f "$T/$1.audit"
	tether run --envelope "$2" --run-id "$1" --audit "$T/$1.audit" -- /bin/sh -c "$3" \
		> "$T/$1.out" 2>&1
	RC=$?
}
ended() {
	grep '"event":"end"' "$T/$1.audit" | grep -qF "\"reason\":\"$2\"" || return 1
	[ -z "$3" ] || grep '"event":"end"' "$T/$1.audit" | grep -qF "\"budget\":\"$3\""
}
# listing DIR: each entry's path, type, owner, mode bits and content digest
listing() {
	(cd "$1" && find . | sort | while read -r f; do
		if [ -L "$f" ]; then echo "$f l $(readlink "$f")"
		elif [ -d "$f" ]; then echo "$f d $(stat -c %u:%a "$f")"
		else echo "$f f $(stat -c %u:%a "$f") $(sha256sum < "$f" | cut -c1-64)"; fi
	done)
}
# what the run should see: the source's tree, the run's uid's, 0644/0755
listing "$SRC" | sed -e 's/ 0:600 / 1000:644 /' -e 's/ 0:644 / 1000:644 /' -e 's/ 0:755 / 1000:755 /' \
	-e 's/ 0:755$/ 1000:755/' > "$T/expected"
src_before=$(listing "$SRC")

# --- the run sees exactly the source, owned by its uid --------------------------
cat > "$T/listing.sh" <<'EOT'
cd "$1" && find . | sort | while read -r f; do
	if [ -L "$f" ]; then echo "$f l $(readlink "$f")"
	elif [ -d "$f" ]; then echo "$f d $(stat -c %u:%a "$f")"
	else echo "$f f $(stat -c %u:%a "$f") $(sha256sum < "$f" | cut -c1-64)"; fi
done
EOT
cp "$T/listing.sh" /srv/ov-listing.sh
orun ov1 "$T/ov.yaml" "sh /srv/ov-listing.sh $WS"
if [ "$RC" -eq 0 ] && diff "$T/expected" "$T/ov1.out" > "$T/ov1.diff" && ended ov1 succeeded &&
	no_denials "$T/ov1.audit"; then
	pass "a fresh_overlay workspace shows exactly the source's tree, every entry the run's uid's"
else
	fail "overlay tree" "exit $RC: $(cat "$T/ov1.diff" "$T/ov1.out" | head -n 20)"
fi
if [ -n "$src_digest" ] && grep '"event":"start"' "$T/ov1.audit" |
	grep -F "\"source\":\"$SRC\"" | grep -qF "\"source_digest\":\"$src_digest\""; then
	pass "the start record names the source and its tree digest, as tether check --digest computes it"
else
	fail "start record source" "want $src_digest: $(grep '"start"' "$T/ov1.audit")"
fi

# --- the run's writes: in the upper layer, never in the source ------------------
orun ov2 "$T/ov.yaml" "cd $WS &&
	echo changed >> hello.txt && echo new > new.txt && rm sub/gone.txt && mv sub/deep/old.txt moved.txt &&
	echo private-now >> sub/keep.txt && touch -d '2001-01-01 00:00' sub/deep && chmod 0700 run.sh &&
	mkdir made && rm -r sub/deep &&
	cat hello.txt && ls sub && cat moved.txt && ./run.sh && stat -c %a run.sh"
want_ov2='hello
changed
keep.txt
old
script-ran
700'
if [ "$RC" -eq 0 ] && [ "$(cat "$T/ov2.out")" = "$want_ov2" ] && [ "$(listing "$SRC")" = "$src_before" ] &&
	[ ! -e "$WS" ] && no_denials "$T/ov2.audit"; then
	pass "writes, appends, deletes, renames, chmod, utimes and rm -r in the overlay work; the source is unchanged and nothing is left"
else
	fail "overlay writes" "exit $RC: $(cat "$T/ov2.out") / $(listing "$SRC" | diff "$T/expected" - | head -n 5) / $(grep -v '"allow"' "$T/ov2.audit" | grep '"fs"' | head -n 5)"
fi

# --- a host process that rewrites the source during the run is not seen ---------
rm -f /srv/ov3.go /srv/ov3.ready
tether run --envelope "$T/ov.yaml" --run-id ov3 --audit "$T/ov3.audit" -- /bin/sh -c "
	cat $WS/hello.txt; : > /dev/null
	i=0; while [ ! -e /srv/ov3.go ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
	cat $WS/hello.txt; ls $WS" > "$T/ov3.out" 2>&1 &
bg=$!
i=0
while ! grep -q '"event":"start"' "$T/ov3.audit" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
echo rewritten > "$SRC/hello.txt"
echo planted > "$SRC/planted.txt"
: > /srv/ov3.go
wait "$bg"
RC=$?
rm -f /srv/ov3.go "$SRC/planted.txt"
echo hello > "$SRC/hello.txt"
if [ "$RC" -eq 0 ] && [ "$(grep -c '^hello$' "$T/ov3.out")" -eq 2 ] && ! grep -q 'rewritten\|planted' "$T/ov3.out"; then
	pass "a host process rewriting the source while the run works is not seen: the run has its copy"
else
	fail "source rewritten during the run" "exit $RC: $(cat "$T/ov3.out")"
fi

# --- max_bytes bounds what the run writes, not the source's copy -----------------
dd if=/dev/urandom of="$SRC/big.bin" bs=1M count=6 2>/dev/null
orun ov4 "$T/ov-max.yaml" "cmp $WS/big.bin $WS/big.bin && $BIN/fsprobe ENOSPC fill $WS/flood || echo probe-mismatch"
size=$(sed -n 's/^fsprobe: fill .*: wrote \([0-9]*\) bytes$/\1/p' "$T/ov4.out" | tail -n 1)
if [ "$RC" -eq 125 ] && ! grep -q probe-mismatch "$T/ov4.out" && [ -n "$size" ] &&
	[ "$size" -le 4194304 ] && [ "$size" -ge 2097152 ] && ended ov4 budget_exhausted workspace_bytes; then
	pass "a 6 MiB source under max_bytes 4MiB: the run starts, its own writes stop at the limit with ENOSPC, budget workspace_bytes"
else
	fail "overlay max_bytes" "exit $RC, size $size: $(cat "$T/ov4.out") $(grep '"end"' "$T/ov4.audit")"
fi
# a copy-up is the run's write: appending to the big file spends the budget too
orun ov5 "$T/ov-max.yaml" "echo x >> $WS/big.bin 2>&1; echo rc=\$?"
if grep -q 'No space left on device' "$T/ov5.out" && grep -q 'rc=1' "$T/ov5.out"; then
	pass "changing a 6 MiB source file copies it up, which a 4 MiB max_bytes refuses with ENOSPC"
else
	fail "overlay copy-up under max_bytes" "exit $RC: $(cat "$T/ov5.out") $(grep '"kind":"fs"' "$T/ov5.audit" | head -n 3)"
fi
rm -f "$SRC/big.bin"

# --- attacks -------------------------------------------------------------------
# a link in the source leads where it points, decided there: /etc/shadow stays protected
made_shadow=
[ -e /etc/shadow ] || { echo 'root:*:19000:0:99999:7:::' > /etc/shadow; chmod 0644 /etc/shadow; made_shadow=1; }
ln -s /etc/shadow "$SRC/shadow"
orun ov6 "$T/ov.yaml" "cat $WS/shadow 2>&1; echo rc=\$?"
rm -f "$SRC/shadow"
[ -z "$made_shadow" ] || rm -f /etc/shadow
if grep -q 'Permission denied' "$T/ov6.out" && grep -q 'rc=1' "$T/ov6.out" &&
	grep '"decision":"deny"' "$T/ov6.audit" | grep -qF '"path":"/etc/shadow"'; then
	pass "a source link to /etc/shadow is followed to /etc/shadow and refused there, recorded"
else
	fail "link out of the source" "exit $RC: $(cat "$T/ov6.out")"
fi
# the layers are out of reach: not at the staging point, no unmount, no new overlay
orun ov7 "$T/ov.yaml" "ls -A /run/tether/fs; umount $WS 2>&1 || echo umount-failed
	mkdir -p $WS/m $WS/u $WS/w
	mount -t overlay x -o lowerdir=/etc,upperdir=$WS/u,workdir=$WS/w $WS/m 2>&1 || echo mount-failed
	echo x > $WS/probe && echo wrote"
if grep -qx 'umount-failed' "$T/ov7.out" && grep -qx 'mount-failed' "$T/ov7.out" && grep -qx wrote "$T/ov7.out" &&
	! grep -q 'sub\|hello' "$T/ov7.out" && [ "$(listing "$SRC")" = "$src_before" ]; then
	pass "the run sees nothing at the staging point, cannot unmount its workspace or mount an overlay of its own"
else
	fail "layers out of reach" "exit $RC: $(cat "$T/ov7.out")"
fi
# overlayfs's own opens of the layers widen nothing: exec, executable
# mappings and writes the workspace's rules refuse stay refused, recorded on
# the workspace's path (on 6.6+ the exec and the mapping reach a layer file
# too, through overlayfs: the decision on the path came first)
orun ov11 "$T/ov-narrow.yaml" "$BIN/fsprobe EACCES exec $WS/run.sh || echo probe-mismatch
	$BIN/fsprobe EACCES mmap-exec $WS/run.sh || echo probe-mismatch
	$BIN/fsprobe EACCES mprotect-exec $WS/run.sh || echo probe-mismatch
	$BIN/fsprobe EACCES append $WS/hello.txt || echo probe-mismatch
	$BIN/fsprobe EACCES write $WS/new.txt || echo probe-mismatch
	$BIN/fsprobe ok append $WS/sub/keep.txt || echo probe-mismatch
	cat $WS/hello.txt"
if [ "$RC" -eq 0 ] && ! grep -q probe-mismatch "$T/ov11.out" && grep -qx hello "$T/ov11.out" &&
	grep '"decision":"deny"' "$T/ov11.audit" | grep '"op":"exec"' | grep -qF "\"path\":\"$WS/run.sh\"" &&
	grep '"decision":"deny"' "$T/ov11.audit" | grep -F "\"path\":\"$WS/hello.txt\"" | grep -q '"access":"write"'; then
	pass "in an overlay workspace, exec, exec mappings and writes its rules refuse stay refused, recorded on the workspace's path"
else
	fail "overlay rules" "exit $RC: $(cat "$T/ov11.out") $(grep '"deny"' "$T/ov11.audit" | head -n 4)"
fi

# a source that cannot be copied whole refuses the run: missing, or holding a FIFO
orun ov8 "$T/ov-missing.yaml" "echo ran"
mkfifo "$SRC/fifo"
orun ov9 "$T/ov.yaml" "echo ran"
rm -f "$SRC/fifo"
if [ "$RC" -eq 120 ] && ! grep -qx ran "$T/ov9.out" && grep -q 'FIFO' "$T/ov9.out" &&
	grep -q "source" "$T/ov8.out" && ! grep -qx ran "$T/ov8.out" && [ ! -e "$WS" ]; then
	pass "a missing source, or one holding a FIFO, refuses the run (exit 120) with the reason; nothing ran"
else
	fail "uncopyable source" "exit $RC: $(cat "$T/ov8.out" "$T/ov9.out")"
fi
# run B finds nothing of run A's changes
orun ov10a "$T/ov.yaml" "echo canary > $WS/canary && echo a >> $WS/hello.txt && rm $WS/link"
orun ov10b "$T/ov.yaml" "[ -e $WS/canary ] && echo found-canary; cat $WS/hello.txt; [ -L $WS/link ] && echo link-there"
if [ "$RC" -eq 0 ] && ! grep -q found-canary "$T/ov10b.out" && grep -qx 'link-there' "$T/ov10b.out" &&
	[ "$(grep -c . "$T/ov10b.out")" -eq 2 ]; then
	pass "a later run of the same envelope starts from the source again: none of run A's changes"
else
	fail "overlay canaries" "exit $RC: $(cat "$T/ov10a.out" "$T/ov10b.out")"
fi

rm -rf "$SRC" /srv/ov-listing.sh
finish
