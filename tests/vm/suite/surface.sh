#!/bin/sh
# The kernel surface of a run (issue 14, docs/kernel-surface.md): every row
# of runtime/kernel_surface.h, which `surfaceprobe list` prints, is called
# inside `tether run` and checked against the layer the table names:
#   seccomp       EPERM on each of its ABIs, and no record (one run per
#                 identity calls them all)
#   seccomp-args  personality(): Docker's values work, the rest fail (EPERM)
#   lsm           the errno and the exact record of the BPF-LSM hook
#   capability    EPERM and the exact capability record
#   confined      works on the run's own processes and keys; refused, with
#                 the exact record, outside the run
#   allowed       the same result inside as outside, never EPERM, no denial
# Outside any run the same calls must not fail with EPERM where that is
# harmless (so the test can fail).  A row no case covered fails the suite.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

SP=$BIN/surfaceprobe
WS=/srv/sws
mkdir -p "$WS"
chmod 777 "$WS"
surface_envelope() {
	printf 'sandbox:\n%s  filesystem:\n    root: read_only\n    workspace:\n      path: %s\n' \
		"$2" "$WS" > "$1"
}
ENV_NOBODY=$T/surface-nobody.yaml
ENV_ROOT=$T/surface-root.yaml
surface_envelope "$ENV_NOBODY" ""
surface_envelope "$ENV_ROOT" "  identity: {uid: 0, gid: 0}
"
ENV=$ENV_NOBODY U=65534

COVERED=" "
SKIPPED=" "
cover() { COVERED="$COVERED$1 "; }

# sp ID ARGS...: surfaceprobe ARGS in a fresh run under $ENV; RC is tether's
# exit status (surfaceprobe's own: 0 when every result was the expected
# one), OUT its output, $T/ID.audit the stream.
sp() {
	id=$1
	shift
	rm -f "$T/$id.audit"
	OUT=$(tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$SP" "$@" 2>&1)
	RC=$?
}

# rec ID OP PATH ERRNO [SEQ]: a kernel denial record of surfaceprobe's.
rec() {
	echo "{\"seq\":${5:-2},\"run_id\":\"$1\",\"kind\":\"$(kind_of "$2")\",\"op\":\"$2\",\"path\":\"$3\",\"decision\":\"deny\",\"errno\":\"$4\",\"reason\":\"forbidden\",\"uid\":$U,\"comm\":\"surfaceprobe\",\"exe\":\"$SP\"}"
}

# kernel_records AUDIT: the stream's records that came from the kernel.
kernel_records() {
	grep -E '"kind":"(fs|proc|capability|kernel|unix|net)"' "$1"
}

# refused ROW NAME ID EXPECT OP PATH ERRNO CASE ARGS...: the case sees EXPECT
# and the stream holds the record (OP, PATH, ERRNO) as its first kernel record.
refused() {
	row=$1 name=$2 id=$3 expect=$4 op=$5 rpath=$6 err=$7
	shift 7
	sp "$id" "$expect" "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$name (uid $U)" "surfaceprobe did not see $expect (tether exit $RC): $OUT"
	elif ! expect_record "$name" "$T/$id.audit" "$(rec "$id" "$op" "$rpath" "$err")"; then
		fail "$name (uid $U)" "audit record missing or different"
	else
		pass "$name (uid $U)"
		cover "$row"
	fi
}

# capability ROW NAME ID CAP CASE ARGS...: EPERM, recorded as capability CAP.
capability() {
	row=$1 name=$2 id=$3 cap=$4
	shift 4
	refused "$row" "$name" "$id" EPERM capability "$cap" EPERM "$@"
}

# works ROW NAME ID CASE ARGS...: the case works in a run, and nothing is denied.
works() {
	row=$1 name=$2 id=$3
	shift 3
	sp "$id" ok "$@"
	if [ "$RC" -eq 0 ] && no_denials "$T/$id.audit"; then
		pass "$name (uid $U)"
		cover "$row"
	else
		fail "$name (uid $U)" "exit $RC: $OUT $(kernel_records "$T/$id.audit")"
	fi
}

# result CASE ARGS...: what the case gets outside any run (its RESULT word).
result() {
	"$SP" ok "$@" 2>&1 | sed -n 's/^surfaceprobe: .*: //p' | tail -n 1
}

# as_outside ROW NAME ID CASE ARGS...: an allowed call gets inside a run what it
# gets outside, that is not EPERM, and nothing is denied.
as_outside() {
	row=$1 name=$2 id=$3
	shift 3
	want=$(result "$@")
	case "$want" in
	"" | EPERM | prep-failed:*)
		fail "$name" "outside any run it gives '$want'"
		return
		;;
	esac
	sp "$id" "$want" "$@"
	if [ "$RC" -eq 0 ] && no_denials "$T/$id.audit"; then
		pass "$name: $want, as outside a run (uid $U)"
		cover "$row"
	else
		fail "$name (uid $U)" "outside: $want; in the run: exit $RC: $OUT"
	fi
}

