#!/bin/sh
# Network egress, end to end (issue 5): address and port rules, the packet
# backstop, metadata and loopback, hostnames through the run's DNS proxy,
# rebinding, the egress byte cap.  Each refusal is checked for its errno,
# its record, and that nothing arrived at the destination's server.
# Topology: netlib.sh (namespaces on veth, documentation addresses only).
. /ext/suite/lib.sh
. /ext/suite/netlib.sh

net_setup || { fail "network topology" "net_setup failed"; finish; exit 1; }

WS=/srv/egress
mkdir -p "$WS"
ENV=$T/egress.yaml
cat > "$ENV" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace: {path: $WS}
  network_egress:
    default: deny
    allowed_destinations:
      - {cidr: 192.0.2.2/32, ports: '80', protocol: tcp}
      - {cidr: 192.0.2.2/32, ports: '9000', protocol: udp}
      - {cidr: '2001:db8:a::2/128', ports: '80', protocol: tcp}
      - {cidr: '2001:db8:a::2/128', ports: '9000', protocol: udp}
      - {host: allowed.example, ports: '443', protocol: tcp}
      - {host: alias.example, ports: '443', protocol: tcp}
      - {host: rebind.example, ports: '80', protocol: tcp}
      - {host: private.example, ports: '80', protocol: tcp}
      - {host: meta.example, ports: '80', protocol: tcp}
      - {host: meta6.example, ports: '80', protocol: tcp}
    dns: {upstream: ['$NET_DNS'], min_ttl: 5s, max_ttl: 1h}
EOT

# net_run ID EXPECT OP ARGS...: netprobe inside a fresh run under $ENV.
net_run() {
	id=$1
	shift
	rm -f "$T/$id.audit"
	tether run --envelope "$ENV" --run-id "$id" --audit "$T/$id.audit" -- "$BIN/netprobe" "$@"
	RC=$?
}

# denied NAME ID LOG RECORD OP ARGS...: EPERM, the exact record, nothing in LOG.
denied() {
	name=$1 id=$2 log=$3 rec=$4
	shift 4
	net_clear_logs
	net_run "$id" EPERM "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$name" "netprobe did not see EPERM (tether exit $RC)"
	elif ! expect_record "$name" "$T/$id.audit" "$rec"; then
		fail "$name" "audit record missing or different"
	elif [ -n "$log" ] && ! net_log_empty "$log"; then
		fail "$name" "the destination's server saw traffic: $(cat "$log")"
	else
		pass "$name"
	fi
}

# netrec ID OP FAMILY PROTO ADDR PORT REASON [SEQ]: a denied socket record.
netrec() {
	echo "{\"seq\":${8:-2},\"run_id\":\"$1\",\"kind\":\"net\",\"op\":\"$2\",\"family\":\"$3\",\"protocol\":\"$4\",\"address\":\"$5\",\"port\":$6,\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"$7\",\"uid\":0,\"comm\":\"netprobe\"}"
}

# allowed NAME ID OP ARGS...: works, and no denial of any kind is recorded.
allowed() {
	name=$1 id=$2
	shift 2
	net_run "$id" ok "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$name" "tether exit $RC"
	elif grep -q '"decision":"deny"' "$T/$id.audit"; then
		fail "$name" "a denial was recorded: $(grep '"decision":"deny"' "$T/$id.audit")"
	else
		pass "$name"
	fi
}

# ---- addresses and ports -------------------------------------------------
allowed "TCP to a listed address and port" eg1 tcp-send "$NET_HOSTA" 80 1000
denied "TCP to an unlisted address" eg2 "$NET_LOG_HOSTB" \
	"$(netrec eg2 connect inet tcp "$NET_HOSTB" 80 default_deny)" tcp-connect "$NET_HOSTB" 80
denied "TCP to a listed address on an unlisted port" eg3 "$NET_LOG_HOSTA" \
	"$(netrec eg3 connect inet tcp "$NET_HOSTA" 8080 default_deny)" tcp-connect "$NET_HOSTA" 8080
allowed "IPv6 to a listed address" eg4 tcp-connect "$NET_HOSTA6" 80
denied "IPv6 to an unlisted address" eg5 "$NET_LOG_HOSTB" \
	"$(netrec eg5 connect inet6 tcp "$NET_HOSTB6" 80 default_deny)" tcp-connect "$NET_HOSTB6" 80
