#!/bin/sh
# The real-toolchain suite, part 2: what must still fail when runs get their
# own /tmp, /var/tmp and /dev/shm, loopback and exec on scratch space.  Each
# attack is a run under the same envelope as part 1 (read-only root, uid
# 1000, no network, workspace writable); root checks the outcome from
# outside.  A case whose attack cannot even be set up (the victim could not
# write its own /tmp) fails as "precondition", never passes.  Runs in the
# guest as root: tests/vm/run-toolchain.
. /opt/tether-tests/toolchain/lib.sh


# attack_ran NAME ID: the attack's run itself must have completed (its
# script ignores the attempts' failures); says why not.
attack_ran() {
	[ "$RC" -eq 0 ] && return 0
	fail "$1" "the attack's run exited $RC"
	show_run "$2"
	return 1
}

# --- a read-only input ------------------------------------------------------------
# Owned by the run's uid, so that only the input rule stands in the way.
make_input_repo 1000
env_for input-push "" "    inputs:
      - {path: $INPUT/upstream.git}"
tc_run input-push "$ENV" input-push "$WS" "$INPUT/upstream.git"
if attack_ran "a read-only input repository stays unchanged" input-push; then
	if [ -s "$WS/did" ] || [ "$(upstream_rev main)" != "$UPSTREAM_HEAD" ] ||
		upstream_rev refs/heads/evil >/dev/null ||
		[ -e "$INPUT/upstream.git/hooks/post-update" ]; then
		fail "a read-only input repository stays unchanged" "$(cat "$WS/did" 2>/dev/null | tr '\n' ' ')"
		show_run input-push
	elif ! denials "$T/input-push.audit" | grep -qF "\"path\":\"$INPUT/upstream.git/"; then
		fail "a read-only input repository stays unchanged" "refused, but no denial record names the input"
		show_run input-push
	else
		pass "a read-only input repository (owned by the run's uid) stays unchanged: git push and direct writes refused, recorded"
	fi
fi

# --- the host's /tmp, /var/tmp, /dev/shm ------------------------------------------
for d in /tmp /var/tmp /dev/shm; do
	rm -rf "$d/made-by-run" "$d/dir-by-run" "$d"/host-owned-by-*
	echo "host original" >"$d/host-owned-by-1000"
	chown 1000:1000 "$d/host-owned-by-1000"
	chmod 0600 "$d/host-owned-by-1000"
	echo "host original" >"$d/host-owned-by-root"
	chmod 0666 "$d/host-owned-by-root"
done
env_for host-scratch
tc_run host-scratch "$ENV" host-scratch "$WS"
if attack_ran "host /tmp, /var/tmp, /dev/shm unchanged" host-scratch; then
	bad=
	for d in /tmp /var/tmp /dev/shm; do
		f=$d/host-owned-by-1000
		[ "$(cat "$f" 2>/dev/null)" = "host original" ] || bad="$bad; $f is now '$(cat "$f" 2>&1)'"
		[ "$(stat -c %a "$f" 2>/dev/null)" = 600 ] || bad="$bad; $f has mode $(stat -c %a "$f" 2>&1)"
		[ ! -e "$d/made-by-run" ] || bad="$bad; $d/made-by-run appeared on the host"
		[ ! -e "$d/dir-by-run" ] || bad="$bad; $d/dir-by-run appeared on the host"
	done
	if [ -z "$bad" ]; then
		pass "a run cannot change or add to the host's /tmp, /var/tmp, /dev/shm (a file of its own uid there is unchanged)"
	else
		fail "host /tmp, /var/tmp, /dev/shm unchanged" "${bad#; }"
		show_run host-scratch
	fi
fi

env_for host-scratch-view
tc_run host-scratch-view "$ENV" host-scratch-view "$WS"
if [ "$RC" -eq 0 ]; then
	pass "the host's files in /tmp, /var/tmp, /dev/shm are invisible in a run"
else
	fail "the host's files in /tmp, /var/tmp, /dev/shm are invisible in a run" "tether run exited $RC"
	show_run host-scratch-view
fi

# --- another run's /tmp, /var/tmp, /dev/shm and loopback listener -----------------
# The victim runs until root creates $stop; the attacker runs meanwhile.
secret=victim-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
stop=$CTL/stop-victim
rm -f "$stop"
env_for victim
VWS=$WS
tc_run victim "$ENV" victim "$WS" "$secret" "$stop" &
victim_job=$!
i=0
while [ ! -e "$VWS/ready" ] && [ "$i" -lt 600 ] && kill -0 "$victim_job" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
if [ -e "$VWS/ready" ]; then
	env_for attacker
	AWS=$WS
	tc_run attacker "$ENV" attacker "$WS" "$(cat "$VWS/pid")"
	attacker_rc=$RC
else
	attacker_rc=none
