#!/bin/sh
# tether daemon, 64 runs at once (issue 15): 64 different envelopes created
# through POST /v1/runs by two callers of two tenants, all alive together,
# each attacking two others from inside: their workspaces and second
# writable trees (read, list, write, create, remove, rename, hard and
# symbolic links both ways), their processes (signals, ptrace, memory,
# /proc/PID/environ and cmdline), their records on disk and the daemon's
# socket.  Then each run's record stream holds its own records only, each
# run ends succeeded, each workspace holds only what its run wrote, and one
# tenant's caller can neither list, read, feed nor cancel the other's runs.
# Every run is uid 0 without capabilities: the kernel's own uid checks let
# everything through, so each refusal is tether's.  Runs inside the VM as
# root: tests/vm/run-suite.  The loops fork little: the VM is slow (TCG).
. /ext/suite/lib.sh
. /ext/suite/daemonlib.sh

N=64
MW=/srv/many			# the workspaces, $MW/wI
MO=/srv/many-out		# each run's second writable tree, $MO/oI
PROBE=/srv/many-bin/probe.sh	# what each run runs
CG=/sys/fs/cgroup/tether
UA=1001				# the caller of tenant team-a (even runs)
UB=1002				# the caller of tenant team-b (odd runs): UA + 1
UX=1003				# a caller daemon.yaml does not list
SG=3000				# the socket's group

rm -rf "$MW" "$MO" /srv/many-bin
mkdir -p "$MW" "$MO" /srv/many-bin /etc/tether

# Run I is of tenant team-a (even I, created by uid UA) or team-b (odd I,
# uid UB); it attacks T1 = I+1 (the other tenant) in full and T2 = I+2
# (its own tenant) in part.  owner I sets TEN and OWNER.
owner() {
	if [ $(($1 % 2)) -eq 0 ]; then TEN=team-a; else TEN=team-b; fi
	OWNER=$((UA + $1 % 2))
}
# as_owner I api ...: the call as run I's tenant's caller.
as_owner() {
	owner "$1"
	shift
	as_user $OWNER $SG "" "$@"
}

# The run's side.  Every probe prints its result to stdout (captured by the
# daemon); a wrong one is counted, and the count is the exit status, so a
# run ends succeeded only when each of its probes saw what it expected.
# Stdin (a pipe the API writes) is the barrier: the first line names the
# two targets and their pids once all 64 runs are up; the second, written
# once all 64 have attacked, must be the run's own input.
cat > "$PROBE" <<'EOF'
n=$1
B=/opt/tether-tests/bin
W=/srv/many/w$n
O=/srv/many-out/o$n
bad=0
wrong() { bad=$((bad + 1)); echo "WRONG: $*"; }
f() { $B/fsprobe "$@" 2>&1 || wrong "fsprobe $*"; }
p() { $B/procprobe "$@" 2>&1 || wrong "procprobe $*"; }

# its own: the workspace, the second tree, its limits and its environment
f ok write $W/secret
echo "secret-of-$n" > $W/secret || wrong "write secret"
f ok write $W/mine
f ok mkdir $W/d
f ok write $O/f
f ok read $W/secret
[ "$(ulimit -n)" = $((100 + n)) ] || wrong "ulimit -n is $(ulimit -n), not $((100 + n))"
[ "$MANY_SECRET" = "secret-$n" ] || wrong "MANY_SECRET is '$MANY_SECRET'"
echo ready > $W/ready
read t1 p1 t2 p2 || wrong "no targets on stdin"

# the other tenant's run T1, in full
V=/srv/many/w$t1
VO=/srv/many-out/o$t1
f EACCES readdir /srv/many
f EACCES unix-connect /run/tether/tether.sock
f EACCES read $V/secret
f EACCES readdir $V
f EACCES write $V/secret
f EACCES write $V/from-$n
f EACCES mkdir $V/d-$n
f EACCES unlink $V/secret
f EACCES rename $V/secret $W/stolen
f EACCES rename $W/mine $V/planted
f EACCES link $W/mine $V/hl-$n
f EACCES link $V/secret $W/hl-$t1
f EACCES symlink $W/mine $V/sl-$n
f ok symlink $V/secret $W/sl-$t1
f EACCES read $W/sl-$t1
f EACCES write $W/sl-$t1
f EACCES read $VO/f
f EACCES write $VO/f
f EACCES read /var/lib/tether/runs/many-$t1/records.jsonl
f EACCES read /proc/$p1/environ
f EACCES read /proc/$p1/cmdline
p EPERM kill $p1 0
p EPERM kill $p1 TERM
p EPERM ptrace-attach $p1
p EPERM vm-readv $p1
# its own tenant's run T2
V=/srv/many/w$t2
f EACCES read $V/secret
f EACCES write $V/from-$n
f EACCES read /proc/$p2/environ
p EPERM kill $p2 0
p EPERM kill $p2 KILL