# outside NAME CASE ARGS...: outside any run the call is not refused (EPERM).
outside() {
	name=$1
	shift
	got=$(result "$@")
	case "$got" in
	"" | EPERM | prep-failed:*) fail "outside a run: $name" "got '$got'" ;;
	*) pass "outside a run: $name ($got)" ;;
	esac
}

HAVE_I386=yes
"$SP" ok arch_prctl-i386 >/dev/null 2>&1 || HAVE_I386=
[ -n "$HAVE_I386" ] || echo "[SKIP] this kernel has no i386 ABI: the i386 rows are not checked"

# --- seccomp: every row, every ABI, no record ------------------------------
for U in 65534 0; do
	[ "$U" = 0 ] && ENV=$ENV_ROOT || ENV=$ENV_NOBODY
	sp "sc$U" seccomp in
	n=$(echo "$OUT" | grep -c ': EPERM$')
	if [ "$RC" -eq 0 ] && [ "$n" -gt 60 ] && [ -z "$(kernel_records "$T/sc$U.audit")" ]; then
		pass "every seccomp row fails with EPERM, unrecorded: $n calls (uid $U)"
		for row in $("$SP" list | awk '$2 == "seccomp" { print $1 }'); do cover "$row"; done
	else
		fail "seccomp rows (uid $U)" "exit $RC, $n EPERM: $(echo "$OUT" | grep unexpected) $(kernel_records "$T/sc$U.audit")"
	fi
	sp "pe$U" personality in
	if [ "$RC" -eq 0 ] && [ -z "$(kernel_records "$T/pe$U.audit")" ]; then
		pass "personality: Docker's values work, ADDR_NO_RANDOMIZE and the rest fail (uid $U)"
		cover personality
	else
		fail "personality (uid $U)" "exit $RC: $(echo "$OUT" | grep unexpected)"
	fi
	sp "ab$U" abi in
	[ "$RC" -eq 0 ] && pass "x32 is refused, calls newer than the table are ENOSYS (uid $U)" ||
		fail "x32 and newer calls (uid $U)" "exit $RC: $OUT"
done
ENV=$ENV_NOBODY U=65534
OUT=$("$SP" seccomp out 2>&1) && pass "outside a run no seccomp row fails with EPERM" ||
	fail "seccomp rows outside a run" "$(echo "$OUT" | grep unexpected)"
OUT=$("$SP" personality out 2>&1) && pass "outside a run every personality value works" ||
	fail "personality outside a run" "$(echo "$OUT" | grep unexpected)"
OUT=$("$SP" abi out 2>&1) && pass "outside a run x32 is not refused by tether" ||
	fail "abi outside a run" "$OUT"

