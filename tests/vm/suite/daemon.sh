#!/bin/sh
# tether daemon: every API operation with curl --unix-socket, refused callers,
# the journal, tether run through the daemon (descriptors passed), ps, inspect,
# logs and kill.  Runs inside the VM as root: tests/vm/run-suite.  The crash,
# reconcile and upgrade cases are in daemon-crash.sh, the 64 runs in
# daemon-many.sh.
. /ext/suite/lib.sh
. /ext/suite/daemonlib.sh

mkdir -p /etc/tether
WS=/srv/daemon-ws
mkdir -p "$WS"
envelope "$T/d.yaml" "$WS"

start_daemon || { fail "daemon starts" "$(cat "$T/daemon.log")"; finish; exit 0; }

# ---- health and metrics -----------------------------------------------------
code=$(api GET /v1/health)
[ "$code" = 200 ] && grep -q '"status":"ok"' "$T/api.body" && grep -q '"pin_dir":"/sys/fs/bpf/tether/' "$T/api.body" &&
	pass "GET /v1/health: 200, ok, the pin directory" || fail "health" "$code $(cat "$T/api.body")"

code=$(api GET /metrics)
[ "$code" = 200 ] && grep -qx 'tether_runs_active 0' "$T/api.body" &&
	grep -q '^# TYPE tether_denials_total counter$' "$T/api.body" &&
	pass "GET /metrics: Prometheus text with active runs and denials by kind" ||
	fail "metrics" "$code $(head -c 600 "$T/api.body")"

# ---- a run, end to end -------------------------------------------------------
body "$T/d.yaml" '["/bin/sh","-c","echo hello; echo oops >&2; '"$BIN"'/fsprobe EACCES write /etc/daemon-x"]' '"run_id":"api-1","tenant":"default","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"' > "$T/b1.json"
code=$(api POST /v1/runs -d @"$T/b1.json")
[ "$code" = 201 ] && grep -q '"id":"api-1"' "$T/api.body" && grep -q '"state":"running"' "$T/api.body" &&
	grep -q '"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"' "$T/api.body" &&
	pass "POST /v1/runs: 201, the run is running, with its traceparent" ||
	fail "create" "$code $(cat "$T/api.body")"

code=$(api GET "/v1/runs/api-1/records?seq=0&follow=true")
[ "$code" = 200 ] && tail -n 1 "$T/api.body" | grep -q '"event":"end".*"reason":"succeeded"' &&
	grep -q '"kind":"fs","op":"create","path":"/etc/daemon-x","access":"write","decision":"deny","errno":"EACCES"' "$T/api.body" &&
	pass "GET records?follow=true: the stream to its end record, the denial in it" ||
	fail "records follow" "$code $(cat "$T/api.body")"
cp "$T/api.body" "$T/api-1.records"

code=$(api GET "/v1/runs/api-1/records?seq=2")
first=$(head -n 1 "$T/api.body" | sed -n 's/^{"schema_version":[0-9]*,"seq":\([0-9]*\),.*/\1/p')
[ "$code" = 200 ] && [ "$first" = 2 ] && [ "$(wc -l < "$T/api.body")" -eq $(($(wc -l < "$T/api-1.records") - 1)) ] &&
	pass "GET records?seq=2: from seq 2 on, nothing before" || fail "records seq" "$code first=$first"
# every record of a daemon run carries the request's tenant, attempt and trace context
n=$(wc -l < "$T/api-1.records")
m=$(grep -c '"run_id":"api-1","attempt":1,"tenant":"default","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","policy_digest":"sha256:[0-9a-f]*","kind":' "$T/api-1.records")
[ "$n" -ge 3 ] && [ "$m" -eq "$n" ] &&
	pass "a daemon run's records each carry its tenant, attempt 1 and the traceparent's trace and span ids" ||
	fail "daemon record envelope" "$m of $n lines: $(head -n 2 "$T/api-1.records")"

