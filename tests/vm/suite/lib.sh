# Shared helpers for the in-VM suites (busybox sh).  Each case prints
# "[PASS] name" or "[FAIL] name: why"; finish() prints "N passed, N failed".
PASSED=0
FAILED=0
BIN=/opt/tether-tests/bin
T=/tmp/suite
mkdir -p "$T"

# Runs have no capabilities, so the probes use user.* extended attributes
# (trusted.* needs CAP_SYS_ADMIN).  tmpfs, which holds the VM's files, has
# user.* attributes from 6.6 on: before, an allowed change passes the hooks
# and then fails in tmpfs.
XATTR_OK=ok
case "$(uname -r)" in 5.* | 6.[0-5].* | 6.[0-5]) XATTR_OK=EOPNOTSUPP ;; esac

pass() { PASSED=$((PASSED + 1)); echo "[PASS] $1"; }
fail() { FAILED=$((FAILED + 1)); echo "[FAIL] $1: $2"; }

# envelope FILE WORKSPACE: writes a minimal envelope.
envelope() {
	cat > "$1" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $2
EOT
}

# in_run ID EXPECT OP ARGS...: fsprobe inside a fresh run under the envelope
# $ENV; RC is tether's exit status, the audit stream is $T/ID.audit.
in_run() {
	id=$1
	shift
	rm -f "$T/$id.audit"
	tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$BIN/fsprobe" "$@"
	RC=$?
}

# Audit records without the fields that change from boot to boot: the
# record envelope (docs/audit.md: schema_version, time, host, boot_id,
# tether_version, attempt, tenant, trace ids, policy_digest), pids, the
# parent's executable, cgroup ids and run slots.  What is left is
# {"seq":N,"run_id":...,"kind":...,...}, the shape the suites assert on;
# envelope.sh checks the envelope itself.
normalize() {
	sed -E -e 's/^\{"schema_version":[0-9]+,/{/' -e 's/"time":"[^"]*",//' \
		-e 's/"host":"[^"]*","boot_id":"[^"]*","tether_version":"[^"]*",//' \
		-e 's/,"attempt":[0-9]+,"tenant":(null|"[^"]*"),"trace_id":(null|"[0-9a-f]*"),"span_id":(null|"[0-9a-f]*"),"policy_digest":"[^"]*"//' \
		-e 's/"pid":[0-9]+,"tgid":[0-9]+,("ppid":[0-9]+,)?//' -e 's/,"parent_exe":"[^"]*"//' \
		-e 's/,"cgroup_id":[0-9]+//' -e 's/,"run_slot":[0-9]+//' "$1"
}

# expect_record NAME AUDIT_FILE RECORD: the normalized stream holds RECORD exactly.
expect_record() {
	if normalize "$2" | grep -qxF "$3"; then
		return 0
	fi
	echo "  expected record: $3"
	echo "  audit stream was:"
	normalize "$2" | sed 's/^/    /'
	return 1
}

# kind_of OP: the kind of a record with an fs body by its op (record
# version 2: bpf/abi/event.h tether_fs_op_kind, docs/audit.md "Record kinds").
kind_of() {
	case $1 in
	clone_into_cgroup|ptrace|signal|userns_create|keyctl|task_control) echo proc ;;
	capability) echo capability ;;
	bpf|kernel_load|module_request|perf_event_open|syslog|settime|anon_inode) echo kernel ;;
	unix_connect|unix_send) echo unix ;;
	socket_create) echo net ;;
	*) echo fs ;;
	esac
}

# no_denials AUDIT_FILE: the stream holds no denial by a BPF-LSM hook: no
# record with the fs body (kinds fs, proc, capability, kernel, unix, and
# net's socket_create with a path) says deny.
no_denials() {
	! grep -qE '"kind":"(fs|proc|capability|kernel|unix)".*"decision":"deny"|"kind":"net","op":"socket_create","path":.*"decision":"deny"' "$1"
}

# stream_adds_up AUDIT_FILE: sets WHY ("" when all is well) to what does not
# add up in one run's stream (docs/audit.md, "Coalesced records"): every
# seq from 1 to the end record's audit_seq_last is a line of its own or in
# exactly one coalesced record's coalesced_seqs, each coalesced record's
# ranges hold its count, the end record's seq follows audit_seq_last, and
# audit_records (every record before end) = audit_seq_last (nothing lost),
# = the lines before it + audit_coalesced, the coalesced records' sum.
stream_adds_up() {
	WHY=$(awk '
	function num(name) {
		if (match($0, "\"" name "\":[0-9]+"))
			return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) + 0
		return -1
	}
	{
		s = num("seq")
		if (s < 1) { why = why " line " NR " has no seq;"; next }
		if ($0 ~ /"kind":"run","event":"end"/) {
			ends++; end_seq = s; records = num("audit_records"); last = num("audit_seq_last")
			lost = num("audit_lost"); coalesced = num("audit_coalesced"); next
		}
		if (ends) why = why " a line after the end record;"
		lines++; seen[s]++
		n = num("coalesced")
		if (n < 0) next
		if (!match($0, /"coalesced_seqs":\[[][0-9,]*\]/)) { why = why " seq " s ": no coalesced_seqs;"; next }
		r = substr($0, RSTART + 18, RLENGTH - 18); gsub(/[^0-9,]/, "", r)
		k = split(r, b, ","); got = 0
		for (i = 1; i + 1 <= k; i += 2) {
			if (b[i] + 0 > b[i + 1] + 0) why = why " seq " s ": range " b[i] "-" b[i + 1] ";"
			for (j = b[i] + 0; j <= b[i + 1] + 0; j++) { seen[j]++; got++ }
		}
		if (got != n) why = why " seq " s ": coalesced " n " but its ranges hold " got ";"
		total += n
	}
	END {
		if (ends != 1) { print " " ends " end records;"; exit }
		if (end_seq != last + 1) why = why " end seq " end_seq " after audit_seq_last " last ";"
		for (j = 1; j <= last; j++)
			if (seen[j] != 1) why = why " seq " j " accounted for " seen[j] + 0 " times;"
		for (j in seen) if (j + 0 > last) why = why " seq " j " past audit_seq_last;"
		if (lost != 0) why = why " audit_lost " lost ";"
		if (records != last) why = why " audit_records " records " != audit_seq_last " last ";"
		if (coalesced != total) why = why " audit_coalesced " coalesced " != " total " counted;"
		if (records != lines + total) why = why " audit_records " records " != " lines " lines + " total " coalesced;"
		printf "%s", why
	}' "$1")
	[ -z "$WHY" ]
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
