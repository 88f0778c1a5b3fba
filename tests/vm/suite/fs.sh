#!/bin/sh
# Filesystem write confinement, end to end: real BPF-LSM programs in a real
# kernel.  Every denial is checked for its errno (by fsprobe) and for its
# exact audit record.  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/ws			# on the same mount as /srv/outside: hard links are possible
OUT=/srv/outside
ENV=$T/env.yaml
envelope "$ENV" "$WS"
mkdir -p "$OUT/emptydir"
echo original > "$OUT/file"

# denied NAME ID OP PATH_IN_RECORD ERRNO_NAME ARGS...: the probe sees ERRNO_NAME
# and the stream holds exactly the record for it.  The requested access is
# $ACCESS (default: write).
denied() {
	name=$1 id=$2 op=$3 rpath=$4 err=$5
	shift 5
	in_run "$id" "$err" "$@"
	reason=${REASON:-'"reason":"rule","rule":0,"rule_path":"/"'}	# rule 0 is "/": readable, not writable
	access="\"access\":\"${ACCESS:-write}\","
	case "$op" in
	mount | mknod_device | open_device) reason='"reason":"forbidden"' access= ;;
	esac
	rec="{\"seq\":2,\"run_id\":\"$id\",\"kind\":\"$(kind_of "$op")\",\"op\":\"$op\",\"path\":\"$rpath\",$access\"decision\":\"deny\",\"errno\":\"$err\",$reason,\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
	if [ "$RC" -ne 0 ]; then
		fail "$name" "fsprobe did not see $err (tether exit $RC)"
	elif ! expect_record "$name" "$T/$id.audit" "$rec"; then
		fail "$name" "audit record missing or different"
	else
		pass "$name"
	fi
}

# --- allowed inside the workspace -------------------------------------------
in_run w1 ok write "$WS/a"
if [ "$RC" -eq 0 ] && [ "$(cat "$WS/a")" = tether ] && no_denials "$T/w1.audit"; then
	pass "write inside the workspace is allowed and not recorded as a denial"
else
	fail "write inside the workspace is allowed" "exit $RC, content '$(cat "$WS/a" 2>&1)'"
fi

rm -f "$T/w2.audit"
tether run --envelope "$ENV" --run-id w2 --audit "$T/w2.audit" -- /bin/sh -e -c "
	$BIN/fsprobe ok mkdir $WS/d
	$BIN/fsprobe ok write $WS/d/f
	$BIN/fsprobe ok rename $WS/d/f $WS/d/g
	$BIN/fsprobe ok chmod $WS/d/g
	$BIN/fsprobe ok chown $WS/d/g
	$BIN/fsprobe ok truncate $WS/d/g
	$BIN/fsprobe ok symlink g $WS/d/s
	$BIN/fsprobe ok link $WS/d/g $WS/d/h
	$BIN/fsprobe ok mknod-fifo $WS/d/fifo
	$BIN/fsprobe ok unlink $WS/d/h
	$BIN/fsprobe ok write /dev/null
	$BIN/fsprobe ok read /srv/outside/file
	rm -r $WS/d"
RC=$?
if [ "$RC" -eq 0 ] && no_denials "$T/w2.audit" && [ ! -e "$WS/d" ]; then
	pass "mkdir, rename, chmod, chown, truncate, links, fifo, unlink inside; /dev/null; reads outside"
else
	fail "operations inside the workspace" "exit $RC"
	cat "$T/w2.audit"
fi

rm -f "$T/al.audit"
tether run --envelope "$ENV" --run-id al --audit "$T/al.audit" --audit-allowed -- /bin/sh -e -c "
	$BIN/fsprobe ok write $WS/al
	$BIN/fsprobe $XATTR_OK setxattr $WS/al
	$BIN/fsprobe EACCES write $OUT/al"
RC=$?
al0='{"seq":3,"run_id":"al","kind":"fs","op":"exec","path":"/opt/tether-tests/bin/fsprobe","access":"exec","decision":"allow","reason":"rule","rule":6,"rule_path":"/opt","uid":0,"comm":"sh","exe":"/bin/busybox"}'
al1='{"seq":4,"run_id":"al","kind":"fs","op":"create","path":"/srv/ws/al","access":"write","decision":"allow","reason":"rule","rule":8,"rule_path":"/srv/ws","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
al2='{"seq":5,"run_id":"al","kind":"fs","op":"open_write","path":"/srv/ws/al","access":"write","decision":"allow","reason":"rule","rule":8,"rule_path":"/srv/ws","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
al3='{"seq":7,"run_id":"al","kind":"fs","op":"setxattr","path":"/srv/ws/al","access":"write","decision":"allow","reason":"rule","rule":8,"rule_path":"/srv/ws","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
al4='{"seq":9,"run_id":"al","kind":"fs","op":"create","path":"/srv/outside/al","access":"write","decision":"deny","errno":"EACCES","reason":"rule","rule":0,"rule_path":"/","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
# seq 1: the start record; 2, 6, 8: the execs of busybox and of each probe.  Rules: 0 "/", 1-7 the
# system software trees (/bin ... /opt, /sbin), 8 the workspace, 9 /usr.
if [ "$RC" -eq 0 ] && expect_record al0 "$T/al.audit" "$al0" &&
	expect_record al1 "$T/al.audit" "$al1" && expect_record al2 "$T/al.audit" "$al2" &&
	expect_record al3 "$T/al.audit" "$al3" && expect_record al4 "$T/al.audit" "$al4"; then
	pass "--audit-allowed records allowed writes (create, open, xattr) and execs next to the denial"