code=$(api GET /v1/runs/api-1)
[ "$code" = 200 ] && grep -q '"state":"ended"' "$T/api.body" && grep -q '"reason":"succeeded"' "$T/api.body" &&
	grep -q '"exit_status":0' "$T/api.body" && grep -q '"envelope_digest":"sha256:' "$T/api.body" &&
	grep -q '"cleanup":{"verified":true' "$T/api.body" && grep -q '"kernel_release":"'"$(uname -r)"'"' "$T/api.body" &&
	grep -q '"principal":{"uid":0,"gid":0,"pid":' "$T/api.body" && grep -q '"attempt":1' "$T/api.body" &&
	pass "GET /v1/runs/{id}: ended, reason, exit status, digest, cleanup, kernel, principal" ||
	fail "inspect" "$code $(cat "$T/api.body")"

code=$(api GET /v1/runs/api-1/stdout)
[ "$code" = 200 ] && [ "$(head -n 1 "$T/api.body")" = hello ] &&
	grep -qx 'fsprobe: write /etc/daemon-x: EACCES' "$T/api.body" && pass "GET stdout: the captured output" ||
	fail "stdout" "$code $(cat "$T/api.body")"
code=$(api GET "/v1/runs/api-1/stderr?offset=0&follow=false")
[ "$code" = 200 ] && grep -qx oops "$T/api.body" && pass "GET stderr: the captured errors" ||
	fail "stderr" "$code $(cat "$T/api.body")"

j=/var/lib/tether/runs/api-1/journal.jsonl
[ "$(sed -n 's/.*"event":"\([a-z]*\)".*/\1/p' "$j" | tr '\n' ' ')" = "created starting running ended " ] &&
	pass "the journal: created, starting, running, ended" || fail "journal" "$(cat "$j")"

# ---- listing -----------------------------------------------------------------
code=$(api GET "/v1/runs?state=ended&tenant=default")
[ "$code" = 200 ] && grep -q '"id":"api-1"' "$T/api.body" && pass "GET /v1/runs?state=ended&tenant=default lists it" ||
	fail "list" "$code"
code=$(api GET "/v1/runs?state=running")
[ "$code" = 200 ] && ! grep -q '"id":"api-1"' "$T/api.body" && pass "GET /v1/runs?state=running does not" ||
	fail "list running" "$code $(cat "$T/api.body")"

# ---- bad requests ------------------------------------------------------------
printf 'sandbox:\n  filesystem:\n    root: sometimes\n' > "$T/bad.yaml"
body "$T/bad.yaml" '["/bin/true"]' '"envelope_name":"bad.yaml"' > "$T/bad.json"
code=$(api POST /v1/runs -d @"$T/bad.json")
[ "$code" = 400 ] && grep -q '"diagnostics":\[.*"bad.yaml:3:11: error: ' "$T/api.body" &&
	pass "a bad envelope: 400 with FILE:LINE:COLUMN diagnostics" || fail "bad envelope" "$code $(cat "$T/api.body")"
code=$(api POST /v1/runs -d '{"argv":["/bin/true"],"envelope":"x","colour":"red"}')
[ "$code" = 400 ] && grep -q "unknown member 'colour'" "$T/api.body" && pass "an unknown member: 400" ||
	fail "unknown member" "$code $(cat "$T/api.body")"
code=$(api POST /v1/runs -d @"$T/b1.json")
[ "$code" = 409 ] && grep -q 'never reused' "$T/api.body" && pass "a used run id: 409, never reused" ||
	fail "reuse" "$code $(cat "$T/api.body")"
code=$(api GET /v1/runs/no-such-run)
[ "$code" = 404 ] && pass "an unknown run: 404" || fail "404" "$code"
code=$(api DELETE /v1/runs/api-1) # api-check: not-in-spec
[ "$code" = 405 ] && pass "a wrong method: 405" || fail "405" "$code"

# ---- retry, cancel, stdin ----------------------------------------------------
body "$T/d.yaml" '["/bin/true"]' '"run_id":"api-1-retry","retry_of":"api-1"' > "$T/retry.json"
code=$(api POST /v1/runs -d @"$T/retry.json")
[ "$code" = 201 ] && grep -q '"attempt":2' "$T/api.body" && grep -q '"retry_of":"api-1"' "$T/api.body" &&
	pass "retry_of: a new run, attempt 2, linked to the old one" || fail "retry" "$code $(cat "$T/api.body")"