# still its own
[ "$(cat $W/secret)" = "secret-of-$n" ] || wrong "its secret changed: $(cat $W/secret)"
echo attacked > $W/attacked
read -r line
[ "$line" = "input-$n" ] || wrong "stdin gave '$line', not input-$n"
echo "exit $bad"
exit $bad
EOF

# The denials each run's stream must hold, as "op path errno reason
# rule_path" (@W@ the workspaces' parent, @O@ the second trees', @I@ the
# run, @T1@ @T2@ its targets, @P1@ @P2@ their pids): one per denied probe
# above, but kill(pid, 0), which is refused without a record (process.sh).
cat > "$T/many-denials" <<'EOF'
open_read @W@ EACCES rule @W@
unix_connect /run/tether/tether.sock EACCES protected /run/tether
open_read @W@/w@T1@/secret EACCES rule @W@
open_read @W@/w@T1@ EACCES rule @W@
open_write @W@/w@T1@/secret EACCES rule @W@
create @W@/w@T1@/from-@I@ EACCES rule @W@
mkdir @W@/w@T1@/d-@I@ EACCES rule @W@
unlink @W@/w@T1@/secret EACCES rule @W@
rename @W@/w@T1@/secret EACCES rule @W@
rename @W@/w@T1@/planted EACCES rule @W@
link @W@/w@T1@/hl-@I@ EACCES rule @W@
link @W@/w@T1@/secret EACCES rule @W@
symlink @W@/w@T1@/sl-@I@ EACCES rule @W@
open_read @W@/w@T1@/secret EACCES rule @W@
open_write @W@/w@T1@/secret EACCES rule @W@
open_read @O@/o@T1@/f EACCES rule @O@
open_write @O@/o@T1@/f EACCES rule @O@
open_read /var/lib/tether/runs/many-@T1@/records.jsonl EACCES protected /var/lib/tether
open_read /proc/@P1@/environ EACCES protected -
open_read /proc/@P1@/cmdline EACCES protected -
signal  EPERM forbidden -
ptrace  EPERM forbidden -
ptrace  EPERM forbidden -
open_read @W@/w@T2@/secret EACCES rule @W@
create @W@/w@T2@/from-@I@ EACCES rule @W@
open_read /proc/@P2@/environ EACCES protected -
signal  EPERM forbidden -
EOF