else
	fail "--audit-allowed" "exit $RC"
fi

# --- denied outside ---------------------------------------------------------
denied "create outside the workspace" d1 create "$OUT/new" EACCES write "$OUT/new"
[ ! -e "$OUT/new" ] || fail "denied create left no file" "$OUT/new exists"
denied "overwrite a file outside" d2 open_write "$OUT/file" EACCES write "$OUT/file"
denied "append to a file outside" d3 open_write "$OUT/file" EACCES append "$OUT/file"
ACCESS=read,write
denied "O_RDONLY|O_TRUNC outside" d4 open_write "$OUT/file" EACCES trunc-rdonly "$OUT/file"
ACCESS=
denied "O_RDONLY|O_CREAT outside" d5 create "$OUT/new2" EACCES create-rdonly "$OUT/new2"
denied "mkdir outside" d6 mkdir "$OUT/dir" EACCES mkdir "$OUT/dir"
denied "rmdir outside" d7 rmdir "$OUT/emptydir" EACCES rmdir "$OUT/emptydir"
denied "unlink outside" d8 unlink "$OUT/file" EACCES unlink "$OUT/file"
denied "truncate(2) outside" d9 truncate "$OUT/file" EACCES truncate "$OUT/file"
denied "chmod outside" d10 chmod "$OUT/file" EACCES chmod "$OUT/file"
denied "chown outside" d11 chown "$OUT/file" EACCES chown "$OUT/file"
denied "mknod a fifo outside" d12 create "$OUT/fifo" EACCES mknod-fifo "$OUT/fifo"
denied "symlink created outside" d13 symlink "$OUT/sym" EACCES symlink /etc/passwd "$OUT/sym"
denied "remove the workspace itself" d14 rmdir "$WS" EACCES rmdir "$WS"
denied "rename the workspace itself" d15 rename "$WS" EACCES rename "$WS" /srv/ws2
[ "$(cat "$OUT/file")" = original ] && pass "the file outside is unchanged" ||
	fail "the file outside is unchanged" "content is now '$(cat "$OUT/file")'"

# --- device nodes: a workspace path must not name a kernel object ---------
denied "mknod /dev/mem's numbers in the workspace" dv1 mknod_device "$WS/mem" EPERM mknod-chr "$WS/mem" 1 1
denied "mknod a block device in the workspace" dv2 mknod_device "$WS/disk" EPERM mknod-blk "$WS/disk" 7 0
[ ! -e "$WS/mem" ] && [ ! -e "$WS/disk" ] && pass "no device node was created" ||
	fail "device nodes" "$(ls -l "$WS")"

mknod "$WS/kmsg-node" c 1 11	# made by someone outside the run (an untrusted tarball, ...)
denied "write-open a device node already in the workspace" dv3 open_device "$WS/kmsg-node" EACCES \
	append "$WS/kmsg-node"
mknod "$WS/null-node" c 1 3
in_run dv4 ok append "$WS/null-node"
[ "$RC" -eq 0 ] && pass "a node with /dev/null's numbers is /dev/null wherever it is" ||
	fail "null node" "exit $RC"
denied "chmod the host's /dev/null" dv5 chmod /dev/null EACCES chmod /dev/null
[ "$(stat -c %a /dev/null)" = 666 ] && pass "/dev/null keeps its mode" ||
	fail "/dev/null mode" "$(stat -c %a /dev/null)"
ACCESS=read,write
denied "open(path, 3), the ioctl-only access mode, outside" m3 open_write "$OUT/file" EACCES \
	open-mode3 "$OUT/file"
ACCESS=

# --- path tricks: decisions use the resolved object ------------------------
ln -sf "$OUT/file" "$WS/link-out"
denied "write through a symlink in the workspace" t1 open_write "$OUT/file" EACCES write "$WS/link-out"
denied "write through .. out of the workspace" t2 open_write "$OUT/file" EACCES write "$WS/../outside/file"
denied "write through /proc/self/root" t3 open_write "$OUT/file" EACCES write "/proc/self/root$OUT/file"
denied "re-open an O_PATH fd for writing via /proc/self/fd" t4 open_write "$OUT/file" EACCES reopen-write "$OUT/file"
denied "hard link a protected file into the workspace" t5 link "$OUT/file" EACCES link "$OUT/file" "$WS/hard"
[ ! -e "$WS/hard" ] || fail "denied hard link left no name" "$WS/hard exists"
denied "rename a file out of the workspace" t6 rename "$OUT/moved" EACCES rename "$WS/a" "$OUT/moved"
denied "rename a file into the workspace" t7 rename "$OUT/file" EACCES rename "$OUT/file" "$WS/stolen"
denied "RENAME_EXCHANGE with a file outside" t8 rename "$OUT/file" EACCES exchange "$WS/a" "$OUT/file"
mkdir -p "$WS/mnt"
denied "bind-mount a tree into the workspace" t9 mount "$WS/mnt" EPERM bind-mount "$OUT" "$WS/mnt"
[ "$(cat "$OUT/file")" = original ] && pass "the file outside is still unchanged" ||
	fail "the file outside is still unchanged" "content is now '$(cat "$OUT/file")'"

