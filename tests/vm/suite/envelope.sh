#!/bin/sh
# The record envelope (docs/audit.md, "The record envelope"): every record of
# a run says which node, boot and tether made it, for which run, attempt,
# tenant, trace and policy; kernel records name the parent process and its
# executable.  And no record holds a secret: an environment value, an
# argument beyond argv[0], a file's contents or a credential.
. /ext/suite/lib.sh

WS=/srv/envelope-ws
mkdir -p "$WS" /srv/envelope-out
ENV=$T/envelope.yaml
cat > "$ENV" <<EOT
sandbox:
  identity: {uid: 0, gid: 0, tenant: team-e}
  filesystem:
    root: read_only
    workspace:
      path: $WS
EOT
digest=$(tether check "$ENV" 2>/dev/null | sed -n 's/^policy \(sha256:[0-9a-f]*\).*/\1/p' | head -n 1)
host=$(uname -n)
boot=$(cat /proc/sys/kernel/random/boot_id)
version=$(tether --version | sed 's/^tether //')
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01

# sh forks fsprobe (the "; true" keeps busybox from exec'ing it in place):
# fsprobe's denial names sh as its parent.
rm -f "$T/ev1.audit"
tether run --envelope "$ENV" --run-id ev1 --traceparent "$TP" --audit-allowed --audit "$T/ev1.audit" \
	-- /bin/sh -c "$BIN/fsprobe EACCES write /srv/envelope-out/f; true" > "$T/ev1.out" 2>&1
rc=$?
n=$(wc -l < "$T/ev1.audit")
pre="{\"schema_version\":3,\"seq\":[0-9]*,\"time\":\"[0-9T:.Z-]*\",\"host\":\"$host\",\"boot_id\":\"$boot\",\"tether_version\":\"$version\",\"run_id\":\"ev1\",\"attempt\":1,\"tenant\":\"team-e\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"00f067aa0ba902b7\",\"policy_digest\":\"$digest\",\"kind\":\""
m=$(grep -c "^$pre" "$T/ev1.audit")
[ $rc -eq 0 ] && [ -n "$digest" ] && [ "$n" -ge 4 ] && [ "$m" -eq "$n" ] &&
	pass "every record carries schema_version 3, the node, its boot, tether's version, the run, attempt, tenant, trace ids and policy digest" ||
	fail "record envelope" "rc=$rc digest=$digest $m of $n lines match; first: $(head -n 1 "$T/ev1.audit")"

# The exec of /bin/sh (busybox) is made by tether in the run: its tgid is sh's pid.
sh_pid=$(grep '"op":"exec","path":"/bin/busybox"' "$T/ev1.audit" | head -n 1 | sed -n 's/.*"pid":[0-9]*,"tgid":\([0-9]*\),.*/\1/p')
deny=$(grep '"op":"create","path":"/srv/envelope-out/f"' "$T/ev1.audit" | head -n 1)
ppid=$(echo "$deny" | sed -n 's/.*"ppid":\([0-9]*\),.*/\1/p')
[ -n "$sh_pid" ] && [ "$ppid" = "$sh_pid" ] &&
	echo "$deny" | grep -q "\"exe\":\"$BIN/fsprobe\",\"parent_exe\":\"/bin/busybox\"," &&
	pass "a kernel record names the parent process (ppid) and its executable (parent_exe)" ||
	fail "ppid and parent_exe" "sh pid '$sh_pid', record: $deny"

# Without a traceparent and a tenant: null, not absent.
cat > "$T/envelope-nt.yaml" <<EOT
sandbox:
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
EOT
rm -f "$T/ev2.audit"
tether run --envelope "$T/envelope-nt.yaml" --run-id ev2 --audit "$T/ev2.audit" -- /bin/true
rc=$?
n=$(wc -l < "$T/ev2.audit")
[ $rc -eq 0 ] && [ "$n" -ge 3 ] &&
	[ "$(grep -c '"run_id":"ev2","attempt":1,"tenant":null,"trace_id":null,"span_id":null,"policy_digest":"sha256:[0-9a-f]\{64\}","kind":"' "$T/ev2.audit")" -eq "$n" ] &&
	pass "no tenant, no traceparent: the envelope says null" ||
	fail "null envelope fields" "rc=$rc $(head -n 1 "$T/ev2.audit")"

tether run --envelope "$ENV" --run-id ev3 --traceparent 00-00000000000000000000000000000000-00f067aa0ba902b7-01 \
	-- /bin/true > "$T/ev3.out" 2>&1
rc=$?
[ $rc -eq 122 ] && grep -q "traceparent.*not a W3C trace context" "$T/ev3.out" &&
	pass "an invalid --traceparent (a zero trace id) is a usage error, 122; nothing ran" ||
	fail "invalid traceparent" "rc=$rc $(cat "$T/ev3.out")"

# ---- secrets never reach a record ---------------------------------------------
# The command gets a canary in its environment and as an argument, reads a
# canary file and writes its contents where it may not (the denial is
# recorded; the contents are not); a cloud credential sits in the environment.
CANARY_ENV=tether-canary-env-5b1d0c7e
CANARY_ARG=tether-canary-arg-90af13c2
CANARY_FILE=tether-canary-file-7e42a9d1
CANARY_KEY=AKIAIOSFODNN7CANARY01
printf '%s\n' "$CANARY_FILE" > "$WS/canary.txt"
rm -f "$T/ev4.audit"
TETHER_CANARY="$CANARY_ENV" AWS_ACCESS_KEY_ID="$CANARY_KEY" AWS_SECRET_ACCESS_KEY="$CANARY_ENV/secret" \
	tether run --envelope "$ENV" --run-id ev4 --audit-allowed --audit "$T/ev4.audit" -- \
	/bin/sh -c 'v=$(cat '"$WS"'/canary.txt); echo "$v $TETHER_CANARY $AWS_SECRET_ACCESS_KEY" > /srv/envelope-out/stolen; '"$BIN"'/fsprobe EACCES write /srv/envelope-out/stolen2; true' \
	"$CANARY_ARG" > "$T/ev4.out" 2>&1
rc=$?
leak=$(cat /tmp/suite/*.audit /var/lib/tether/runs/*/records.jsonl 2>/dev/null |
	grep -c -e "$CANARY_ENV" -e "$CANARY_ARG" -e "$CANARY_KEY")
denials=$(grep -c '"decision":"deny"' "$T/ev4.audit")
leak_file=$(grep -c "$CANARY_FILE" "$T/ev4.audit")
[ $rc -eq 0 ] && [ "$denials" -ge 2 ] && [ "$leak" -eq 0 ] && [ "$leak_file" -eq 0 ] &&
	pass "no record on the node holds an environment value, an argument beyond argv[0], a credential or a file's contents (canaries)" ||
	fail "secrets in records" "rc=$rc denials=$denials leaks=$leak file=$leak_file: $(grep -e "$CANARY_ENV" -e "$CANARY_ARG" -e "$CANARY_KEY" "$T/ev4.audit" | head -n 2)"

finish