# --- lsm: userfaultfd and io_uring, with the record -----------------------
for U in 65534 0; do
	[ "$U" = 0 ] && ENV=$ENV_ROOT P=r || ENV=$ENV_NOBODY P=n
	refused userfaultfd "userfaultfd(UFFD_USER_MODE_ONLY)" "${P}f1" EPERM anon_inode \
		'[userfaultfd]' EPERM userfaultfd-user
	refused io_uring_setup "io_uring_setup" "${P}f2" EPERM anon_inode '[io_uring]' EPERM \
		io_uring_setup
	# kernel-mode faults ask for cap_sys_ptrace first; vm.unprivileged_userfaultfd
	# 0 (the default) stops there, 1 lets the call reach the hook
	echo 0 > /proc/sys/vm/unprivileged_userfaultfd
	capability userfaultfd "userfaultfd(0), vm.unprivileged_userfaultfd 0" "${P}f3" \
		cap_sys_ptrace userfaultfd
	grep -q anon_inode "$T/${P}f3.audit" && fail "userfaultfd(0) (uid $U)" "two records"
	echo 1 > /proc/sys/vm/unprivileged_userfaultfd
	sp "${P}f4" EPERM userfaultfd
	[ "$RC" -eq 0 ] && expect_record "${P}f4" "$T/${P}f4.audit" "$(rec "${P}f4" capability \
		cap_sys_ptrace EPERM)" && expect_record "${P}f4" "$T/${P}f4.audit" \
		"$(rec "${P}f4" anon_inode '[userfaultfd]' EPERM 3)" &&
		pass "userfaultfd(0), vm.unprivileged_userfaultfd 1: the hook refuses it (uid $U)" ||
		fail "userfaultfd(0) with vm.unprivileged_userfaultfd 1 (uid $U)" "exit $RC: $OUT"
	echo 0 > /proc/sys/vm/unprivileged_userfaultfd
done
if [ -c /dev/userfaultfd ]; then
	# as root: nobody's open stops at the file mode (0600 root), without a record
	U=0 ENV=$ENV_ROOT
	refused userfaultfd "open /dev/userfaultfd (a device no rule allows)" rf5 EACCES \
		open_device /dev/userfaultfd EACCES userfaultfd-dev
	# USERFAULTFD_IOC_NEW on a /dev/userfaultfd opened outside the run, as stdin
	rm -f "$T/rf6.audit"
	OUT=$(tether run --envelope "$ENV" --run-id rf6 --audit "$T/rf6.audit" -- \
		"$SP" EPERM userfaultfd-ioctl 0 < /dev/userfaultfd 2>&1)
	RC=$?
	[ "$RC" -eq 0 ] && expect_record rf6 "$T/rf6.audit" "$(rec rf6 anon_inode '[userfaultfd]' EPERM)" &&
		pass "USERFAULTFD_IOC_NEW on a /dev/userfaultfd from outside the run" ||
		fail "USERFAULTFD_IOC_NEW" "exit $RC: $OUT"
	ENV=$ENV_NOBODY U=65534
else
	echo "[SKIP] no /dev/userfaultfd on $(uname -r)"
fi
outside "userfaultfd(UFFD_USER_MODE_ONLY)" userfaultfd-user
outside "userfaultfd(0) as root" userfaultfd
outside "io_uring_setup" io_uring_setup
[ -c /dev/userfaultfd ] && outside "open /dev/userfaultfd" userfaultfd-dev

# --- lsm: mount, bpf, perf_event_open, syslog ------------------------------
refused mount "mount a tmpfs" m1 EPERM mount /tmp EPERM mount /tmp
case "$(uname -r)" in
6.1.*)
	# 6.1 checks unprivileged_bpf_disabled (cap_bpf, then cap_sys_admin) before the hook
	capability bpf "bpf(BPF_PROG_LOAD) (6.1: capabilities first)" b1 cap_bpf bpf
	;;
*) refused bpf "bpf(BPF_PROG_LOAD)" b1 EPERM bpf "" EPERM bpf ;;
esac
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 3 > /proc/sys/kernel/perf_event_paranoid
# Debian's paranoid 3 asks for cap_sys_admin before the hook, and the call returns EACCES
sp p1 EACCES perf_event_open
[ "$RC" -eq 0 ] && expect_record p1 "$T/p1.audit" "$(rec p1 capability cap_sys_admin EPERM)" &&
	pass "perf_event_open, perf_event_paranoid 3: EACCES, cap_sys_admin" && cover perf_event_open ||
	fail "perf_event_open, perf_event_paranoid 3" "exit $RC: $OUT"