# --- other ways in: io_uring, O_TMPFILE, the boundary's own files ---------
# No run may make an io_uring instance (docs/kernel-surface.md): an openat
# through one never starts, outside the workspace or inside, and whether it
# would run in the task or in an io-wq worker.
for c in "u-uring-write uring-write $OUT" "u-uring-async-write uring-async-write $OUT" \
	"u3 uring-async-write $WS"; do
	set -- $c
	in_run "$1" EPERM "$2" "$3/$2"
	if [ "$RC" -eq 0 ] && [ ! -e "$3/$2" ] &&
		normalize "$T/$1.audit" | grep -qxF "{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"kernel\",\"op\":\"anon_inode\",\"path\":\"[io_uring]\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"; then
		pass "io_uring openat in $3 ($2): no io_uring instance in a run"
	else
		fail "io_uring openat in $3 ($2)" "exit $RC"
		cat "$T/$1.audit"
	fi
done
in_run o1 EACCES tmpfile "$OUT"
if [ "$RC" -eq 0 ] && normalize "$T/o1.audit" | grep -q "\"op\":\"open_write\",\"path\":\"$OUT/#[0-9]*\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\""; then
	pass "O_TMPFILE outside"
else
	fail "O_TMPFILE outside" "exit $RC"
	cat "$T/o1.audit"
