#!/bin/sh
# Nothing carries over (issue 17): run A plants a canary through every
# channel it has (tests/vm/progs/canaryprobe.c lists them: the fresh
# workspace, TMPDIR, /tmp, /var/tmp, /dev/shm, HOME, POSIX and SysV IPC,
# abstract and pathname unix sockets, loopback sockets, the keyrings, the
# persistent one included, its cgroup, extended attributes, the host name,
# host paths, locks on host files, a pty and a daemon that tries to outlive
# the run), then run B, same identity and envelope, looks for each: one
# line per channel.  Both layouts: one file system for the workspace and the
# private trees (disk_bytes) and a tmpfs each.  A control shows that the
# look finds what is there (plant and look in one run), and the host checks
# see a live run's daemon and sockets before they assert them gone.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/canary
rm -rf "$WS" /srv/canary.go
mkdir -p /var/tmp /srv
# canary_env FILE [EXTRA-RESOURCES]: uid 1000, a fresh one_run workspace
canary_env() {
	cat > "$1" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $WS, mode: fresh}
  resources: {process_count: 64$2}
EOT
}
canary_env "$T/canary-disk.yaml" ", disk_bytes: 64MiB"
canary_env "$T/canary-tmpfs.yaml"

# The channels a run of this envelope must be able to plant: a look that
# finds nothing where nothing could be planted proves nothing.
MUST_PLANT="workspace tmpdir tmp var-tmp dev-shm home shm-open posix-sem posix-mq
	sysv-shm sysv-sem sysv-msg keyring-session key-serial cgroup-dir abstract-stream
	abstract-dgram unix-path tcp-listener udp-socket memfd flock posix-lock process"
# The ones it must be refused: they would reach the host or its own cgroup's files.
MUST_REFUSE="run run-user run-lock var-lock srv dev bpffs cwd cgroup-file cgroup-mkdir
	xattr-host uts keyring-user keyring-user-session keyring-persistent key-quota"
# What the host can see of a live run, checked with canaryprobe look on the host.
HOST_CHANNELS="sysv-shm sysv-sem sysv-msg abstract-stream abstract-dgram tcp-listener
	udp-socket process memfd flock posix-lock"

# crun NAME RUN-ID ENVELOPE ARGS...: canaryprobe ARGS in a run; RC, $T/NAME.out, $T/NAME.audit
crun() {
	name=$1 rid=$2 env=$3
	shift 3
	rm -f "$T/$name.audit"
	tether run --envelope "$env" --run-id "$rid" --audit "$T/$name.audit" -- \
		"$BIN/canaryprobe" "$@" > "$T/$name.out" 2>&1
	RC=$?
}
# hints FILE: the hint lines plant printed, as look's arguments
hints() { sed -n 's/^hint //p' "$1" | tr '\n' ' '; }
# result FILE plant|look CHANNEL: what the probe printed for the channel
result() { sed -n "s/^$2 $3: //p" "$1" | head -n 1; }
# end_ok AUDIT: the end record says the cleanup was verified
end_ok() { grep '"event":"end"' "$1" | grep -qF '"cleanup_verified":true'; }

# host_live TAG: sets LIVE to what the host sees of run TAG's canaries
# (empty: nothing): the SysV key, the abstract names, the daemon, by the
# host's own /proc, and the other HOST_CHANNELS by canaryprobe on the host.
host_live() {
	LIVE=
	for f in shm sem msg; do
		awk -v k=2122186775 '$1 == k { found = 1 } END { exit !found }' \
			"/proc/sysvipc/$f" 2>/dev/null && LIVE="$LIVE sysv-$f-key"
	done
	grep -qE " @tether-canary-$1(-d)?\$" /proc/net/unix && LIVE="$LIVE /proc/net/unix"
	for c in /proc/[0-9]*/comm; do
		[ "$(cat "$c" 2>/dev/null)" = "cnry-$1" ] && LIVE="$LIVE daemon:${c%/comm}"
	done
	"$BIN/canaryprobe" look "$1" > "$T/host-look-$1.out" 2>&1
	for ch in $HOST_CHANNELS; do
		case "$(result "$T/host-look-$1.out" look "$ch")" in
		absent*) ;;
		*) LIVE="$LIVE $ch($(result "$T/host-look-$1.out" look "$ch"))" ;;
		esac
	done
}
# host_files TAG: sets FILES to the host's files named after the tag
host_files() {
	FILES=$(for m in / /tmp /var/tmp /run /srv /dev /dev/shm; do
		find "$m" -xdev -name "*canary-$1*" 2>/dev/null
	done | sort -u | tr '\n' ' ')
}