# check_streams: every run's stream ($T/many-I.rec) against the list above
# and the pids ($T/many-pids, "I PID" lines).  Prints one line per problem,
# "own I ...", "denials I ...", "end I ...", and last "cgroups DISTINCT".
check_streams() {
	c_files=
	i=0
	while [ $i -lt $N ]; do
		c_files="$c_files $T/many-$i.rec"
		i=$((i + 1))
	done
	awk -v n=$N -v W=$MW -v O=$MO '
	function str(name) {
		if (match($0, "\"" name "\":\"[^\"]*\""))
			return substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
		return "-"
	}
	FILENAME ~ /many-denials$/ { tmpl[++nt] = $0; next }
	FILENAME ~ /many-pids$/ { pid[$1] = $2; next }
	{
		run = FILENAME
		sub(/.*many-/, "", run)
		sub(/\.rec$/, "", run)
		if (index($0, "\"run_id\":\"many-" run "\",") == 0)
			print "own " run " a record of another run: " substr($0, 1, 300)
		if (match($0, /"cgroup_id":[0-9]+/)) {
			cg = substr($0, RSTART + 12, RLENGTH - 12)
			if (!(run in cgroup))
				cgroup[run] = cg
			else if (cgroup[run] != cg)
				print "own " run " a record of cgroup " cg ", not " cgroup[run] ": " substr($0, 1, 300)
		}
		if ($0 ~ /"decision":"deny"/)
			got[run, str("op") " " str("path") " " str("errno") " " str("reason") " " str("rule_path")]++
		if ($0 ~ /"event":"end"/) {
			ends[run]++
			if ($0 !~ /"event":"end","exit_status":0,/ || $0 !~ /"cleanup_verified":true,"reason":"succeeded"/ ||
			    $0 !~ /"audit_lost":0,/)
				print "end " run " " $0
		}
	}
	END {
		for (r = 0; r < n; r++) {
			if (ends[r] != 1)
				print "end " r " " ends[r] + 0 " end records"
			t1 = (r + 1) % n
			t2 = (r + 2) % n
			for (k = 1; k <= nt; k++) {
				l = tmpl[k]
				gsub(/@W@/, W, l); gsub(/@O@/, O, l); gsub(/@I@/, r, l)
				gsub(/@T1@/, t1, l); gsub(/@T2@/, t2, l); gsub(/@P1@/, pid[t1], l); gsub(/@P2@/, pid[t2], l)
				want[r, l]++
			}
		}
		for (key in want) {
			split(key, part, SUBSEP)
			if (got[key] != want[key])
				print "denials " part[1] ": " want[key] " x \"" part[2] "\" wanted, " got[key] + 0 " got"
		}
		for (key in got) {
			split(key, part, SUBSEP)
			if (!(key in want))
				print "denials " part[1] ": " got[key] " x \"" part[2] "\" not wanted"
		}
		nd = 0
		for (r in cgroup)
			if (!(cgroup[r] in seen)) {
				seen[cgroup[r]] = 1
				nd++
			}
		print "cgroups " nd
	}' "$T/many-denials" "$T/many-pids" $c_files
}

# check_list: GET /v1/runs's body ($T/api.body) split into its runs; prints
# one line per problem of the runs many-0 .. many-N-1.
check_list() {
	awk -v n=$N -v W=$MW -v UA=$UA -v SG=$SG '
	{ body = body $0 }
	END {
		# the objects of the "runs" array: depth 2, strings skipped
		len = length(body)
		depth = 0; inq = 0; esc = 0; start = 0
		for (k = 1; k <= len; k++) {
			c = substr(body, k, 1)
			if (inq) {
				if (esc) esc = 0
				else if (c == "\\") esc = 1
				else if (c == "\"") inq = 0
			} else if (c == "\"") {
				inq = 1
			} else if (c == "{") {
				if (++depth == 2) start = k
			} else if (c == "}") {
				if (depth-- == 2) {
					o = substr(body, start, k - start + 1)
					if (match(o, /"id":"many-[0-9]+"/))
						run[substr(o, RSTART + 11, RLENGTH - 12)] = o
				}
			}
		}
		for (r = 0; r < n; r++) {
			o = run[r]
			if (o == "") { print "many-" r " is not listed"; continue }
			split("\"state\":\"ended\"|\"reason\":\"succeeded\"|\"cleanup\":{\"verified\":true", w, "|")
			w[4] = "\"tenant\":\"team-" (r % 2 ? "b" : "a") "\""
			w[5] = "\"principal\":{\"uid\":" UA + r % 2 ",\"gid\":" SG ","
			w[6] = "\"workspace\":\"" W "/w" r "\""
			for (k = 1; k <= 6; k++)
				if (index(o, w[k]) == 0)
					print "many-" r " lacks " w[k]
			if (o !~ /"exit_status":0[,}]/)
				print "many-" r " has not exit_status 0"
			if (o !~ "\"process_count\":" 64 + r "[,}]" || o !~ "\"open_files\":" 100 + r "[,}]")
				print "many-" r " has not process_count " 64 + r " and open_files " 100 + r
		}
	}' "$T/api.body"
}

