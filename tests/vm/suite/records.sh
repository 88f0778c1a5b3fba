#!/bin/sh
# The audit stream end to end (docs/audit.md): repeated denials from one
# process are coalesced, never dropped, with counts that add up; allowed
# records and audit mode's would_deny ones are all written; the end record
# counts every record of the run, DNS ones included.  Every case checks the
# whole stream with stream_adds_up.  Runs inside the VM as root:
# tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/records-ws
mkdir -p "$WS"
ENV=$T/records.yaml
envelope "$ENV" "$WS"

# rrun ID CMD...: CMD in a fresh run under $ENV; RC, $T/ID.audit, .out, .err.
rrun() {
	id=$1
	shift
	rm -f "$T/$id.audit" "$T/$id.out" "$T/$id.err"
	tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$@" \
		>"$T/$id.out" 2>"$T/$id.err"
	RC=$?
}

# report NAME: pass, or fail with WHY and the run's stream.
report() {
	if [ -z "$WHY" ]; then
		pass "$1"
	else
		fail "$1" "$WHY"
		[ -s "$T/$id.audit" ] && normalize "$T/$id.audit" | cut -c1-600 | sed 's/^/    /'
		[ -s "$T/$id.err" ] && sed 's/^/    err: /' "$T/$id.err"
	fi
}

# pids FILE SELF: the pids a glob of /proc/[0-9]* listed, but SELF, in
# /proc's order (numeric), one a line.
pids() {
	tr ' ' '\n' < "$1" | sed -n 's#^/proc/\([0-9][0-9]*\)$#\1#p' | grep -vx "$2" | sort -n
}

# The shell of the run lists /proc before and after (a glob: no process of
# its own), so the processes outside the run while ps read /proc are known
# exactly when the two lists agree.  Each of them is one refused open of
# /proc/PID/stat; the run's own two (the shell and ps) are read.
#
# ps_run ID [AFTER]: ps (busybox), then the shell command AFTER, in a run.
# Sets OUTSIDE (the pids, one a line), N (how many) and WHY.
ps_run() {
	for attempt in 1 2; do
		rrun "$1" /bin/sh -c "echo /proc/[0-9]* > $WS/$1.before; echo \$\$ > $WS/$1.self
			ps > $WS/$1.ps; ${2:-:}; echo /proc/[0-9]* > $WS/$1.after"
		self=$(cat "$WS/$1.self")
		OUTSIDE=$(pids "$WS/$1.before" "$self")
		N=$(echo "$OUTSIDE" | grep -c .)
		[ "$OUTSIDE" = "$(pids "$WS/$1.after" "$self")" ] && break
		echo "  (processes outside the run came or went while it ran: once more)"
	done
	stream_adds_up "$T/$1.audit"
	[ "$RC" = 0 ] || WHY="$WHY tether exited $RC;"
	[ "$OUTSIDE" = "$(pids "$WS/$1.after" "$self")" ] || WHY="$WHY the processes outside the run changed twice;"
	[ "$N" -ge 10 ] || WHY="$WHY only $N processes outside the run;"
	# what ps printed: its header, the run's shell and itself
	[ "$(wc -l < "$WS/$1.ps")" -eq 3 ] || WHY="$WHY ps listed $(cat "$WS/$1.ps");"
}

# ps_full ID SEQ: the full record of ps's first refusal (the first pid outside).
ps_full() {
	echo "{\"seq\":$2,\"run_id\":\"$1\",\"kind\":\"fs\",\"op\":\"open_read\",\"path\":\"/proc/$(echo "$OUTSIDE" | head -n 1)/stat\",\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"uid\":0,\"comm\":\"ps\",\"exe\":\"/bin/busybox\"}"
}

# ps_coalesced ID SEQ FIRST_SEQ: the coalesced record of ps's other N-1
# refusals, seqs FIRST_SEQ+1 to FIRST_SEQ+N-1: paths the 2nd to 9th pids.
ps_coalesced() {
	c_paths=$(echo "$OUTSIDE" | sed -n '2,9p' | sed 's#.*#"/proc/&/stat"#' | tr '\n' ',' | sed 's/,$//')
	c_unlisted=$((N - 9))
	[ $c_unlisted -ge 0 ] || c_unlisted=0
	echo "{\"seq\":$2,\"run_id\":\"$1\",\"kind\":\"fs\",\"op\":\"open_read\",\"coalesced\":$((N - 1)),\"first_seq\":$3,\"coalesced_seqs\":[[$(($3 + 1)),$(($3 + N - 1))]],\"paths\":[$c_paths],\"paths_unlisted\":$c_unlisted,\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"protected\",\"uid\":0,\"comm\":\"ps\",\"exe\":\"/bin/busybox\"}"
}