# keys_of UID: the uid's key count in /proc/key-users (root reads it; runs may not)
keys_of() { awk -v u="$1:" '$1 == u { print $3; exit }' /proc/key-users | cut -d/ -f1; }

# canaries LABEL ENVELOPE A-ID B-ID TAG: run A plants, run B looks, one line per channel
canaries() {
	label=$1 env=$2 a=$3 b=$4 tag=$5
	keys_before=$(keys_of 1000)
	crun "$a" "$a" "$env" plant "$tag" "$WS"
	arc=$RC
	# the kernel frees a run's keys when its session keyring goes: soon, not at once
	i=0
	while [ "$(keys_of 1000)" -gt "${keys_before:-0}" ] 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	keys_after=$(keys_of 1000)
	if [ "${keys_after:-0}" -le "${keys_before:-0}" ]; then
		pass "$label: after run A the uid holds no more keys than before (${keys_before:-none}, then ${keys_after:-none}: /proc/key-users, as root)"
	else
		fail "$label: keys left" "uid 1000 held $keys_before keys before run A, $keys_after after"
	fi
	if [ "$arc" -eq 0 ] && end_ok "$T/$a.audit" && grep -q '^plant process: ok' "$T/$a.out"; then
		pass "$label: run A planted ($(grep -c ': ok$' "$T/$a.out") channels ok) and ended with cleanup_verified true"
	else
		fail "$label: run A" "exit $arc: $(cat "$T/$a.out") $(grep '"event":"end"' "$T/$a.audit")"
	fi
	if grep '"event":"end"' "$T/$a.audit" | grep -qE '"leftover_processes":[1-9]'; then
		pass "$label: run A's daemon outlived its first process and was killed at the end ($(grep -o '"leftover_processes":[0-9]*' "$T/$a.audit"))"
	else
		fail "$label: leftover daemon" "the end record counts none: $(grep '"event":"end"' "$T/$a.audit")"
	fi
	for ch in $MUST_PLANT; do
		r=$(result "$T/$a.out" plant "$ch")
		[ "$r" = ok ] || fail "$label: $ch" "run A could not plant it (${r:-no line}): nothing to look for"
	done
	for ch in $MUST_REFUSE; do
		r=$(result "$T/$a.out" plant "$ch")
		case "$r" in
		E*) ;;
		*) fail "$label: $ch" "run A was not refused it (${r:-no line})" ;;
		esac
	done

	host_live "$tag"
	host_files "$tag"
	if [ -z "$LIVE" ] && [ -z "$FILES" ] && [ ! -e "$WS" ]; then
		pass "$label: after run A, the host has no SysV key 0x7e7e0017, no @tether-canary-$tag in /proc/net/unix, no daemon, lock or socket, no file named after the tag, no $WS"
	else
		fail "$label: host after run A" "left:$LIVE files: $FILES $(ls -ld "$WS" 2>&1)"
	fi

	crun "$b" "$b" "$env" look "$tag" "$WS" $(hints "$T/$a.out")
	brc=$RC
	for ch in $(sed -n 's/^plant \([^:]*\): .*/\1/p' "$T/$a.out"); do
		p=$(result "$T/$a.out" plant "$ch")
		l=$(result "$T/$b.out" look "$ch")
		case "$l" in
		absent*) pass "$label: $ch: run A planted $p; run B: $l" ;;
		"") fail "$label: $ch" "run B printed no line for it: $(cat "$T/$b.out")" ;;
		*) fail "$label: $ch" "run A planted $p; run B: $l" ;;
		esac
	done
	if [ "$brc" -eq 0 ] && end_ok "$T/$b.audit" && ! grep -q FOUND "$T/$b.out"; then
		pass "$label: run B's look exits 0: every channel absent"
	else
		fail "$label: run B" "exit $brc, found: $(grep -v ': absent' "$T/$b.out" | tr '\n' ';')"
	fi
}

