#!/bin/sh
# A run's own scratch space and loopback (issue 14): /tmp, /var/tmp,
# /dev/shm, /dev/mqueue and HOME are fresh tmpfs mounts in the run's own
# mount namespace, SysV IPC is its own (IPC namespace), and loopback reaches
# the run's own listeners while the host's and other runs' stay unreachable.
# Every case that must work also asserts that the stream has no denial; every
# attack asserts the exact errno and, where the kernel records, the record.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/sws
mkdir -p "$WS" /var/tmp
chmod 777 "$WS"
ENV=$T/scratch.yaml
cat > "$ENV" <<EOT
sandbox:
  identity: {uid: 1000}
  filesystem:
    root: read_only
    workspace:
      path: $WS
EOT
ENV_EXEC=$T/scratch-exec.yaml
cat > "$ENV_EXEC" <<EOT
sandbox:
  identity: {uid: 1000}
  filesystem:
    root: read_only
    exec: ["@system", "@tmp", "/opt/tether-tests/**"]
    workspace:
      path: $WS
EOT

# srun ID ENVELOPE SCRIPT: the script in a fresh run; RC, $T/ID.audit.
srun() {
	rm -f "$T/$1.audit"
	tether run --envelope "$2" --run-id "$1" --audit "$T/$1.audit" -- /bin/sh -c "$3" \
		> "$T/$1.out" 2>&1
	RC=$?
}
# no denial of any kind (the LSM hooks' and the network hooks')
clean() { ! grep -q '"decision":"deny"' "$1"; }

