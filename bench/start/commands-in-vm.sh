#!/bin/sh
# bench-start, the per-command part, in the test VM booted into the Debian
# root image of tests/vm/build-rootfs, started by bench/start/bench-start:
#
#   commands-in-vm.sh ROUNDS CONTEXT
#
# Expects /opt/tether-tests/bench/cmdtime and tether on PATH.  Makes a
# workspace that holds a git repository (200 files, committed) and hello.c,
# owned by uid 1000, then has bench/start/cmdtime time /bin/true, git status,
# python3 -c pass and gcc hello.c, each unconfined as uid 1000 and under
# tether run (uid 1000, read-only root, the workspace writable) in the same
# boot.  Prints cmdtime's table, then "cmdtime done"; exits 1 when something
# could not be measured ("bench-start error: ...").
set -u
B=/opt/tether-tests/bench
WS=/srv/cmdws
ROUNDS=$1 CONTEXT=$2
die() {
	echo "bench-start error: $*"
	exit 1
}
TETHER=$(command -v tether) || die "tether is not on PATH"
for c in git python3 gcc; do
	command -v $c >/dev/null || die "$c is not in the root image"
done
mkdir -p "$WS" /tmp/cmdtime-audit /tmp/cmdtime-home || die "cannot make the workspace"
cat >/tmp/cmdtime.yaml <<EOT
sandbox:
  identity: {uid: 1000, gid: 1000}
  filesystem:
    root: read_only
    workspace: {path: $WS}
EOT
cd "$WS" || die "cannot enter $WS"
git init -q -b main . || die "git init failed"
i=0
while [ $i -lt 200 ]; do
	mkdir -p "d$((i % 10))"
	echo "line $i" >"d$((i % 10))/f$i.txt"
	i=$((i + 1))
done
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >hello.c
git add -A && git -c user.name=Bench -c user.email=bench@example.org commit -q -m init ||
	die "git commit failed"
chown -R 1000:1000 "$WS" /tmp/cmdtime-home || die "chown failed"
# the unconfined runs' HOME, as tether gives the run one of its own
export HOME=/tmp/cmdtime-home
# the first run after boot loads and pins the programs: not measured
"$TETHER" run --envelope /tmp/cmdtime.yaml --run-id cmdtime-first \
	--audit /tmp/cmdtime-audit/first.audit -- /bin/true || die "the first tether run failed"
"$B/cmdtime" -T "$TETHER" -e /tmp/cmdtime.yaml -a /tmp/cmdtime-audit -u 1000:1000 \
	-n "$ROUNDS" -w 2 -c "$CONTEXT" -- "/bin/true" "git status" "python3 -c pass" \
	"gcc -o hello hello.c" || die "cmdtime failed"
echo "cmdtime done"
