#!/bin/sh
# bench-fs, the part that runs inside the test VM (busybox sh), started by
# bench/fs/bench-fs:
#
#   run-in-vm.sh N FORK_N BATCHES ROUNDS OUTSIDER_ROUNDS
#
# Expects /opt/tether-bench/loops (bench/fs/loops.c, static) and the envelopes
# /opt/tether-bench/rules-small.yaml and /opt/tether-bench/rules-large.yaml; tether is on
# PATH.  Prints the driver's "bench-fs label=... round=..." lines (labels
# unloaded, root, outside, small, large; bare and loaded, the outsider
# rounds) after one "bench-fs kernel=..." line;
# bench/fs/bench-fs turns them into the table.  Exits 1 when something could
# not be measured ("bench-fs error: ..." says what).
set -u
N=$1 FORK_N=$2 BATCHES=$3 ROUNDS=$4 OUT_ROUNDS=${5:-0}
D=/opt/tether-bench
FILE=/srv/bench/a/b/c/d/file
A=/tmp/bench-fs

die() {
	echo "bench-fs error: $*"
	exit 1
}

mkdir -p /srv/bench/a/b/c/d /srv/benchws /srv/benchdeny "$A" || die "cannot create the test tree"
echo bench > "$FILE" || die "cannot write $FILE"
echo "bench-fs kernel=$(uname -r) date=$(date -u +%Y-%m-%dT%H:%M:%SZ) cpus=$(nproc)" \
	"n=$N fork_n=$FORK_N batches=$BATCHES rounds=$ROUNDS"

# Outside a run the loops run in $CG, a cgroup at the depth of a run's
# (/sys/fs/cgroup/tether/RUN) and with the same controllers: in the root
# cgroup the kernel skips memory accounting, which every process on a
# systemd host pays and a run pays too.  Only "root" runs in the root cgroup.
CG=/sys/fs/cgroup/bench-fs/outside
mkdir -p "$CG" || die "cannot create the cgroup $CG"

# measure LABEL ROUND: the three loops, outside any run (LABEL unloaded,
# root or outside) or inside a fresh run under the envelope of LABEL.
measure() {
	label=$1 round=$2
	set -- "$D/loops" -b "$BATCHES" -f "$FILE" -l "$label" -r "$round" \
		open="$N" stat="$N" forkexec="$FORK_N"
	case "$label" in
	root)
		"$@" || die "$label round $round: the loops failed (exit $?)"
		;;
	unloaded | outside | bare | loaded)
		(echo 0 > "$CG/cgroup.procs" && exec "$@") ||
			die "$label round $round: the loops failed (exit $?)"
		;;
	*)
		tether run --envelope "$D/rules-$label.yaml" --audit "$A/$label.$round.audit" \
			-- "$@" || {
			rc=$?
			cat "$A/$label.$round.audit" 2>/dev/null
			die "$label round $round: tether run exited $rc"
		}
		;;
	esac
}

# Before any run: tether's programs are not loaded yet.
measure unloaded 0
# The first run loads and pins the programs; they stay attached, so every
# figure below pays the hooks' test for membership in a run.
tether run --envelope "$D/rules-small.yaml" --audit "$A/load.audit" -- /bin/true ||
	die "tether run of /bin/true failed (exit $?)"
measure root 0

# Rounds alternate the order (outside small large, large small outside, ...)
# so that a drift of the emulated machine's speed hits all three alike.
r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ $((r % 2)) -eq 1 ]; then
		order="outside small large"
	else
		order="large small outside"
	fi
	for label in $order; do
		measure "$label" "$r"
	done
	r=$((r + 1))
done

# What the programs cost a process outside every run (the LSM programs run
# for every process on the node): the same loops in $CG with no program of
# tether's attached (bare: the pinned set removed, which detaches it) and
# with them attached (loaded: the next run loaded them again), in an order
# that alternates each round.  No run is live: removing the pins is safe.
unload() {
	rm -rf /sys/fs/bpf/tether || die "cannot remove the pinned programs"
}
load() {
	tether run --envelope "$D/rules-small.yaml" --audit "$A/reload.audit" -- /bin/true ||
		die "tether run of /bin/true failed (exit $?)"
}
r=1
while [ "$r" -le "$OUT_ROUNDS" ]; do
	if [ $((r % 2)) -eq 1 ]; then
		unload
		measure bare "$r"
		load
		measure loaded "$r"
	else
		measure loaded "$r"
		unload
		measure bare "$r"
		load
	fi
	r=$((r + 1))
done

for f in "$A"/*.audit; do
	if grep -q '"decision":"deny"' "$f"; then
		echo "bench-fs warning: $f holds denials:"
		head -n 5 "$f"
	fi
done
echo "bench-fs done"
