#!/bin/sh
# cg_run_kill_and_wait, the first step of every run's teardown, against real
# cgroup trees (tests/vm/drivers/killwait.c, one case per call): it returns
# once the kernel says the tree is empty, whatever was in it.  Runs inside
# the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

# probe CASE WHAT
probe() {
	out=$("$BIN/killwait" "$1" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  killwait: /'
	[ "$rc" -eq 0 ] && pass "$2" || fail "$2" "killwait $1 exit $rc: $out"
}

probe empty "an empty run cgroup: verified empty at once, nothing killed"
probe sleepers "8 waiting processes: all SIGKILLed, counted, and the cgroup seen empty"
probe forker "a process forking without end (double forks): the tree seen empty although forks race the kill"
probe nested "processes only in nested cgroups: the whole subtree killed and seen empty"
probe deadline0 "timeout 0 (run_end's): -ETIMEDOUT at once; then the wait sees it empty"
finish
