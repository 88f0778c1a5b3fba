#!/bin/sh
# Network confinement, end to end (issue 5, in progress): which sockets a run
# may create.  Each refusal is checked for its errno and its exact record.
. /ext/suite/lib.sh

WS=/srv/nws
ENV=$T/net.yaml
mkdir -p "$WS"
envelope "$ENV" "$WS"

# refused NAME ID FAMILY TYPE PROTOCOL: socket() fails with EPERM, recorded.
refused() {
	in_run "$2" EPERM socket "$3" "$4" "$5"
	rec="{\"seq\":2,\"run_id\":\"$2\",\"kind\":\"net\",\"op\":\"socket_create\",\"path\":\"$3/$4/$5\",\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\",\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
	if [ "$RC" -ne 0 ]; then
		fail "$1" "socket() did not fail with EPERM (tether exit $RC)"
	elif ! expect_record "$1" "$T/$2.audit" "$rec"; then
		fail "$1" "audit record missing or different"
	else
		pass "$1"
	fi
}

# AF_PACKET 17, AF_INET 2, AF_INET6 10, AF_NETLINK 16, AF_VSOCK 40, AF_ALG 38;
# SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_RAW 3, SOCK_SEQPACKET 5, SOCK_DCCP 6,
# SOCK_PACKET 10; ETH_P_ALL as a protocol is 768 (htons(3)).
refused "AF_PACKET sockets (see and forge any frame)" ns1 17 3 768
refused "raw IPv4 sockets" ns2 2 3 1
refused "raw IPv6 sockets (ICMPv6)" ns3 10 3 58
# the kernel turns AF_INET SOCK_PACKET into AF_PACKET before asking
in_run ns4 EPERM socket 2 10 768
[ "$RC" -eq 0 ] && normalize "$T/ns4.audit" | grep -qF '"op":"socket_create","path":"17/10/768","decision":"deny"' &&
	pass "SOCK_PACKET on AF_INET (becomes AF_PACKET)" || fail "SOCK_PACKET" "exit $RC"
refused "SCTP" ns5 2 1 132
refused "SCTP by type (SOCK_SEQPACKET, protocol 0)" ns5b 2 5 0
refused "MPTCP" ns5c 2 1 262
refused "UDP-Lite" ns5d 2 2 136
refused "DCCP" ns6 2 6 33
refused "netlink other than route (kobject uevents)" ns7 16 3 15
refused "netlink other than route (sock_diag)" ns8 16 3 4
refused "AF_VSOCK (the hypervisor)" ns9 40 1 0
refused "AF_ALG (the kernel's crypto API)" ns10 38 5 0
refused "an unknown family (DECnet, 12)" ns11 12 1 0
refused "AF_XDP (raw frames from a NIC queue)" ns12 44 3 0

# CAP_NET_ADMIN reconfigures the host's network: routes, links, qdiscs.
in_run ns13 EPERM set-mtu lo 65536
rec='{"seq":2,"run_id":"ns13","kind":"capability","op":"capability","path":"cap_net_admin","decision":"deny","errno":"EPERM","reason":"forbidden","uid":0,"comm":"fsprobe","exe":"/opt/tether-tests/bin/fsprobe"}'
[ "$RC" -eq 0 ] && expect_record ns13 "$T/ns13.audit" "$rec" &&
	pass "CAP_NET_ADMIN is refused (an interface's MTU through SIOCSIFMTU)" ||
	fail "CAP_NET_ADMIN" "exit $RC"

rm -f "$T/ns20.audit"
tether run --envelope "$ENV" --run-id ns20 --audit "$T/ns20.audit" -- /bin/sh -e -c "
	$BIN/fsprobe ok socket 1 1 0
	$BIN/fsprobe ok socket 1 2 0
	$BIN/fsprobe ok socket 2 1 0
	$BIN/fsprobe ok socket 2 2 0
	$BIN/fsprobe ok socket 10 1 0
	$BIN/fsprobe ok socket 10 2 0
	$BIN/fsprobe ok socket 16 3 0"
RC=$?
if [ "$RC" -eq 0 ] && no_denials "$T/ns20.audit"; then
	pass "unix, TCP and UDP over IPv4 and IPv6, and netlink route sockets are created"
else
	fail "allowed sockets" "exit $RC: $(cat "$T/ns20.audit")"
fi

# Outside any run, nothing changes.
"$BIN/fsprobe" ok socket 17 3 768 >/dev/null && "$BIN/fsprobe" ok socket 16 3 15 >/dev/null &&
	pass "outside any run the same sockets are created" ||
	fail "outside" "socket creation failed outside any run"

finish
