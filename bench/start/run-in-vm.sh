#!/bin/sh
# bench-start, the part that runs inside the test VM (busybox sh), started by
# bench/start/bench-start:
#
#   run-in-vm.sh ROUNDS WARMUP CONTEXT [NOTE]
#
# Expects /opt/tether-bench/{driver,startprobe,base.yaml} (and limits.yaml
# for the tether+limits row), bwrap at /usr/bin/bwrap and tether on PATH.
# Prints bench/start/driver's table and raw lines, then "bench-start done";
# exits 1 when something could not be measured ("bench-start error: ...").
#
# The guest's root is the initramfs itself (rootfs), and bwrap cannot start
# there: it pivot_root()s into a new root, which the kernel refuses when the
# current root is rootfs (EINVAL), and in a chroot it cannot create a user
# namespace (EPERM).  So, as an initramfs's /init does before switch_root,
# the script copies the guest's files into a tmpfs, moves that tmpfs over /
# (in a private mount namespace) and chroots into it: the kernel then takes
# it for the namespace's real root.  Every launcher, tether included, runs
# from that root, so all of them see the same tree.
set -u
D=/opt/tether-bench
BASE=/tmp/bench-start
die() {
	echo "bench-start error: $*"
	exit 1
}

case "${BENCH_START_STAGE:-outer}" in
outer)
	BENCH_START_STAGE=newroot exec unshare -m --propagation private /bin/sh "$D/run-in-vm.sh" "$@"
	die "unshare -m failed"
	;;
newroot)
	R=/newroot
	mkdir -p "$R" && mount -t tmpfs -o mode=0755 tmpfs "$R" || die "cannot mount a tmpfs on $R"
	for e in /*; do
		case "$e" in
		/proc | /sys | /dev | /tmp | /run | "$R") continue ;;
		esac
		cp -a "$e" "$R/" || die "cannot copy $e into the new root"
	done
	for m in proc sys dev tmp run; do
		mkdir -p "$R/$m" || die "cannot create $R/$m"
	done
	# A fresh procfs: bwrap mounts one for its pid namespace, which the
	# kernel allows only where an existing one is fully visible.
	mount -t proc proc "$R/proc" || die "cannot mount proc"
	for m in sys dev tmp run; do
		mount -o rbind "/$m" "$R/$m" || die "cannot bind /$m"
	done
	cd "$R" && mount --move . / || die "cannot move the new root over /"
	BENCH_START_STAGE=inside exec chroot . /bin/sh "$D/run-in-vm.sh" "$@"
	die "chroot failed"
	;;
inside) ;;
*) die "unknown stage ${BENCH_START_STAGE}" ;;
esac

ROUNDS=$1 WARMUP=$2 CONTEXT=$3 NOTE=${4:-}
mkdir -p "$BASE/ws" "$BASE/audit" || die "cannot create the workspace"

# The driver, and so the plain and bwrap launches, run in a cgroup at a
# run's depth (/sys/fs/cgroup/tether/RUN) with the same controllers, as in
# bench-net: in the root cgroup the kernel skips the memory accounting that
# a run pays.
CG=/sys/fs/cgroup/bench-start/driver
mkdir -p "$CG" && echo $$ >"$CG/cgroup.procs" || die "cannot enter the cgroup $CG"

set -- -p "$D/startprobe" -t /bin/true -n "$ROUNDS" -w "$WARMUP" -b /usr/bin/bwrap \
	-T "$(command -v tether)" -a "$BASE/audit" -e "tether=$D/base.yaml"
[ -f "$D/limits.yaml" ] && set -- "$@" -e "tether+limits=$D/limits.yaml"
[ -n "$NOTE" ] && set -- "$@" -x "$NOTE"
mem=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
"$D/driver" "$@" -c "qemu TCG, $(nproc) CPUs, $((mem / 1024)) MiB; $CONTEXT" ||
	die "the driver failed (exit $?)"
echo "bench-start done"
