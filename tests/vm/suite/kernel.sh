#!/bin/sh
# No way out of the tree (issue 6): a run's processes have no capability,
# no_new_privs, and no door to the kernel's shared state: namespaces, module
# and kexec loads, the clock, the kernel log, perf, other processes' keys,
# cgroup and other control files, SIGIO to outside processes.  Every case
# runs through plain `tether run`, once as the default identity (65534) and
# once as `identity: {uid: 0, gid: 0}`, and checks the errno sysprobe saw
# and the exact audit record.  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/kws
mkdir -p "$WS"
chmod 777 "$WS"		# the default identity (nobody) writes here too
# kernel_envelope FILE [IDENTITY_AND_MODE_LINES]: lib.sh's envelope() runs
# as uid 0; these choose.
kernel_envelope() {
	printf 'sandbox:\n%s  filesystem:\n    root: read_only\n    workspace:\n      path: %s\n' \
		"$2" "$WS" > "$1"
}
ENV_NOBODY=$T/kernel-nobody.yaml	# no identity: the default, 65534
ENV_ROOT=$T/kernel-root.yaml
ENV_AUDIT=$T/kernel-audit.yaml
kernel_envelope "$ENV_NOBODY" ""
kernel_envelope "$ENV_ROOT" "  identity: {uid: 0, gid: 0}
"
kernel_envelope "$ENV_AUDIT" "  identity: {uid: 0, gid: 0}
  mode: audit
"

# sys ID ENV ARGS...: sysprobe ARGS in a fresh run; RC is tether's status,
# OUT sysprobe's output.
sys() {
	id=$1 env=$2
	shift 2
	rm -f "$T/$id.audit"
	OUT=$(tether run --envelope "$env" --run-id "$id" --audit "$T/$id.audit" -- \
		"$BIN/sysprobe" "$@" 2>&1)
	RC=$?
}

# rec ID OP PATH ERRNO REASON [ACCESS]: the record sysprobe's denial must have.
rec() {
	access=
	[ -n "$6" ] && access="\"access\":\"$6\","
	echo "{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"$(kind_of "$2")\",\"op\":\"$2\",\"path\":\"$3\",$access\"decision\":\"deny\",\"errno\":\"$4\",\"reason\":\"$5\",\"uid\":$U,\"comm\":\"sysprobe\",\"exe\":\"$BIN/sysprobe\"}"
}

# refused NAME ID EXPECT OP PATH ERRNO REASON PROBE_ARGS...: sysprobe sees
# EXPECT, and the stream holds exactly the record (op OP, ...).  $ENV, $U.
refused() {
	name=$1 id=$2 expect=$3 op=$4 rpath=$5 err=$6 reason=$7
	shift 7
	sys "$id" "$ENV" "$expect" "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$name (uid $U)" "sysprobe did not see $expect (tether exit $RC): $OUT"
	elif ! expect_record "$name" "$T/$id.audit" "$(rec "$id" "$op" "$rpath" "$err" "$reason")"; then
		fail "$name (uid $U)" "audit record missing or different"
	else
		pass "$name (uid $U)"
	fi
}

# capability NAME ID EXPECT CAP PROBE_ARGS...: refused by the capability
# module (every capability is dropped) and recorded as that capability.
capability() {
	name=$1 id=$2 expect=$3 cap=$4
	shift 4
	refused "$name" "$id" "$expect" capability "$cap" EPERM forbidden "$@"
}

# A key anyone's permissions would let read, made outside every run.
OUTSIDE_KEY=$("$BIN/sysprobe" ok key-make-user | head -n 1)