allowed "IPv4-mapped IPv6 reaches a listed IPv4 address (one rule)" eg6 tcp-connect "::ffff:$NET_HOSTA" 80
denied "IPv4-mapped IPv6 to an unlisted IPv4 address is refused as that address" eg7 \
	"$NET_LOG_HOSTB" "$(netrec eg7 connect inet6 tcp "$NET_HOSTB" 80 default_deny)" \
	tcp-connect "::ffff:$NET_HOSTB" 80
allowed "UDP sendto a listed address and port" eg8 udp-sendto "$NET_HOSTA" 9000
denied "UDP sendto an unlisted address" eg9 "$NET_LOG_HOSTB" \
	"$(netrec eg9 sendmsg inet udp "$NET_HOSTB" 9000 default_deny)" udp-sendto "$NET_HOSTB" 9000
denied "UDP connect to an unlisted address" eg10 "$NET_LOG_HOSTB" \
	"$(netrec eg10 connect inet udp "$NET_HOSTB" 9000 default_deny)" udp-connect-send "$NET_HOSTB" 9000
denied "sendmmsg to an unlisted address" eg11 "$NET_LOG_HOSTB" \
	"$(netrec eg11 sendmsg inet udp "$NET_HOSTB" 9000 default_deny)" udp-sendmmsg "$NET_HOSTB" 9000
# No run may make an io_uring instance (docs/kernel-surface.md): its sends and
# connects never start.
for c in "eg12 uring-sendmsg 9000" "eg13 uring-connect 80"; do
	set -- $c
	net_clear_logs
	net_run "$1" prep-failed:io_uring_setup:EPERM "$2" "$NET_HOSTB" "$3"
	r="{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"kernel\",\"op\":\"anon_inode\",\"path\":\"[io_uring]\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":0,\"comm\":\"netprobe\",\"exe\":\"$BIN/netprobe\"}"
	[ "$RC" -eq 0 ] && expect_record "$1" "$T/$1.audit" "$r" && net_log_empty "$NET_LOG_HOSTB" &&
		pass "$2 to an unlisted address: no io_uring instance in a run" ||
		fail "$2 to an unlisted address" "tether exit $RC"
done

# --audit-allowed: allowed connections are records too, with the rule that allowed them
rm -f "$T/eg15.audit"
tether run --envelope "$ENV" --run-id eg15 --audit "$T/eg15.audit" --audit-allowed -- /bin/sh -e -c "
	$BIN/netprobe ok tcp-connect $NET_HOSTA 80
	$BIN/netprobe ok dns-query $NET_DNS 53 allowed.example A"
RC=$?
if [ "$RC" -eq 0 ] &&
	normalize "$T/eg15.audit" | grep -qF '"kind":"net","op":"connect","family":"inet","protocol":"tcp","address":"192.0.2.2","port":80,"decision":"allow","reason":"rule","rule":0,"rule_destination":"192.0.2.2","uid":0,"comm":"netprobe"}' &&
	normalize "$T/eg15.audit" | grep -qF '"kind":"net","op":"connect","family":"inet","protocol":"udp","address":"192.0.2.53","port":53,"dns_redirected":true,"decision":"allow","reason":"dns_proxy","uid":0,"comm":"netprobe"}'; then
	pass "with --audit-allowed, allowed connections are recorded with their rule, DNS with its redirect"
else
	fail "allowed connections recorded" "exit $RC: $(cat "$T/eg15.audit")"
fi

# TCP fast open carries data in the SYN: refused before any packet.
net_clear_logs
net_run eg14 EPERM tcp-fastopen "$NET_HOSTB" 80
[ "$RC" -eq 0 ] && grep -qF "\"address\":\"$NET_HOSTB\",\"port\":80,\"decision\":\"deny\"" "$T/eg14.audit" &&
	net_log_empty "$NET_LOG_HOSTB" && pass "TCP fast open (data in the SYN) to an unlisted address" ||
	fail "TCP fast open" "exit $RC: $(cat "$T/eg14.audit")"

