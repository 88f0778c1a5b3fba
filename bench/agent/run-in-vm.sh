#!/bin/sh
# bench-agent, the part that runs inside the test VM (busybox sh), started by
# bench/agent/bench-agent:
#
#   run-in-vm.sh ROUNDS WARMUP RUNS CLIENTS REPS LIVE CONTEXT
#
# Expects /opt/tether-bench/{driver,startprobe,envelope.yaml} and tether on
# PATH.  Starts `tether daemon` (no daemon.yaml: the defaults, root may call
# it; its state directory /var/lib/tether is created in the initramfs) in the
# background, with deploy/tether.service's descriptor limit, runs
# bench/agent/driver against it, stops it.  Prints the driver's table and
# raw lines, the daemon's log ("bench-agent daemon: ..."), then "bench-agent
# done"; exits 1 when something could not be measured ("bench-agent error:
# ...").
set -u
D=/opt/tether-bench
BASE=/tmp/bench-agent
SOCK=/run/tether/tether.sock
die() {
	echo "bench-agent error: $*"
	exit 1
}

[ $# -eq 7 ] || die "usage: run-in-vm.sh ROUNDS WARMUP RUNS CLIENTS REPS LIVE CONTEXT"
ROUNDS=$1 WARMUP=$2 RUNS=$3 CLIENTS=$4 REPS=$5 LIVE=$6 CONTEXT=$7
# The envelope's workspace, and the standalone runs' audit files beside it
# (a run cannot write there: root is read-only).
mkdir -p "$BASE/ws" "$BASE/audit" || die "cannot create $BASE"
[ -e /etc/tether/daemon.yaml ] && die "/etc/tether/daemon.yaml exists; the bench wants the defaults"

# The descriptor limit of deploy/tether.service (LimitNOFILE=1048576).  With
# the kernel's default soft limit, 1024, the daemon cannot hold 64 live
# runs: it holds about 28 descriptors per live run (and keeps one per ended
# run), and POST /v1/runs fails with 500 "Too many open files" at the 39th.
ulimit -n 1048576 || die "cannot raise RLIMIT_NOFILE to 1048576"
tether daemon >"$BASE/daemon.log" 2>&1 &
DPID=$!
mem=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
"$D/driver" -p "$D/startprobe" -t /bin/true -l /bin/sleep -T "$(command -v tether)" \
	-e "$D/envelope.yaml" -a "$BASE/audit" -s "$SOCK" -D "$DPID" \
	-n "$ROUNDS" -w "$WARMUP" -k "$RUNS" -j "$CLIENTS" -r "$REPS" -m "$LIVE" \
	-c "qemu TCG, $(nproc) CPUs, $((mem / 1024)) MiB, ulimit -n $(ulimit -n); $CONTEXT"
rc=$?
kill -TERM "$DPID" 2>/dev/null
wait "$DPID"
drc=$?
sed 's/^/bench-agent daemon: /' "$BASE/daemon.log"
[ "$rc" -eq 0 ] || die "the driver failed (exit $rc)"
[ "$drc" -eq 0 ] || die "tether daemon exited $drc after SIGTERM"
echo "bench-agent done"