echo 2 > /proc/sys/kernel/perf_event_paranoid
refused perf_event_open "perf_event_open, perf_event_paranoid 2: the hook" p2 EPERM \
	perf_event_open "" EPERM perf_event_open
echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
restrict=$(cat /proc/sys/kernel/dmesg_restrict)
echo 0 > /proc/sys/kernel/dmesg_restrict
refused syslog "syslog(SYSLOG_ACTION_SIZE_BUFFER)" l1 EPERM syslog 10 EPERM syslog
echo "$restrict" > /proc/sys/kernel/dmesg_restrict
outside "bpf(BPF_PROG_LOAD)" bpf
outside "perf_event_open" perf_event_open
outside "syslog" syslog

# --- capability: refused by the capability check, recorded ----------------
capability acct "acct" c1 cap_sys_pacct acct
capability chroot "chroot" c2 cap_sys_chroot chroot
capability clock_settime "clock_settime(CLOCK_REALTIME)" c3 cap_sys_time clock_settime
capability adjtimex "adjtimex(ADJ_FREQUENCY)" c4 cap_sys_time adjtimex
capability clock_adjtime "clock_adjtime(ADJ_FREQUENCY)" c5 cap_sys_time clock_adjtime
works adjtimex "adjtimex reads (modes 0)" c6 adjtimex-read
capability delete_module "delete_module" c7 cap_sys_module delete_module
capability init_module "init_module" c8 cap_sys_module init_module
capability finit_module "finit_module" c9 cap_sys_module finit_module /bin/busybox
capability kexec_load "kexec_load" c10 cap_sys_boot kexec_load
capability kexec_file_load "kexec_file_load" c11 cap_sys_boot kexec_file_load
capability reboot "reboot" c12 cap_sys_boot reboot
capability swapon "swapon" c13 cap_sys_admin swapon
capability swapoff "swapoff" c14 cap_sys_admin swapoff
capability sethostname "sethostname" c15 cap_sys_admin sethostname
capability setdomainname "setdomainname" c16 cap_sys_admin setdomainname
capability vhangup "vhangup" c17 cap_sys_tty_config vhangup
capability iopl "iopl(3)" c18 cap_sys_rawio iopl
capability ioperm "ioperm(0x80, 1, on)" c19 cap_sys_rawio ioperm
capability settimeofday "settimeofday" c20 cap_sys_time settimeofday
capability umount2 "umount2" c21 cap_sys_admin umount2
capability pivot_root "pivot_root" c22 cap_sys_admin pivot_root
capability setns "setns to its own network namespace" c23 cap_sys_admin setns /proc/self/ns/net
capability unshare "unshare(CLONE_NEWNET)" c24 cap_sys_admin unshare-net
refused unshare "unshare(CLONE_NEWUSER)" c25 EPERM userns_create "" EPERM unshare-user
works unshare "unshare(CLONE_FILES|CLONE_FS|CLONE_SYSVSEM): no namespace" c26 unshare-files
if [ -n "$HAVE_I386" ]; then
	capability clock_settime64 "clock_settime64 (i386)" c27 cap_sys_time clock_settime64
	capability clock_adjtime64 "clock_adjtime64 (i386)" c28 cap_sys_time clock_adjtime64
else
	SKIPPED="$SKIPPED clock_settime64 clock_adjtime64 "
fi
# the same calls outside a run, where that changes nothing on the host
outside "acct(NULL)" acct
outside "chroot(/)" chroot
outside "clock_settime to now" clock_settime
outside "adjtimex, the same frequency" adjtimex
outside "clock_adjtime, the same frequency" clock_adjtime
outside "delete_module of no module" delete_module
outside "init_module of junk" init_module
outside "swapon of no file" swapon
outside "sethostname to its name" sethostname
outside "iopl(3)" iopl
outside "ioperm(0x80)" ioperm
outside "settimeofday to now" settimeofday
outside "setns to its own network namespace" setns /proc/self/ns/net
outside "unshare(CLONE_NEWNET)" unshare-net
outside "kexec_load, unloading nothing" kexec_load

