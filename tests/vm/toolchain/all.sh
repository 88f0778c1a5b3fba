#!/bin/sh
# Runs the real-toolchain suite (work.sh, then attacks.sh) in one boot and
# prints the sum as "suite total: N passed, N failed".
total_pass=0
total_fail=0
for s in work attacks; do
	echo "== toolchain $s on $(uname -r)"
	start=$(date +%s)
	out=$(sh "/opt/tether-tests/toolchain/$s.sh" 2>&1 | tee /dev/stderr | tail -n 1)
	p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		echo "[FAIL] toolchain $s ended without a summary line"
		p=0 f=1
	fi
	echo "== toolchain $s: $(($(date +%s) - start)) s"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done
echo "suite total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
