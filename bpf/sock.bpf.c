// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets (BPF-LSM): which socket families a run may create (the allow list
 * of bpf/lib/socket.h, which net.bpf.c's cgroup/sock_create shares) and which
 * unix peers it may reach.  An object of its own, and LSM-only: net.bpf.c
 * must load on kernels that refuse BPF-LSM programs.  Records: kind "net"
 * (socket_create, fs body) and "unix".
 */
#include "bpf/lib/decide.h"
#include "bpf/lib/socket.h"

SEC("lsm/socket_create")
int BPF_PROG(tether_socket_create, int family, int type, int protocol, int kern, int ret)
{
	static const char fmt[] = "%d/%d/%d";
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 args[3], cgid;

	if (ret)
		return ret;
	if (kern || allowed_socket(family, type, protocol))
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	ev = reserve_fs_event(run, cgid, TETHER_FS_SOCKET_CREATE, -EPERM, TETHER_REASON_FORBIDDEN,
			      0, 0, 0);
	if (!ev)
		return -EPERM;
	args[0] = family;
	args[1] = type;
	args[2] = protocol;
	bpf_snprintf(ev->path, sizeof(ev->path), fmt, args, sizeof(args));
	submit_fs_event(ev);
	return -EPERM;
}

/*
 * Unix sockets.  A connection is authority borrowed from whoever listens: a
 * host daemon (dbus, systemd, docker) would act for the run outside it.  A
 * run may reach the sockets its own processes created, and sockets bound
 * where a rule grants CONNECT (filesystem.connect only: a daemon's socket in
 * a writable /tmp is still the daemon's), and abstract names it lists
 * (filesystem.abstract_sockets).
 */
#define SUN_FAMILY_BYTES	2

/*
 * An abstract name (sun_path starting with NUL) is reachable when the run
 * lists it.  The record names it as tools do: "@" and the name.
 */
static __always_inline int check_abstract_peer(struct tether_run *run, __u64 cgid, __u32 op,
					       struct unix_sock *peer)
{
	struct unix_address *addr = BPF_CORE_READ(peer, addr);
	struct tether_abstract_key key = { .run_slot = run->run_slot };
	struct tether_fs_event *ev;
	const char *name;
	__u32 len;

	if (!addr)
		return deny_forbidden(run, cgid, op, -EACCES);	/* unnamed: nothing to list */
	/* sun_family, then the leading NUL, then the name */
	len = BPF_CORE_READ(addr, len) - SUN_FAMILY_BYTES - 1;
	if (len == 0 || len > TETHER_ABSTRACT_NAME_MAX)
		return deny_forbidden(run, cgid, op, -EACCES);
	name = (const char *)addr + bpf_core_field_offset(struct unix_address, name) +
	       SUN_FAMILY_BYTES + 1;
	key.len = len;
	if (bpf_probe_read_kernel(key.name, BOUNDED(len, 0x7f), name))
		return deny_forbidden(run, cgid, op, -EACCES);
	if (bpf_map_lookup_elem(&abstract_sockets, &key))
		return 0;
	ev = reserve_fs_event(run, cgid, op, -EACCES, TETHER_REASON_DEFAULT_DENY, 0,
			      TETHER_ACCESS_CONNECT, FS_HARD_DENY);
	if (ev) {
		ev->path[0] = '@';
		bpf_probe_read_kernel(&ev->path[1], BOUNDED(len, 0x7f), key.name);
		ev->path[BOUNDED(len + 1, 0xff)] = 0;
		submit_fs_event(ev);
	}
	return verdict(run, TETHER_REASON_DEFAULT_DENY, FS_HARD_DENY, -EACCES);
}

static __always_inline int check_unix_peer(__u32 op, struct sock *other)
{
	struct unix_sock *peer = (struct unix_sock *)other;
	struct tether_run *run;
	struct dentry *dentry;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run || !other)
		return 0;
	if (BPF_CORE_READ(other, sk_cgrp_data.cgroup, kn, id) == cgid)
		return 0;
	dentry = BPF_CORE_READ(peer, path.dentry);
	if (!dentry)
		return check_abstract_peer(run, cgid, op, peer);
	return decide(run, cgid, op, BPF_CORE_READ(peer, path.mnt), dentry, MATCH_PEER,
		      TETHER_ACCESS_CONNECT, -EACCES);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(tether_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret)
		return ret;
	return check_unix_peer(TETHER_FS_UNIX_CONNECT, other);
}

SEC("lsm/unix_may_send")
int BPF_PROG(tether_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return check_unix_peer(TETHER_FS_UNIX_SEND, BPF_CORE_READ(other, sk));
}
