#!/bin/sh
# Inputs by digest (issue 17): an input that lists a digest is hashed as it
# is copied onto a read-only tmpfs before the command exists, and the run
# reads that copy, bound over the input's path.  A wrong digest refuses the
# run (exit 120) with both digests; a host process that changes the input
# while runs start gets each run refused or unseen; the copy is the run's
# uid's (tools that check ownership accept it) and read-only.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

IN=/srv/inputs
rm -rf "$IN"
mkdir -p "$IN/tree/sub" "$IN/tree/empty"
echo dataset > "$IN/file.txt"
echo one > "$IN/tree/sub/one"
printf '#!/bin/sh\necho from-input\n' > "$IN/tree/tool.sh"
chmod 755 "$IN/tree/tool.sh"
ln -s sub/one "$IN/tree/link"
chmod -R go-w "$IN"
FD=$(tether check --digest "$IN/file.txt" | cut -d' ' -f1)
TD=$(tether check --digest "$IN/tree" | cut -d' ' -f1)
ZERO=sha256:$(printf '%064d' 0 | tr 0 1)

# ienv FILE FILE_DIGEST TREE_DIGEST [EXTRA]: a uid-1000 run with both inputs
ienv() {
	cat > "$1" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    exec: ["@system", "$IN/tree/**", "/opt/tether-tests/**"]
    inputs:
      - {path: $IN/file.txt, digest: "$2"}
      - {path: $IN/tree, digest: "$3"}
    workspace: {path: /srv/iws, mode: fresh}
EOT
}
ienv "$T/in.yaml" "$FD" "$TD"
irun() {
	rm -f "$T/$1.audit"
	tether run --envelope "$2" --run-id "$1" --audit "$T/$1.audit" -- /bin/sh -c "$3" \
		> "$T/$1.out" 2> "$T/$1.err"
	RC=$?
}

# --- the verified inputs: what the run reads, whose, how --------------------------
irun in1 "$T/in.yaml" "
	cat $IN/file.txt; cat $IN/tree/sub/one; $IN/tree/tool.sh; cat $IN/tree/link
	[ -d $IN/tree/empty ] && echo empty-dir
	stat -c 'owner %u:%g %a' $IN/file.txt $IN/tree $IN/tree/tool.sh
	grep -c ' $IN/[ft][a-z.]* ro,' /proc/self/mountinfo"