# --- run A, then run B: same identity, same envelope ----------------------------------
# (first: no run may make its uid's persistent keyring, which would outlive
# it; were ca1 able to, its key there would be the one that carries over)
canaries "one file system (disk_bytes)" "$T/canary-disk.yaml" ca1 ca2 ca
canaries "a tmpfs each" "$T/canary-tmpfs.yaml" cb1 cb2 cb

# run B under run A's own run id: its cgroup has A's path and is still not A's
crun ca3 ca1 "$T/canary-disk.yaml" look ca "$WS" $(hints "$T/ca1.out")
if [ "$RC" -eq 0 ] && ! grep -q FOUND "$T/ca3.out" &&
	grep -q '^look cgroup-dir: absent (the path names a new cgroup)' "$T/ca3.out"; then
	pass "a later run with run A's own run id finds nothing either (its cgroup has A's path, not A's inode)"
else
	fail "run B with run A's id" "exit $RC, found: $(grep -v ': absent' "$T/ca3.out" | tr '\n' ';') $(grep cgroup-dir "$T/ca3.out")"
fi

# --- the look finds what is there: plant and look in one run --------------------------
rm -f "$T/cc1.audit"
tether run --envelope "$T/canary-disk.yaml" --run-id cc1 --audit "$T/cc1.audit" -- /bin/sh -c "
	$BIN/canaryprobe plant cc1 $WS > /tmp/plant.out; cat /tmp/plant.out
	$BIN/canaryprobe look cc1 $WS \$(sed -n 's/^hint //p' /tmp/plant.out)" > "$T/cc1.out" 2>&1
RC=$?
missed=
n=0
for ch in $(sed -n 's/^plant \([^:]*\): ok$/\1/p' "$T/cc1.out"); do
	case "$(result "$T/cc1.out" look "$ch")" in
	FOUND*) n=$((n + 1)) ;;
	*) missed="$missed $ch($(result "$T/cc1.out" look "$ch"))" ;;
	esac
done
if [ "$RC" -eq 1 ] && [ -z "$missed" ] && [ "$n" -ge 20 ]; then
	pass "control: in the run that planted them, the look finds all $n canaries planted ok and exits 1"
else
	fail "control: plant then look in one run" "exit $RC, $n found, missed:$missed: $(cat "$T/cc1.out")"
fi

# --- the host checks see a live run's daemon and sockets, then nothing -----------------
rm -f /srv/canary.go "$T/cc2.audit"
tether run --envelope "$T/canary-disk.yaml" --run-id cc2 --audit "$T/cc2.audit" -- /bin/sh -c "
	$BIN/canaryprobe plant cc2 $WS
	i=0; while [ ! -e /srv/canary.go ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done" \
	> "$T/cc2.out" 2>&1 &
bg=$!
i=0
while ! grep -q '^plant process:' "$T/cc2.out" 2>/dev/null && [ $i -lt 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
host_live cc2
live=$LIVE
host_files cc2
files=$FILES
: > /srv/canary.go
wait "$bg"
RC=$?
rm -f /srv/canary.go
host_live cc2
case "$live" in
*/proc/net/unix*daemon:*abstract-stream*tcp-listener*udp-socket*process*flock*posix-lock*) ok=1 ;;
*) ok= ;;
esac
if [ -n "$ok" ] && [ -z "$files" ] && [ "$RC" -eq 0 ] && [ -z "$LIVE" ] && end_ok "$T/cc2.audit"; then
	pass "control: while a run lives the host sees its abstract names, daemon, loopback sockets and locks (not its files, nor its SysV objects); after it, none"
else
	fail "control: host checks of a live run" "exit $RC, live:$live files: $files after:$LIVE $(cat "$T/cc2.out")"
fi

finish
