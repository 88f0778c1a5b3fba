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

# Audit records without the fields that change from boot to boot.
normalize() {
	sed -E -e 's/"time":"[^"]*",//' -e 's/"pid":[0-9]+,"tgid":[0-9]+,//' \
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

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
