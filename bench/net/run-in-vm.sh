#!/bin/sh
# bench-net, the part that runs inside the test VM (busybox sh), started by
# bench/net/bench-net:
#
#   run-in-vm.sh CONNECT_N UDP_N DNS_N BATCHES ROUNDS
#
# Expects /opt/tether-bench/loops (bench/net/loops.c, static) and the
# envelopes /opt/tether-bench/rules-small.yaml and rules-large.yaml; tether is
# on PATH.  Prints the driver's "bench-net label=... round=..." lines (labels
# unloaded, root, outside, small, large) after one "bench-net kernel=..."
# line; bench/net/bench-net turns them into the table.  Exits 1 when
# something could not be measured ("bench-net error: ..." says what).
set -u
CONNECT_N=$1 UDP_N=$2 DNS_N=$3 BATCHES=$4 ROUNDS=$5
D=/opt/tether-bench
A=/tmp/bench-net
# The ports the envelopes allow (127.0.0.1/32, 7000-7100) and name.
TCP_PORT=7000 UDP_PORT=7001 UPSTREAM_PORT=7053 NAME=bench.example

die() {
	echo "bench-net error: $*"
	exit 1
}

mkdir -p /srv/benchnet "$A" || die "cannot create the workspace"
ip link set lo up 2>/dev/null
echo "bench-net kernel=$(uname -r) date=$(date -u +%Y-%m-%dT%H:%M:%SZ) cpus=$(nproc)" \
	"connect_n=$CONNECT_N udp_n=$UDP_N dns_n=$DNS_N batches=$BATCHES rounds=$ROUNDS"

# Outside a run the loops run in $CG, a cgroup at the depth of a run's
# (/sys/fs/cgroup/tether/RUN) and with the same controllers: in the root
# cgroup the kernel skips memory accounting, which every process on a
# systemd host pays and a run pays too.  Only "root" runs in the root cgroup.
CG=/sys/fs/cgroup/bench-net/outside
mkdir -p "$CG" || die "cannot create the cgroup $CG"

# The listener, the sink and the DNS upstream: one process, outside every
# run (in the root cgroup, with tether's controller), for the whole boot.
SERVER=$("$D/loops" serve "$TCP_PORT" "$UDP_PORT" "$UPSTREAM_PORT" "$NAME")
[ -n "$SERVER" ] || die "the loopback servers did not start"

# measure LABEL ROUND: the loops, outside any run (LABEL unloaded, root or
# outside) or inside a fresh run under the envelope of LABEL.  Lookups go
# straight to the upstream (direct), and in a run also to 127.0.0.1:53
# (dns), which the run's DNS proxy answers after asking the same upstream.
measure() {
	label=$1 round=$2
	lookups="direct=$DNS_N"
	case "$label" in
	small | large) lookups="direct=$DNS_N dns=$DNS_N" ;;
	esac
	# shellcheck disable=SC2086 # one loop per word
	set -- "$D/loops" -b "$BATCHES" -l "$label" -r "$round" -t "$TCP_PORT" -u "$UDP_PORT" \
		-U "$UPSTREAM_PORT" -n "$NAME" connect="$CONNECT_N" udp="$UDP_N" $lookups
	case "$label" in
	root)
		"$@" || die "$label round $round: the loops failed (exit $?)"
		;;
	unloaded | outside)
		(echo 0 > "$CG/cgroup.procs" && exec "$@") ||
			die "$label round $round: the loops failed (exit $?)"
		;;
	*)
		tether run --envelope "$D/rules-$label.yaml" --run-id "net-$label-$round" \
			--audit "$A/$label.$round.audit" -- "$@" || {
			rc=$?
			head -n 20 "$A/$label.$round.audit" 2>/dev/null
			die "$label round $round: tether run exited $rc"
		}
		;;
	esac
}

# Before any run: tether's programs are not loaded yet.
measure unloaded 0
# The first run loads and pins the programs; they stay attached, so every
# figure below pays the hooks' test for membership in a run.
tether run --envelope "$D/rules-small.yaml" --run-id net-load --audit "$A/load.audit" \
	-- /bin/true || die "tether run of /bin/true failed (exit $?)"
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

kill "$SERVER" 2>/dev/null
for f in "$A"/*.audit; do
	if grep -q '"decision":"deny"' "$f"; then
		echo "bench-net warning: $f holds denials:"
		grep '"decision":"deny"' "$f" | head -n 5
	fi
done
echo "bench-net done"