# ---- the envelopes: each its own workspace, second tree and limits --------------
# Every run denies the trees that hold the others' workspaces and second
# trees: under root: read_only the host tree, another run's workspace
# included, is readable unless an envelope says otherwise.  The requests
# are written by one awk, the envelope as a JSON string.
awk -v n=$N -v W=$MW -v O=$MO -v probe=$PROBE -v dir=$T 'BEGIN {
	for (i = 0; i < n; i++) {
		ten = i % 2 ? "team-b" : "team-a"
		env = "sandbox:\\n" \
		      "  identity: {uid: 0, gid: 0, tenant: " ten "}\\n" \
		      "  environment: [MANY_SECRET]\\n" \
		      "  filesystem:\\n" \
		      "    root: read_only\\n" \
		      "    workspace:\\n" \
		      "      path: " W "/w" i "\\n" \
		      "    write: [" O "/o" i "/**]\\n" \
		      "    deny: [" W "/**, " O "/**]\\n" \
		      "  resources:\\n" \
		      "    open_files: " 100 + i "\\n" \
		      "    process_count: " 64 + i "\\n"
		f = dir "/many-" i ".json"
		printf "{\"envelope\":\"%s\",\"envelope_name\":\"many-%d.yaml\",\"argv\":[\"/bin/sh\",\"%s\",\"%d\"]," \
		       "\"run_id\":\"many-%d\",\"tenant\":\"%s\",\"stdin\":\"pipe\",\"env\":{\"MANY_SECRET\":\"secret-%d\"}}\n",
		       env, i, probe, i, i, ten, i > f
		close(f)
		dirs = dirs " " O "/o" i
	}
	system("mkdir -p" dirs)
}'

cat > /etc/tether/daemon.yaml <<EOF
version: 1
socket_group: $SG
callers:
  - uid: 0
    tenants: ["*"]
  - uid: $UA
    tenants: [team-a]
  - uid: $UB
    tenants: [team-b]
EOF
start_daemon || { fail "daemon starts" "$(tail -n 20 "$T/daemon.log")"; rm -f /etc/tether/daemon.yaml; finish; exit 0; }

# abort_many: what cannot go on: every live run cancelled, the daemon stopped.
abort_many() {
	i=0
	while [ $i -lt $N ]; do
		api POST "/v1/runs/many-$i/cancel" > /dev/null
		i=$((i + 1))
	done
	w=0
	while [ $w -lt 300 ] && [ "$(api GET "/v1/runs?state=running")" = 200 ] && grep -q '"id":"many-' "$T/api.body"; do
		w=$((w + 1))
		sleep 0.1
	done
	stop_daemon
	rm -f /etc/tether/daemon.yaml
	finish
	exit 0
}

# ---- 64 runs through the API, all alive at once ---------------------------------
created=0 why=
i=0
while [ $i -lt $N ]; do
	code=$(as_owner $i api POST /v1/runs -d @"$T/many-$i.json")
	if [ "$code" = 201 ] && grep -q '"state":"running"' "$T/api.body"; then
		created=$((created + 1))
	else
		why="$why many-$i: $code $(head -c 300 "$T/api.body");"
	fi
	i=$((i + 1))
done
[ $created -eq $N ] && pass "POST /v1/runs x$N by two callers: each 201, running" ||
	fail "create $N runs" "$created created;$why"
echo "  the daemon holds $(ls /proc/$DPID/fd | wc -l) descriptors with $created runs live;" \
	"$(grep 'Max open files' /proc/$DPID/limits | tr -s ' ')"
[ $created -eq $N ] || abort_many

# all up: each has written its ready mark and waits on its stdin (at most 180 s)
w=0
while [ "$(ls "$MW"/w*/ready 2>/dev/null | wc -l)" -lt $N ] && [ $w -lt 1800 ]; do
	w=$((w + 1))
	sleep 0.1
done
ready=$(ls "$MW"/w*/ready 2>/dev/null | wc -l)
[ "$ready" -eq $N ] && pass "all $N runs confined and up: each wrote its own workspace, second tree, saw its limits and env" ||
	{ fail "runs up" "$ready of $N ready: $(tail -n 5 "$T/daemon.log")"; abort_many; }

code=$(api GET "/v1/runs?state=running")
live=$(grep -o '"id":"many-[0-9]*"' "$T/api.body" | sort -u | wc -l)
[ "$code" = 200 ] && [ "$live" -eq $N ] && pass "GET /v1/runs?state=running: all $N at the same time" ||
	fail "overlap" "$code: $live running"