# ---- the packet backstop: what the socket hooks do not see ----------------
# The drop is what proves nothing left: the kernel's own traffic (neighbour
# discovery, MLD) moves interface counters at any time, so they prove nothing.
# IPv4 source routing needs CAP_NET_RAW, which no run has: setsockopt fails and
# the refused check is recorded.  cgroup_skb's drop of packets with IP options
# stays the backstop (the host tier's netconfine exercises it with the capability).
net_clear_logs
net_run eg20 EPERM ip-options-sendto "$NET_HOSTA" 9000 "$NET_HOSTB"
rec='"kind":"capability","op":"capability","path":"cap_net_raw","decision":"deny","errno":"EPERM","reason":"forbidden"'
if [ "$RC" -eq 0 ] && normalize "$T/eg20.audit" | grep -qF "$rec" && net_log_empty "$NET_LOG_HOSTB"; then
	pass "IPv4 source routing (IP_OPTIONS LSRR via an unlisted host) is refused: no CAP_NET_RAW"
else
	fail "IPv4 source routing" "exit $RC: $(cat "$T/eg20.audit")"
fi
net_run eg21 EPERM ipv6-rthdr-sendto "$NET_HOSTA6" 9000 "$NET_HOSTB6"
if [ "$RC" -eq 0 ] && grep -qF '"op":"packet","family":"inet6"' "$T/eg21.audit" &&
	grep -qF '"reason":"forbidden"' "$T/eg21.audit"; then
	pass "an IPv6 routing header (segment routing via an unlisted host) is dropped by cgroup_skb"
else
	fail "IPv6 routing header" "exit $RC: $(cat "$T/eg21.audit")"