# bg_start ID SETUP CHECK: a run that does SETUP, says it is ready, waits
# until bg_stop, then exits with CHECK's status; BG is its tether's pid.
bg_start() {
	rm -f "$WS/$1.ready" "$WS/$1.stop" "$T/$1.audit"
	tether run --envelope "$ENV" --run-id "$1" --audit "$T/$1.audit" -- /bin/sh -c "
		$2; touch $WS/$1.ready
		i=0; while [ ! -e $WS/$1.stop ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
		$3" > "$T/$1.out" 2>&1 &
	BG=$!
	i=0
	while [ ! -e "$WS/$1.ready" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}
# bg_stop ID: ends it; BG_RC is its status.
bg_stop() {
	touch "$WS/$1.stop"
	wait "$BG"
	BG_RC=$?
	rm -f "$WS/$1.ready" "$WS/$1.stop"
}

# --- /tmp, /var/tmp, HOME ----------------------------------------------------------
echo host > /tmp/host-file
echo host > /var/tmp/host-file
srun sc1 "$ENV" '
	set -e
	[ "$TMPDIR" = /tmp ] && [ "$HOME" = /run/tether/home ]
	t=$(mktemp /tmp/x.XXXXXX); echo data > "$t"; sort -T /tmp "$t" > /var/tmp/sorted
	echo "[user]" > "$HOME/.gitconfig"; mkdir -p "$HOME/.cache/pip"
	[ ! -e /tmp/host-file ] && [ ! -e /var/tmp/host-file ]
	[ "$(stat -c %u "$HOME")" = 1000 ] && [ "$(stat -c %a "$HOME")" = 700 ]
	[ "$(stat -c %a /tmp)" = 1777 ]
	for d in /tmp /var/tmp /dev/shm "$HOME"; do
		touch -d "2020-01-02 03:04:05" "$d/stamp"; mkdir "$d/dir"; touch -d "2020-01-02" "$d/dir"
		[ "$(stat -c %Y "$d/stamp")" -lt 1600000000 ]
	done'
if [ "$RC" -eq 0 ] && clean "$T/sc1.audit" && [ "$(cat /tmp/host-file /var/tmp/host-file)" = "host
host" ] && [ ! -e "$WS/.gitconfig" ] && [ -z "$(ls -A /run/tether/home)" ]; then
	pass "/tmp, /var/tmp, /dev/shm and HOME are the run's own: mktemp, sort -T, dotfiles, timestamps; the host's hidden"
else
	fail "private /tmp, /var/tmp, HOME" "exit $RC: $(cat "$T/sc1.out") $(cat "$T/sc1.audit")"
fi

# --- POSIX and SysV IPC (Python multiprocessing's semaphores live in /dev/shm) ---
# mq_open asks for CAP_SYS_RESOURCE to choose between two queue size limits
# and takes the lower one without it: that refusal is recorded, like every
# capability the run asks for (raising RLIMIT_NOFILE asks for the same one).
srun sc2 "$ENV" "$BIN/ipcprobe posix tether-sc2 && $BIN/ipcprobe sysv"
if [ "$RC" -eq 0 ] && [ ! -e /dev/shm/sem.tether-sc2 ] &&
	[ "$(grep -c '"decision":"deny"' "$T/sc2.audit")" -eq 1 ] &&
	grep -q '"kind":"capability","op":"capability","path":"cap_sys_resource","decision":"deny","errno":"EPERM","reason":"forbidden",.*"comm":"ipcprobe"' "$T/sc2.audit"; then
	pass "POSIX semaphores, shared memory, message queues and SysV IPC work in a run"
else
	fail "IPC in a run" "exit $RC: $(cat "$T/sc2.out") $(cat "$T/sc2.audit")"
fi

# --- another run's /tmp and /dev/shm are out of reach ---------------------------
bg_start sc3a "echo a > /tmp/mine; echo a > /dev/shm/tether-a" \
	"[ \"\$(cat /tmp/mine /dev/shm/tether-a)\" = 'a
a' ]"
apid=$(cat /sys/fs/cgroup/tether/sc3a/cgroup.procs 2>/dev/null | head -n 1)
srun sc3b "$ENV" "
	[ ! -e /tmp/mine ] || exit 10
	$BIN/ipcprobe seen tether-a && exit 11
	echo b > /tmp/mine || exit 12
	$BIN/fsprobe EACCES read /proc/$apid/root/tmp/mine || exit 13
	$BIN/fsprobe EACCES write /proc/$apid/root/dev/shm/tether-a || exit 14"
bg_stop sc3a
if [ -n "$apid" ] && [ "$RC" -eq 0 ] && [ "$BG_RC" -eq 0 ] && clean "$T/sc3a.audit" &&
	[ "$(grep -c '"decision":"deny"' "$T/sc3b.audit")" -eq 2 ] &&
	[ "$(grep -c '"kind":"proc","op":"ptrace","path":"","decision":"deny","errno":"EPERM","reason":"forbidden"' "$T/sc3b.audit")" -eq 2 ]; then
	pass "two runs at once: neither sees the other's /tmp or /dev/shm, not even through /proc/PID/root"
else
	fail "another run's /tmp and /dev/shm" "exit $RC/$BG_RC, pid '$apid': $(cat "$T/sc3b.out") $(cat "$T/sc3b.audit")"
fi

# --- the run cannot uncover the host's /tmp ---------------------------------------
srun sc4 "$ENV" "umount /tmp; umount -l /dev/shm; [ ! -e /tmp/host-file ]"
if [ "$RC" -eq 0 ] && [ "$(grep -c '"decision":"deny"' "$T/sc4.audit")" -eq 2 ] &&
	[ "$(grep -c '"path":"cap_sys_admin","decision":"deny","errno":"EPERM","reason":"forbidden"' "$T/sc4.audit")" -eq 2 ]; then
	pass "umount of the run's /tmp or /dev/shm is refused (EPERM, recorded): the host's stays hidden"
else
	fail "umount of the private trees" "exit $RC: $(cat "$T/sc4.out") $(cat "$T/sc4.audit")"
fi

# --- a workspace in /tmp is the host's directory ----------------------------------
TWS=/tmp/tws
mkdir -p "$TWS"
chown 1000:1000 "$TWS"
sed "s|path: $WS|path: $TWS|" "$ENV" > "$T/scratch-tws.yaml"
srun sc5 "$T/scratch-tws.yaml" "echo in > $TWS/made-in-run && [ ! -e /tmp/host-file ] && cd $TWS"
if [ "$RC" -eq 0 ] && clean "$T/sc5.audit" && [ "$(cat "$TWS/made-in-run")" = in ]; then
	pass "a workspace below /tmp is the host's directory, at its own path, in the private /tmp"
else
	fail "workspace in /tmp" "exit $RC: $(cat "$T/sc5.out") $(cat "$T/sc5.audit")"
fi
rm -rf "$TWS"

# --- executable scratch: only with filesystem.exec @tmp ----------------------------
srun sc6 "$ENV" "cp $BIN/fsprobe /tmp/tool && /tmp/tool ok nop"
if [ "$RC" -ne 0 ] &&
	grep -q '"op":"exec","path":"/tmp/tool","access":"exec","decision":"deny","errno":"EACCES","reason":"rule"' "$T/sc6.audit"; then
	pass "a program built in /tmp does not run by default (EACCES, recorded)"
else
	fail "exec from /tmp by default" "exit $RC: $(cat "$T/sc6.audit")"
fi
srun sc7 "$ENV_EXEC" "cp $BIN/fsprobe /tmp/tool && /tmp/tool ok nop && cp /tmp/tool /var/tmp/t2 && /var/tmp/t2 ok nop && ls >/dev/null"
if [ "$RC" -eq 0 ] && clean "$T/sc7.audit"; then
	pass "exec: [@system, @tmp] runs a program built in /tmp and /var/tmp, and the system's"
else
	fail "exec @tmp" "exit $RC: $(cat "$T/sc7.out") $(cat "$T/sc7.audit")"
fi

# --- loopback: the run's own listeners, never the host's ----------------------------
host_sink=$("$BIN/netsink" -d 127.0.0.1 7801 "$T/host-lo.log")
srun sc8 "$ENV" "
	$BIN/netsink -d 127.0.0.1 7802 /tmp/own.log > /dev/null || exit 10
	$BIN/netprobe ok tcp-send 127.0.0.1 7802 100 || exit 11
	$BIN/netprobe ok udp-sendto 127.0.0.1 7802 || exit 12
	$BIN/netsink -d :: 7803 /tmp/own6.log > /dev/null || exit 13
	$BIN/netprobe ok tcp-send ::1 7803 100 || exit 14
	grep -q 'bytes=100' /tmp/own.log || exit 16
	$BIN/netprobe ECONNREFUSED tcp-connect 127.0.0.1 7809 || exit 19
	$BIN/netprobe EPERM tcp-connect 127.0.0.1 7801 || exit 17
	$BIN/netprobe EPERM udp-sendto 127.0.0.1 7801 || exit 18"
if [ "$RC" -eq 0 ] && [ ! -s "$T/host-lo.log" ] &&
	[ "$(grep -c '"decision":"deny"' "$T/sc8.audit")" -eq 2 ] &&
	grep -q '"kind":"net","op":"connect",.*"port":7801,.*"decision":"deny","errno":"EPERM","reason":"default_deny"' "$T/sc8.audit" &&
	grep -q '"kind":"net","op":"sendmsg",.*"port":7801,.*"decision":"deny","errno":"EPERM","reason":"default_deny"' "$T/sc8.audit"; then
	pass "loopback: the run's own listeners (127.0.0.1, ::, TCP and UDP) work, a free port refuses the connection, a host listener is refused"
else
	fail "loopback by ownership" "exit $RC: $(cat "$T/sc8.out") $(cat "$T/sc8.audit") host log: $(cat "$T/host-lo.log" 2>/dev/null)"
fi

# --- a fixed port off loopback stays refused: a listener outsiders could probe ---
ip link add tsdummy0 type dummy 2>/dev/null
ip addr add 192.0.2.77/32 dev tsdummy0 2>/dev/null
ip link set tsdummy0 up 2>/dev/null
srun sc11 "$ENV" "$BIN/netsink -d 192.0.2.77 7810 /tmp/x.log; [ \$? -ne 0 ]"
if [ "$RC" -eq 0 ] && grep -q 'netsink: bind 192.0.2.77 7810: Operation not permitted' "$T/sc11.out" &&
	[ "$(grep -c '"decision":"deny"' "$T/sc11.audit")" -eq 1 ] &&
	grep -q '"kind":"net","op":"bind","family":"inet","protocol":"tcp","address":"192.0.2.77","port":7810,"decision":"deny","errno":"EPERM","reason":"forbidden"' "$T/sc11.audit"; then
	pass "bind to a fixed port on a non-loopback address is refused (EPERM, recorded)"
else
	fail "bind off loopback" "exit $RC: $(cat "$T/sc11.out") $(cat "$T/sc11.audit")"
fi
ip link del tsdummy0 2>/dev/null

# --- another run's listener is not the run's own -------------------------------------
bg_start sc9a "$BIN/netsink -d 127.0.0.1 7804 /tmp/l.log > /dev/null" "[ ! -s /tmp/l.log ]"
srun sc9b "$ENV" "$BIN/netprobe EPERM tcp-connect 127.0.0.1 7804"
bg_stop sc9a
if [ "$RC" -eq 0 ] && [ "$BG_RC" -eq 0 ] &&
	grep -q '"op":"connect",.*"port":7804,.*"decision":"deny","errno":"EPERM"' "$T/sc9b.audit"; then
	pass "another run's loopback listener is refused (EPERM, recorded), and nothing reached it"
else
	fail "another run's listener" "exit $RC/$BG_RC: $(cat "$T/sc9b.audit") $(cat "$T/sc9a.out")"
fi

# --- a host client cannot reach the run's listener: dropped, and said ------------
bg_start sc10 "$BIN/netsink -d 127.0.0.1 7805 /tmp/h.log > /dev/null" "[ ! -s /tmp/h.log ]"
timeout 10 "$BIN/netprobe" ok tcp-send 127.0.0.1 7805 10 > "$T/sc10.client" 2>&1
crc=$?
bg_stop sc10
if [ "$crc" -ne 0 ] && [ "$BG_RC" -eq 0 ] &&
	[ "$(grep -c '"op":"ingress"' "$T/sc10.audit")" -eq 1 ] &&
	grep -q '"kind":"net","op":"ingress",.*"decision":"deny","errno":"EPERM","reason":"default_deny"' "$T/sc10.audit" &&
	grep -qE '"ingress_dropped":[1-9]' "$T/sc10.audit"; then
	pass "a host client's SYN to the run's listener is dropped, with one record for that peer and port"
else
	fail "host client to the run's listener" "client $crc run $BG_RC: $(cat "$T/sc10.audit")"
fi
rm -f /tmp/host-file /var/tmp/host-file
kill "$host_sink" 2>/dev/null

finish