fi
pin=$(ls -d /sys/fs/bpf/tether/*/link_tether_file_open | head -n 1)
in_run b1 EACCES unlink "$pin"
if [ "$RC" -eq 0 ] && [ -e "$pin" ] && normalize "$T/b1.audit" | grep -qxE "\{\"seq\":2,\"run_id\":\"b1\",\"kind\":\"fs\",\"op\":\"unlink\",\"path\":\"$pin\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"rule\":[0-9]+,\"rule_path\":\"/sys/fs/bpf\",\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"\}"; then
	pass "unpin the enforcing programs (/sys/fs/bpf is protected)"
else
	fail "unpin the enforcing programs" "exit $RC: $(cat "$T/b1.audit")"
fi
# cgroup files are protected by their file system, wherever it is mounted
REASON='"reason":"protected"'
denied "move out of the run cgroup via cgroup.procs" b2 open_write /sys/fs/cgroup/cgroup.procs EACCES \
	append /sys/fs/cgroup/cgroup.procs
unset REASON
denied "write a sysctl" b3 open_write /proc/sys/kernel/hostname EACCES append /proc/sys/kernel/hostname
denied "write a device other than the built-in ones" b4 open_device /dev/kmsg EACCES append /dev/kmsg

# --- extended attributes: decided by inode identity (the hooks get no mount) --
setfattr_probe() { "$BIN/fsprobe" "$@" >/dev/null; }
setfattr_probe ok setxattr "$OUT/file"	# outside any run: allowed, and sets one to remove
in_run x1 EACCES setxattr "$OUT/file"
x1='{"seq":2,"run_id":"x1","kind":"fs","op":"setxattr","path":"/srv/outside/file","path_scope":"filesystem","access":"write","decision":"deny","errno":"EACCES","reason":"default_deny","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record x1 "$T/x1.audit" "$x1" && pass "setxattr outside the workspace" ||
	fail "setxattr outside the workspace" "exit $RC"
in_run x2 EACCES removexattr "$OUT/file"
x2='{"seq":2,"run_id":"x2","kind":"fs","op":"removexattr","path":"/srv/outside/file","path_scope":"filesystem","access":"write","decision":"deny","errno":"EACCES","reason":"default_deny","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record x2 "$T/x2.audit" "$x2" && pass "removexattr outside the workspace" ||
	fail "removexattr outside the workspace" "exit $RC"
mkdir -p "$WS/xd"
: > "$WS/xd/f"
rm -f "$T/x3.audit"
tether run --envelope "$ENV" --run-id x3 --audit "$T/x3.audit" -- /bin/sh -e -c "
	$BIN/fsprobe $XATTR_OK setxattr $WS/xd/f
	$BIN/fsprobe $XATTR_OK removexattr $WS/xd/f
	$BIN/fsprobe $XATTR_OK setxattr $WS"
RC=$?
[ "$RC" -eq 0 ] && no_denials "$T/x3.audit" && pass "xattrs inside the workspace (and on it) are allowed" ||
	fail "xattrs inside the workspace" "exit $RC"

in_run tm1 EACCES utimes "$OUT/file"
tm1='{"seq":2,"run_id":"tm1","kind":"fs","op":"utimes","path":"/srv/outside/file","path_scope":"filesystem","access":"write","decision":"deny","errno":"EACCES","reason":"default_deny","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record tm1 "$T/tm1.audit" "$tm1" && pass "utimensat on a file outside" ||
	fail "utimensat outside" "exit $RC"
rm -f "$T/tm2.audit"
tether run --envelope "$ENV" --run-id tm2 --audit "$T/tm2.audit" -- /bin/sh -e -c "
	$BIN/fsprobe ok utimes $WS/a
	$BIN/fsprobe ok chmod $WS/a
	touch $WS/a
	! touch $OUT/file 2>/dev/null"
RC=$?
[ "$RC" -eq 0 ] && pass "utimes and touch inside the workspace; touch of a file outside fails" ||
	fail "utimes inside" "exit $RC"

# mount_setattr and the new mount API reach no LSM hook: a seccomp filter fails
# them with EPERM (no audit record: seccomp cannot write to the run's ring).
mkdir -p /srv/ro && mount -t tmpfs -o ro,nosuid tmpfs /srv/ro
in_run ms1 EPERM mount-setattr /srv/ro
rc1=$RC
in_run ms2 EPERM fspick /srv/ro
if [ "$rc1" -eq 0 ] && [ "$RC" -eq 0 ] && grep -q ' /srv/ro ro,nosuid' /proc/self/mountinfo; then
	pass "mount_setattr and fspick fail with EPERM; the host mount keeps ro,nosuid"
else
	fail "mount_setattr / fspick" "exit $RC: $(grep ' /srv/ro ' /proc/self/mountinfo)"
fi
umount /srv/ro

# Another process's descriptors (/proc/PID/fd) and another mount namespace.
sleep 60 3>>"$OUT/victim" &
victim=$!
in_run pt1 EACCES append "/proc/$victim/fd/3"
if [ "$RC" -eq 0 ] && [ ! -s "$OUT/victim" ] &&
	normalize "$T/pt1.audit" | grep -qF '"op":"capability","path":"cap_sys_ptrace","decision":"deny","errno":"EPERM","reason":"forbidden"'; then
	# the run's empty capability sets fail the ptrace check before BPF-LSM's own
	pass "an outside process's descriptors are out of reach (/proc/PID/fd, ptrace check)"
else
	fail "/proc/PID/fd of an outside process" "exit $RC"
	cat "$T/pt1.audit"
fi
kill $victim
mkdir -p "$WS/other-ns"
unshare -m /bin/sh -c "mount --bind $OUT $WS/other-ns; sleep 60" &
nsholder=$!
sleep 0.3
in_run sn1 EACCES setns "/proc/$nsholder/ns/mnt"
rc1=$RC
in_run sn2 EPERM setns /proc/self/ns/mnt
[ "$rc1" -eq 0 ] && [ "$RC" -eq 0 ] &&
	normalize "$T/sn2.audit" | grep -qF '"op":"capability","path":"cap_sys_admin","decision":"deny","errno":"EPERM"' &&
	pass "another mount namespace is out of reach (its ns file: ptrace check; setns: no CAP_SYS_ADMIN, recorded)" ||
	fail "setns" "exit $rc1 / $RC"
kill $nsholder
in_run ft1 EACCES ftruncate-stdout x > "$OUT/stdout-log"
if [ "$RC" -eq 0 ] && grep -q "ftruncate-stdout" "$OUT/stdout-log" &&
	normalize "$T/ft1.audit" | grep -qF '"op":"truncate","path":"/srv/outside/stdout-log","access":"write","decision":"deny","errno":"EACCES"'; then
	pass "ftruncate of an inherited stdout file outside (file_truncate on 6.2+, path_truncate before)"
else
	fail "ftruncate stdout" "exit $RC"
	cat "$T/ft1.audit"
fi

in_run pf1 ok pidfd-self x
[ "$RC" -eq 0 ] && no_denials "$T/pf1.audit" && pass "pidfd_open of its own process works (pidfs on 6.9+)" ||
	fail "pidfd_open" "exit $RC"

# Unix sockets: a host daemon would act for the run outside it.
"$BIN/unixsrv" stream "$OUT/daemon.sock" > "$T/srv1" &
s1=$!
"$BIN/unixsrv" dgram "$OUT/daemon.dgram" > "$T/srv2" &
s2=$!
"$BIN/unixsrv" abstract tether-test > "$T/srv3" &
s3=$!
"$BIN/unixsrv" abstract tether-test2 > "$T/srv4" &
s4=$!
i=0
while [ "$(cat "$T/srv1" "$T/srv2" "$T/srv3" "$T/srv4" 2>/dev/null | grep -c ready)" -lt 4 ] &&
	[ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
"$BIN/fsprobe" ok unix-connect "$OUT/daemon.sock" >/dev/null &&
	pass "outside any run the test daemons answer" || fail "unix daemons" "not reachable from outside"
ACCESS=connect
denied "connect to a host daemon's unix socket" us1 unix_connect "$OUT/daemon.sock" EACCES \
	unix-connect "$OUT/daemon.sock"
denied "send to a host daemon's datagram socket" us2 unix_send "$OUT/daemon.dgram" EACCES \
	unix-send "$OUT/daemon.dgram"
ACCESS=
# filesystem.connect names the sockets a run may reach, and nothing beside them.
cat > "$T/connect.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
    connect: [$OUT/daemon.sock]
    abstract_sockets: [tether-test]
  acknowledge_unenforced: [network_egress.default, filesystem.exact_paths]
EOT
rm -f "$T/uc.audit"
tether run --envelope "$T/connect.yaml" --run-id uc --audit "$T/uc.audit" -- /bin/sh -c "
	$BIN/fsprobe ok unix-connect $OUT/daemon.sock &&
	$BIN/fsprobe EACCES unix-send $OUT/daemon.dgram &&
	$BIN/fsprobe EACCES write $OUT/daemon.sock &&
	$BIN/fsprobe ok unix-connect @tether-test &&
	$BIN/fsprobe EACCES unix-connect @tether-test2"
RC=$?
if [ "$RC" -eq 0 ] && [ "$(grep -c '"decision":"deny"' "$T/uc.audit")" -eq 3 ] &&
	grep -q '"op":"unix_send","path":"/srv/outside/daemon.dgram","access":"connect","decision":"deny"' "$T/uc.audit" &&
	grep -q '"op":"unix_connect","path":"@tether-test2","access":"connect","decision":"deny"' "$T/uc.audit"; then
	pass "connect and abstract_sockets grants reach exactly their sockets: not another, and not a write"
else
	fail "connect grant" "exit $RC: $(cat "$T/uc.audit")"
fi
in_run us3 EACCES unix-connect @tether-test
us3='{"seq":2,"run_id":"us3","kind":"unix","op":"unix_connect","path":"@tether-test","access":"connect","decision":"deny","errno":"EACCES","reason":"default_deny","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record us3 "$T/us3.audit" "$us3" &&
	pass "connect to a host daemon's abstract socket" || fail "abstract socket" "exit $RC"
kill $s1 $s2 $s3 $s4
# A host daemon's socket where the run may write (tmux, ssh-agent, X11 in a
# writable /tmp): writing a path is not talking to whoever serves it.
"$BIN/unixsrv" stream "$WS/host-daemon.sock" > "$T/srv5" &
s5=$!
i=0
while ! grep -q ready "$T/srv5" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
in_run us5 EACCES unix-connect "$WS/host-daemon.sock"
us5='{"seq":2,"run_id":"us5","kind":"unix","op":"unix_connect","path":"/srv/ws/host-daemon.sock","access":"connect","decision":"deny","errno":"EACCES","reason":"rule","rule":8,"rule_path":"/srv/ws","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record us5 "$T/us5.audit" "$us5" &&
	pass "connect to a host daemon's socket bound in the writable workspace" ||
	fail "host daemon socket in the workspace" "exit $RC"
kill $s5
rm -f "$WS/host-daemon.sock"
rm -f "$T/us4.audit"
tether run --envelope "$ENV" --run-id us4 --audit "$T/us4.audit" -- /bin/sh -e -c "
	$BIN/unixsrv stream $WS/own.sock > $WS/own.ready &
	$BIN/unixsrv abstract tether-own > $WS/own2.ready &
	i=0; while [ \$(cat $WS/own.ready $WS/own2.ready | grep -c ready) -lt 2 ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
	$BIN/fsprobe ok unix-connect $WS/own.sock
	$BIN/fsprobe ok unix-connect @tether-own"
RC=$?
[ "$RC" -eq 0 ] && no_denials "$T/us4.audit" &&
	pass "the run reaches the sockets its own processes serve (path and abstract)" ||
	fail "own sockets" "exit $RC"

"$BIN/fsprobe" ok bpf-map-create x >/dev/null && in_run bp1 EPERM bpf-map-create x
bp1='{"seq":2,"run_id":"bp1","kind":"kernel","op":"bpf","path":"","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
# before 6.2 (unprivileged_bpf_disabled) the kernel asks for CAP_BPF before the hook
case "$(uname -r)" in 6.1.*)
	bp1='{"seq":2,"run_id":"bp1","kind":"capability","op":"capability","path":"cap_bpf","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}' ;;
esac
[ "$RC" -eq 0 ] && expect_record bp1 "$T/bp1.audit" "$bp1" &&
	pass "bpf() is denied in a run (it could detach the programs), allowed outside" ||
	fail "bpf()" "exit $RC"

# Signals to processes outside the run (the controller above all).
sleep 60 &
outsider=$!
rm -f "$T/sg1.audit"
tether run --envelope "$ENV" --run-id sg1 --audit "$T/sg1.audit" -- /bin/sh -c \
	"kill -TERM $outsider 2>/dev/null && exit 1; kill -TERM \$PPID 2>/dev/null && exit 2;
	 sleep 60 & kill -TERM \$! || exit 3"
RC=$?
if [ $RC -eq 0 ] && kill -0 $outsider 2>/dev/null &&
	[ "$(normalize "$T/sg1.audit" | grep -c '"op":"signal","path":"","decision":"deny","errno":"EPERM","reason":"forbidden"')" -eq 2 ]; then
	pass "signals reach the run's own processes, not outside ones or the controller"
else
	fail "signals" "exit $RC"
	cat "$T/sg1.audit"
fi
kill $outsider

# Loading anything into the kernel: modules (by fd or by buffer), autoload.
printf 'not a module' > "$WS/evil.ko"
in_run km1 EPERM finit-module "$WS/evil.ko"
# Refused at CAP_SYS_MODULE, before the kernel_load hooks (which stay as a backstop).
km1='{"seq":2,"run_id":"km1","kind":"capability","op":"capability","path":"cap_sys_module","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record km1 "$T/km1.audit" "$km1" &&
	pass "finit_module of a file in the workspace is denied" || fail "finit_module" "exit $RC"
in_run km2 EPERM init-module x
km2='{"seq":2,"run_id":"km2","kind":"capability","op":"capability","path":"cap_sys_module","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record km2 "$T/km2.audit" "$km2" &&
	pass "init_module from a buffer is denied" || fail "init_module" "exit $RC"
# An autoload the run can ask for: a tty line discipline by number (an
# unusual socket family no longer gets that far: socket_create refuses it).
in_run km3 EINVAL pty-ldisc 20
if [ "$RC" -eq 0 ] && normalize "$T/km3.audit" | grep -qF '"op":"module_request","path":"tty-ldisc-20","decision":"deny","errno":"EPERM","reason":"forbidden"'; then
	pass "a module autoload (a tty line discipline by number) is denied and named"
else
	fail "module autoload" "exit $RC"
	cat "$T/km3.audit"
fi

# --- leaving the run, terminals, inherited descriptors ----------------------
in_run c1 EPERM clone-into-cgroup /sys/fs/cgroup
c1='{"seq":2,"run_id":"c1","kind":"proc","op":"clone_into_cgroup","path":"","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record c1 "$T/c1.audit" "$c1" &&
	pass "clone3(CLONE_INTO_CGROUP) with a read-only cgroup fd cannot leave the run" ||
	fail "clone3 CLONE_INTO_CGROUP" "exit $RC"
denied "chattr through a read-only fd (FS_IOC_SETFLAGS)" i1 ioctl "$OUT/file" EACCES setflags "$OUT/file"
in_run i2 EPERM tiocsti /dev/ptmx
i2='{"seq":2,"run_id":"i2","kind":"fs","op":"tty_inject","path":"/dev/ptmx","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record i2 "$T/i2.audit" "$i2" &&
	pass "a pty can be opened, but TIOCSTI cannot type into it" || fail "TIOCSTI" "exit $RC"
chmod 600 "$OUT/file"
in_run a1 EACCES setacl "$OUT/file"
if [ "$RC" -eq 0 ] && [ "$(stat -c %a "$OUT/file")" = 600 ] &&
	normalize "$T/a1.audit" | grep -qE '"op":"(setxattr|set_acl)","path":"/srv/outside/file","path_scope":"filesystem","access":"write","decision":"deny","errno":"EACCES"'; then
	pass "a POSIX ACL on a file outside (set_acl hook on 6.2+, setxattr before)"
else
	fail "POSIX ACL outside" "exit $RC, mode $(stat -c %a "$OUT/file")"
	cat "$T/a1.audit"
fi
: > "$OUT/leak"
exec 5>>"$OUT/leak"
tether run --envelope "$ENV" --run-id fd1 --audit "$T/fd1.audit" -- /bin/sh -c 'echo leaked >&5' 2>/dev/null
RC=$?
exec 5>&-
[ "$RC" -ne 0 ] && [ ! -s "$OUT/leak" ] && pass "a descriptor the caller left open is not inherited" ||
	fail "inherited descriptor" "exit $RC, leak: $(cat "$OUT/leak")"
tether run --envelope "$ENV" --run-id sid --audit "$T/sid.audit" -- /bin/sh -c \
	'[ "$(cut -d" " -f6 /proc/$$/stat)" = "$$" ]'
[ $? -eq 0 ] && pass "the command leads a session of its own (no controlling terminal)" ||
	fail "new session" "the command shares the caller's session"
ln -sfn "$OUT" /srv/link-ws
envelope "$T/link.yaml" /srv/link-ws
tether run --envelope "$T/link.yaml" --run-id lk -- /bin/sh -c "touch /srv/link-ws/x" 2>"$T/lk.err"
RC=$?
if [ $RC -eq 123 ] && [ ! -e "$OUT/x" ] && grep -q "through a symbolic link" "$T/lk.err"; then
	pass "a workspace path through a symlink is refused"
else
	fail "workspace through a symlink" "exit $RC: $(cat "$T/lk.err")"
fi
mkdir -p /srv/open && chmod 777 /srv/open
envelope "$T/open.yaml" /srv/open/ws
tether run --envelope "$T/open.yaml" --run-id op -- /bin/true 2>"$T/op.err"
RC=$?
[ $RC -eq 123 ] && grep -q "writable by group or others" "$T/op.err" &&
	pass "a workspace below a directory others may write is refused" ||
	fail "workspace below a world-writable dir" "exit $RC: $(cat "$T/op.err")"

# --- a nested cgroup does not shed the run's policy ------------------------
rm -f "$WS/go" "$T/n1.audit"
tether run --envelope "$ENV" --run-id n1 --audit "$T/n1.audit" -- /bin/sh -c \
	"while [ ! -e $WS/go ]; do sleep 0.05; done; $BIN/fsprobe EACCES write $OUT/nested" &
bg=$!
i=0
while [ ! -s /sys/fs/cgroup/tether/n1/cgroup.procs ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
mkdir /sys/fs/cgroup/tether/n1/inner
for p in $(cat /sys/fs/cgroup/tether/n1/cgroup.procs); do
	echo "$p" 2>/dev/null > /sys/fs/cgroup/tether/n1/inner/cgroup.procs	# short-lived pids may be gone
done
touch "$WS/go"
wait $bg
RC=$?
if [ "$RC" -eq 0 ] && [ ! -e "$OUT/nested" ] && grep -q "\"path\":\"$OUT/nested\",\"access\":\"write\",\"decision\":\"deny\"" "$T/n1.audit" &&
	[ ! -e /sys/fs/cgroup/tether/n1 ]; then
	pass "a process moved into a cgroup nested in its run stays confined; cleanup removes both"
else
	fail "nested cgroup" "exit $RC"
	cat "$T/n1.audit"
fi

# --- processes outside the run are untouched while it is live --------------
rm -f "$WS/started" "$WS/stop"
tether run --envelope "$ENV" --run-id live --audit "$T/live.audit" -- /bin/sh -c \
	"touch $WS/started; while [ ! -e $WS/stop ]; do sleep 0.05; done" &
bg=$!
i=0
while [ ! -e "$WS/started" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
if [ -e "$WS/started" ] && "$BIN/fsprobe" ok write "$OUT/by-host" &&
	"$BIN/fsprobe" ok mkdir "$OUT/host-dir" && "$BIN/fsprobe" ok unlink "$OUT/by-host" &&
	! grep -q "by-host\|host-dir" "$T/live.audit"; then
	pass "the same binary outside the run writes where it likes while the run is live"
else
	fail "outside process untouched" "host write failed or was recorded"
fi
touch "$WS/stop"
wait $bg

# --- concurrent runs with different workspaces share the maps --------------
mkdir -p /srv/wsA /srv/wsB
envelope "$T/a.yaml" /srv/wsA
envelope "$T/b.yaml" /srv/wsB
# Both runs are live before either writes: each waits for $T/go.
rm -f "$T/go"
wait_go="i=0; while [ ! -e $T/go ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done"
tether run --envelope "$T/a.yaml" --run-id ca --audit "$T/ca.audit" -- /bin/sh -c \
	"$wait_go; $BIN/fsprobe ok write /srv/wsA/x && $BIN/fsprobe EACCES write /srv/wsB/x" &
pa=$!
tether run --envelope "$T/b.yaml" --run-id cb --audit "$T/cb.audit" -- /bin/sh -c \
	"$wait_go; $BIN/fsprobe ok write /srv/wsB/y && $BIN/fsprobe EACCES write /srv/wsA/y" &
pb=$!
i=0
while { [ ! -s /sys/fs/cgroup/tether/ca/cgroup.procs ] || [ ! -s /sys/fs/cgroup/tether/cb/cgroup.procs ]; } &&
	[ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
touch "$T/go"
wait $pa; ra=$?
wait $pb; rb=$?
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ -e /srv/wsA/x ] && [ -e /srv/wsB/y ] &&
	[ ! -e /srv/wsB/x ] && [ ! -e /srv/wsA/y ]; then
	pass "two concurrent runs each write only their own workspace"
else
	fail "concurrent runs" "exit A=$ra B=$rb"
fi

# --- a controller killed mid-run: its run stays confined, the next run reclaims it
rm -f "$WS/orph-started"
tether run --envelope "$ENV" --run-id orph --audit "$T/orph.audit" -- /bin/sh -c \
	"touch $WS/orph-started; while :; do sleep 1; done" &
tp=$!
i=0
while [ ! -e "$WS/orph-started" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $tp
wait $tp 2>/dev/null
orphan_pid=$(head -n 1 /sys/fs/cgroup/tether/orph/cgroup.procs)
if [ -n "$orphan_pid" ] &&
	[ "$(cat /proc/$orphan_pid/cgroup)" = "0::/tether/orph" ]; then
	pass "after its controller is killed the run's processes are still in the run cgroup"
else
	fail "orphaned run" "no process left in /sys/fs/cgroup/tether/orph"
fi
tether run --envelope "$ENV" --run-id after --audit "$T/after.audit" -- "$BIN/fsprobe" ok write "$WS/after" 2>"$T/after.err"
RC=$?
if [ $RC -eq 0 ] && grep -qE "reclaimed run /sys/fs/cgroup/tether/orph, whose controller died \\(killed: [0-9]+ processes\\)" "$T/after.err" &&
	[ ! -e /sys/fs/cgroup/tether/orph ] && [ ! -e "/proc/$orphan_pid" ] &&
	[ ! -e /run/tether/runs/orph ]; then
	pass "the next run reclaims the orphan: processes killed, cgroup, entries and run file removed"
else
	fail "orphan reclaim" "exit $RC: $(cat "$T/after.err")"
fi

# --- refusals: a cgroup namespace hides absolute levels ---------------------
"$BIN/nsexec" cgroup tether run --envelope "$ENV" --run-id cgns -- /bin/sh -c "touch $WS/cgns" 2>"$T/cgns.err"
RC=$?
if [ $RC -eq 120 ] && [ ! -e "$WS/cgns" ] && grep -q "cgroup namespace" "$T/cgns.err" &&
	[ ! -e /sys/fs/cgroup/tether/cgns ]; then
	pass "tether in a cgroup namespace refuses (120) and runs nothing"
else
	fail "cgroup namespace" "exit $RC: $(cat "$T/cgns.err")"
fi

# --- lifecycle: exit status, leftovers, cleanup, refusals -------------------
tether run --envelope "$ENV" --run-id e1 --audit "$T/e1.audit" -- /bin/sh -c 'exit 7'
RC=$?
[ $RC -eq 7 ] && pass "the command's exit status is tether's" || fail "exit status" "got $RC"
tether run --envelope "$ENV" --run-id e2 --audit "$T/e2.audit" -- /bin/sh -c 'kill -9 $$'
RC=$?
[ $RC -eq 137 ] && pass "a command killed by SIGKILL gives 137" || fail "signal status" "got $RC"
tether run --envelope "$ENV" --run-id e3 --audit "$T/e3.audit" -- /nonexistent/cmd 2>/dev/null
RC=$?
[ $RC -eq 127 ] && pass "a missing command gives 127" || fail "missing command" "got $RC"

rm -f "$WS/daemon-done"
tether run --envelope "$ENV" --run-id df --audit "$T/df.audit" -- /bin/sh -c \
	"(sh -c '$BIN/fsprobe EACCES write $OUT/daemon; touch $WS/daemon-done; sleep 300' &) ;
	 i=0; while [ ! -e $WS/daemon-done ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done"
RC=$?
if [ $RC -eq 0 ] && ! ps | grep -q '[s]leep 300' && [ ! -e "$OUT/daemon" ] &&
	grep -q '"event":"end".*"leftover_processes":1,"cleanup_verified":true' "$T/df.audit" &&
	grep -q "\"path\":\"$OUT/daemon\",\"access\":\"write\",\"decision\":\"deny\"" "$T/df.audit"; then
	pass "a double-forked daemon is confined, then killed with the run and counted"
else
	fail "double fork" "exit $RC"
	cat "$T/df.audit"
fi

if [ ! -e /sys/fs/cgroup/tether/w1 ] && [ ! -e /sys/fs/cgroup/tether/d1 ] &&
	[ "$(ls /sys/fs/cgroup/tether | grep -c '^[a-z0-9]*$')" -eq 0 ]; then
	pass "every run cgroup is removed"
else
	fail "run cgroups removed" "$(ls -d /sys/fs/cgroup/tether/*/ 2>&1)"