wait_state api-1-retry ended
code=$(api GET "/v1/runs/api-1-retry/records")
n=$(wc -l < "$T/api.body")
[ "$code" = 200 ] && [ "$n" -ge 3 ] && [ "$(grep -c '"run_id":"api-1-retry","attempt":2,"tenant":"default","trace_id":null,"span_id":null,' "$T/api.body")" -eq "$n" ] &&
	pass "a retry's records say attempt 2" || fail "retry records" "$code $(head -n 2 "$T/api.body")"

body "$T/d.yaml" '["/bin/sleep","60"]' '"run_id":"api-cancel"' > "$T/c.json"
api POST /v1/runs -d @"$T/c.json" > /dev/null
code=$(api POST /v1/runs/api-cancel/cancel)
api GET "/v1/runs/api-cancel/records?follow=true" > /dev/null
code2=$(api GET /v1/runs/api-cancel)
[ "$code" = 202 ] && [ "$code2" = 200 ] && grep -q '"reason":"cancelled"' "$T/api.body" &&
	grep -q '"cancel_requested":"cancelled through the API by uid 0' "$T/api.body" &&
	grep -q '"event":"cancel"' /var/lib/tether/runs/api-cancel/journal.jsonl &&
	pass "POST cancel: 202, the run ends cancelled, the request journaled first" ||
	fail "cancel" "$code $code2 $(cat "$T/api.body")"
code=$(api POST /v1/runs/api-cancel/cancel)
[ "$code" = 409 ] && pass "cancel of an ended run: 409" || fail "cancel twice" "$code"

body "$T/d.yaml" '["/bin/sh","-c","read line; echo got:$line"]' '"run_id":"api-stdin","stdin":"pipe"' > "$T/s.json"
api POST /v1/runs -d @"$T/s.json" > /dev/null
code=$(api POST "/v1/runs/api-stdin/stdin?close=true" --data-binary 'through the daemon')
api GET "/v1/runs/api-stdin/stdout?follow=true" > /dev/null
[ "$code" = 200 ] && [ "$(cat "$T/api.body")" = "got:through the daemon" ] &&
	pass "POST stdin, then GET stdout?follow=true: the run read what was written" ||
	fail "stdin" "$code $(cat "$T/api.body")"
code=$(api POST /v1/runs/api-stdin/stdin -d more)
[ "$code" = 409 ] && pass "stdin once closed: 409" || fail "stdin closed" "$code"

# a compiled policy, base64
tether compile -o "$T/d.tpol" "$T/d.yaml" >/dev/null 2>&1
echo "{\"policy\":\"$(base64 -w0 "$T/d.tpol")\",\"argv\":[\"/bin/true\"],\"run_id\":\"api-tpol\"}" > "$T/p.json"
code=$(api POST /v1/runs -d @"$T/p.json")
[ "$code" = 201 ] && grep -q '"envelope_digest":"'"$(tether check "$T/d.yaml" | sed -n 's/.*\(sha256:[0-9a-f]*\).*/\1/p' | head -n 1)"'"' "$T/api.body" &&
	pass "a compiled policy (base64): same digest as the envelope" || fail "tpol" "$code $(cat "$T/api.body")"

