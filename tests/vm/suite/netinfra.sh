#!/bin/sh
# Self-check of the network test topology (netlib.sh) and of netprobe,
# netsink and testdns, outside any tether run: every probe against hosta
# works, the logs of the "denied destinations" record what reaches them (so
# an empty log means something), loopback answers, and DNS goes to the
# nameserver of /etc/resolv.conf.  Not part of all.sh; run it with
#   tests/vm/vmrun --kernel 6.12 --module veth --module dummy \
#     --add build/tests/vm:/opt/tether-tests/bin --add tests/vm/suite:/ext/suite \
#     -- /bin/sh /ext/suite/netinfra.sh
. /ext/suite/lib.sh
. /ext/suite/netlib.sh

# probe NAME EXPECT OP ARGS...: netprobe gives EXPECT; its output is in $OUT.
probe() {
	name=$1
	shift
	if OUT=$("$BIN/netprobe" "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(echo "$OUT" | tr '\n' ' ')"
	fi
}

# has NAME PATTERN: $OUT (the last probe's output) holds PATTERN.
has() {
	if echo "$OUT" | grep -q -- "$2"; then
		pass "$1"
	else
		fail "$1" "no '$2' in: $(echo "$OUT" | tr '\n' ' ')"
	fi
}

# logged NAME LOG PATTERN: a line matching PATTERN arrives in LOG.
logged() {
	if net_wait_log "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "no '$3' in $2: $(tr '\n' ' ' < "$2")"
	fi
}

if ! net_setup; then
	fail "net_setup" "the topology could not be built"
	finish
	exit 1
fi
pass "net_setup builds the topology"
net_setup && pass "net_setup again (idempotent)" || fail "net_setup again" "failed"

for A in $NET_HOSTA $NET_HOSTA6; do
	probe "tcp-connect $A" ok tcp-connect "$A" 80
	probe "tcp-connect $A, closed port" ECONNREFUSED tcp-connect "$A" 81
	probe "tcp-send $A (64 KiB)" ok tcp-send "$A" 9000 65536
	probe "udp-sendto $A" ok udp-sendto "$A" 9000
	probe "udp-connect-send $A" ok udp-connect-send "$A" 9000
	probe "udp-connect-send $A, closed port" ECONNREFUSED udp-connect-send "$A" 9001
	probe "udp-sendmmsg $A" ok udp-sendmmsg "$A" 9000
	probe "tcp-fastopen $A (gets a cookie)" ok tcp-fastopen "$A" 443
	probe "tcp-fastopen $A again" ok tcp-fastopen "$A" 443
	has "tcp-fastopen $A: the second SYN carries the data" "syn-data: yes"
	probe "ping $A" ok ping "$A"
	probe "uring-sendmsg $A" ok uring-sendmsg "$A" 9000
	probe "uring-connect $A" ok uring-connect "$A" 8080
	probe "uring-connect $A, closed port" ECONNREFUSED uring-connect "$A" 81
	probe "http-upload $A (1 MiB)" ok http-upload "$A" 80 1048576
	has "http-upload $A: the server counted 1 MiB" "HTTP/1.1 200 OK"
done
probe "tcp-connect to an IPv4-mapped address (AF_INET6 socket)" ok tcp-connect "::ffff:$NET_HOSTA" 80
probe "udp-sendto an IPv4-mapped address" ok udp-sendto "::ffff:$NET_HOSTA" 9000
probe "ip-options-sendto $NET_HOSTA (LSRR through itself)" ok ip-options-sendto "$NET_HOSTA" 9000
probe "ipv6-rthdr-sendto $NET_HOSTA6 (SRH through itself)" ok ipv6-rthdr-sendto "$NET_HOSTA6" 9000 "$NET_HOSTA6"
probe "unreachable network" ENETUNREACH tcp-connect 203.0.113.9 80

# hosta's log names the root side as the peer
net_clear_logs
probe "tcp-send to hosta for its log" ok tcp-send "$NET_HOSTA" 80 10
logged "hosta's log records the connection" "$NET_LOG_HOSTA" "^tcp from=192.0.2.1:[0-9]* to=192.0.2.2:80 bytes=10 end=eof$"

# DNS: through getaddrinfo, as a plain libc client (resolv.conf, port 53)
net_clear_logs
probe "resolve allowed.example" ok resolve allowed.example
has "resolve allowed.example: its A" "address 192.0.2.2$"
has "resolve allowed.example: its AAAA" "address 2001:db8:a::2$"
logged "the query reached 192.0.2.53 from the root side" "$NET_LOG_DNS" "^query allowed.example A from=192.0.2.1:"
probe "resolve alias.example (CNAME), IPv4" ok resolve alias.example 4
has "resolve alias.example: the CNAME's target" "address 192.0.2.2$"
probe "resolve an unknown name" EAI_NONAME resolve nothing.example
probe "resolve a name whose server fails" EAI_AGAIN resolve servfail.example
net_clear_logs
probe "resolve a name from /etc/hosts" ok resolve hosta.hosts.example 4
if net_log_empty "$NET_LOG_DNS"; then
	pass "a name from /etc/hosts needs no DNS query"
else
	fail "a name from /etc/hosts needs no DNS query" "$(cat "$NET_LOG_DNS")"
fi

# DNS: raw queries
probe "dns-query A over UDP" ok dns-query "$NET_DNS" 53 allowed.example A
has "dns-query A: the answer and its TTL" "allowed.example. A 192.0.2.2 ttl=60$"
probe "dns-query AAAA over TCP" ok dns-query "$NET_DNS" 53 allowed.example AAAA tcp
has "dns-query AAAA over TCP: the answer" "allowed.example. AAAA 2001:db8:a::2 ttl=60$"
probe "dns-query to the IPv6 server" ok dns-query "$NET_DNS6" 53 alias.example A
has "dns-query CNAME chain" "alias.example. CNAME allowed.example."
probe "dns-query to the IPv6 server over TCP" ok dns-query "$NET_DNS6" 53 other.example AAAA tcp
probe "dns-query for an unknown name" NXDOMAIN dns-query "$NET_DNS" 53 nothing.example A
probe "dns-query REFUSED" REFUSED dns-query "$NET_DNS" 53 refused.example A
probe "dns-query SERVFAIL over TCP" SERVFAIL dns-query "$NET_DNS" 53 servfail.example A tcp
probe "dns-query that is never answered" ETIMEDOUT dns-query "$NET_DNS" 53 drop.example A
probe "dns-query the metadata name" ok dns-query "$NET_DNS" 53 meta.example A
has "dns-query meta.example" "meta.example. A 169.254.169.254"
probe "dns-query the rebinding name" ok dns-query "$NET_DNS" 53 rebind.example A
has "dns-query rebind.example" "rebind.example. A 127.0.0.1"

# hostb and meta: what reaches them is logged, so an empty log means something
net_clear_logs
if net_log_empty "$NET_LOG_HOSTB" && net_log_empty "$NET_LOG_META"; then
	pass "net_clear_logs empties the logs"
else
	fail "net_clear_logs" "logs not empty"
fi
probe "tcp-send to hostb" ok tcp-send "$NET_HOSTB" 443 5
logged "hostb's log records TCP" "$NET_LOG_HOSTB" "^tcp from=198.51.100.1:[0-9]* to=198.51.100.2:443 bytes=5 end=eof$"
probe "udp-sendto hostb over IPv6" ok udp-sendto "$NET_HOSTB6" 9000
logged "hostb's log records UDP" "$NET_LOG_HOSTB" "^udp from=\[2001:db8:b::1\]:[0-9]* to=\[2001:db8:b::2\]:9000 bytes=13$"
probe "tcp-connect to hostb port 80" ok tcp-connect "$NET_HOSTB" 80
logged "hostb's log records a bare connect" "$NET_LOG_HOSTB" "to=198.51.100.2:80 bytes=0 end=eof$"
probe "tcp-send to $NET_META" ok tcp-send "$NET_META" 80 1
logged "meta's log records $NET_META" "$NET_LOG_META" "to=169.254.169.254:80 bytes=1"
probe "tcp-send to $NET_META6" ok tcp-send "$NET_META6" 80 1
logged "meta's log records $NET_META6" "$NET_LOG_META" "to=\[fd00:ec2::254\]:80 bytes=1"
probe "http-upload to $NET_META_ALT (routed to the dummy link)" ok http-upload "$NET_META_ALT" 80 100
logged "meta's log records $NET_META_ALT" "$NET_LOG_META" "to=100.100.100.200:80 bytes=.* end=http$"
probe "udp-sendto $NET_META" ok udp-sendto "$NET_META" 80

# source routes through hostb are dropped there (accept_source_route and
# seg6_enabled are off): nothing reaches hosta or hostb's servers
net_clear_logs
probe "ip-options-sendto hosta via hostb (hostb drops it)" ETIMEDOUT ip-options-sendto "$NET_HOSTA" 9000 "$NET_HOSTB"
probe "ipv6-rthdr-sendto hosta via hostb (hostb drops it)" ETIMEDOUT ipv6-rthdr-sendto "$NET_HOSTA6" 9000 "$NET_HOSTB6"
if net_log_empty "$NET_LOG_HOSTA" && net_log_empty "$NET_LOG_HOSTB"; then
	pass "source-routed datagrams reached no server"
else
	fail "source-routed datagrams" "$(cat "$NET_LOG_HOSTA" "$NET_LOG_HOSTB")"
fi

# loopback
probe "tcp-send to 127.0.0.1:7000" ok tcp-send 127.0.0.1 7000 3
probe "udp-sendto [::1]:7000" ok udp-sendto ::1 7000
probe "ping 127.0.0.1" ok ping 127.0.0.1
logged "the loopback log records TCP" "$NET_LOG_LO" "^tcp from=127.0.0.1:[0-9]* to=127.0.0.1:7000 bytes=3 end=eof$"
logged "the loopback log records UDP" "$NET_LOG_LO" "^udp from=\[::1\]:[0-9]* to=\[::1\]:7000"

net_teardown
if [ ! -e /sys/class/net/vhosta ] && [ ! -e /etc/resolv.conf ] && [ ! -d "$NET_RUN" ]; then
	pass "net_teardown removes the topology"
else
	fail "net_teardown" "leftovers"
fi
probe "after net_teardown hosta is gone" ENETUNREACH tcp-connect "$NET_HOSTA" 80
finish
