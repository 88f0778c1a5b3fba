#!/bin/sh
# Refusals the kernel makes before tether's hooks are asked (issue 16, item
# 7): a non-root run refused by the file's own permissions (mode bits) gets
# exactly one record, reason "permission", with the resolved path and the
# open's op; a refusal of tether's own rules stays one record of its own
# reason.  docs/audit.md, "Refusals by the kernel's own permission checks".
# Every case asserts the exact errno (fsprobe) and the exact record.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

D=/srv/dac
rm -rf "$D"
mkdir -p "$D/w" "$D/x" "$D/deny" "$D/ws"
chmod 755 "$D" "$D/w" "$D/x" "$D/deny"
chown 1000:1000 "$D/ws"
echo secret > "$D/secret" && chmod 600 "$D/secret"		# root's, 0600
ln -s secret "$D/link"						# -> $D/secret
echo public > "$D/public" && chmod 644 "$D/public"
echo data > "$D/w/file" && chmod 644 "$D/w/file"		# writable by rule, not by mode
printf '#!/bin/sh\necho ran\n' > "$D/x/script" && chmod 644 "$D/x/script"	# no x bit
echo open > "$D/deny/open" && chmod 644 "$D/deny/open"		# readable by mode, denied by rule
echo both > "$D/deny/secret" && chmod 600 "$D/deny/secret"	# refused by both
printf '#!%s\n' "$D/x/interp" > "$D/x/uses-interp" && chmod 755 "$D/x/uses-interp"
cp /bin/busybox "$D/x/interp" && chmod 644 "$D/x/interp"	# an interpreter without an x bit
: > "$D/w/log" && chmod 666 "$D/w/log"				# writable by mode, append-only
APPEND_ONLY=yes
"$BIN/fsprobe" ok set-append-only "$D/w/log" >/dev/null || APPEND_ONLY=no

# envelope FILE [MODE_LINE]: uid 1000; the rules allow reading everything
# but $D/deny, writing $D/w and executing $D/x.
dac_envelope() {
	cat > "$1" <<EOT
sandbox:
  identity: {uid: 1000, gid: 1000}
  ${2:-mode: enforce}
  filesystem:
    root: read_only
    write: ["$D/w/**"]
    exec: ["@system", "/opt/tether-tests/**", "$D/x/**"]
    deny: ["$D/deny/**"]
    workspace:
      path: $D/ws
EOT
}
ENV=$T/dac.yaml
dac_envelope "$ENV"

# rec ID OP PATH ACCESS ERRNO REASON [DECISION]: the normalized record.
rec() {
	echo "{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"fs\",\"op\":\"$2\",\"path\":\"$3\",\"access\":\"$4\",\"decision\":\"${7:-deny}\",\"errno\":\"$5\",$6,\"uid\":1000,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
}
PERM='"reason":"permission"'

# denials AUDIT: the number of the kernel's records in the stream (every
# record with an fs body: they all say "decision").
denials() { grep -v '"kind":"run"' "$1" | grep -c '"decision":'; }

# one NAME ID RECORD: fsprobe saw its errno, and the stream holds RECORD and
# no other kernel record.
one() {
	if [ "$RC" -ne 0 ]; then
		fail "$1" "fsprobe did not see the expected result (tether exit $RC)"
	elif ! expect_record "$1" "$T/$2.audit" "$3"; then
		fail "$1" "record missing or different"
	elif [ "$(denials "$T/$2.audit")" -ne 1 ]; then
		fail "$1" "$(denials "$T/$2.audit") kernel records, not 1"
		normalize "$T/$2.audit" | sed 's/^/    /'
	elif ! stream_adds_up "$T/$2.audit"; then
		fail "$1" "stream does not add up:$WHY"
	else
		pass "$1"
	fi
}

# --- refused by the file's mode bits, allowed by the rules --------------------
in_run dac1 EACCES read "$D/secret"
one "uid 1000 reads a root 0600 file the rules allow: EACCES, one permission record" dac1 \
	"$(rec dac1 open_read "$D/secret" read EACCES "$PERM")"

in_run dac2 EACCES read "$D/link"
one "through a symlink: the record names the file the kernel refused" dac2 \
	"$(rec dac2 open_read "$D/secret" read EACCES "$PERM")"

in_run dac3 EACCES append "$D/w/file"
one "a write (O_APPEND) to a root 0644 file in a writable rule: EACCES, one permission record" \
	dac3 "$(rec dac3 open_write "$D/w/file" write EACCES "$PERM")"

in_run dac4 EACCES write "$D/w/file"
one "a write with O_CREAT|O_TRUNC of that existing file: the same" dac4 \
	"$(rec dac4 open_write "$D/w/file" write EACCES "$PERM")"

in_run dac5 EACCES open-rw "$D/w/file"
one "O_RDWR: op open_write, access read,write" dac5 \
	"$(rec dac5 open_write "$D/w/file" read,write EACCES "$PERM")"