# one process per run (its shell, waiting), its own cgroup, its own pids.max
why=
: > "$T/many-pids"
i=0
while [ $i -lt $N ]; do
	pid= more= pmax=
	{ read -r pid; read -r more; } < "$CG/many-$i/cgroup.procs"
	read -r pmax < "$CG/many-$i/pids.max"
	[ -n "$pid" ] && [ -z "$more" ] || why="$why many-$i holds '$pid $more';"
	[ "$pmax" = $((64 + i)) ] || why="$why many-$i pids.max $pmax;"
	echo "$i $pid" >> "$T/many-pids"
	eval "pid_$i=$pid"
	i=$((i + 1))
done
[ -z "$why" ] && pass "each run: one process in a cgroup of its own, pids.max its envelope's" || fail "cgroups" "$why"

# each tenant's caller lists its own tenant's runs, and only those
for who in a b; do
	[ $who = a ] && uid=$UA want=0 other=b || uid=$UB want=1 other=a
	code=$(as_user $uid $SG "" api GET "/v1/runs?state=running")
	ids=$(grep -o '"id":"many-[0-9]*"' "$T/api.body" | sed 's/.*many-//; s/"//' | sort -n | tr '\n' ' ')
	exp=
	i=$want
	while [ $i -lt $N ]; do
		exp="$exp$i "
		i=$((i + 2))
	done
	[ "$code" = 200 ] && [ "$ids" = "$exp" ] && ! grep -q "\"tenant\":\"team-$other\"" "$T/api.body" &&
		pass "uid $uid lists the $((N / 2)) runs of team-$who, none of the other tenant" ||
		fail "list team-$who" "$code: $ids"
done

# ---- release them: each gets its targets; all attack while all are alive --------
why=
i=0
while [ $i -lt $N ]; do
	a=$(((i + 1) % N)) b=$(((i + 2) % N))
	eval "printf '%s %s %s %s\n' $a \$pid_$a $b \$pid_$b" > "$T/many-tg-$i"
	code=$(as_owner $i api POST "/v1/runs/many-$i/stdin" --data-binary @"$T/many-tg-$i")
	# docs/api.yaml says 204; the daemon answers 200 with a body (daemon.sh holds it to 200)
	case $code in 200 | 204) ;; *) why="$why many-$i: $code $(cat "$T/api.body");" ;; esac
	i=$((i + 1))
done
[ -z "$why" ] && pass "POST /v1/runs/{id}/stdin x$N by each run's own tenant: the targets" || fail "stdin targets" "$why"

w=0
while [ "$(ls "$MW"/w*/attacked 2>/dev/null | wc -l)" -lt $N ] && [ $w -lt 1800 ]; do
	w=$((w + 1))
	sleep 0.1
done
done_n=$(ls "$MW"/w*/attacked 2>/dev/null | wc -l)
[ "$done_n" -eq $N ] || { fail "all runs attacked" "$done_n of $N"; abort_many; }
code=$(api GET "/v1/runs?state=running")
live=$(grep -o '"id":"many-[0-9]*"' "$T/api.body" | sort -u | wc -l)
[ "$live" -eq $N ] && pass "every run attacked two others while all $N were alive (none was killed)" ||
	fail "alive after the attacks" "$live running"

# ---- one tenant's caller and the other's runs (both live) -----------------------
# A run of a tenant the caller may not see is not found (docs/api.yaml).
code1=$(as_user $UA $SG "" api GET /v1/runs/many-1)
code2=$(as_user $UA $SG "" api GET "/v1/runs/many-1/records?seq=0")
code3=$(as_user $UA $SG "" api GET /v1/runs/many-1/stdout)
code4=$(as_user $UA $SG "" api GET /v1/runs/many-1/stderr)
[ "$code1$code2$code3$code4" = 404404404404 ] &&
	pass "team-a's caller: team-b's run, its records, stdout and stderr are not found (404)" ||
	fail "cross-tenant reads" "$code1 $code2 $code3 $code4 $(cat "$T/api.body")"
