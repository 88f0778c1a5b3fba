# Network test topology for the in-VM suites (busybox sh).  Source it after
# /ext/suite/lib.sh; the VM must have been booted with --module veth
# --module dummy.  The VM has no network device (qemu -nic none): every
# "host" below is a network namespace joined to the VM's root namespace by
# a veth pair, and every address is from a documentation or special-purpose
# range, so no test packet can leave the VM.
#
#   net_setup            builds everything (idempotent), see the table below
#   net_teardown         removes it again
#   net_in NS CMD...     runs CMD in namespace NS (hosta, hostb, meta)
#   net_clear_logs       empties the server logs
#   net_log_empty LOG    true when LOG holds no line
#   net_wait_log LOG PATTERN [TENTHS]   waits (default 3 s) for a line
#   net_ifstat IF FIELD  a counter of a root-side interface (tx_packets, ...)
#
# namespace  root side                 namespace side           servers
# hosta      vhosta 192.0.2.1/24       eth0 192.0.2.2/24        netsink :80 :443 :8080 :9000
#                   2001:db8:a::1/64        2001:db8:a::2/64     (both addresses, $NET_LOG_HOSTA)
#                                          192.0.2.53, 2001:db8:a::53   testdns :53 ($NET_LOG_DNS)
# hostb      vhostb 198.51.100.1/24    eth0 198.51.100.2/24     netsink :80 :443 :9000
#                   2001:db8:b::1/64        2001:db8:b::2/64     (both, $NET_LOG_HOSTB)
# meta       vmeta  169.254.0.1/16     eth0 169.254.169.254/16  netsink :80 on all three
#                   fd00:ec2::1/64          fd00:ec2::254/64     ($NET_LOG_META)
#                                      imds (dummy) 100.100.100.200/32, routed from the root
# (root)     lo 127.0.0.1, ::1                                  netsink :7000 ($NET_LOG_LO)
#
# Every netsink logs one line per TCP connection or UDP datagram; hostb and
# meta are the "denied destinations": a test asserts their logs stay empty.
# Each namespace has a default route back to the root side; the root
# namespace does not forward between namespaces.
#
# Settings: /etc/resolv.conf (nameserver 192.0.2.53), /etc/hosts,
# /etc/nsswitch.conf (hosts: files dns); in the root namespace
# net.ipv4.tcp_fastopen=3 and net.ipv4.ping_group_range="0 2147483647"
# (TFO client, unprivileged ping sockets); in hosta tcp_fastopen=3 (TFO
# server), accept_source_route=1 and seg6_enabled=1, so that a datagram
# source-routed through hosta itself is delivered (netprobe
# ip-options-sendto and ipv6-rthdr-sendto); hostb and meta keep the kernel
# defaults and drop source-routed packets.  IPv6 DAD is off everywhere and
# net_setup waits until no address is tentative.

NET_RUN=/run/tether-net
NET_HOSTA=192.0.2.2
NET_HOSTA6=2001:db8:a::2
NET_DNS=192.0.2.53
NET_DNS6=2001:db8:a::53
NET_HOSTB=198.51.100.2
NET_HOSTB6=2001:db8:b::2
NET_META=169.254.169.254
NET_META6=fd00:ec2::254
NET_META_ALT=100.100.100.200
NET_LOG_HOSTA=/tmp/hosta.log
NET_LOG_HOSTB=/tmp/hostb.log
NET_LOG_META=/tmp/meta.log
NET_LOG_LO=/tmp/lo.log
NET_LOG_DNS=/tmp/dns.log

# testdns' table.  rebind6, private6 and meta6 are the IPv6 twins of
# rebind, private and meta; servfail, refused and drop answer SERVFAIL,
# REFUSED and nothing at all; short answers with a TTL of 1 s.
NET_DNS_TABLE="allowed.example=192.0.2.2,2001:db8:a::2/60
short.example=192.0.2.2/1
alias.example=cname:allowed.example
rebind.example=127.0.0.1
rebind6.example=::1
private.example=10.1.2.3
private6.example=fd00:1::3
meta.example=169.254.169.254
meta6.example=fd00:ec2::254
meta-alt.example=100.100.100.200
other.example=198.51.100.2,2001:db8:b::2
alias-other.example=cname:other.example
servfail.example=rcode:SERVFAIL
refused.example=rcode:REFUSED
drop.example=drop"

net_in() {
	_ns=$1
	shift
	nsenter -t "$(cat "$NET_RUN/$_ns.ns")" -n "$@"
}

net_clear_logs() {
	for _log in "$NET_LOG_HOSTA" "$NET_LOG_HOSTB" "$NET_LOG_META" "$NET_LOG_LO" "$NET_LOG_DNS"; do
		: > "$_log"
	done
}