# ---- one envelope, many runs: ${RUN_ID} and a per-run workspace ------------------
# Each run's workspace is carved out of a denied /srv/tpl: one reviewed
# envelope, one digest, and no run sees another's files.
cat > "$T/tpl.yaml" <<'EOT'
sandbox:
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: /srv/tpl/${RUN_ID}
    deny: [/srv/tpl/**]
EOT
tpl_digest=$(tether check "$T/tpl.yaml" | sed -n 's/^policy \(sha256:[0-9a-f]*\)$/\1/p')
body "$T/tpl.yaml" '["'"$BIN"'/fsprobe","ok","write","/srv/tpl/tpl-b/b.txt"]' '"run_id":"tpl-b"' > "$T/tb1.json"
code=$(api POST /v1/runs -d @"$T/tb1.json")
wait_state tpl-b ended
grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"workspace":"/srv/tpl/tpl-b"' "$T/api.body" &&
	grep -q '"envelope_digest":"'"$tpl_digest"'"' "$T/api.body" && [ -f /srv/tpl/tpl-b/b.txt ] &&
	pass "\${RUN_ID} in workspace.path: run tpl-b works in /srv/tpl/tpl-b, recorded with the envelope's digest" ||
	fail "run id workspace" "$code $tpl_digest $(cat "$T/api.body")"
b_policy=$(sed -n 's/.*"policy_digest":"\(sha256:[0-9a-f]*\)".*/\1/p' "$T/api.body")
probes="$BIN/fsprobe ok write /srv/tpl/tpl-a/a.txt && $BIN/fsprobe EACCES read /srv/tpl/tpl-b/b.txt &&
 $BIN/fsprobe EACCES write /srv/tpl/tpl-b/x && $BIN/fsprobe EACCES readdir /srv/tpl/tpl-b &&
 $BIN/fsprobe EACCES link /srv/tpl/tpl-b/b.txt /srv/tpl/tpl-a/l && $BIN/fsprobe EACCES readdir /srv/tpl"
body "$T/tpl.yaml" '["/bin/sh","-c","'"$(echo $probes)"'"]' '"run_id":"tpl-a"' > "$T/ta1.json"
code=$(api POST /v1/runs -d @"$T/ta1.json")
wait_state tpl-a ended
a_policy=$(sed -n 's/.*"policy_digest":"\(sha256:[0-9a-f]*\)".*/\1/p' "$T/api.body")
grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"envelope_digest":"'"$tpl_digest"'"' "$T/api.body" &&
	[ -n "$a_policy" ] && [ "$a_policy" != "$b_policy" ] && [ "$a_policy" != "$tpl_digest" ] &&
	pass "a second run of one envelope: its own workspace and policy_digest, the same envelope_digest; the other's files unreadable, unwritable, unlistable, unlinkable" ||
	fail "second run id workspace" "$code a=$a_policy b=$b_policy $(cat "$T/api.body"; api GET /v1/runs/tpl-a/stdout >/dev/null; cat "$T/api.body")"
body "$T/d.yaml" '["'"$BIN"'/fsprobe","ok","write","/srv/given/w1/f"]' '"run_id":"ws-given","workspace":"/srv/given/w1"' > "$T/wg.json"
code=$(api POST /v1/runs -d @"$T/wg.json")
wait_state ws-given ended
[ "$code" = 201 ] && grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"workspace":"/srv/given/w1"' "$T/api.body" &&
	pass "POST /v1/runs with workspace: the run has that workspace" || fail "workspace member" "$code $(cat "$T/api.body")"
body "$T/d.yaml" '["/bin/true"]' '"workspace":"/etc/agent"' > "$T/wbad.json"
code=$(api POST /v1/runs -d @"$T/wbad.json")
[ "$code" = 400 ] && grep -q "envelope:7:13: error: the run's workspace must not be in /etc" "$T/api.body" &&
	pass "a workspace the envelope language refuses: 400, reported at workspace.path" ||
	fail "workspace refused" "$code $(cat "$T/api.body")"
echo "{\"policy\":\"$(base64 -w0 "$T/d.tpol")\",\"argv\":[\"/bin/true\"],\"workspace\":\"/srv/given/w2\"}" > "$T/wp.json"
code=$(api POST /v1/runs -d @"$T/wp.json")
[ "$code" = 400 ] && grep -q "a compiled policy cannot take a per-run workspace" "$T/api.body" &&
	pass "a compiled policy with a workspace: 400" || fail "tpol workspace" "$code $(cat "$T/api.body")"
rm -f "$T/ws-s.audit"
tether run --standalone --envelope "$T/tpl.yaml" --run-id ws-s --workspace /srv/tpl/given \
	--audit "$T/ws-s.audit" -- "$BIN/fsprobe" ok write /srv/tpl/given/f > /dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '"event":"start".*"envelope_digest":"'"$tpl_digest"'"' "$T/ws-s.audit" &&
	! grep -q '"policy_digest":"'"$tpl_digest"'","kind":"run","event":"start"' "$T/ws-s.audit" &&
	pass "tether run --workspace (standalone): the run writes there; its start record keeps the envelope's digest" ||
	fail "run --workspace" "rc=$rc $(cat "$T/ws-s.audit")"
tether run --envelope "$T/tpl.yaml" --run-id ws-d --workspace /srv/tpl/given-d -- "$BIN/fsprobe" ok write /srv/tpl/given-d/f > /dev/null 2>&1
rc=$?
api GET /v1/runs/ws-d > /dev/null
[ $rc -eq 0 ] && grep -q '"workspace":"/srv/tpl/given-d"' "$T/api.body" &&
	pass "tether run --workspace through the daemon: the run has that workspace" ||
	fail "run --workspace daemon" "rc=$rc $(cat "$T/api.body")"

# an envelope written for a tenant runs for that tenant only
sed 's/identity: {uid: 0, gid: 0}/identity: {uid: 0, gid: 0, tenant: team-x}/' "$T/d.yaml" > "$T/dt.yaml"
body "$T/dt.yaml" '["/bin/true"]' > "$T/dt1.json"
code=$(api POST /v1/runs -d @"$T/dt1.json")
[ "$code" = 400 ] && grep -q "the envelope's identity.tenant is 'team-x', the request's tenant 'default'" "$T/api.body" &&
	pass "an envelope's identity.tenant against another tenant's request: 400" ||
	fail "envelope tenant" "$code $(cat "$T/api.body")"
body "$T/dt.yaml" '["/bin/true"]' '"tenant":"team-x"' > "$T/dt2.json"
code=$(api POST /v1/runs -d @"$T/dt2.json")
[ "$code" = 201 ] && grep -q '"tenant":"team-x"' "$T/api.body" &&
	pass "... and with its own tenant: 201" || fail "envelope tenant ok" "$code $(cat "$T/api.body")"
tether run --envelope "$T/dt.yaml" --run-id cli-tenant -- /bin/true > "$T/cli-tenant.out" 2>&1
rc=$?
code=$(api GET /v1/runs/cli-tenant)
[ $rc -eq 0 ] && [ "$code" = 200 ] && grep -q '"tenant":"team-x"' "$T/api.body" &&
	pass "tether run through the daemon runs a tenant's envelope for that tenant" ||
	fail "cli tenant" "rc=$rc $code $(cat "$T/cli-tenant.out" "$T/api.body")"

# ---- the CLI through the daemon ------------------------------------------------
out=$(tether ps)
echo "$out" | grep -qE '^api-1 +ended +default +succeeded +0 +/bin/sh$' && pass "tether ps lists the daemon's runs" ||
	fail "ps" "$out"
tether inspect api-1 > "$T/inspect.json" && grep -q '"id": "api-1"' "$T/inspect.json" &&
	pass "tether inspect RUN: the run's record" || fail "inspect cli" "$(cat "$T/inspect.json")"
tether logs api-1 > "$T/logs.out" && cmp -s "$T/logs.out" "$T/api-1.records" &&
	pass "tether logs RUN: the records, as the API gives them" || fail "logs" "$(diff "$T/logs.out" "$T/api-1.records")"
tether run --envelope "$T/d.yaml" --run-id cli-kill -- /bin/sleep 60 > /dev/null 2>&1 &
cpid=$!
i=0
until [ "$(api GET /v1/runs/cli-kill)" = 200 ] && grep -q '"state":"running"' "$T/api.body"; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
tether kill cli-kill
wait $cpid
rc=$?
api GET /v1/runs/cli-kill > /dev/null
[ $rc -eq 130 ] && grep -q '"reason":"cancelled"' "$T/api.body" &&
	pass "tether kill RUN ends a daemon run; tether run through the daemon exits 130" ||
	fail "kill" "rc=$rc $(cat "$T/api.body")"

# ---- descriptors passed: the same as standalone --------------------------------
parity() {
	name=$1
	shift
	rm -f "$T/par-s.audit" "$T/par-d.audit"
	tether run --standalone --envelope "$T/d.yaml" --run-id "par-s-$name" --audit "$T/par-s.audit" -- "$@" \
		> "$T/par-s.out" 2> "$T/par-s.err" < /dev/null
	rs=$?
	tether run --envelope "$T/d.yaml" --run-id "par-d-$name" --audit "$T/par-d.audit" -- "$@" \
		> "$T/par-d.out" 2> "$T/par-d.err" < /dev/null
	rd=$?
	strip() {
		normalize "$1" | sed -E -e 's/"run_id":"par-[sd]-/"run_id":"par-/' -e 's/,?"(setup_us|duration_us|cgroup_id|run_slot|pid|tgid)":[0-9]+//g' \
			-e 's/"tmpdir":"[^"]*",//'
	}
	if [ $rs -eq $rd ] && cmp -s "$T/par-s.out" "$T/par-d.out" && cmp -s "$T/par-s.err" "$T/par-d.err" &&
		[ "$(strip "$T/par-s.audit")" = "$(strip "$T/par-d.audit")" ]; then
		pass "through the daemon = standalone ($name): exit $rd, stdout, stderr, records"
	else
		fail "parity $name" "exit $rs/$rd; stdout $(cat "$T/par-s.out")/$(cat "$T/par-d.out"); stderr $(cat "$T/par-s.err")/$(cat "$T/par-d.err")"
		strip "$T/par-s.audit" > "$T/a"; strip "$T/par-d.audit" > "$T/b"; diff "$T/a" "$T/b" | head -20
	fi
}
parity ok /bin/sh -c 'echo out; echo err >&2'
parity exit7 /bin/sh -c 'echo before; exit 7'
parity denied "$BIN/fsprobe" EACCES write /etc/parity
parity signal /bin/sh -c 'kill -TERM $$'
echo hello-stdin | tether run --envelope "$T/d.yaml" -- /bin/cat > "$T/stdin.out" 2>/dev/null
[ "$(cat "$T/stdin.out")" = hello-stdin ] && pass "through the daemon, the command reads the client's stdin" ||
	fail "stdin passed" "$(cat "$T/stdin.out")"
tether run --envelope "$T/bad.yaml" -- /bin/true 2> "$T/bad.err"
rc=$?
[ $rc -eq 121 ] && grep -q "bad.yaml:3:11: error: " "$T/bad.err" &&
	pass "an invalid envelope through tether run: 121 and the diagnostics, as standalone" ||
	fail "bad envelope cli" "rc=$rc $(cat "$T/bad.err")"

# ---- no run reaches the daemon's own files (node log key, journals, spools) -------
envelope "$T/state.yaml" "$WS"
printf '    read: ["/var/lib/tether/**"]\n' >> "$T/state.yaml"
body "$T/state.yaml" '["/bin/cat","/var/lib/tether/node-log.key"]' '"run_id":"state-1"' > "$T/state.json"
code=$(api POST /v1/runs -d @"$T/state.json")
[ "$code" = 403 ] && grep -q "the envelope's rule for /var/lib/tether reaches /var/lib/tether/node-log.key, which is the daemon's own" "$T/api.body" &&
	[ ! -e /var/lib/tether/runs/state-1 ] &&
	pass "an envelope granting the state directory: 403 naming the rule and the key it would reach, nothing run" ||
	fail "state dir rule" "$code $(cat "$T/api.body")"
envelope "$T/wsunder.yaml" /var/lib/tether/workspaces/w1
mkdir -p /var/lib/tether/workspaces/w1
body "$T/wsunder.yaml" '["'"$BIN"'/fsprobe","ok","write","/var/lib/tether/workspaces/w1/f"]' '"run_id":"wsunder-1"' > "$T/wsunder.json"
code=$(api POST /v1/runs -d @"$T/wsunder.json")
wait_state wsunder-1 ended
[ "$code" = 201 ] && grep -q '"reason":"succeeded"' "$T/api.body" &&
	pass "a workspace below the state directory (/var/lib/tether/workspaces/...) still runs" ||
	fail "workspace under state" "$code $(cat "$T/api.body")"

# ---- no secret reaches a record: canaries in the environment, an argument, a file
CANARY_ENV=tether-canary-denv-3c9e71aa
CANARY_ARG=tether-canary-darg-0d4be512
CANARY_FILE=tether-canary-dfile-a61f2c08
printf '%s\n' "$CANARY_FILE" > "$WS/canary.txt"
envelope "$T/canary.yaml" "$WS"
printf '  environment: [TETHER_CANARY]\n' >> "$T/canary.yaml"
body "$T/canary.yaml" '["/bin/sh","-c","v=$(cat '"$WS"'/canary.txt); echo \"$v $TETHER_CANARY\" > '"$WS"'/out; echo \"$v\" > /etc/daemon-canary; '"$BIN"'/fsprobe EACCES write /etc/daemon-canary; true","'"$CANARY_ARG"'"]' '"run_id":"canary-1","audit_allowed":true,"env":{"TETHER_CANARY":"'"$CANARY_ENV"'","PATH":"/bin"}' > "$T/canary.json"
canary_code=$(api POST /v1/runs -d @"$T/canary.json")
wait_state canary-1 ended

# ---- the node log (docs/audit.md, "The node log") -----------------------------------
stop_daemon
grep -q "$CANARY_FILE $CANARY_ENV" "$WS/out" && [ "$canary_code" = 201 ] &&
	grep -q '"run_id":"canary-1",.*"path":"/etc/daemon-canary"' /var/lib/tether/audit/node.log &&
	! grep -l -e "$CANARY_ENV" -e "$CANARY_ARG" -e "$CANARY_FILE" /var/lib/tether/audit/node.log* /var/lib/tether/runs/canary-1/records.jsonl > "$T/canary.hits" &&
	pass "canaries in a daemon run's environment, arguments and files: in none of its records, in its records file or the node log" ||
	fail "canaries" "code=$canary_code $(cat "$WS/out" "$T/canary.hits" 2>&1)"
NL=/var/lib/tether/audit
# a run's records, each in the node log as in its records file, with log_seq and mac added
sed 's/,"log_seq":[0-9]*,"mac":"[0-9a-f]*"}$/}/' $NL/node.log* | grep '"run_id":"api-1",' > "$T/nl-api-1"
[ -s "$T/nl-api-1" ] && cmp -s "$T/nl-api-1" /var/lib/tether/runs/api-1/records.jsonl &&
	pass "the node log holds each of a daemon run's records as its records file does" ||
	fail "node log records" "$(wc -l < "$T/nl-api-1") of $(wc -l < /var/lib/tether/runs/api-1/records.jsonl): $(diff "$T/nl-api-1" /var/lib/tether/runs/api-1/records.jsonl | head -5)"
# ends with a close checkpoint; the key and the log are root's, 0600
tail -n 1 $NL/node.log | grep -q '"kind":"checkpoint","checkpoint":{"reason":"close"' &&
	[ "$(stat -c %a /var/lib/tether/node-log.key)" = 600 ] && [ "$(stat -c %a $NL/node.log)" = 600 ] &&
	[ "$(stat -c %a $NL)" = 700 ] &&
	pass "the node log ends with a close checkpoint; its key and files are 0600, its directory 0700" ||
	fail "node log close" "$(tail -n 1 $NL/node.log) $(stat -c '%a %n' /var/lib/tether/node-log.key $NL $NL/node.log)"
tether audit verify $NL/node.log* > "$T/nl-verify" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^verified: ' "$T/nl-verify" && pass "tether audit verify: the daemon's node log verifies" ||
	fail "node log verify" "rc=$rc $(cat "$T/nl-verify")"
# one record of the run edited in a copy: named, exit 1
mkdir -p "$T/nlcopy"
cp $NL/node.log* "$T/nlcopy/"
line=$(grep -n '"run_id":"api-1",.*"path":"/etc/daemon-x"' "$T/nlcopy/node.log" | head -n 1 | cut -d: -f1)
sed -i "${line}s|/etc/daemon-x|/etc/daemon-y|" "$T/nlcopy/node.log"
tether audit verify "$T"/nlcopy/node.log* > "$T/nl-verify2" 2>&1
rc=$?
[ -n "$line" ] && [ $rc -eq 1 ] && grep -q "nlcopy/node.log:$line: error: log_seq [0-9]*: its MAC does not match: the line was edited" "$T/nl-verify2" &&
	pass "a denial edited in the node log: tether audit verify names its line, exit 1" ||
	fail "node log tamper" "line=$line rc=$rc $(cat "$T/nl-verify2")"

# ---- who may call ---------------------------------------------------------------
d_digest=$(tether check "$T/d.yaml" | sed -n 's/^policy \(sha256:[0-9a-f]*\)$/\1/p')
mkdir -p /srv/allowed
cat > /etc/tether/daemon.yaml <<EOF
version: 1
socket_group: 1000
callers:
  - uid: 0
    tenants: [team-a]
  - gid: 2000
    tenants: ["*"]
    envelopes: ["$d_digest"]
    workspaces: [/srv/allowed]
EOF
start_daemon || fail "daemon with a configuration" "$(cat "$T/daemon.log")"
code=$(as_user 1000 1000 "" api GET /v1/health)
[ "$code" = 403 ] && grep -q 'uid 1000 (gid 1000) may not call' "$T/api.body" &&
	grep -q '"event":"forbidden".*"caller":{"uid":1000,"gid":1000' /var/lib/tether/node.jsonl &&
	pass "a caller the configuration does not list: 403 and a node record naming it" ||
	fail "403" "$code $(cat "$T/api.body") $(cat /var/lib/tether/node.jsonl 2>&1)"
code=$(as_user 1000 1000 2000 api GET /v1/health)
[ "$code" = 200 ] && pass "a caller listed by a supplementary group: 200" || fail "gid caller" "$code $(cat "$T/api.body")"
body "$T/d.yaml" '["/bin/true"]' '"tenant":"team-b"' > "$T/tb.json"
code=$(api POST /v1/runs -d @"$T/tb.json")
[ "$code" = 403 ] && grep -q "may not create runs of tenant 'team-b'" "$T/api.body" &&
	pass "a tenant the caller may not use: 403" || fail "tenant 403" "$code $(cat "$T/api.body")"
code=$(api GET /v1/runs/api-1)
[ "$code" = 404 ] && pass "runs of tenants the caller may not see: 404" || fail "tenant hidden" "$code"
# envelopes and workspaces: what a caller may run, and where
body "$T/tpl.yaml" '["/bin/true"]' '"run_id":"not-listed"' > "$T/nl.json"
code=$(as_user 1000 1000 2000 api POST /v1/runs -d "$(cat "$T/nl.json")")
[ "$code" = 403 ] && grep -q "uid 1000 may not run envelope $tpl_digest" "$T/api.body" &&
	grep -q '"event":"forbidden".*may not run envelope' /var/lib/tether/node.jsonl &&
	pass "an envelope daemon.yaml does not list for the caller: 403 and a node record" ||
	fail "envelopes 403" "$code $(cat "$T/api.body")"
body "$T/d.yaml" '["/bin/true"]' '"workspace":"/srv/elsewhere/w"' > "$T/we.json"
code=$(as_user 1000 1000 2000 api POST /v1/runs -d "$(cat "$T/we.json")")
[ "$code" = 403 ] && grep -q "uid 1000 may not give a run the workspace /srv/elsewhere/w" "$T/api.body" &&
	[ ! -e /srv/elsewhere ] &&
	pass "a workspace outside the caller's workspaces: 403, nothing created" ||
	fail "workspaces 403" "$code $(cat "$T/api.body")"
body "$T/d.yaml" '["'"$BIN"'/fsprobe","ok","write","/srv/allowed/w1/f"]' '"run_id":"allowed-1","workspace":"/srv/allowed/w1"' > "$T/wa.json"
code=$(as_user 1000 1000 2000 api POST /v1/runs -d "$(cat "$T/wa.json")")
AS="$BIN/asuser 1000 1000 2000"	# root's entry here sees team-a only
wait_state allowed-1 ended
AS=
[ "$code" = 201 ] && grep -q '"reason":"succeeded"' "$T/api.body" && grep -q '"principal":{"uid":1000' "$T/api.body" &&
	pass "a listed envelope with a workspace beneath the caller's workspaces: 201, the run works there" ||
	fail "workspaces allowed" "$code $(cat "$T/api.body")"
code=$(api GET /metrics)
grep -qx 'tether_api_forbidden_total 4' "$T/api.body" && pass "metrics count the refused calls" ||
	fail "forbidden metric" "$(grep forbidden "$T/api.body")"
stop_daemon
rm -f /etc/tether/daemon.yaml

printf 'version: 1\ncallers:\n  - uid: 0\n    tenants: []\n  - user: nobody-here\n    tenants: [a]\n' > /etc/tether/daemon.yaml
tether daemon > "$T/bad-config.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^/etc/tether/daemon.yaml:4:14: error: ' "$T/bad-config.log" &&
	grep -q '^/etc/tether/daemon.yaml:5:' "$T/bad-config.log" &&
	pass "a bad daemon.yaml: exit 1, every error with FILE:LINE:COLUMN" || fail "bad config" "rc=$rc $(cat "$T/bad-config.log")"
rm -f /etc/tether/daemon.yaml

finish
