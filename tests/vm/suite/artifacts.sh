#!/bin/sh
# Artifacts (issue 17): at the end only the declared regular files leave the
# workspace for `tether run --artifacts DIR`, each with its size and sha256
# in the audit stream before it is published; links, hard links, FIFOs,
# setuid files and undeclared files are refused, and what artifacts.scan
# finds (private keys, tokens, nested repositories, archives, executables,
# scripts) goes to DIR.quarantine, each with the reason in its record.
# Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

OUT=/srv/artifacts-out
WS=/srv/aws
rm -rf "$OUT" "$OUT.quarantine" "$WS"
cat > "$T/art.yaml" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $WS, mode: fresh}
  artifacts:
    allow: [report.txt, out/**, link, fifo, key.pem, creds.env, nested/**, missing.txt, adir, big.bin]
    scan: true
    hash: true
EOT
# record ID PATH: the artifact record of PATH, normalized
record() { normalize "$T/$1.audit" | grep -F '"event":"artifact"' | grep -F "\"path\":\"$2\""; }
# decided ID PATH DECISION REASON-PART: PATH's record says DECISION, its reason holds REASON-PART
decided() {
	record "$1" "$2" | grep -F "\"decision\":\"$3\"" | grep -qF "$4"
}

tether run --envelope "$T/art.yaml" --run-id ar1 --audit "$T/ar1.audit" --artifacts "$OUT" -- /bin/sh -c "
	cd $WS || exit 3
	echo the report > report.txt
	mkdir -p out/sub nested/.git adir
	echo a > out/a.txt; echo b > out/sub/b.txt
	printf 'echo hi\n' > out/run.sh; chmod 755 out/run.sh
	printf '#!/bin/sh\necho tool\n' > out/tool.sh
	printf '\037\213\010\000rest' > out/data.gz
	printf '\177ELF\002\001\001' > out/prog
	ln -s /etc/passwd link
	mkfifo fifo
	printf '%s\n' '-----BEGIN OPENSSH PRIVATE KEY-----' b3BlbnNzaC1rZXktdjEAAAAA > key.pem
	printf 'region = eu\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n' > creds.env
	echo '[core]' > nested/.git/config
	echo not declared > undeclared.txt
	echo x > adir/inside
	sha256sum report.txt out/a.txt out/run.sh" > "$T/ar1.out" 2> "$T/ar1.err"
RC=$?
sum_report=$(sed -n 's/^\([0-9a-f]*\)  report.txt$/\1/p' "$T/ar1.out")
sum_run=$(sed -n 's/^\([0-9a-f]*\)  out\/run.sh$/\1/p' "$T/ar1.out")
if [ "$RC" -eq 0 ] && [ -n "$sum_report" ] &&
	record ar1 report.txt | grep -qF "\"decision\":\"exported\",\"reason\":null,\"size\":11,\"sha256\":\"sha256:$sum_report\"" &&
	[ "$(sha256sum "$OUT/report.txt" | cut -d' ' -f1)" = "$sum_report" ] &&
	[ "$(cat "$OUT/out/a.txt" "$OUT/out/sub/b.txt")" = "a
b" ] && decided ar1 out/a.txt exported null && decided ar1 out/sub/b.txt exported null; then
	pass "declared files are exported with their size and sha256 in the record, the same bytes as the run wrote"
else
	fail "exported files" "exit $RC: $(cat "$T/ar1.err") $(ls -laR "$OUT" 2>&1 | head -20) $(grep artifact "$T/ar1.audit" | head -5)"
fi
if [ "$(stat -c %a:%u "$OUT/out/run.sh")" = 644:0 ] && decided ar1 out/run.sh exported null &&
	[ "$(sha256sum "$OUT/out/run.sh" | cut -d' ' -f1)" = "$sum_run" ]; then
	pass "an executable leaves as mode 0644, root's: no exec, setuid or setgid bit is exported"
else
	fail "exported mode" "$(stat -c '%a %u %n' "$OUT/out/run.sh" 2>&1)"
fi
for c in "link|refused|a symbolic link" "fifo|refused|a FIFO" "undeclared.txt|refused|not declared" \
	"missing.txt|missing|no such file" "adir|refused|a directory: declare 'adir/**'" \
	"key.pem|quarantined|a private key (PEM)" "creds.env|quarantined|an AWS access key id" \
	"nested/.git/config|quarantined|a nested repository (.git)" \
	"out/data.gz|quarantined|an archive (gzip)" "out/prog|quarantined|an ELF executable" \
	"out/tool.sh|quarantined|a script (#!)"; do
	p=${c%%|*} rest=${c#*|}
	d=${rest%%|*} why=${rest#*|}
	if decided ar1 "$p" "$d" "$why" && [ ! -e "$OUT/$p" ] && [ ! -L "$OUT/$p" ]; then
		case "$d" in
		quarantined)
			if [ -f "$OUT.quarantine/$p" ] && record ar1 "$p" | grep -qE '"sha256":"sha256:[0-9a-f]{64}"'; then
				pass "$p: quarantined ($why), hashed, kept out of the export directory"
			else
				fail "$p" "not in $OUT.quarantine: $(record ar1 "$p")"
			fi ;;
		*) pass "$p: $d ($why), not exported" ;;
		esac
	else
		fail "$p" "expected $d ($why): $(record ar1 "$p") $(ls -la "$OUT/$p" 2>&1)"
	fi
done
if [ -z "$(ls -A "$OUT" | grep -v -e '^report.txt$' -e '^out$')" ] &&
	[ "$(cd "$OUT" && find . -type f | sort | tr '\n' ' ')" = "./out/a.txt ./out/run.sh ./out/sub/b.txt ./report.txt " ] &&
	[ ! -e "$WS" ] && grep '"event":"end"' "$T/ar1.audit" | grep -qF '"reason":"succeeded"'; then
	pass "the export directory holds exactly the four clean declared files; the workspace is gone; the run succeeded"
else
	fail "export directory" "$(cd "$OUT" && find . | sort | tr '\n' ' ') ws: $(ls -ld "$WS" 2>&1)"
fi
# the records come before the cleanup record, and every one validates (all.sh)
last_art=$(grep -n '"event":"artifact"' "$T/ar1.audit" | tail -n 1 | cut -d: -f1)
cleanup=$(grep -n '"event":"cleanup"' "$T/ar1.audit" | cut -d: -f1)
if [ -n "$last_art" ] && [ -n "$cleanup" ] && [ "$last_art" -lt "$cleanup" ]; then
	pass "every artifact record precedes the cleanup and end records"
else
	fail "record order" "artifact line $last_art, cleanup line $cleanup"
fi

# --- an existing workspace: a hard link to /etc/passwd and a setuid file, made by the host --
EX=/srv/aex
rm -rf "$EX" "$OUT"
mkdir -p "$EX" && chown 1000:1000 "$EX"
ln /etc/passwd "$EX/passwd"
echo s > "$EX/suid" && chmod 4755 "$EX/suid"
echo g > "$EX/sgid" && chmod 2755 "$EX/sgid"
cat > "$T/art-ex.yaml" <<EOT
sandbox:
  identity: {uid: 1000}
  filesystem:
    root: read_only
    workspace: {path: $EX}
  artifacts: {allow: ["**"]}
EOT
tether run --envelope "$T/art-ex.yaml" --run-id ar2 --audit "$T/ar2.audit" --artifacts "$OUT" -- \
	/bin/sh -c "echo fine > $EX/fine.txt" > "$T/ar2.out" 2>&1
RC=$?
if [ "$RC" -eq 0 ] && decided ar2 passwd refused "a hard link (2 names)" &&
	decided ar2 suid refused setuid && decided ar2 sgid refused setgid &&
	decided ar2 fine.txt exported null && [ ! -e "$OUT/passwd" ] && [ ! -e "$OUT/suid" ] &&
	[ "$(cat "$OUT/fine.txt")" = fine ] && [ "$(cat "$EX/fine.txt")" = fine ]; then
	pass "a hard link to /etc/passwd, a setuid and a setgid file are refused with the reason; the rest is exported"
else
	fail "existing workspace" "exit $RC: $(cat "$T/ar2.out") $(grep artifact "$T/ar2.audit")"
fi

# an artifact that cannot be published: the run that succeeded ends failed (exit 123)
tether run --envelope "$T/art-ex.yaml" --run-id ar3 --audit "$T/ar3.audit" --artifacts "$OUT" -- \
	/bin/true > "$T/ar3.out" 2>&1
RC=$?
if [ "$RC" -eq 123 ] && decided ar3 fine.txt failed "it exists there already" &&
	grep '"event":"end"' "$T/ar3.audit" | grep -qF '"reason":"failed"' &&
	[ "$(cat "$OUT/fine.txt")" = fine ]; then
	pass "an artifact that would overwrite one in the export directory is not published: recorded failed, the run ends failed (exit 123)"
else
	fail "export over an existing file" "exit $RC: $(cat "$T/ar3.out") $(grep -e artifact -e '"end"' "$T/ar3.audit")"
fi

# --- the export directory: named, root's, not the run's to write ---------------------
tether run --envelope "$T/art.yaml" --run-id ar4 -- /bin/true > "$T/ar4.out" 2>&1
RC=$?
if [ "$RC" -eq 122 ] && grep -qF "declares artifacts: name the directory they go to with --artifacts DIR" "$T/ar4.out"; then
	pass "an envelope with artifacts and no --artifacts DIR is a usage error (122); nothing ran"
else
	fail "no --artifacts" "exit $RC: $(cat "$T/ar4.out")"
fi
tether run --envelope "$T/art-ex.yaml" --run-id ar5 --artifacts "$EX/out" -- /bin/true > "$T/ar5.out" 2>&1
RC=$?
if [ "$RC" -eq 121 ] && grep -qF "is in $EX, which the run may write" "$T/ar5.out"; then
	pass "an export directory the run may write is refused before the run (121)"
else
	fail "export dir in the workspace" "exit $RC: $(cat "$T/ar5.out")"
fi
mkdir -p /srv/open-out && chmod 777 /srv/open-out
tether run --envelope "$T/art-ex.yaml" --run-id ar6 --artifacts /srv/open-out -- /bin/true > "$T/ar6.out" 2>&1
RC=$?
if [ "$RC" -eq 123 ] && grep -qF -- "--artifacts /srv/open-out must be a directory of root's that only root may write" "$T/ar6.out"; then
	pass "an export directory others may write is refused before the run"
else
	fail "world-writable export dir" "exit $RC: $(cat "$T/ar6.out")"
fi
rm -rf "$OUT" "$OUT.quarantine" "$EX" /srv/open-out

# --- through the node agent's API: exported into the run's directory, served by GET ---
. /ext/suite/daemonlib.sh
mkdir -p /etc/tether
cat > "$T/art-api.yaml" <<EOT
sandbox:
  identity: {uid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $WS, mode: fresh}
  artifacts:
    allow: [report.txt, key.pem, secret.txt]
    scan: true
    hash: true
EOT
if start_daemon; then
	cat > /srv/art-api.sh <<EOT
echo api-report > $WS/report.txt
printf -- '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n' > $WS/key.pem
echo undeclared > $WS/other.txt
sleep 1
EOT
	body "$T/art-api.yaml" '["/bin/sh", "/srv/art-api.sh"]' '"run_id":"api-art"' > "$T/art-api.json"
	code=$(api POST /v1/runs -d @"$T/art-api.json")
	live=$(api GET /v1/runs/api-art/artifacts/report.txt)
	wait_state api-art ended
	got=$(api GET /v1/runs/api-art/artifacts/report.txt)
	cp "$T/api.body" "$T/art-api.report"
	key=$(api GET /v1/runs/api-art/artifacts/key.pem)
	other=$(api GET /v1/runs/api-art/artifacts/other.txt)
	up=$(api GET /v1/runs/api-art/artifacts/..%2Frecords.jsonl)
	api GET /v1/runs/api-art/records > /dev/null
	cp "$T/api.body" "$T/art-api.records"
	want_sha=$(printf 'api-report\n' | sha256sum | cut -c1-64)
	if [ "$code" = 201 ] && [ "$live" = 409 ] && [ "$got" = 200 ] &&
		[ "$(cat "$T/art-api.report")" = api-report ] && [ "$key" = 404 ] && [ "$other" = 404 ] &&
		[ "$up" = 404 ] &&
		grep '"event":"artifact"' "$T/art-api.records" | grep -F '"path":"report.txt"' |
			grep -F '"decision":"exported"' | grep -qF "\"sha256\":\"sha256:$want_sha\"" &&
		grep '"event":"artifact"' "$T/art-api.records" | grep -F '"path":"key.pem"' |
			grep -qF '"decision":"quarantined"' &&
		[ -f /var/lib/tether/runs/api-art/artifacts.quarantine/key.pem ]; then
		pass "through the API: a declared file is exported and served once the run ended (409 before), with its sha256 in the records; a key is quarantined, an undeclared file and ../ are 404"
	else
		fail "API artifacts" "create $code, live $live, got $got, key $key, other $other, up $up: $(cat "$T/art-api.report") $(grep artifact "$T/art-api.records" | head -n 3)"
	fi
	stop_daemon
else
	fail "daemon starts" "$(tail -n 5 "$T/daemon.log")"
fi
rm -rf /var/lib/tether /srv/art-api.sh	# as the daemon suites expect to find it

finish