net_log_empty() {
	[ ! -s "$1" ]
}

net_wait_log() {
	_n=${3:-30}
	while [ "$_n" -gt 0 ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	grep -q -- "$2" "$1" 2>/dev/null
}

net_ifstat() {
	cat "/sys/class/net/$1/statistics/$2"
}

_net_err() {
	echo "netlib: $*" >&2
	return 1
}

# _net_ns NAME: a network namespace held by a sleeping process; its pid
# goes to $NET_RUN/NAME.ns.  IPv6 DAD is switched off before any interface
# arrives, so no address is ever tentative for long.
_net_ns() {
	# no inherited stdio: "sh suite.sh | tail" must not wait for it
	unshare -n sleep 2147483647 </dev/null >/dev/null 2>&1 &
	_pid=$!
	_n=50
	# unshare(2) may not have happened yet: wait for the new namespace
	while [ "$(readlink /proc/$_pid/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || { _net_err "namespace $1 did not appear"; return 1; }
		sleep 0.1
	done
	echo "$_pid" > "$NET_RUN/$1.ns"
	net_in "$1" sysctl -q -w net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 >/dev/null &&
		net_in "$1" ip link set lo up
}

# _net_veth ROOTIF NS: a veth pair, ROOTIF in the root namespace and eth0
# in NS, both up.  busybox ip ignores "peer name", so the peer (vethN) is
# found by the ifindex ROOTIF names as its link.
_net_veth() {
	ip link add name "$1" type veth || return 1
	_peer_idx=$(cat "/sys/class/net/$1/iflink")
	_peer=
	for _d in /sys/class/net/*; do
		[ "$(cat "$_d/ifindex")" = "$_peer_idx" ] && _peer=${_d##*/}
	done
	[ -n "$_peer" ] || { _net_err "no peer for $1"; return 1; }
	sysctl -q -w "net.ipv6.conf.$1.accept_dad=0" >/dev/null
	ip link set dev "$_peer" netns "$(cat "$NET_RUN/$2.ns")" &&
		net_in "$2" ip link set dev "$_peer" name eth0 &&
		net_in "$2" ip link set dev eth0 up &&
		ip link set dev "$1" up
}

# _net_addrs NS ROOTIF ROOT4/LEN ROOT6/LEN NS4/LEN NS6/LEN: addresses and
# the namespace's default routes back to the root side.
_net_addrs() {
	ip addr add "$3" dev "$2" &&
		ip addr add "$4" dev "$2" &&
		net_in "$1" ip addr add "$5" dev eth0 &&
		net_in "$1" ip addr add "$6" dev eth0 &&
		net_in "$1" ip route add default via "${3%/*}" &&
		net_in "$1" ip -6 route add default via "${4%/*}"
}

# _net_sink NS|- ADDR PORT LOG: a netsink in the background, pid recorded.
_net_sink() {
	if [ "$1" = - ]; then
		_pid=$("$BIN/netsink" -d "$2" "$3" "$4")
	else
		_pid=$(net_in "$1" "$BIN/netsink" -d "$2" "$3" "$4")
	fi
	[ -n "$_pid" ] || { _net_err "netsink $2 $3 did not start"; return 1; }
	echo "$_pid" >> "$NET_RUN/servers"
}

_net_dns() {
	# shellcheck disable=SC2086 # one table entry per word
	_pid=$(net_in hosta "$BIN/testdns" -d "$1" 53 "$NET_LOG_DNS" $NET_DNS_TABLE)
	[ -n "$_pid" ] || { _net_err "testdns $1 did not start"; return 1; }
	echo "$_pid" >> "$NET_RUN/servers"
}

# No tentative IPv6 address left in the root namespace or in NS... (5 s).
_net_wait_dad() {
	_n=50
	while [ "$_n" -gt 0 ]; do
		_busy=
		ip -6 addr | grep -q tentative && _busy=1
		for _ns in "$@"; do
			net_in "$_ns" ip -6 addr | grep -q tentative && _busy=1
		done
		[ -z "$_busy" ] && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	_net_err "IPv6 addresses still tentative"
}

_net_etc() {
	for _f in resolv.conf hosts nsswitch.conf; do
		[ -e "/etc/$_f" ] && [ ! -e "$NET_RUN/orig.$_f" ] && cp "/etc/$_f" "$NET_RUN/orig.$_f"
	done
	printf 'nameserver 192.0.2.53\noptions timeout:2 attempts:2\n' > /etc/resolv.conf
	cat > /etc/hosts <<'EOT'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
192.0.2.2	hosta.hosts.example
198.51.100.2	hostb.hosts.example
EOT
	printf 'hosts: files dns\n' > /etc/nsswitch.conf
}

_net_alive() {
	for _ns in hosta hostb meta; do
		[ -f "$NET_RUN/$_ns.ns" ] && kill -0 "$(cat "$NET_RUN/$_ns.ns")" 2>/dev/null || return 1
	done
}

net_setup() {
	if [ -f "$NET_RUN/ready" ] && _net_alive; then
		return 0
	fi
	net_teardown
	mkdir -p "$NET_RUN"
	sysctl -q -w net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv4.tcp_fastopen=3 net.ipv4.ping_group_range="0 2147483647" >/dev/null ||
		{ _net_err "root sysctls"; return 1; }
	[ -d /sys/module/veth ] || { _net_err "no veth module: boot with --module veth"; return 1; }

	_net_ns hosta && _net_ns hostb && _net_ns meta || return 1
	_net_veth vhosta hosta && _net_veth vhostb hostb && _net_veth vmeta meta || return 1
	_net_addrs hosta vhosta 192.0.2.1/24 2001:db8:a::1/64 192.0.2.2/24 2001:db8:a::2/64 &&
		net_in hosta ip addr add 192.0.2.53/24 dev eth0 &&
		net_in hosta ip addr add 2001:db8:a::53/64 dev eth0 &&
		_net_addrs hostb vhostb 198.51.100.1/24 2001:db8:b::1/64 198.51.100.2/24 2001:db8:b::2/64 &&
		_net_addrs meta vmeta 169.254.0.1/16 fd00:ec2::1/64 169.254.169.254/16 fd00:ec2::254/64 ||
		{ _net_err "addresses"; return 1; }
	# the other metadata address (Alibaba's 100.100.100.200) on a dummy link
	net_in meta ip link add name imds type dummy &&
		net_in meta ip addr add 100.100.100.200/32 dev imds &&
		net_in meta ip link set dev imds up &&
		ip route add 100.100.100.200/32 via 169.254.169.254 ||
		{ _net_err "meta dummy"; return 1; }

	net_in hosta sysctl -q -w net.ipv4.tcp_fastopen=3 \
		net.ipv4.conf.all.accept_source_route=1 net.ipv4.conf.eth0.accept_source_route=1 \
		net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.eth0.seg6_enabled=1 >/dev/null &&
		net_in hostb sysctl -q -w net.ipv4.tcp_fastopen=3 >/dev/null ||
		{ _net_err "namespace sysctls"; return 1; }
	_net_wait_dad hosta hostb meta || return 1

	net_clear_logs
	: > "$NET_RUN/servers"
	for _a in $NET_HOSTA $NET_HOSTA6; do
		for _p in 80 443 8080 9000; do
			_net_sink hosta "$_a" "$_p" "$NET_LOG_HOSTA" || return 1
		done
	done
	for _a in $NET_HOSTB $NET_HOSTB6; do
		for _p in 80 443 9000; do
			_net_sink hostb "$_a" "$_p" "$NET_LOG_HOSTB" || return 1
		done
	done
	for _a in $NET_META $NET_META6 $NET_META_ALT; do
		_net_sink meta "$_a" 80 "$NET_LOG_META" || return 1
	done
	_net_sink - 127.0.0.1 7000 "$NET_LOG_LO" && _net_sink - ::1 7000 "$NET_LOG_LO" || return 1
	_net_dns "$NET_DNS" && _net_dns "$NET_DNS6" || return 1
	_net_etc
	touch "$NET_RUN/ready"
}

net_teardown() {
	[ -d "$NET_RUN" ] || return 0
	rm -f "$NET_RUN/ready"
	if [ -f "$NET_RUN/servers" ]; then
		while read -r _pid; do
			kill "$_pid" 2>/dev/null
		done < "$NET_RUN/servers"
	fi
	# deleting the root end deletes the pair at once; the namespaces go
	# with their holders
	for _if in vhosta vhostb vmeta; do
		[ -e "/sys/class/net/$_if" ] && ip link del dev "$_if"
	done
	for _ns in hosta hostb meta; do
		[ -f "$NET_RUN/$_ns.ns" ] && kill "$(cat "$NET_RUN/$_ns.ns")" 2>/dev/null
	done
	for _f in resolv.conf hosts nsswitch.conf; do
		if [ -e "$NET_RUN/orig.$_f" ]; then
			mv "$NET_RUN/orig.$_f" "/etc/$_f"
		else
			rm -f "/etc/$_f"
		fi
	done
	rm -rf "$NET_RUN"
}
