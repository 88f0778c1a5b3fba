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
	out=$(sh "$s" 2>&1 | tee /dev/stderr | tail -n 1)
	p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
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