fi
# IPv4 ping reports the drop (EPERM); ICMPv6 ping sockets drop silently, so
# the client waits in vain (ETIMEDOUT).  Both are refused and recorded.
for target in "$NET_HOSTA:EPERM" "$NET_HOSTB:EPERM" "$NET_HOSTA6:ETIMEDOUT"; do
	err=${target##*:}
	target=${target%:*}
	net_clear_logs
	net_run eg22 "$err" ping "$target"
	if [ "$RC" -eq 0 ] && grep -qF '"decision":"deny"' "$T/eg22.audit" &&
		grep -qE '"protocol":"icmp(v6)?"' "$T/eg22.audit"; then
		pass "ICMP echo (ping socket) to $target is refused: ICMP is never allowed"
	else
		fail "ICMP echo to $target" "exit $RC: $(cat "$T/eg22.audit")"
	fi
done

# ---- metadata, link-local, loopback ---------------------------------------
denied "cloud metadata 169.254.169.254" eg30 "$NET_LOG_META" \
	"$(netrec eg30 connect inet tcp "$NET_META" 80 default_deny)" tcp-connect "$NET_META" 80
denied "cloud metadata as ::ffff:169.254.169.254" eg31 "$NET_LOG_META" \
	"$(netrec eg31 connect inet6 tcp "$NET_META" 80 default_deny)" tcp-connect "::ffff:$NET_META" 80
denied "cloud metadata fd00:ec2::254" eg32 "$NET_LOG_META" \
	"$(netrec eg32 connect inet6 tcp "$NET_META6" 80 default_deny)" tcp-connect "$NET_META6" 80
denied "cloud metadata 100.100.100.200" eg33 "$NET_LOG_META" \
	"$(netrec eg33 connect inet tcp "$NET_META_ALT" 80 default_deny)" tcp-connect "$NET_META_ALT" 80
denied "loopback 127.0.0.1 (the host's own services)" eg34 "$NET_LOG_LO" \
	"$(netrec eg34 connect inet tcp 127.0.0.1 7000 default_deny)" tcp-connect 127.0.0.1 7000
denied "loopback ::1" eg35 "$NET_LOG_LO" \
	"$(netrec eg35 connect inet6 tcp ::1 7000 default_deny)" tcp-connect ::1 7000

# ---- hostnames through the DNS proxy ---------------------------------------
denied "a hostname's address is refused before the name is resolved" eg40 "$NET_LOG_HOSTA" \
	"$(netrec eg40 connect inet tcp "$NET_HOSTA" 443 default_deny)" tcp-connect "$NET_HOSTA" 443
rm -f "$T/eg41.audit"
net_clear_logs
tether run --envelope "$ENV" --run-id eg41 --audit "$T/eg41.audit" -- /bin/sh -e -c "
	$BIN/netprobe ok resolve allowed.example
	$BIN/netprobe ok tcp-send $NET_HOSTA 443 100
	$BIN/netprobe ok tcp-connect $NET_HOSTA6 443
	$BIN/netprobe EPERM tcp-connect $NET_HOSTA 8080"
RC=$?
if [ "$RC" -eq 0 ] &&
	grep -qF '"kind":"dns","name":"allowed.example","qtype":"A","transport":"udp","decision":"allow","reason":"listed","rcode":"NOERROR","answers":[{"address":"192.0.2.2","ttl":60}]}' "$T/eg41.audit" &&
	grep -qF '"kind":"dns","name":"allowed.example","qtype":"AAAA","transport":"udp","decision":"allow","reason":"listed","rcode":"NOERROR","answers":[{"address":"2001:db8:a::2","ttl":60}]}' "$T/eg41.audit" &&
	grep -q "query allowed.example A from=192.0.2.1" "$NET_LOG_DNS"; then
	pass "getaddrinfo of a listed name works through the proxy; its addresses open on the name's ports only"
else
	fail "getaddrinfo of a listed name" "exit $RC: $(cat "$T/eg41.audit")"
fi
rm -f "$T/eg42.audit"
net_clear_logs
tether run --envelope "$ENV" --run-id eg42 --audit "$T/eg42.audit" -- /bin/sh -e -c "
	$BIN/netprobe EAI_AGAIN resolve other.example 4
	$BIN/netprobe EPERM tcp-connect $NET_HOSTB 80"
RC=$?
if [ "$RC" -eq 0 ] &&
	grep -qF '"kind":"dns","name":"other.example","qtype":"A","transport":"udp","decision":"deny","reason":"not_listed","rcode":"REFUSED"}' "$T/eg42.audit" &&
	! grep -q "other.example" "$NET_LOG_DNS" && net_log_empty "$NET_LOG_HOSTB"; then
	pass "an unlisted name is REFUSED by the proxy and never asked upstream"
else
	fail "unlisted name" "exit $RC: $(cat "$T/eg42.audit"); upstream saw: $(cat "$NET_LOG_DNS")"
fi
# rebinding: listed names whose answers point into the host, a private network or metadata
for pair in rebind.example=127.0.0.1=loopback private.example=10.1.2.3=private \
	meta.example=169.254.169.254=metadata; do
	name=${pair%%=*}
	rest=${pair#*=}
	addr=${rest%=*}
	class=${rest#*=}
	net_run eg43 REFUSED dns-query "$NET_DNS" 53 "$name" A
	if [ "$RC" -eq 0 ] && grep -qF "\"kind\":\"dns\",\"name\":\"$name\",\"qtype\":\"A\",\"transport\":\"udp\",\"decision\":\"deny\",\"reason\":\"rebinding\",\"rcode\":\"REFUSED\",\"refused_address\":\"$addr\",\"refused_class\":\"$class\"}" "$T/eg43.audit"; then
		pass "DNS rebinding: $name -> $addr ($class) is REFUSED"
	else
		fail "DNS rebinding $name" "exit $RC: $(cat "$T/eg43.audit")"
	fi
done
net_run eg44 REFUSED dns-query "$NET_DNS" 53 meta6.example AAAA
grep -qF '"refused_address":"fd00:ec2::254","refused_class":"metadata"}' "$T/eg44.audit" 2>/dev/null &&
	[ "$RC" -eq 0 ] && pass "DNS rebinding over AAAA: meta6.example -> fd00:ec2::254 is REFUSED" ||
	fail "DNS rebinding AAAA" "exit $RC: $(cat "$T/eg44.audit")"
rm -f "$T/eg45.audit"
tether run --envelope "$ENV" --run-id eg45 --audit "$T/eg45.audit" -- /bin/sh -e -c "
	$BIN/netprobe ok dns-query $NET_HOSTB 53 alias.example A
	$BIN/netprobe ok tcp-connect $NET_HOSTA 443"
RC=$?
[ "$RC" -eq 0 ] && net_log_empty "$NET_LOG_HOSTB" &&
	grep -qF '"name":"alias.example","qtype":"A","transport":"udp","decision":"allow"' "$T/eg45.audit" &&
	pass "DNS to any resolver (an unlisted host's port 53) goes to the proxy; a CNAME chain admits its address" ||
	fail "DNS to any resolver" "exit $RC: $(cat "$T/eg45.audit")"
net_run eg46 ok dns-query "$NET_DNS6" 53 allowed.example AAAA tcp
[ "$RC" -eq 0 ] && grep -qF '"name":"allowed.example","qtype":"AAAA","transport":"tcp","decision":"allow"' "$T/eg46.audit" &&
	pass "DNS over TCP to an IPv6 resolver goes to the proxy" || fail "DNS over TCP/IPv6" "exit $RC: $(cat "$T/eg46.audit")"
net_run eg47 REFUSED dns-query "$NET_DNS" 53 nzxw4ylzmvzgc3tfnzsxe5dfmfwwc3lpmnsw45bnmfzw63dfmvqxiztt.other.example TXT
[ "$RC" -eq 0 ] && grep -qF '"reason":"not_listed","rcode":"REFUSED","suspected_tunnel":true}' "$T/eg47.audit" &&
	pass "a long high-entropy label to an unlisted zone is recorded as suspected tunnelling" ||
	fail "DNS tunnelling" "exit $RC: $(cat "$T/eg47.audit")"

# curl: a real client (getaddrinfo, connect, HTTP), copied into the VM by run-suite
if command -v curl >/dev/null; then
	rm -f "$T/eg48.audit"
	net_clear_logs
	tether run --envelope "$ENV" --run-id eg48 --audit "$T/eg48.audit" -- /bin/sh -c "
		curl -sS -m 10 --data-binary hello http://allowed.example:443/ > $WS/eg48.out || exit 10
		curl -sS -m 10 http://other.example/ 2> $WS/eg48.err; [ \$? -eq 6 ] || exit 11
		curl -sS -m 10 http://$NET_HOSTB/ 2>> $WS/eg48.err; [ \$? -eq 7 ] || exit 12"
	RC=$?
	if [ "$RC" -eq 0 ] && grep -q "got 5" "$WS/eg48.out" && net_log_empty "$NET_LOG_HOSTB" &&
		grep -qF '"name":"other.example","qtype":"A","transport":"udp","decision":"deny","reason":"not_listed"' "$T/eg48.audit"; then
		pass "curl: a listed hostname works end to end; an unlisted one does not resolve; an address is refused"
	else
		fail "curl" "exit $RC: $(cat "$WS/eg48.out" "$WS/eg48.err" 2>/dev/null)"
	fi
else
	fail "curl" "curl is not in the VM (run-suite copies it with --bin curl)"
fi

# A DNS admission ends with its TTL (1 s here, plus the controller's 1 s of
# grace) for new connections; one made before keeps working.
SHORT=$T/egress-short.yaml
cat > "$SHORT" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem: {root: read_only, workspace: {path: $WS}}
  network_egress:
    allowed_destinations: ['short.example:443']
    dns: {upstream: ['$NET_DNS'], min_ttl: 1s}
EOT
rm -f "$T/eg49.audit"
tether run --envelope "$SHORT" --run-id eg49 --audit "$T/eg49.audit" -- /bin/sh -e -c "
	$BIN/netprobe ok dns-query $NET_DNS 53 short.example A
	$BIN/netprobe ok tcp-connect $NET_HOSTA 443
	sleep 4
	$BIN/netprobe EPERM tcp-connect $NET_HOSTA 443"
RC=$?
[ "$RC" -eq 0 ] &&
	normalize "$T/eg49.audit" | grep -qF "\"address\":\"$NET_HOSTA\",\"port\":443,\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"dns_expired\"" &&
	pass "an address admitted by a DNS answer is refused to new connections once the TTL ends" ||
	fail "DNS expiry" "exit $RC: $(cat "$T/eg49.audit")"

# ---- the egress byte cap -----------------------------------------------------
CAP=$T/egress-cap.yaml
cat > "$CAP" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace: {path: $WS}
  network_egress:
    default: deny
    allowed_destinations:
      - {cidr: 192.0.2.2/32, ports: '80', protocol: tcp}
    max_bytes: 65536
EOT
rm -f "$T/eg50.audit"
tether run --envelope "$CAP" --run-id eg50 --audit "$T/eg50.audit" -- "$BIN/netprobe" ok http-upload "$NET_HOSTA" 80 1000
RC=$?
[ "$RC" -eq 0 ] && ! grep -q egress_budget "$T/eg50.audit" &&
	pass "an upload under network_egress.max_bytes goes through" || fail "upload under the cap" "exit $RC"
rm -f "$T/eg51.audit"
net_clear_logs
tether run --envelope "$CAP" --run-id eg51 --audit "$T/eg51.audit" -- "$BIN/netprobe" ok http-upload "$NET_HOSTA" 80 4194304
RC=$?
got=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' "$NET_LOG_HOSTA" | head -n 1)
if [ "$RC" -eq 125 ] &&
	grep -qF "\"kind\":\"net\",\"op\":\"egress_budget\",\"family\":\"inet\",\"protocol\":\"tcp\",\"address\":\"$NET_HOSTA\",\"port\":80,\"bytes\":65536,\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"budget_exhausted\"" "$T/eg51.audit" &&
	grep -qF '"event":"end","exit_status":' "$T/eg51.audit" && grep -qF '"reason":"budget_exhausted"' "$T/eg51.audit" &&
	[ "${got:-0}" -le 65536 ]; then
	pass "an upload past network_egress.max_bytes is cut, recorded, and the run ends (exit 125)"
else
	fail "upload past the cap" "exit $RC, server got ${got:-?} bytes: $(cat "$T/eg51.audit")"
fi

# ---- broad grants do not reach the host or metadata ---------------------------
ALL=$T/egress-all.yaml
cat > "$ALL" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace: {path: $WS}
  network_egress:
    default: deny
    allowed_destinations: [0.0.0.0/0, '::/0']
    dns: {upstream: ['$NET_DNS']}
EOT
rm -f "$T/eg60.audit"
net_clear_logs
tether run --envelope "$ALL" --run-id eg60 --audit "$T/eg60.audit" -- /bin/sh -e -c "
	$BIN/netprobe ok tcp-connect $NET_HOSTB 80
	$BIN/netprobe EPERM tcp-connect 127.0.0.1 7000
	$BIN/netprobe EPERM tcp-connect ::1 7000
	$BIN/netprobe EPERM tcp-connect ::ffff:127.0.0.1 7000
	$BIN/netprobe EPERM tcp-connect $NET_META 80
	$BIN/netprobe EPERM tcp-connect $NET_META6 80
	$BIN/netprobe EPERM tcp-connect $NET_META_ALT 80
	$BIN/netprobe EPERM tcp-connect 0.0.0.0 7000
	$BIN/netprobe ETIMEDOUT tcp-connect 192.0.2.1 7001"
RC=$?
[ "$RC" -eq 0 ] && net_log_empty "$NET_LOG_META" && net_log_empty "$NET_LOG_LO" &&
	normalize "$T/eg60.audit" | grep -qF '"op":"packet","family":"inet","protocol":"tcp","address":"192.0.2.1","port":7001,' &&
	pass "0.0.0.0/0 and ::/0 reach other hosts but not loopback, the host itself (its own addresses included) or metadata" ||
	fail "allow-all" "exit $RC: $(cat "$T/eg60.audit")"

# ---- no DNS upstream ----------------------------------------------------------
mv /etc/resolv.conf /etc/resolv.conf.egress
NOUP=$T/egress-noup.yaml
cat > "$NOUP" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem: {root: read_only, workspace: {path: $WS}}
  network_egress:
    allowed_destinations: ['allowed.example:443']
EOT
rm -f "$WS/noup.marker"
tether run --envelope "$NOUP" --run-id eg70 -- /bin/sh -c "echo > $WS/noup.marker" 2> "$T/eg70.err"
RC=$?
[ "$RC" -eq 120 ] && [ ! -e "$WS/noup.marker" ] && grep -q "lists hostnames, but no DNS upstream" "$T/eg70.err" &&
	pass "hostnames without any DNS upstream: the run is refused (120) and nothing runs" ||
	fail "no upstream" "exit $RC: $(cat "$T/eg70.err")"
tether run --envelope "$CAP" --run-id eg71 --audit "$T/eg71.audit" -- "$BIN/netprobe" REFUSED dns-query "$NET_DNS" 53 allowed.example A
RC=$?
[ "$RC" -eq 0 ] && grep -qF '"name":"allowed.example","qtype":"A","transport":"udp","decision":"deny","reason":"not_listed"' "$T/eg71.audit" && pass "a run without hostnames needs no upstream: every query is REFUSED" ||
	fail "no upstream, no hostnames" "exit $RC"
mv /etc/resolv.conf.egress /etc/resolv.conf

# ---- outside any run, the same destinations answer (the tests above mean something)
net_clear_logs
"$BIN/netprobe" ok tcp-connect "$NET_HOSTB" 80 >/dev/null && "$BIN/netprobe" ok tcp-connect "$NET_META" 80 >/dev/null &&
	"$BIN/netprobe" ok tcp-connect 127.0.0.1 7000 >/dev/null &&
	pass "outside any run the refused destinations answer" || fail "outside any run" "a destination did not answer"

finish