# --- confined: the run's own, and nothing outside ---------------------------
for c in ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd; do
	works "$c" "$c of its own child" "o-$c" "$c" child
	capability "$c" "$c of the controller (outside the run)" "x-$c" cap_sys_ptrace "$c" @ppid
done
case "$(uname -r)" in
6.1.*)
	# 6.1 asks for cap_sys_nice whatever the target; later kernels not for the caller's own
	capability process_madvise "process_madvise of itself (6.1: cap_sys_nice)" o-madvise \
		cap_sys_nice process_madvise self
	;;
*) works process_madvise "process_madvise of itself" o-madvise process_madvise self ;;
esac
# the ptrace check of mm_access() fails with EACCES
refused process_madvise "process_madvise of the controller (EACCES)" x-madvise EACCES capability \
	cap_sys_ptrace EPERM process_madvise @ppid
works clone "clone (fork)" o-clone clone
capability clone "clone(CLONE_NEWNS)" x-clone cap_sys_admin clone-newns
refused clone "clone(CLONE_NEWUSER)" x-clone-user EPERM userns_create "" EPERM clone-newuser
works clone3 "clone3 (fork)" o-clone3 clone3
capability clone3 "clone3(CLONE_NEWNS)" x-clone3 cap_sys_admin clone3-newns
refused clone3 "clone3(CLONE_INTO_CGROUP) of the root cgroup" x-clone3-cg EPERM \
	clone_into_cgroup "" EPERM clone3-into-cgroup /sys/fs/cgroup
works socket "socket(AF_INET, SOCK_STREAM)" o-socket socket-tcp
refused socket "socket(AF_VSOCK)" x-socket EPERM socket_create 40/1/0 EPERM socket-vsock
works add_key "add_key and keyctl read in its own session keyring" o-key key-add-read
refused keyctl "keyctl describe of the user keyring" x-key ENOKEY keyctl .user_reg EACCES \
	key-show-user

# --- allowed: as outside a run ---------------------------------------------
as_outside name_to_handle_at "name_to_handle_at" a1 name_to_handle_at /etc/passwd
as_outside arch_prctl "arch_prctl(ARCH_GET_FS)" a2 arch_prctl
as_outside futex_waitv "futex_waitv" a3 futex_waitv
as_outside futex_wake "futex_wake" a4 futex_wake
as_outside futex_wait "futex_wait" a5 futex_wait
as_outside futex_requeue "futex_requeue" a6 futex_requeue
as_outside io_pgetevents "io_pgetevents" a7 io_pgetevents
as_outside vmsplice "vmsplice" a8 vmsplice
as_outside map_shadow_stack "map_shadow_stack" a9 map_shadow_stack
as_outside mseal "mseal" a10 mseal
as_outside listmount "listmount" a11 listmount
as_outside statmount "statmount" a12 statmount
if [ -n "$HAVE_I386" ]; then
	as_outside arch_prctl "arch_prctl(ARCH_GET_CPUID) (i386)" a13 arch_prctl-i386
	as_outside io_pgetevents_time64 "io_pgetevents_time64 (i386)" a14 io_pgetevents_time64
else
	SKIPPED="$SKIPPED io_pgetevents_time64 "
fi

# --- every row of the table had a case ---------------------------------------
missing=
for row in $("$SP" list | awk '{ print $1 }'); do
	case "$COVERED" in *" $row "*) continue ;; esac
	case "$SKIPPED" in *" $row "*) echo "[SKIP] $row: not checked on this kernel"; continue ;; esac
	missing="$missing $row"
done
[ -z "$missing" ] && pass "every row of the table was checked ($("$SP" list | wc -l) rows)" ||
	fail "rows of the table no case checked" "$missing"

finish
