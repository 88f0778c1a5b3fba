#!/bin/sh
# The compiled rule model in the kernel: a workspace whose writable part is
# narrowed (filesystem.workspace.write), a denied subtree inside it, a
# read-only input, and a run from a compiled policy (tether compile).  Carve-
# outs must hold for the hooks that decide by inode identity too (xattrs,
# timestamps).  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

W=/srv/rules
ENV=$T/rules.yaml
IN=/srv/rules-in
mkdir -p "$W/rw/keys" "$W/rw/deep/secret" "$W/rw/other" "$IN"
echo secret > "$W/rw/keys/k"
echo data > "$IN/data"
echo old > "$W/rw/old"
cat > "$ENV" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    inputs: [{path: $IN}]
    workspace:
      path: $W
      write: [rw/**]
    deny: [rw/keys/**, rw/deep/secret/**]
  resources: {cpu: 1}
  cleanup: {revoke_credentials: true}
  # cleanup.revoke_credentials is a gap of this version; network_egress.default
  # was one and is accepted (and dropped) for envelopes written then
  acknowledge_unenforced: [cleanup.revoke_credentials, network_egress.default]
EOT
# Compiled (sorted by path): 0 "/" R, 1-7 /bin /lib /lib32 /lib64 /libx32
# /opt /sbin RX, 8 $W/rw RW, 9 $W/rw/deep/secret -, 10 $W/rw/keys -, 11 /usr RX.
# $W and $IN are readable, like "/", and not executable: no rules of their own.

# ruled NAME ID OP PATH RULE RULE_PATH PROBE_ARGS...: denied with EACCES by rule RULE.
ruled() {
	name=$1 id=$2 op=$3 rpath=$4 rule=$5 rule_path=$6
	shift 6
	in_run "$id" EACCES "$@"
	rec="{\"seq\":2,\"run_id\":\"$id\",\"kind\":\"$(kind_of "$op")\",\"op\":\"$op\",\"path\":\"$rpath\",\"access\":\"write\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"rule\",\"rule\":$rule,\"rule_path\":\"$rule_path\",\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
	if [ "$RC" -ne 0 ]; then
		fail "$name" "fsprobe did not see EACCES (tether exit $RC)"
	elif ! expect_record "$name" "$T/$id.audit" "$rec"; then
		fail "$name" "audit record missing or different"
	else
		pass "$name"
	fi
}

in_run r1 ok write "$W/rw/new"
[ "$RC" -eq 0 ] && [ "$(cat "$W/rw/new")" = tether ] && no_denials "$T/r1.audit" &&
	pass "workspace.write: a file in the writable part is created" ||
	fail "write in rw" "exit $RC"
ruled "workspace.write: the rest of the workspace is read-only" r2 create "$W/top" 0 / \
	write "$W/top"
ruled "deny: a file in the denied subtree cannot be opened for writing" r3 open_write \
	"$W/rw/keys/k" 10 "$W/rw/keys" append "$W/rw/keys/k"
ruled "an input is read-only" r4 open_write "$IN/data" 0 / append "$IN/data"
ruled "deny holds for xattrs (decided by inode identity)" r5 setxattr "$W/rw/keys/k" 10 \
	"$W/rw/keys" setxattr "$W/rw/keys/k"
ruled "deny holds for timestamps (inode identity)" r6 utimes "$W/rw/keys/k" 10 \
	"$W/rw/keys" utimes "$W/rw/keys/k"

# A carve-out holds only while its path does: it cannot be moved, replaced
# or removed, nor can any directory above it inside the writable part.
ruled "a denied directory cannot be renamed out of its rule" r11 rename "$W/rw/keys" 10 \
	"$W/rw/keys" rename "$W/rw/keys" "$W/rw/keys2"
ruled "a denied directory cannot be exchanged with another (RENAME_EXCHANGE)" r12 rename \
	"$W/rw/keys" 10 "$W/rw/keys" exchange "$W/rw/other" "$W/rw/keys"
ruled "an empty denied directory cannot be removed" r13 rmdir "$W/rw/deep/secret" 9 \
	"$W/rw/deep/secret" rmdir "$W/rw/deep/secret"
in_run r14 EACCES rename "$W/rw/deep" "$W/rw/deep2"
rec='{"seq":2,"run_id":"r14","kind":"fs","op":"rename","path":"/srv/rules/rw/deep","decision":"deny","errno":"EACCES","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && [ -d "$W/rw/deep/secret" ] && expect_record r14 "$T/r14.audit" "$rec" &&
	pass "a directory above a carve-out cannot be renamed (pinned)" ||
	fail "pinned directory" "exit $RC"
in_run r15 ok rename "$W/rw/other" "$W/rw/other2"
[ "$RC" -eq 0 ] && [ -d "$W/rw/other2" ] && no_denials "$T/r15.audit" &&
	pass "other directories in the writable part still move" || fail "plain rename" "exit $RC"
in_run r7 "$XATTR_OK" setxattr "$W/rw/old"
[ "$RC" -eq 0 ] && no_denials "$T/r7.audit" &&
	pass "xattrs in the writable part are still allowed" || fail "xattr in rw" "exit $RC"
[ "$(cat "$W/rw/keys/k")" = secret ] && [ "$(cat "$IN/data")" = data ] &&
	pass "the denied file and the input are unchanged" || fail "carve-outs unchanged" "changed"

# A writable rule path that leads elsewhere through a symlink (planted by
# another user in /tmp, or by an earlier run in its workspace) is refused:
# following it would make the link's target writable.
mkdir -p /srv/target
ln -sfn /srv/target /srv/link
cat > "$T/link.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $W
    write: [/srv/link/sub/**]
EOT
tether run --envelope "$T/link.yaml" --run-id r9 -- /bin/sh -c "echo x > /srv/target/sub-x" \
	2> "$T/r9.err"
RC=$?
if [ "$RC" -eq 123 ] && [ ! -e /srv/target/sub-x ] &&
	grep -q "the writable rule path /srv/link/sub leads to /srv/target/sub through a symbolic link" "$T/r9.err"; then
	pass "a writable rule path through a symlink is refused and nothing runs"
else
	fail "symlinked write rule" "exit $RC: $(cat "$T/r9.err")"
fi

# --audit FILE where the run may write (not only in the workspace) is refused.
mkdir -p /srv/rules-logs
cat > "$T/logs.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $W
    write: [/srv/rules-logs/**]
EOT
tether run --envelope "$T/logs.yaml" --run-id r10 --audit /srv/rules-logs/a.jsonl -- /bin/true \
	2> "$T/r10.err"
RC=$?
if [ "$RC" -eq 122 ] && [ ! -e /srv/rules-logs/a.jsonl ] &&
	grep -q "is in a directory the run may write (/srv/rules-logs)" "$T/r10.err"; then
	pass "--audit in a directory the run may write is refused"
else
	fail "--audit in a writable directory" "exit $RC: $(cat "$T/r10.err")"
fi

# A compiled policy runs like its envelope; the start record carries its
# digest and the acknowledged gaps.
tether compile "$ENV" -o "$T/rules.tpol" > "$T/compile.out"
digest=$(sed -n 's/^policy //p' "$T/compile.out")
rm -f "$T/r8.audit"
tether run --envelope "$T/rules.tpol" --run-id r8 --audit "$T/r8.audit" -- /bin/sh -c \
	"$BIN/fsprobe ok write $W/rw/from-tpol && $BIN/fsprobe EACCES write $W/top2"
RC=$?
if [ "$RC" -eq 0 ] && [ -n "$digest" ] &&
	grep -q "\"policy_digest\":\"$digest\",\"kind\":\"run\",\"event\":\"start\".*\"mode\":\"enforce\",.*\"envelope_digest\":\"$digest\",\"unenforced\":\[\"cleanup.revoke_credentials\"\]" "$T/r8.audit"; then
	pass "a run from a compiled policy enforces it; its start record names the digest and gaps"
else
	fail "run from tpol" "exit $RC, digest '$digest': $(grep '"start"' "$T/r8.audit")"
fi

finish
