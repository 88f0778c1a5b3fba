#!/bin/sh
# bench-workspace, the part that runs inside the test VM (busybox sh),
# started by bench/workspace/bench-workspace:
#
#   run-in-vm.sh ROUNDS WARMUP
#
# Makes the 10,000-file tree and the envelopes, then runs bench-start's
# driver with one tether row per envelope; prints its table and raw lines,
# then "bench-workspace done"; exits 1 when something could not be measured
# ("bench-workspace error: ...").
set -u
D=/opt/tether-bench
B=/srv/bench-ws
die() {
	echo "bench-workspace error: $*"
	exit 1
}
ROUNDS=$1 WARMUP=$2
rm -rf "$B" && mkdir -p "$B/ws" "$B/audit" "$B/tree" || die "cannot create $B"
# 100 directories of 100 files of 4 KiB
head -c 4096 /dev/urandom > "$B/block" || die "cannot read /dev/urandom"
d=0
while [ $d -lt 100 ]; do
	mkdir "$B/tree/d$d" || die "cannot create $B/tree/d$d"
	f=0
	while [ $f -lt 100 ]; do
		cp "$B/block" "$B/tree/d$d/f$f" || die "cannot fill the tree"
		f=$((f + 1))
	done
	d=$((d + 1))
done
digest=$(tether check --digest "$B/tree" | cut -d' ' -f1)
[ -n "$digest" ] || die "tether check --digest $B/tree failed"

# env NAME WORKSPACE-YAML [RESOURCES] [INPUTS]
env() {
	{
		echo "sandbox:"
		case "$1" in fresh* | overlay*) echo "  workspace_lifetime: one_run" ;; esac
		echo "  filesystem:"
		echo "    root: read_only"
		[ -z "${4:-}" ] || echo "    inputs: [$4]"
		echo "    workspace: $2"
		[ -z "${3:-}" ] || echo "  resources: {$3}"
	} > "$B/$1.yaml"
	tether check "$B/$1.yaml" > /dev/null || die "the envelope $1 does not compile"
}
env dir "{path: $B/ws}"
env fresh "{path: $B/fresh, mode: fresh}"
env fresh+disk "{path: $B/fresh, mode: fresh}" "disk_bytes: 256MiB, disk_inodes: 100000"
env tree "{path: $B/ws}" "" "{path: $B/tree}"
env tree+digest "{path: $B/ws}" "" "{path: $B/tree, digest: \"$digest\"}"
env overlay "{path: $B/ov, mode: fresh_overlay, source: $B/tree}"

# as bench-start: the driver in a cgroup at a run's depth, memory accounted alike
CG=/sys/fs/cgroup/bench-ws/driver
mkdir -p "$CG" && echo $$ > "$CG/cgroup.procs" || die "cannot enter the cgroup $CG"
mem=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
"$D/driver" -p "$D/startprobe" -t /bin/true -n "$ROUNDS" -w "$WARMUP" \
	-T "$(command -v tether)" -a "$B/audit" -e "dir=$B/dir.yaml" -e "fresh=$B/fresh.yaml" \
	-e "fresh+disk=$B/fresh+disk.yaml" -e "tree=$B/tree.yaml" -e "tree+digest=$B/tree+digest.yaml" \
	-e "overlay=$B/overlay.yaml" \
	-c "qemu TCG, $(nproc) CPUs, $((mem / 1024)) MiB; a 10,000-file tree of 39 MiB" ||
	die "the driver failed (exit $?)"
echo "bench-workspace done"
