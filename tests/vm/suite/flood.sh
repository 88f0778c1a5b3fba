#!/bin/sh
# Flood control (docs/audit.md, "Flood control"): a run flooding a million
# denials from hundreds of processes at once writes at most its ceiling of
# lines a second, counts every record it does not write (suppressed, with
# their seqs), loses none without a count, and another run's stream beside
# it is complete and untouched.
. /ext/suite/lib.sh

WS=/srv/flood-ws
mkdir -p "$WS" /srv/flood-out /srv/flood-victim
ENV=$T/flood.yaml
envelope "$ENV" "$WS"
TOTAL=${FLOOD_TOTAL:-1000000}
RATE=200

# A first run loads and pins the programs under the parent cgroup's lock
# (seconds under TCG): done before the two runs that start together.
tether run --envelope "$ENV" --run-id fl0 -- /bin/true > /dev/null 2>&1
rm -f "$T/fl1.audit" "$T/fl2.audit"
start=$(date +%s)
tether run --envelope "$ENV" --run-id fl1 --audit-rate-limit $RATE --audit "$T/fl1.audit" \
	-- "$BIN/flood" "$TOTAL" 250 /srv/flood-out > "$T/fl1.out" 2>&1 &
fpid=$!
# the victim, at the same time: 40 denials of its own, one process, paced
tether run --envelope "$ENV" --run-id fl2 --audit "$T/fl2.audit" -- /bin/sh -c \
	'i=0; while [ $i -lt 40 ]; do echo x 2>/dev/null > /srv/flood-victim/v$i; i=$((i + 1)); done; true' \
	> "$T/fl2.out" 2>&1
vrc=$?
wait $fpid
frc=$?
elapsed=$(($(date +%s) - start))

# Every kernel denial of the flood is accounted for: a line of its own, a
# coalesced record's count, a suppressed record's count, or audit_lost.
acct=$(awk '
	function num(key,   s) {
		if (!match($0, "\"" key "\":[0-9]+")) return -1
		s = substr($0, RSTART, RLENGTH); sub(/.*:/, "", s); return s + 0
	}
	/"kind":"fs"/ && /"decision":"deny"/ { c = num("coalesced"); full += (c < 0 ? 1 : c) }
	/"event":"suppressed"/ { s = num("fs"); if (s > 0) sup += s; windows++ }
	/"event":"end"/ { lost = num("audit_lost"); recs = num("audit_records"); last = num("audit_seq_last"); asup = num("audit_suppressed") }
	{ lines++ }
	END { printf "%d %d %d %d %d %d %d %d\n", full + sup + lost, sup, lost, recs, last, asup, lines, windows }
' "$T/fl1.audit")
set -- $acct
accounted=$1 sup=$2 lost=$3 recs=$4 last=$5 asup=$6 lines=$7 windows=$8
attempts=$(sed -n 's/^attempts \([0-9]*\) denied \([0-9]*\).*/\2/p' "$T/fl1.out")
bound=$(( (RATE + 1) * (elapsed + 2) + 3 ))
size=$(wc -c < "$T/fl1.audit")
if [ $frc -eq 0 ] && [ "$attempts" = "$TOTAL" ] && [ "$accounted" -eq "$TOTAL" ] &&
	[ "$recs" -eq "$last" ] && [ "$sup" -eq "$asup" ] && [ "$sup" -gt 0 ] && [ "$lines" -le "$bound" ]; then
	pass "a million denials from 250 processes: every one accounted for (lines, coalesced, $sup suppressed, $lost lost), $lines lines ($size bytes) for ${elapsed}s at $RATE a second"
else
	fail "flood" "rc=$frc attempts=$attempts accounted=$accounted (suppressed $sup end $asup lost $lost) records=$recs seq_last=$last lines=$lines bound=$bound: $(cat "$T/fl1.out"; tail -n 2 "$T/fl1.audit")"
fi

# The victim's stream: start, its 40 denials (in full or coalesced),
# cleanup, end; every seq handed out is a record, nothing lost, nothing
# suppressed, nothing of the flood's.
deny=$(grep -c '"run_id":"fl2".*"kind":"fs","op":"create","path":"/srv/flood-victim/v[0-9]*".*"decision":"deny"' "$T/fl2.audit")
coal=$(sed -n 's/.*"kind":"fs".*"coalesced":\([0-9]*\).*/\1/p' "$T/fl2.audit" | awk '{ s += $1 } END { print s + 0 }')
end=$(grep '"event":"end"' "$T/fl2.audit")
recs=$(echo "$end" | sed -n 's/.*"audit_records":\([0-9]*\),"audit_seq_last":\([0-9]*\),.*/\1 \2/p')
if [ $vrc -eq 0 ] && [ $((deny + coal)) -eq 40 ] && [ -n "$recs" ] && [ "${recs% *}" = "${recs#* }" ] &&
	echo "$end" | grep -q '"audit_lost":0,"audit_malformed":0,"audit_coalesced":[0-9]*,"audit_suppressed":0,' &&
	! grep -q '"run_id":"fl1"' "$T/fl2.audit"; then
	pass "a run beside the flood: its 40 denials all there (in full or coalesced), every seq a record, none lost or suppressed, none of the flood's"
else
	fail "victim run" "rc=$vrc deny=$deny coalesced=$coal records/seq_last=$recs: $end $(tail -n 5 "$T/fl2.out")"
fi
rm -rf /srv/flood-out/* /srv/flood-victim/*
finish