code1=$(as_user $UA $SG "" api POST /v1/runs/many-1/stdin --data-binary 'input-0')
code2=$(as_user $UA $SG "" api POST /v1/runs/many-1/cancel)
code3=$(as_user $UB $SG "" api POST "/v1/runs/many-0/stdin?close=true" --data-binary 'input-1')
code4=$(as_user $UB $SG "" api POST /v1/runs/many-0/cancel)
[ "$code1$code2$code3$code4" = 404404404404 ] &&
	pass "neither tenant's caller can write the other's stdin or cancel its runs (404)" ||
	fail "cross-tenant writes" "$code1 $code2 $code3 $code4 $(cat "$T/api.body")"
code1=$(as_user $UA $SG "" api GET "/v1/runs?tenant=team-b")
n1=$(grep -o '"id":' "$T/api.body" | wc -l)
code2=$(as_user $UB $SG "" api GET "/v1/runs?tenant=team-a&state=running")
n2=$(grep -o '"id":' "$T/api.body" | wc -l)
[ "$code1" = 200 ] && [ "$code2" = 200 ] && [ "$n1" -eq 0 ] && [ "$n2" -eq 0 ] &&
	pass "GET /v1/runs?tenant=<the other>: an empty list" || fail "list other tenant" "$code1 $n1 $code2 $n2"
code=$(as_user $UA $SG "" api POST /v1/runs -d @"$T/many-1.json")
[ "$code" = 403 ] && grep -q "may not create runs of tenant 'team-b'" "$T/api.body" &&
	pass "team-a's caller may not create a run of team-b (403)" || fail "cross-tenant create" "$code $(cat "$T/api.body")"
code=$(as_user $UX $SG "" api GET /v1/runs)
[ "$code" = 403 ] && pass "a caller daemon.yaml does not list: 403" || fail "unlisted caller" "$code"
code=$(as_user $UA $SG "" api GET "/v1/runs/many-2/records?seq=1")
[ "$code" = 200 ] && grep -q '"run_id":"many-2"' "$T/api.body" &&
	pass "team-a's caller reads its own tenant's records (200)" || fail "own tenant records" "$code"

# ---- let them end: the second stdin line, each its own -----------------------------
why=
i=0
while [ $i -lt $N ]; do
	code=$(as_owner $i api POST "/v1/runs/many-$i/stdin?close=true" --data-binary "input-$i")
	case $code in 200 | 204) ;; *) why="$why many-$i: $code;" ;; esac
	i=$((i + 1))
done
[ -z "$why" ] && pass "POST stdin?close=true x$N: each run's own input" || fail "stdin close" "$why"

# all end (at most 120 s), then each run's records
w=0
while [ $w -lt 600 ] && [ "$(api GET "/v1/runs?state=running")" = 200 ] && grep -q '"id":"many-' "$T/api.body"; do
	w=$((w + 1))
	sleep 0.2
done
grep -q '"id":"many-' "$T/api.body" && { fail "all runs end" "$(grep -o '"id":"many-[0-9]*"' "$T/api.body" | tr '\n' ' ')"; abort_many; }
why= why_add=
i=0
while [ $i -lt $N ]; do
	code=$(api GET "/v1/runs/many-$i/records?follow=true" --max-time 20 -o "$T/many-$i.rec")
	[ "$code" = 200 ] || why="$why many-$i: $code;"
	stream_adds_up "$T/many-$i.rec" || why_add="$why_add many-$i:$WHY"
	i=$((i + 1))
done
check_streams > "$T/many-check"
[ -z "$why" ] && ! grep -q '^end ' "$T/many-check" && pass "each run's stream ends succeeded, exit 0, cleanup verified" ||
	fail "end records" "$why $(grep '^end ' "$T/many-check" | head -n 10)"
grep -qx "cgroups $N" "$T/many-check" && ! grep -q '^own ' "$T/many-check" &&
	pass "each stream holds only its own run's records (its run id, its own cgroup id; $N distinct cgroups)" ||
	fail "own records" "$(grep -e '^own ' -e '^cgroups ' "$T/many-check" | head -n 10)"
! grep -q '^denials ' "$T/many-check" &&
	pass "each stream's denials are exactly its own $(grep -c . "$T/many-denials") attempts, none from another run" ||
	fail "denials" "$(grep '^denials ' "$T/many-check" | sort -n -k 2 | head -n 20)"
[ -z "$why_add" ] && pass "each stream adds up: seq 1..end, nothing lost" || fail "streams add up" "$why_add"

