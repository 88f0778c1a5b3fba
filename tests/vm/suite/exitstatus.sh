#!/bin/sh
# The kernel's record of how a run's main process ended (bpf/exit.bpf.c, the
# run_exit map), which a restarted node agent reads for a run it did not
# fork: for every way a process can end, tl_run_main_exit must give exactly
# the wait status waitpid() gives its parent, and nothing for a process
# outside every run (tests/vm/drivers/exitprobe.c, one run per case).  Runs
# inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

echo "  core_pattern: $(cat /proc/sys/kernel/core_pattern 2>/dev/null)"

# probe CASE WHAT: one exitprobe case
probe() {
	out=$("$BIN/exitprobe" "$1" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  exitprobe: /'
	[ "$rc" -eq 0 ] && pass "$2" || fail "$2" "exitprobe $1 exit $rc"
}

probe exit0 "exit(0) is recorded as waitpid's 0x0000"
probe exit7 "exit(7) is recorded as waitpid's 0x0700"
probe sigkill "a SIGKILL is recorded as waitpid's status (9)"
probe segv_core "SIGSEGV with core dumps on is recorded as waitpid's status"
probe segv_nocore "SIGSEGV with RLIMIT_CORE 0 is recorded as waitpid's status (11, no 0x80)"
probe thread_exit_group "exit_group(3) from a second thread while main blocks: the group's 0x0300"
probe main_pthread_exit "main pthread_exit()s, another thread exit(5)s later: recorded when the last thread goes, 0x0500"
probe last_thread_sys_exit "main SYS_exit(1), the last thread SYS_exit(6): waitpid's status, the last thread's"
probe grandchild "a double-forked grandchild outliving main: main's status, the grandchild's exit changes nothing"
probe exec "main execs another program that exits 9: the same tgid, 0x0900"
probe thread_exec "a second thread execs (the old leader dies in de_thread): not an exit; the program's 0x0900"
probe outside "a process outside every run named as the main process: nothing recorded"

# the segv_core case must have dumped when the kernel can write a core in its directory
case "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" in
core*)
	"$BIN/exitprobe" segv_core | grep -q ' wait=0x008b recorded=0x008b .* core=1' &&
		pass "a dumped core shows as 0x80 in the record (0x008b)" ||
		fail "core dump flag" "$("$BIN/exitprobe" segv_core)"
	;;
*) echo "[SKIP] core_pattern is not a plain file name: the 0x80 case is not checked" ;;
esac

finish