fi
touch "$stop"
wait "$victim_job"
victim_shown=
show_victim() {
	if [ -z "$victim_shown" ]; then
		show_run victim
		victim_shown=1
	else
		echo "  (the victim's run: as above)"
	fi
}
cross() {
	name=$1 what=$2
	if [ "$attacker_rc" = none ]; then
		fail "$name" "the victim run never got ready"
		show_victim
	elif ! grep -qx "$what" "$VWS/made" 2>/dev/null; then
		fail "$name" "precondition: the victim run could not $3"
		show_victim
	elif [ "$attacker_rc" -ne 0 ]; then
		fail "$name" "the attacker's run exited $attacker_rc"
		show_run attacker
	elif grep -qF "$secret" "$AWS/seen" 2>/dev/null; then
		fail "$name" "the attacker read the victim's secret"
		show_run attacker
	elif [ "$what" != listening ] && grep -q "victim-secret" "$AWS/seen" 2>/dev/null; then
		fail "$name" "the attacker saw the victim's file name: $(grep victim-secret "$AWS/seen" | head -n 3 | tr '\n' ' ')"
		show_run attacker
	elif [ "$what" != listening ] && ! grep -qx "$what" "$VWS/intact" 2>/dev/null; then
		fail "$name" "the victim's $what/victim-secret changed (attacker: $(cat "$AWS/did" 2>/dev/null | tr '\n' ' '))"
		show_run attacker
	else
		pass "$name"
	fi
}
cross "another run's /tmp: not readable, listable or writable, by name or through /proc/PID/root" /tmp "write its own /tmp"
cross "another run's /var/tmp: not readable, listable or writable, by name or through /proc/PID/root" /var/tmp "write its own /var/tmp"
cross "another run's /dev/shm: not readable, listable or writable, by name or through /proc/PID/root" /dev/shm "write its own /dev/shm"
cross "another run's loopback listener (127.0.0.1:8002) is unreachable without a rule" listening "listen on 127.0.0.1:8002 and reach itself"

# --- a host service on loopback ---------------------------------------------------------
mkdir -p "$T/hostsrv"
hsecret=host-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
printf '%s' "$hsecret" >"$T/hostsrv/secret.txt"
python3 -m http.server 8001 --bind 127.0.0.1 --directory "$T/hostsrv" >"$T/hostsrv.log" 2>&1 &
hostsrv=$!
i=0
until [ "$(curl -s --max-time 5 http://127.0.0.1:8001/secret.txt)" = "$hsecret" ] || [ "$i" -ge 60 ]; do
	sleep 0.5
	i=$((i + 1))
done
requests_before=$(grep -c 'GET /secret.txt' "$T/hostsrv.log")
env_for host-loopback
tc_run host-loopback "$ENV" host-loopback "$WS"
requests_after=$(grep -c 'GET /secret.txt' "$T/hostsrv.log")
kill "$hostsrv"
wait "$hostsrv" 2>/dev/null
if [ "$i" -ge 60 ]; then
	fail "a host service on loopback is unreachable" "precondition: root's server on 127.0.0.1:8001 never answered"
elif attack_ran "a host service on loopback is unreachable" host-loopback; then
	if grep -qF "$hsecret" "$WS/seen" 2>/dev/null || [ "$requests_after" != "$requests_before" ]; then
		fail "a host service on loopback is unreachable" "the run reached 127.0.0.1:8001 ($((requests_after - requests_before)) requests)"
		show_run host-loopback
	elif ! denials "$T/host-loopback.audit" | grep '"op":"connect"' | grep -qF '"address":"127.0.0.1","port":8001'; then
		fail "a host service on loopback is unreachable" "refused, but no connect record for 127.0.0.1:8001"
		show_run host-loopback
	else
		pass "a host service on loopback (127.0.0.1:8001) is unreachable, and the connect is recorded"
	fi
fi

# --- exec from scratch space without a grant --------------------------------------
env_for exec-scratch
tc_run exec-scratch "$ENV" exec-scratch "$WS"
if attack_ran "exec from scratch space" exec-scratch; then
	run_tmpdir=$(cat "$WS/tmpdir.txt")
	dirs="/tmp /var/tmp /dev/shm"
	case " $dirs " in *" $run_tmpdir "*) ;; *) dirs="$run_tmpdir $dirs" ;; esac
	for d in $dirs; do
		label=$d
		[ "$d" != "$run_tmpdir" ] || label="$d (TMPDIR)"
		name="no exec, no executable mapping from $label without a grant"
		if ! grep -qxF "$d" "$WS/made" 2>/dev/null; then
			fail "$name" "precondition: the run could not write its own $d"
			if [ -n "${exec_shown:-}" ]; then echo "  (the run: as above)"; else show_run exec-scratch; fi
			exec_shown=1
		elif grep -qF " $d/" "$WS/ran" 2>/dev/null; then
			fail "$name" "$(grep -F " $d/" "$WS/ran" | tr '\n' ' ')"
			show_run exec-scratch
		elif ! denied_record "$T/exec-scratch.audit" exec "$d/tc-true" ||
			! denied_record "$T/exec-scratch.audit" mmap_exec "$d/tc-lib.so"; then
			fail "$name" "refused, but the exec or mmap_exec record of $d is missing"
			show_run exec-scratch
		else
			pass "$name (both recorded)"
		fi
	done
fi

finish