fi
in_run w1 ok write "$WS/again"
[ "$RC" -eq 0 ] && pass "a run id can be reused once its run ended" || fail "run id reuse" "exit $RC"

if grep -q '"event":"end","exit_status":0,"audit_records":3,"audit_seq_last":3,"audit_lost":0' "$T/d2.audit"; then
	pass "the end record accounts for every audit record"
else
	fail "end record" "$(grep '"event":"end"' "$T/d2.audit")"
fi

ln -sfn "$WS" /srv/audit-link
tether run --envelope "$ENV" --run-id au --audit /srv/audit-link/audit.jsonl -- /bin/true 2>"$T/au.err"
RC=$?
[ $RC -eq 122 ] && [ ! -e "$WS/audit.jsonl" ] && grep -q "inside the workspace" "$T/au.err" &&
	pass "an audit file inside the workspace (which the run could rewrite) is refused" ||
	fail "audit file in the workspace" "exit $RC: $(cat "$T/au.err")"

printf 'sandbox:\n  filesystem:\n    root: read_write\n' > "$T/bad.yaml"
tether run --envelope "$T/bad.yaml" --run-id bad -- /bin/sh -c "touch $WS/should-not-exist" 2>"$T/bad.err"
RC=$?
if [ $RC -eq 121 ] && [ ! -e "$WS/should-not-exist" ] && grep -q "bad.yaml:3:11: error:" "$T/bad.err"; then
	pass "an invalid envelope is refused with FILE:LINE:COLUMN and nothing runs"
else
	fail "invalid envelope" "exit $RC: $(cat "$T/bad.err")"
fi

finish