# end_record ID SEQ RECORDS COALESCED [EGRESS]: the end record of a run that succeeded.
end_record() {
	echo "{\"seq\":$2,\"run_id\":\"$1\",\"kind\":\"run\",\"event\":\"end\",\"exit_status\":0,\"audit_records\":$3,\"audit_seq_last\":$3,\"audit_lost\":0,\"audit_malformed\":0,\"audit_coalesced\":$4,\"audit_suppressed\":0,\"egress_bytes\":${5:-0},\"ingress_dropped\":0,\"leftover_processes\":0,\"cleanup_verified\":true,\"reason\":\"succeeded\"}"
}

# has ID RECORD: the stream holds RECORD exactly (else WHY says so).
has() {
	expect_record "$1" "$T/$1.audit" "$2" >/dev/null || WHY="$WHY no record $2;"
}

# count_of ID ERE: how many normalized lines match ERE.
count_of() {
	normalize "$T/$1.audit" | grep -cE "$2"
}

# --- ps: one refusal per process outside the run ---------------------------
# seq 1 is the start record; execs and the shell's writes to the workspace
# are allowed and not recorded: ps's refusals are 2..N+1, the coalesced
# record N+2, the cleanup record N+3, the end record N+4.
ps_run r-ps
has r-ps "$(ps_full r-ps 2)"
has r-ps "$(ps_coalesced r-ps $((N + 2)) 2)"
has r-ps "$(end_record r-ps $((N + 4)) $((N + 3)) $((N - 1)))"
[ "$(count_of r-ps '"decision":"deny"')" -eq 2 ] || WHY="$WHY $(count_of r-ps '"decision":"deny"') denial lines, not 2;"
report "ps: $N refused opens are one full record and one coalesced record of $((N - 1)); the end record counts all"