# the runs as the API records them: own tenant, caller, workspace, limits, status
code=$(api GET /v1/runs)
why=$(check_list)
[ "$code" = 200 ] && [ -z "$why" ] &&
	pass "GET /v1/runs: each ended succeeded, exit 0, with its own tenant, caller, workspace and limits" ||
	fail "run records" "$code $(echo "$why" | head -n 20)"

# a failed run's own account, for the log
for i in $(sed -n 's/^end \([0-9]*\) .*/\1/p' "$T/many-check" | sort -un | head -n 8); do
	api GET "/v1/runs/many-$i/stdout" > /dev/null
	grep -E 'WRONG|^exit' "$T/api.body" | head -n 20 | sed "s/^/  many-$i: /"
done

# ---- what is left: each workspace holds its own run's files only ----------------
why=
i=0
while [ $i -lt $N ]; do
	got=$(ls -A "$MW/w$i" | tr '\n' ' ')
	exp="attacked d mine ready secret sl-$(((i + 1) % N)) "
	[ "$got" = "$exp" ] || why="$why w$i: $got;"
	secret= f=
	read -r secret < "$MW/w$i/secret"
	[ "$secret" = "secret-of-$i" ] || why="$why w$i/secret: $secret;"
	read -r f < "$MO/o$i/f"
	[ "$(ls -A "$MO/o$i")" = f ] && [ "$f" = tether ] || why="$why o$i: $(ls -A "$MO/o$i" | tr '\n' ' ');"
	[ -e "$CG/many-$i" ] && why="$why $CG/many-$i is left;"
	i=$((i + 1))
done
[ -z "$why" ] && pass "each workspace and second tree holds what its own run wrote, nothing of another; no cgroup left" ||
	fail "workspaces" "$why"

# ---- after the end: still the other tenant's ----------------------------------------
code1=$(as_user $UB $SG "" api GET "/v1/runs/many-0/records?follow=true")
code2=$(as_user $UB $SG "" api GET "/v1/runs?state=ended")
n2=$(grep -o '"id":"many-[0-9]*[02468]"' "$T/api.body" | wc -l)
sed 's/"run_id":"many-1","tenant":"team-b"/"run_id":"many-retry","tenant":"team-a","retry_of":"many-1"/' \
	"$T/many-1.json" > "$T/many-retry.json"
code3=$(as_user $UA $SG "" api POST /v1/runs -d @"$T/many-retry.json")
[ "$code1" = 404 ] && [ "$code2" = 200 ] && [ "$n2" -eq 0 ] && [ "$code3" = 404 ] &&
	grep -q "retry_of: no run 'many-1' of tenant 'team-a'" "$T/api.body" &&
	pass "ended runs stay the tenant's: not found, not listed, not retried from the other tenant" ||
	fail "ended cross-tenant" "$code1 $code2 $n2 $code3 $(cat "$T/api.body")"

code=$(api GET /v1/health)
[ "$code" = 200 ] && grep -q '"runs_active":0' "$T/api.body" && pass "the daemon serves on, no run active" ||
	fail "daemon after" "$code $(cat "$T/api.body")"

# The daemon raises its soft descriptor limit to the hard one, and a run
# without resources.open_files inherits that (docs/daemon.md, max_runs).
printf '{"envelope":"sandbox:\\n  identity: {uid: 0, gid: 0}\\n  filesystem:\\n    root: read_only\\n    workspace:\\n      path: %s\\n","argv":["/bin/sh","-c","ulimit -n; ulimit -Hn"],"run_id":"many-nofile"}\n' \
	"$MW-nofile" > "$T/many-nofile.json"
code=$(api POST /v1/runs -d @"$T/many-nofile.json")
code2=$(api GET "/v1/runs/many-nofile/stdout?follow=true" --max-time 30)
[ "$code" = 201 ] && [ "$code2" = 200 ] && [ "$(cat "$T/api.body")" = "$(ulimit -Hn; ulimit -Hn)" ] &&
	pass "a run without open_files inherits the daemon's raised RLIMIT_NOFILE ($(ulimit -Hn))" ||
	fail "inherited nofile" "$code $code2 '$(cat "$T/api.body")', daemon: $(grep 'Max open files' /proc/$DPID/limits)"

stop_daemon
rm -f /etc/tether/daemon.yaml
finish
