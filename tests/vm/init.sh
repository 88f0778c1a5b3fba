#!/bin/busybox sh
# /init of the vmrun guest (copied into the initramfs by tests/vm/vmrun).
#
# Protocol with vmrun, over the serial console:
#   TETHER-VMRUN-START-<nonce>            /init runs (everything before is boot noise)
#   ...COMMAND's stdout and stderr...
#   TETHER-VMRUN-EXIT-<nonce> <status>    COMMAND's exit status, or "setup-failed"
# The nonce comes from /vmrun/nonce, which is deleted before COMMAND runs so
# that COMMAND cannot forge the markers by accident or on purpose.
#
# Two ways to boot:
#   - the initramfs is the root (default): one stage, everything below;
#   - --rootfs (/vmrun/rootfs exists): stage 1 here mounts the read-only
#     Debian image from /dev/vda, puts tmpfs on its /run and
#     /opt/tether-tests, copies itself, busybox, COMMAND and the nonce to
#     /run/vmrun and the test files to /opt/tether-tests, and switch_roots
#     into it (the image becomes "/" of the initial mount namespace, as on a
#     host booted through an initramfs; never a chroot, whose paths would not
#     be the namespace's).  Stage 2 ("init.sh stage2", PID 1 in the new root,
#     run by the static busybox) mounts the rest and runs COMMAND with the
#     image's tools first in PATH.

failed=0
fail() { echo "vmrun-init: error: $*"; failed=1; }
must() { "$@" || fail "$*"; }

if [ "${1:-}" = stage2 ]; then
	# The image's root is read-only and has its own tools: no applet links.
	# This busybox runs its applets in preference to PATH (through
	# /proc/self/exe: stage 1 moved /proc, /sys and /dev here).
	stage=2
	export PATH=/opt/tether-tests/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root
	nonce=$(cat /run/vmrun/nonce)
	rm -f /run/vmrun/nonce
else
	/bin/busybox --install -s
	export PATH=/usr/bin:/bin:/sbin:/usr/sbin
	nonce=$(cat /vmrun/nonce)
	rm -f /vmrun/nonce
	echo "TETHER-VMRUN-START-$nonce"
	stage=0
	[ ! -e /vmrun/rootfs ] || stage=1
fi

# Stage 2 gets proc, sys and dev moved over from stage 1.
if [ "$stage" != 2 ]; then
	must mount -t proc proc /proc
	must mount -t sysfs sysfs /sys
	must mount -t devtmpfs devtmpfs /dev
fi

# Modules, listed by vmrun in dependency order (stage 1: before the root
# file system, whose disk may need them).
if [ "$stage" != 2 ] && [ -s /vmrun/modules ]; then
	while read -r m; do
		must insmod "/lib/modules/$m"
	done </vmrun/modules
fi

if [ "$stage" = 1 ]; then
	# The disk shows up once virtio_blk has probed it.
	i=0
	while [ ! -b /dev/vda ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	mkdir -p /newroot
	if [ "$failed" -eq 0 ] && mount -t ext4 -o ro /dev/vda /newroot; then
		must mount -t tmpfs -o mode=0755 tmpfs /newroot/run
		must mount -t tmpfs -o mode=0755 tmpfs /newroot/opt/tether-tests
		must mkdir -p /newroot/run/vmrun
		must cp /bin/busybox /vmrun/cmd /init /newroot/run/vmrun/
		must cp -a /opt/tether-tests/. /newroot/opt/tether-tests/
		(umask 077 && echo "$nonce" >/newroot/run/vmrun/nonce) || fail "cannot pass the nonce on"
		for d in dev proc sys; do
			must mount -o move "/$d" "/newroot/$d"
		done
	else
		fail "cannot mount the root file system /dev/vda (ext4, read-only)"
	fi
	if [ "$failed" -eq 0 ]; then
		# switch_root empties the initramfs, makes /newroot "/" and execs
		# stage 2 as PID 1.
		exec /bin/busybox switch_root /newroot /run/vmrun/busybox sh /run/vmrun/init stage2
		fail "switch_root failed"
	fi
	echo "TETHER-VMRUN-EXIT-$nonce setup-failed"
	sleep 2
	poweroff -f
fi

mkdir -p /dev/pts /dev/shm /dev/mqueue
must mount -t devpts -o ptmxmode=0666 devpts /dev/pts
must mount -t tmpfs -o mode=1777 tmpfs /dev/shm
must mount -t mqueue mqueue /dev/mqueue
# devtmpfs lacks these; bash process substitution needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
must mount -t securityfs securityfs /sys/kernel/security
must mount -t bpf -o mode=0700 bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true

# Pure cgroup2 (nothing mounts v1, so v2 gets every controller), with the
# options systemd uses; older kernels may lack memory_recursiveprot.
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup 2>/dev/null ||
	must mount -t cgroup2 cgroup2 /sys/fs/cgroup
if [ -r /sys/fs/cgroup/cgroup.controllers ]; then
	avail=" $(cat /sys/fs/cgroup/cgroup.controllers) "
	enable=
	for c in cpu memory pids io; do
		case "$avail" in
		*" $c "*) enable="$enable +$c" ;;
		*) echo "vmrun-init: warning: cgroup controller $c not available" ;;
		esac
	done
	if [ -n "$enable" ]; then
		echo "$enable" >/sys/fs/cgroup/cgroup.subtree_control ||
			fail "cannot enable cgroup controllers:$enable"
	fi
fi

must mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ "$stage" = 2 ]; then
	# The writable places of a host (its root stays read-only): /var/tmp,
	# and /srv for the tests' workspaces.  /run is stage 1's tmpfs.
	must mount -t tmpfs -o mode=1777 tmpfs /var/tmp
	must mount -t tmpfs -o mode=0755 tmpfs /srv
	# What systemd's sysctl.d/50-default.conf sets on a Debian host.
	for s in protected_hardlinks protected_symlinks protected_regular protected_fifos; do
		must sysctl -q -w "fs.$s=1"
	done
else
	must mount -t tmpfs -o mode=0755 tmpfs /run
fi
must ip link set lo up
hostname tether-vm

# From here on show kernel errors (oops, BUG, panic) on the console, which
# "quiet loglevel=1" hid during boot; warnings and below stay in dmesg.
echo 4 >/proc/sys/kernel/printk

cd /
if [ "$failed" -eq 0 ]; then
	# The script execs COMMAND by its path, so which sh reads it does not
	# matter; the image's dash would not take "exec --".
	if [ "$stage" = 2 ]; then
		sh /run/vmrun/cmd </dev/null
	else
		sh /vmrun/cmd </dev/null
	fi
	status=$?
else
	status=setup-failed
fi
echo "TETHER-VMRUN-EXIT-$nonce $status"

# vmrun stops qemu as soon as it reads the exit marker.  Give the UART time
# to send it before powering off (poweroff -f does not drain the tty).
sleep 2
poweroff -f