for U in 65534 0; do
	if [ "$U" = 0 ]; then ENV=$ENV_ROOT P=r; else ENV=$ENV_NOBODY P=n; fi

	# --- what the run's first process is after exec -----------------------
	sys "${P}c0" "$ENV" ok cap-probe
	if [ "$RC" -eq 0 ] && echo "$OUT" | grep -q "^Uid:	$U	$U	$U	$U$" &&
		no_denials "$T/${P}c0.audit"; then
		pass "no capability in any set, no_new_privs, uid $U (uid $U)"
	else
		fail "capabilities after exec (uid $U)" "exit $RC: $OUT"
	fi

	# --- namespaces --------------------------------------------------------
	refused "unshare(CLONE_NEWUSER)" "${P}u1" EPERM userns_create "" EPERM forbidden unshare-user
	refused "clone(CLONE_NEWUSER)" "${P}u2" EPERM userns_create "" EPERM forbidden clone-newuser
	capability "unshare(CLONE_NEWNET)" "${P}u3" EPERM cap_sys_admin unshare-net
	capability "setns to its own network namespace" "${P}u4" EPERM cap_sys_admin \
		setns-path /proc/self/ns/net
	capability "/proc/1/ns/net of a process outside the run" "${P}u5" EACCES cap_sys_ptrace \
		setns-path /proc/1/ns/net
	capability "setns through a pidfd of a process outside the run" "${P}u6" EPERM \
		cap_sys_ptrace setns-pidfd 1
	refused "mount a tmpfs" "${P}u7" EPERM mount /tmp EPERM forbidden mount /tmp

	# --- the kernel itself ---------------------------------------------------
	case "$(uname -r)" in
	6.1.*)
		# 6.1 checks unprivileged_bpf_disabled (CAP_BPF, then CAP_SYS_ADMIN)
		# before the bpf LSM hook; 6.12 asks the hook first.
		capability "bpf(BPF_PROG_LOAD)" "${P}k1" EPERM cap_bpf bpf-prog-load
		r=$(rec "${P}k1" capability cap_sys_admin EPERM forbidden | sed 's/"seq":2/"seq":3/')
		expect_record "${P}k1" "$T/${P}k1.audit" "$r" &&
			pass "bpf(BPF_PROG_LOAD): then cap_sys_admin (uid $U)" ||
			fail "bpf(BPF_PROG_LOAD) cap_sys_admin (uid $U)" "second record missing"
		;;
	*) refused "bpf(BPF_PROG_LOAD)" "${P}k1" EPERM bpf "" EPERM forbidden bpf-prog-load ;;
	esac
	capability "init_module" "${P}k2" EPERM cap_sys_module init-module
	capability "finit_module" "${P}k3" EPERM cap_sys_module finit-module /bin/busybox
	capability "kexec_load" "${P}k4" EPERM cap_sys_boot kexec-load
	capability "settimeofday" "${P}k5" EPERM cap_sys_time settime
	capability "syslog(SYSLOG_ACTION_READ_ALL) under dmesg_restrict" "${P}k6" EPERM \
		cap_syslog syslog-read
	# Debian's perf_event_paranoid 3 asks for CAP_SYS_ADMIN before the LSM hook.
	capability "perf_event_open (perf_event_paranoid 3)" "${P}k7" EACCES cap_sys_admin perf-open
	rm -f "$T/${P}k8.audit"
	tether run --envelope "$ENV" --run-id "${P}k8" --audit "$T/${P}k8.audit" -- \
		"$BIN/fsprobe" EPERM set-mtu lo 65536 >/dev/null
	RC=$?
	r="{\"seq\":2,\"run_id\":\"${P}k8\",\"kind\":\"capability\",\"op\":\"capability\",\"path\":\"cap_net_admin\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":$U,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
	[ "$RC" -eq 0 ] && expect_record "${P}k8" "$T/${P}k8.audit" "$r" &&
		pass "CAP_NET_ADMIN (SIOCSIFMTU) (uid $U)" || fail "CAP_NET_ADMIN (uid $U)" "exit $RC"

	# --- keys ----------------------------------------------------------------
	sys "${P}y1" "$ENV" ok key-session
	[ "$RC" -eq 0 ] && no_denials "$T/${P}y1.audit" &&
		pass "a key added to the run's own session keyring is read back (uid $U)" ||
		fail "own session keyring (uid $U)" "exit $RC: $OUT"
	# the user keyrings are looked up in the kernel's per-namespace register
	refused "the user keyring (keyctl show @u)" "${P}y2" ENOKEY keyctl .user_reg EACCES \
		forbidden key-show-user
	refused "a key made outside the run, by id" "${P}y3" ENOKEY keyctl tether-outside EACCES \
		forbidden key-read "$OUTSIDE_KEY"
	rm -f "$WS/held-key"
	tether run --envelope "$ENV" --run-id "${P}yh" -- "$BIN/sysprobe" ok key-hold "$WS/held-key" \
		>/dev/null 2>&1 &
	holder=$!
	i=0
	while [ ! -s "$WS/held-key" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	refused "a key of another live run" "${P}y4" ENOKEY keyctl tether-held EACCES forbidden \
		key-read "$(cat "$WS/held-key" 2>/dev/null)"
	rm -f "$WS/held-key"
	wait "$holder"

	# --- tracing and signals -------------------------------------------------
	refused "PTRACE_TRACEME under the controller" "${P}t1" EPERM ptrace "" EPERM forbidden \
		ptrace-traceme
	refused "F_SETOWN to pid 1 (SIGIO outside the run)" "${P}t2" EPERM signal "" EPERM \
		forbidden setown 1
	refused "F_SETOWN_EX" "${P}t3" EPERM signal "" EPERM forbidden setown-ex 1
	refused "FIOSETOWN on a socket" "${P}t4" EPERM signal "" EPERM forbidden fiosetown 1
	sys "${P}t5" "$ENV" ok setown-self
	sys "${P}t6" "$ENV" ok setown-pgrp
	[ "$RC" -eq 0 ] && no_denials "$T/${P}t5.audit" && no_denials "$T/${P}t6.audit" &&
		pass "F_SETOWN to itself and to its own process group (uid $U)" ||
		fail "F_SETOWN to itself (uid $U)" "exit $RC: $OUT"
	sys "${P}t7" "$ENV" ok setown 0
	[ "$RC" -eq 0 ] && no_denials "$T/${P}t7.audit" && pass "F_SETOWN 0 clears (uid $U)" ||
		fail "F_SETOWN 0 (uid $U)" "exit $RC: $OUT"

	# --- capabilities cannot come back through exec --------------------------
	touch "$WS/x1-file"
	capability "write a file capability (security.capability)" "${P}x1" EPERM cap_setfcap \
		set-filecap "$WS/x1-file" 2>/dev/null
done

# Binaries that would raise privileges outside a run: a file capability and
# setuid root.  no_new_privs and the empty bounding set keep exec from
# granting anything.
cp "$BIN/sysprobe" "$BIN/sysprobe-fcap"
cp "$BIN/sysprobe" "$BIN/sysprobe-suid"
chmod 4755 "$BIN/sysprobe-suid"
if "$BIN/sysprobe" ok set-filecap "$BIN/sysprobe-fcap" >/dev/null; then
	for U in 65534 0; do
		[ "$U" = 0 ] && ENV=$ENV_ROOT || ENV=$ENV_NOBODY
		rm -f "$T/fc$U.audit"
		OUT=$(tether run --envelope "$ENV" --run-id "fc$U" --audit "$T/fc$U.audit" -- \
			"$BIN/sysprobe-fcap" ok cap-probe 2>&1)
		# The effective bit asks for all of its capabilities or none: the
		# kernel refuses the exec when the bounding set cannot grant them.
		[ $? -eq 126 ] && no_denials "$T/fc$U.audit" &&
			echo "$OUT" | grep -q "cannot execute $BIN/sysprobe-fcap: Operation not permitted" &&
			pass "exec of a file with cap_sys_admin+ep is refused (EPERM) (uid $U)" ||
			fail "file capability exec (uid $U)" "$OUT"
	done
else
	fail "file capability exec" "could not set security.capability outside the run"
fi
OUT=$(tether run --envelope "$ENV_NOBODY" --run-id suid -- "$BIN/sysprobe-suid" ok cap-probe 2>&1)
[ $? -eq 0 ] && echo "$OUT" | grep -q "^Uid:	65534	65534	65534	65534$" &&
	pass "exec of a setuid-root binary keeps uid 65534 and no capability" ||
	fail "setuid exec" "$OUT"

# --- kernel control file systems: protected by superblock, whatever the path --
# As uid 0 (the file modes would stop nobody before tether is asked).
U=0
ENV=$ENV_ROOT
# refused() builds records without an access field; these have one.
PROTRULE=
check_protected() {
	name=$1 id=$2 op=$3 rpath=$4
	shift 4
	sys "$id" "$ENV" EACCES "$@"
	r="{\"seq\":2,\"run_id\":\"$id\",\"kind\":\"$(kind_of "$op")\",\"op\":\"$op\",\"path\":\"$rpath\"$EXTRA,\"access\":\"write\",\"decision\":\"${DECISION:-deny}\",\"errno\":\"EACCES\",\"reason\":\"protected\"${PROTRULE:+,\"rule\":N,\"rule_path\":\"$PROTRULE\"},\"uid\":0,\"comm\":\"sysprobe\",\"exe\":\"$BIN/sysprobe\"}"
	# PROTRULE: the protected rule that decided, whose index depends on the envelope
	[ -n "$PROTRULE" ] &&
		sed -E "s|\"rule\":[0-9]+,\"rule_path\":\"$PROTRULE\"|\"rule\":N,\"rule_path\":\"$PROTRULE\"|" \
			"$T/$id.audit" > "$T/$id.audit.n" && mv "$T/$id.audit.n" "$T/$id.audit"
	if [ "$RC" -eq 0 ] && expect_record "$name" "$T/$id.audit" "$r"; then
		pass "$name"
	else
		fail "$name" "exit $RC: $OUT"
	fi
}
check_protected "write the root cgroup's cgroup.procs (leave the run)" p1 open_write \
	/sys/fs/cgroup/cgroup.procs write-file /sys/fs/cgroup/cgroup.procs
# the run cgroups' parent is also a protected rule of every run (no run reads another's)
PROTRULE=/sys/fs/cgroup/tether
check_protected "write the parent cgroup's cgroup.procs" p2 open_write \
	/sys/fs/cgroup/tether/cgroup.procs write-file /sys/fs/cgroup/tether/cgroup.procs
PROTRULE=
check_protected "write the run's own cgroup.kill" p3 open_write /sys/fs/cgroup/tether/p3/cgroup.kill \
	write-file /sys/fs/cgroup/tether/p3/cgroup.kill
PROTRULE=/sys/fs/cgroup/tether
check_protected "write the parent's cgroup.subtree_control" p4 open_write \
	/sys/fs/cgroup/tether/cgroup.subtree_control write-file /sys/fs/cgroup/tether/cgroup.subtree_control
PROTRULE=
check_protected "mkdir in its own run cgroup" p5 mkdir /sys/fs/cgroup/tether/p5/sub \
	mkdir /sys/fs/cgroup/tether/p5/sub

# A cgroup2 hierarchy and a bpffs mounted inside the workspace, where a rule
# grants write: still protected.
mkdir -p "$WS/cg" "$WS/bpf"
mount -t cgroup2 none "$WS/cg" && mount -t bpf none "$WS/bpf"
check_protected "cgroup.procs of a cgroup2 mounted in the workspace" p8 open_write \
	"$WS/cg/cgroup.procs" write-file "$WS/cg/cgroup.procs"
check_protected "mkdir in a cgroup2 mounted in the workspace" p9 mkdir "$WS/cg/x" mkdir "$WS/cg/x"
check_protected "rmdir of the run cgroups' parent through that mount" p10 rmdir "$WS/cg/tether" \
	rmdir "$WS/cg/tether"
check_protected "chmod of a cgroup file in the workspace mount" p11 chmod "$WS/cg/cgroup.procs" \
	chmod "$WS/cg/cgroup.procs"
check_protected "mkdir in a bpffs mounted in the workspace" p12 mkdir "$WS/bpf/x" mkdir "$WS/bpf/x"
EXTRA=',"path_scope":"filesystem"' check_protected "setxattr on a cgroup file in the workspace mount" \
	p13 setxattr /cgroup.procs setxattr "$WS/cg/cgroup.procs"
ENV=$ENV_AUDIT
check_protected "mode: audit does not relax it" p14 open_write "$WS/cg/cgroup.procs" \
	write-file "$WS/cg/cgroup.procs"
ENV=$ENV_ROOT
[ ! -e "$WS/cg/x" ] && [ -d "$WS/cg/tether" ] && [ ! -e /sys/fs/cgroup/tether/p5/sub ] &&
	pass "no cgroup was made or removed" || fail "cgroups unchanged" "$(ls "$WS/cg")"
umount "$WS/cg" "$WS/bpf"
mkdir -p "$WS/cgx"
refused "mount a second cgroup2 hierarchy" p15 EPERM mount "$WS/cgx" EPERM forbidden \
	mount-cgroup2 "$WS/cgx"
rm -rf "$WS/cgx"

# syslog actions dmesg_restrict leaves open reach the syslog hook.
restrict=$(cat /proc/sys/kernel/dmesg_restrict)
echo 0 > /proc/sys/kernel/dmesg_restrict
for U in 65534 0; do
	[ "$U" = 0 ] && ENV=$ENV_ROOT P=r || ENV=$ENV_NOBODY P=n
	refused "syslog(SYSLOG_ACTION_SIZE_BUFFER) without dmesg_restrict" "${P}s1" EPERM syslog 10 \
		EPERM forbidden syslog-size
	refused "syslog(SYSLOG_ACTION_READ_ALL) without dmesg_restrict" "${P}s2" EPERM syslog 3 \
		EPERM forbidden syslog-read
done
echo "$restrict" > /proc/sys/kernel/dmesg_restrict

# Outside any run nothing changes.
"$BIN/sysprobe" ok setown 1 >/dev/null && "$BIN/sysprobe" ok key-read "$OUTSIDE_KEY" >/dev/null &&
	"$BIN/sysprobe" ok unshare-user >/dev/null &&
	pass "outside runs: F_SETOWN, keys and user namespaces work" ||
	fail "outside runs" "a probe failed outside any run"

finish