if [ "$RC" -eq 0 ] && [ -n "$FD" ] && [ -n "$TD" ] &&
	[ "$(cat "$T/in1.out")" = "dataset
one
from-input
one
empty-dir
owner 1000:1000 444
owner 1000:1000 555
owner 1000:1000 555
2" ] && no_denials "$T/in1.audit"; then
	pass "a run reads its verified inputs (file, tree, link, script): the run's uid's, 0444/0555, on read-only mounts"
else
	fail "verified inputs" "exit $RC: $(cat "$T/in1.out" "$T/in1.err")"
fi
if [ "$(stat -c %u:%a "$IN/file.txt")" = 0:644 ] && [ "$(stat -c %u "$IN/tree/sub/one")" = 0 ]; then
	pass "the host's inputs keep their owner and mode"
else
	fail "host inputs" "$(stat -c '%u %a %n' "$IN/file.txt" "$IN/tree/sub/one")"
fi

# the copy cannot be written: the read-only mount answers first (EROFS, before
# the hooks, so no record), and the input's read-only rule stands behind it
irun in2 "$T/in.yaml" "$BIN/fsprobe EROFS write $IN/file.txt && $BIN/fsprobe EROFS write $IN/tree/new &&
	$BIN/fsprobe EROFS chmod $IN/tree/tool.sh && $BIN/fsprobe EROFS unlink $IN/tree/sub/one &&
	$BIN/fsprobe EROFS rename $IN/tree/sub/one $IN/tree/moved"
if [ "$RC" -eq 0 ] && [ "$(cat "$IN/file.txt")" = dataset ] && [ ! -e "$IN/tree/new" ] &&
	[ -e "$IN/tree/sub/one" ]; then
	pass "writing, creating, chmod, unlink or rename in a verified input fails (EROFS); the host's input is unchanged"
else
	fail "writes to the copy" "exit $RC: $(cat "$T/in2.out" "$T/in2.err")"
fi

# --- a wrong digest refuses the run, with both digests ----------------------------
ienv "$T/wrong.yaml" "$ZERO" "$TD"
irun in3 "$T/wrong.yaml" "touch /srv/iws/ran; echo ran"
if [ "$RC" -eq 120 ] && ! grep -q ran "$T/in3.out" &&
	grep -qF "input $IN/file.txt has digest $FD, but the envelope lists $ZERO" "$T/in3.err" &&
	grep -qF "the command was not started" "$T/in3.err"; then
	pass "a wrong file digest refuses the run (exit 120), naming both digests; the command never ran"
else
	fail "wrong digest" "exit $RC: $(cat "$T/in3.out" "$T/in3.err")"
fi
echo extra > "$IN/tree/sub/added"
irun in4 "$T/in.yaml" "echo ran"
TD2=$(tether check --digest "$IN/tree" | cut -d' ' -f1)
rm "$IN/tree/sub/added"
if [ "$RC" -eq 120 ] && ! grep -q ran "$T/in4.out" &&
	grep -qF "input $IN/tree has digest $TD2, but the envelope lists $TD" "$T/in4.err"; then
	pass "a file added to a verified tree refuses the run with the tree's new digest"
else
	fail "tree changed" "exit $RC: $(cat "$T/in4.out" "$T/in4.err")"
fi
mkfifo "$IN/tree/fifo"
irun in5 "$T/in.yaml" "echo ran"
rm "$IN/tree/fifo"
if [ "$RC" -eq 120 ] && grep -qF "$IN/tree/fifo: is a FIFO" "$T/in5.err"; then
	pass "a FIFO in a verified tree refuses the run: it cannot be verified"
else
	fail "fifo in a tree" "exit $RC: $(cat "$T/in5.err")"
fi

# --- a host process racing the start: refused, or not seen -------------------------
# It rewrites the file between two contents, one the envelope's; each run that
# starts reads its input 20 times and must see the verified content each time.
printf 'AAAA\n' > "$IN/race.txt"
RD=$(tether check --digest "$IN/race.txt" | cut -d' ' -f1)
cat > "$T/race.yaml" <<EOT
sandbox:
  identity: {uid: 1000}
  filesystem:
    root: read_only
    inputs: [{path: $IN/race.txt, digest: "$RD"}]
    workspace: {path: /srv/rws}
EOT
mkdir -p /srv/rws && chown 1000:1000 /srv/rws
( while [ ! -e "$T/race.stop" ]; do printf 'BBBB\n' > "$IN/race.txt"; printf 'AAAA\n' > "$IN/race.txt"; done ) &
racer=$!
started=0 refused=0 bad=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	irun "race$i" "$T/race.yaml" "n=0; while [ \$n -lt 20 ]; do
		[ \"\$(cat $IN/race.txt)\" = AAAA ] || { echo saw; cat $IN/race.txt; exit 7; }
		n=\$((n + 1)); done; echo clean"
	case "$RC" in
	0) grep -qx clean "$T/race$i.out" && started=$((started + 1)) || bad=$((bad + 1)) ;;
	120) grep -qF "but the envelope lists $RD" "$T/race$i.err" && refused=$((refused + 1)) ||
		bad=$((bad + 1)) ;;
	*) bad=$((bad + 1)); echo "race$i: exit $RC: $(cat "$T/race$i.out" "$T/race$i.err")" ;;
	esac
done
: > "$T/race.stop"
wait "$racer"
rm -f "$T/race.stop"
if [ "$bad" -eq 0 ] && [ $((started + refused)) -eq 10 ]; then
	pass "an input rewritten while 10 runs start: each is refused ($refused) or reads only the verified bytes ($started)"
else
	fail "input race" "$bad runs saw other bytes or failed otherwise ($started clean, $refused refused)"
fi

# the host changes the input after the start: the run goes on reading its copy
printf 'AAAA\n' > "$IN/race.txt"
rm -f /srv/rws/go
tether run --envelope "$T/race.yaml" --run-id in6 --audit "$T/in6.audit" -- /bin/sh -c "
	cat $IN/race.txt; : > /srv/rws/started
	i=0; while [ ! -e /srv/rws/go ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
	cat $IN/race.txt" > "$T/in6.out" 2>&1 &
bg=$!
i=0
while [ ! -e /srv/rws/started ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
printf 'CHANGED\n' > "$IN/race.txt"
: > /srv/rws/go
wait "$bg"
RC=$?
if [ "$RC" -eq 0 ] && [ "$(cat "$T/in6.out")" = "AAAA
AAAA" ] && [ "$(cat "$IN/race.txt")" = CHANGED ]; then
	pass "an input changed on the host during the run: the run still reads the bytes verified at its start"
else
	fail "change during the run" "exit $RC: $(cat "$T/in6.out")"
fi
rm -rf /srv/rws "$IN"

finish
