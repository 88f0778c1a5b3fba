#!/bin/sh
# Runs every suite in this directory inside one VM boot and prints the sum.
#   all.sh [NAME...]: only the suites named (fs, dac, ...: NAME.sh)
total_pass=0
total_fail=0
if [ $# -gt 0 ]; then
	for n; do
		[ -f "/ext/suite/$n.sh" ] || { echo "[FAIL] no suite $n"; total_fail=$((total_fail + 1)); }
	done
	set -- $(for n; do [ -f "/ext/suite/$n.sh" ] && echo "/ext/suite/$n.sh"; done)
else
	set -- /ext/suite/*.sh
fi
for s; do
	case "$s" in */lib.sh | */netlib.sh | */daemonlib.sh | */all.sh) continue ;; esac
	echo "== suite $(basename "$s" .sh) on $(uname -r)"
	# A suite that hangs is killed and fails alone; the others still run
	# and the boot still reports (TETHER_SUITE_TIMEOUT: seconds per suite).
	# Its output goes to a file, not a pipe: a process it left behind that
	# holds the pipe would make the reader wait for it.
	timeout -s KILL "${TETHER_SUITE_TIMEOUT:-1200}" sh "$s" > /tmp/suite.out 2>&1
	rc=$?
	cat /tmp/suite.out >&2
	out=$(tail -n 1 /tmp/suite.out)
	p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ "$rc" = 137 ]; then
		echo "[FAIL] suite $s was killed after ${TETHER_SUITE_TIMEOUT:-1200} s (it hung)"
		p=${p:-0} f=$((${f:-0} + 1))
	elif [ -z "$p" ]; then
		echo "[FAIL] suite $s ended without a summary line"
		p=0 f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done
# Every record the suites made (the first 4000 lines of each stream), for
# tests/vm/run-suite to check against docs/audit.schema.json on the host.
echo "== records"
echo "TETHER-RECORDS-BEGIN"
find /tmp/suite /var/lib/tether -type f \( -name '*.audit' -o -name records.jsonl -o -name 'node.log*' \) 2>/dev/null |
	while read -r f; do head -n 4000 "$f"; echo; done | gzip -c | base64
echo "TETHER-RECORDS-END"
echo "suite total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