# --- ps, then kill(-1): two kinds of refusal, one coalesced record each ----
# kill(-1, SIGUSR1) from the run's shell asks for every process but pid 1
# and the caller: N-1 refused signals (the shell's own key), after ps's N.
trap 'fail "a run signalled the suite shell" "SIGUSR1"' USR1
ps_run r-ps2 "kill -USR1 -1"
trap - USR1
has r-ps2 "$(ps_full r-ps2 2)"
# ps's window may close before or after the signals begin: its seq is not fixed
ps2=$(ps_coalesced r-ps2 SEQ 2 | sed 's/[][{}.]/\\&/g; s/"seq":SEQ,/"seq":[0-9]+,/')
[ "$(count_of r-ps2 "^$ps2\$")" -eq 1 ] || WHY="$WHY no coalesced record of ps's $((N - 1));"
# the shell's first refused signal: N+2, or N+3 when ps's window closed first
sig=$(normalize "$T/r-ps2.audit" | sed -n 's/^{"seq":\([0-9]*\),"run_id":"r-ps2","kind":"proc","op":"signal","path":"","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"sh","exe":"\/bin\/busybox"}$/\1/p')
[ "$sig" = $((N + 2)) ] || [ "$sig" = $((N + 3)) ] || WHY="$WHY the first signal record is at seq '$sig';"
[ "$(count_of r-ps2 "^\{\"seq\":[0-9]+,\"run_id\":\"r-ps2\",\"kind\":\"proc\",\"op\":\"signal\",\"coalesced\":$((N - 2)),\"first_seq\":$sig,\"coalesced_seqs\":\[[][0-9,]*\],\"path\":\"\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":0,\"comm\":\"sh\",\"exe\":\"/bin/busybox\"\}$")" -eq 1 ] ||
	WHY="$WHY no coalesced record of the shell's $((N - 2)) further signals;"
[ "$(count_of r-ps2 '"decision":"deny"')" -eq 4 ] || WHY="$WHY $(count_of r-ps2 '"decision":"deny"') denial lines, not 4;"
has r-ps2 "$(end_record r-ps2 $((2 * N + 4)) $((2 * N + 3)) $((2 * N - 3)))"
report "ps and kill(-1): two kinds, each one full and one coalesced record ($((N - 1)) and $((N - 2)) more); counts add up"

# --- what is never coalesced ---------------------------------------------------
# Allowed records (--audit-allowed): five creates by one shell, each written.
id=r-allow
rm -f "$T/r-allow.audit" "$WS"/allowed-*
tether run --envelope "$ENV" --run-id r-allow --audit "$T/r-allow.audit" --audit-allowed -- \
	/bin/sh -c "for i in 1 2 3 4 5; do echo x > $WS/allowed-\$i; done" >"$T/r-allow.out" 2>"$T/r-allow.err"
RC=$?
stream_adds_up "$T/r-allow.audit"
[ "$RC" = 0 ] || WHY="$WHY tether exited $RC;"
per=$(count_of r-allow "\"path\":\"$WS/allowed-1\",.*\"decision\":\"allow\"")
[ "$per" -ge 1 ] || WHY="$WHY no allowed record of allowed-1;"
for i in 2 3 4 5; do
	[ "$(count_of r-allow "\"path\":\"$WS/allowed-$i\",.*\"decision\":\"allow\"")" -eq "$per" ] ||
		WHY="$WHY allowed-$i has not the $per records allowed-1 has;"
done
grep -q '"coalesced"' "$T/r-allow.audit" && WHY="$WHY a coalesced record;"
report "allowed records are never coalesced (5 x $per records of one shell's creates, all written)"

# mode: audit: five reads a deny rule would refuse, by one shell, each written
mkdir -p /srv/records-deny
for i in 1 2 3 4 5; do echo secret > /srv/records-deny/f$i; done
cat > "$T/records-audit.yaml" <<EOT
sandbox:
  identity: {uid: 0, gid: 0}
  mode: audit
  filesystem:
    root: read_only
    workspace:
      path: $WS
    deny: [/srv/records-deny/**]
  acknowledge_unenforced: [filesystem.exec, network_egress.default]
EOT
id=r-would
rm -f "$T/r-would.audit"
tether run --envelope "$T/records-audit.yaml" --run-id r-would --audit "$T/r-would.audit" -- \
	/bin/sh -c 'for i in 1 2 3 4 5; do read x < /srv/records-deny/f$i; done' >"$T/r-would.out" 2>"$T/r-would.err"
RC=$?
stream_adds_up "$T/r-would.audit"
[ "$RC" = 0 ] || WHY="$WHY tether exited $RC;"
for i in 1 2 3 4 5; do
	[ "$(count_of r-would "\"op\":\"open_read\",\"path\":\"/srv/records-deny/f$i\",\"access\":\"read\",\"decision\":\"would_deny\"")" -eq 1 ] ||
		WHY="$WHY no would_deny record of f$i;"
done
grep -q '"coalesced"' "$T/r-would.audit" && WHY="$WHY a coalesced record;"
report "mode: audit: would_deny records are never coalesced (5 reads of one shell, 5 records)"

# --- the end record counts every record, DNS ones included --------------------
# Without hostnames every query is REFUSED by the run's DNS proxy (port 53
# of any address goes to it): three queries, three DNS records, 2..4.
rrun r-dns /bin/sh -c "$BIN/netprobe REFUSED dns-query 192.0.2.53 53 a.example A &&
	$BIN/netprobe REFUSED dns-query 192.0.2.53 53 b.example AAAA &&
	$BIN/netprobe REFUSED dns-query 192.0.2.53 53 c.example A tcp"
stream_adds_up "$T/r-dns.audit"
[ "$RC" = 0 ] || WHY="$WHY tether exited $RC;"
has r-dns '{"seq":2,"run_id":"r-dns","kind":"dns","name":"a.example","qtype":"A","transport":"udp","decision":"deny","reason":"not_listed","rcode":"REFUSED"}'
has r-dns '{"seq":3,"run_id":"r-dns","kind":"dns","name":"b.example","qtype":"AAAA","transport":"udp","decision":"deny","reason":"not_listed","rcode":"REFUSED"}'
has r-dns '{"seq":4,"run_id":"r-dns","kind":"dns","name":"c.example","qtype":"A","transport":"tcp","decision":"deny","reason":"not_listed","rcode":"REFUSED"}'
# the queries went over loopback to the proxy: their packets are the run's egress
egress=$(sed -n 's/.*"event":"end",.*"egress_bytes":\([0-9]*\),.*/\1/p' "$T/r-dns.audit")
has r-dns "$(end_record r-dns 6 5 0 "$egress")"
[ "$(grep -c . "$T/r-dns.audit")" -eq 6 ] || WHY="$WHY $(grep -c . "$T/r-dns.audit") lines, not 6;"
report "the end record counts DNS records: start, 3 DNS, cleanup = audit_records 5"

finish
