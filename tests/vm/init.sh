#!/bin/busybox sh
# /init of the vmrun guest (copied into the initramfs by tests/vm/vmrun).
#
# Protocol with vmrun, over the serial console:
#   TETHER-VMRUN-START-<nonce>            /init runs (everything before is boot noise)
#   ...COMMAND's stdout and stderr...
#   TETHER-VMRUN-EXIT-<nonce> <status>    COMMAND's exit status, or "setup-failed"
# The nonce comes from /vmrun/nonce, which is deleted before COMMAND runs so
# that COMMAND cannot forge the markers by accident or on purpose.

/bin/busybox --install -s
export PATH=/usr/bin:/bin:/sbin:/usr/sbin

nonce=$(cat /vmrun/nonce)
rm -f /vmrun/nonce
echo "TETHER-VMRUN-START-$nonce"

failed=0
fail() { echo "vmrun-init: error: $*"; failed=1; }
must() { "$@" || fail "$*"; }

must mount -t proc proc /proc
must mount -t sysfs sysfs /sys
must mount -t devtmpfs devtmpfs /dev
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
must mount -t tmpfs -o mode=0755 tmpfs /run
must ip link set lo up
hostname tether-vm

# Modules, listed by vmrun in dependency order.
if [ -s /vmrun/modules ]; then
	while read -r m; do
		must insmod "/lib/modules/$m"
	done </vmrun/modules
fi

# From here on show kernel errors (oops, BUG, panic) on the console, which
# "quiet loglevel=1" hid during boot; warnings and below stay in dmesg.
echo 4 >/proc/sys/kernel/printk

cd /
if [ "$failed" -eq 0 ]; then
	sh /vmrun/cmd </dev/null
	status=$?
else
	status=setup-failed
fi
echo "TETHER-VMRUN-EXIT-$nonce $status"

# vmrun stops qemu as soon as it reads the exit marker.  Give the UART time
# to send it before powering off (poweroff -f does not drain the tty).
sleep 2
poweroff -f