in_run dac6 EACCES exec "$D/x/script"
one "exec of a file without an x bit in an exec rule: EACCES, one permission record" dac6 \
	"$(rec dac6 exec "$D/x/script" exec EACCES "$PERM")"

in_run dac12 EACCES exec "$D/x/uses-interp"
one "a #! script whose interpreter has no x bit: the record names the interpreter" dac12 \
	"$(rec dac12 exec "$D/x/interp" exec EACCES "$PERM")"

# An append-only file opened for writing without O_APPEND: the kernel's EPERM.
if [ "$APPEND_ONLY" = yes ]; then
	in_run dac13 EPERM write "$D/w/log"
	one "a write-open of an append-only file (mode 0666) without O_APPEND: EPERM, one permission record" \
		dac13 "$(rec dac13 open_write "$D/w/log" write EPERM "$PERM")"
	in_run dac14 ok append "$D/w/log"
	if [ "$RC" -eq 0 ] && [ "$(denials "$T/dac14.audit")" -eq 0 ]; then
		pass "the same file opened with O_APPEND: allowed, no record"
	else
		fail "append-only file with O_APPEND" "exit $RC"
	fi
else
	fail "append-only file" "could not set FS_APPEND_FL on $D/w/log (tmpfs has it from 6.0 on)"
fi

# --- tether's own refusals stay one record of their own reason ----------------
DENYRULE="\"reason\":\"rule\",\"rule\":[0-9]*,\"rule_path\":\"$D/deny\""
in_run dac7 EACCES read "$D/deny/open"
if [ "$RC" -eq 0 ] && [ "$(denials "$T/dac7.audit")" -eq 1 ] &&
	normalize "$T/dac7.audit" | grep -qx "$(rec dac7 open_read "$D/deny/open" read EACCES "$DENYRULE")" &&
	! grep -q "$PERM" "$T/dac7.audit"; then
	pass "a file the rules deny (readable by its mode): one record, reason rule, no permission record"
else
	fail "a rule's denial" "exit $RC"
	normalize "$T/dac7.audit" | sed 's/^/    /'
fi

# Refused by both: the kernel's check comes first (may_open before
# file_open), so the one record is the kernel's.
in_run dac8 EACCES read "$D/deny/secret"
one "refused by the mode bits and by the rules: one record, the kernel's (permission)" dac8 \
	"$(rec dac8 open_read "$D/deny/secret" read EACCES "$PERM")"

# --- mode: audit relaxes tether's rules, not the kernel's ---------------------
dac_envelope "$T/dac-audit.yaml" "mode: audit"
ENV=$T/dac-audit.yaml
in_run dac9 EACCES read "$D/secret"
one "mode: audit: the kernel's refusal is still a deny (not would_deny)" dac9 \
	"$(rec dac9 open_read "$D/secret" read EACCES "$PERM")"
ENV=$T/dac.yaml

# --- what the kernel allows leaves no record ----------------------------------
rm -f "$T/dac10.audit"
tether run --envelope "$ENV" --run-id dac10 --audit "$T/dac10.audit" -- /bin/sh -e -c "
	$BIN/fsprobe ok read $D/public
	$BIN/fsprobe ok read $D/w/file
	$BIN/fsprobe ok write $D/ws/mine
	$BIN/fsprobe ok read $D/ws/mine
	$BIN/fsprobe ok exec $BIN/fsprobe ok nop
	cat $D/public >/dev/null"
RC=$?
if [ "$RC" -eq 0 ] && [ "$(denials "$T/dac10.audit")" -eq 0 ]; then
	pass "allowed opens and execs of a uid-1000 run: no record"
else
	fail "allowed opens and execs" "exit $RC"
	normalize "$T/dac10.audit" | sed 's/^/    /'
fi

# --- a shell's own "Permission denied" is recorded too -------------------------
rm -f "$T/dac11.audit"
tether run --envelope "$ENV" --run-id dac11 --audit "$T/dac11.audit" -- /bin/sh -c "cat $D/secret" \
	> "$T/dac11.out" 2>&1
RC=$?
if [ "$RC" -ne 0 ] && grep -q 'Permission denied' "$T/dac11.out" &&
	[ "$(grep -c "$PERM" "$T/dac11.audit")" -eq 1 ] &&
	grep "$PERM" "$T/dac11.audit" | grep -q "\"op\":\"open_read\",\"path\":\"$D/secret\".*\"uid\":1000,\"comm\":\"cat\""; then
	pass "cat of a root 0600 file in a uid-1000 run: the shell says Permission denied, the stream has its record"
else
	fail "cat of a root 0600 file" "exit $RC, $(cat "$T/dac11.out")"
	normalize "$T/dac11.audit" | sed 's/^/    /'
fi

finish
