// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/audit.h"
#include "runtime/dnsproxy.h"

static int sb_grow(struct strbuf *sb, size_t extra)
{
	size_t cap;
	char *p;

	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	p = realloc(sb->data, cap);
	if (!p)
		return -ENOMEM;
	sb->data = p;
	sb->cap = cap;
	return 0;
}

int sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (sb_grow(sb, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->data);
	*sb = (struct strbuf){ 0 };
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int sb_json_string(struct strbuf *sb, const char *str, size_t max_len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strnlen(str, max_len), i = 0, n;
	int r = 0;

	r |= sb_printf(sb, "\"");
	while (i < len && !r) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			r |= sb_printf(sb, "\\%c", c);
			i++;
		} else if (c == '\n') {
			r |= sb_printf(sb, "\\n");
			i++;
		} else if (c == '\t') {
			r |= sb_printf(sb, "\\t");
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			r |= sb_printf(sb, "\\u%04x", c);
			i++;
		} else if ((n = utf8_seq_len(s + i, len - i)) == 0) {
			/* Keep the byte visible rather than emit invalid JSON. */
			r |= sb_printf(sb, "\\u%04x", c);
			i++;
		} else {
			r |= sb_printf(sb, "%.*s", (int)n, (const char *)s + i);
			i += n;
		}
	}
	r |= sb_printf(sb, "\"");
	return r ? -ENOMEM : 0;
}

const char *audit_fs_op_name(uint32_t op)
{
	static const char *const names[] = {
		[TETHER_FS_OPEN_WRITE] = "open_write", [TETHER_FS_CREATE] = "create",
		[TETHER_FS_UNLINK] = "unlink",	       [TETHER_FS_MKDIR] = "mkdir",
		[TETHER_FS_RMDIR] = "rmdir",	       [TETHER_FS_RENAME] = "rename",
		[TETHER_FS_LINK] = "link",	       [TETHER_FS_SYMLINK] = "symlink",
		[TETHER_FS_TRUNCATE] = "truncate",     [TETHER_FS_CHMOD] = "chmod",
		[TETHER_FS_CHOWN] = "chown",	       [TETHER_FS_MOUNT] = "mount",
		[TETHER_FS_UMOUNT] = "umount",	       [TETHER_FS_PIVOT_ROOT] = "pivot_root",
		[TETHER_FS_MOVE_MOUNT] = "move_mount", [TETHER_FS_SETXATTR] = "setxattr",
		[TETHER_FS_REMOVEXATTR] = "removexattr", [TETHER_FS_UTIMES] = "utimes",
		[TETHER_FS_SET_ACL] = "set_acl",	       [TETHER_FS_REMOVE_ACL] = "remove_acl",
		[TETHER_FS_IOCTL] = "ioctl",	       [TETHER_FS_TTY_INJECT] = "tty_inject",
		[TETHER_FS_CLONE_INTO_CGROUP] = "clone_into_cgroup",
		[TETHER_FS_MKNOD_DEVICE] = "mknod_device",
		[TETHER_FS_OPEN_DEVICE] = "open_device",    [TETHER_FS_PTRACE] = "ptrace",
		[TETHER_FS_UNIX_CONNECT] = "unix_connect", [TETHER_FS_UNIX_SEND] = "unix_send",
		[TETHER_FS_BPF] = "bpf",		       [TETHER_FS_KERNEL_LOAD] = "kernel_load",
		[TETHER_FS_MODULE_REQUEST] = "module_request", [TETHER_FS_SIGNAL] = "signal",
		[TETHER_FS_OPEN_READ] = "open_read",	       [TETHER_FS_EXEC] = "exec",
		[TETHER_FS_MMAP_EXEC] = "mmap_exec",
		[TETHER_FS_MPROTECT_EXEC] = "mprotect_exec",
		[TETHER_FS_SOCKET_CREATE] = "socket_create",
		[TETHER_FS_CAPABILITY] = "capability",
		[TETHER_FS_USERNS] = "userns_create",	       [TETHER_FS_PERF_EVENT] = "perf_event_open",
		[TETHER_FS_SYSLOG] = "syslog",		       [TETHER_FS_SETTIME] = "settime",
		[TETHER_FS_KEY] = "keyctl",		       [TETHER_FS_TASK_CONTROL] = "task_control",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "unknown";
}

const char *audit_errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case ENOENT:
		return "ENOENT";
	default:
		return "E?";
	}
}

static const char *reason_name(uint32_t reason)
{
	switch (reason) {
	case TETHER_REASON_RULE:
		return "rule";
	case TETHER_REASON_DEFAULT_DENY:
		return "default_deny";
	case TETHER_REASON_UNRESOLVED:
		return "unresolved_path";
	case TETHER_REASON_FORBIDDEN:
		return "forbidden";
	case TETHER_REASON_PROTECTED:
		return "protected";
	case TETHER_REASON_EXPIRED:
		return "dns_expired";
	case TETHER_REASON_BUDGET:
		return "budget_exhausted";
	case TETHER_REASON_DNS_PROXY:
		return "dns_proxy";
	default:
		return "unknown";
	}
}

static const char *decision_name(uint32_t decision)
{
	switch (decision) {
	case TETHER_DECISION_ALLOW:
		return "allow";
	case TETHER_DECISION_DENY:
		return "deny";
	case TETHER_DECISION_WOULD_DENY:
		return "would_deny";
	default:
		return "unknown";
	}
}

void audit_format_time(uint64_t mono_ns, char *buf, size_t size)
{
	struct timespec mono, real;
	int64_t delta, real_ns;
	time_t secs;
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	delta = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec - (int64_t)mono_ns;
	real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - delta;
	secs = (time_t)(real_ns / 1000000000);
	gmtime_r(&secs, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)((real_ns % 1000000000) / 1000));
}

/* {"seq":N,"time":"...","run_id":"...","kind":"KIND" */
static int begin_record(struct strbuf *out, const struct tether_event_hdr *hdr,
			const struct audit_stream *st, const char *kind)
{
	char when[64];
	int r = 0;

	audit_format_time(hdr->ts_ns, when, sizeof(when));
	r |= sb_printf(out, "{\"seq\":%llu,\"time\":\"%s\",\"run_id\":",
		       (unsigned long long)hdr->seq, when);
	r |= sb_json_string(out, st->run_id, 256);
	r |= sb_printf(out, ",\"kind\":\"%s\"", kind);
	return r;
}

const char *audit_capability_name(const char *number, char *buf, size_t size)
{
	static const char *const names[] = {
		"chown",	  "dac_override",    "dac_read_search", "fowner",
		"fsetid",	  "kill",	     "setgid",		"setuid",
		"setpcap",	  "linux_immutable", "net_bind_service", "net_broadcast",
		"net_admin",	  "net_raw",	     "ipc_lock",	"ipc_owner",
		"sys_module",	  "sys_rawio",	     "sys_chroot",	"sys_ptrace",
		"sys_pacct",	  "sys_admin",	     "sys_boot",	"sys_nice",
		"sys_resource",	  "sys_time",	     "sys_tty_config",	"mknod",
		"lease",	  "audit_write",     "audit_control",	"setfcap",
		"mac_override",	  "mac_admin",	     "syslog",		"wake_alarm",
		"block_suspend",  "audit_read",	     "perfmon",		"bpf",
		"checkpoint_restore",
	};
	unsigned long cap;
	char *end;

	if (number[0] < '0' || number[0] > '9')
		return number;	/* not a number: a record of an older tether, already a name */
	errno = 0;
	cap = strtoul(number, &end, 10);
	if (*end || errno)
		return number;
	if (cap < sizeof(names) / sizeof(names[0]))
		snprintf(buf, size, "cap_%s", names[cap]);
	else
		snprintf(buf, size, "cap_%lu", cap);	/* newer than this table */
	return buf;
}

/*
 * The name each kind is written with (record version 2, docs/audit.md).
 * Every kernel kind but NET has the fs body; NET_SOCKET is BPF-LSM's
 * socket_create, a net concern with an fs body.
 */
static const char *const kind_names[] = {
	[TETHER_EVENT_FS] = "fs",		[TETHER_EVENT_NET] = "net",
	[TETHER_EVENT_PROC] = "proc",		[TETHER_EVENT_CAPABILITY] = "capability",
	[TETHER_EVENT_KERNEL] = "kernel",	[TETHER_EVENT_UNIX] = "unix",
	[TETHER_EVENT_NET_SOCKET] = "net",	[TETHER_EVENT_DNS] = "dns",
	[TETHER_EVENT_RUN] = "run",
};

static int format_fs(const struct tether_fs_event *ev, const struct audit_stream *st,
		     struct strbuf *out)
{
	int r = begin_record(out, &ev->hdr, st, kind_names[ev->hdr.kind]);

	r |= sb_printf(out, ",\"op\":\"%s\",\"path\":", audit_fs_op_name(ev->op));
	if (ev->op == TETHER_FS_CAPABILITY) {
		char number[sizeof(ev->path)], name[64];
		const char *cap;

		/* the kernel wrote the number: a name per capability would crowd its .rodata */
		memcpy(number, ev->path, sizeof(number));
		number[sizeof(number) - 1] = 0;
		cap = audit_capability_name(number, name, sizeof(name));
		r |= sb_json_string(out, cap, strlen(cap));
	} else if ((ev->flags & TETHER_FS_PATH_BELOW_RULE) && ev->rule_id < st->rule_count &&
	    st->rule_paths[ev->rule_id]) {
		/* the kernel named the part below the rule's root: put the root back in front */
		struct strbuf full = { 0 };
		const char *root = st->rule_paths[ev->rule_id];

		/* "/" followed by "/a" would double the slash */
		r |= sb_printf(&full, "%s%.*s", strcmp(root, "/") ? root : "",
			       (int)strnlen(ev->path, sizeof(ev->path)), ev->path);
		r |= sb_json_string(out, full.len ? full.data : "/", full.len ? full.len : 1);
		sb_free(&full);
	} else {
		r |= sb_json_string(out, ev->path, sizeof(ev->path));
	}
	if (ev->flags & TETHER_FS_PATH_TRUNCATED)
		r |= sb_printf(out, ",\"path_truncated\":true");
	if (ev->flags & TETHER_FS_PATH_FS_RELATIVE)
		r |= sb_printf(out, ",\"path_scope\":\"filesystem\"");
	if (ev->access & TETHER_ACCESS_ALL) {
		static const struct {
			uint32_t bit;
			const char *name;
		} rights[] = {
			{ TETHER_ACCESS_READ, "read" },
			{ TETHER_ACCESS_WRITE, "write" },
			{ TETHER_ACCESS_EXEC, "exec" },
			{ TETHER_ACCESS_CONNECT, "connect" },
		};
		const char *sep = "";

		r |= sb_printf(out, ",\"access\":\"");
		for (size_t i = 0; i < sizeof(rights) / sizeof(rights[0]); i++) {
			if (ev->access & rights[i].bit) {
				r |= sb_printf(out, "%s%s", sep, rights[i].name);
				sep = ",";
			}
		}
		r |= sb_printf(out, "\"");
	}
	r |= sb_printf(out, ",\"decision\":\"%s\"", decision_name(ev->decision));
	if (ev->err)
		r |= sb_printf(out, ",\"errno\":\"%s\"", audit_errno_name(ev->err));
	r |= sb_printf(out, ",\"reason\":\"%s\"", reason_name(ev->reason));
	if (ev->reason == TETHER_REASON_RULE ||
	    (ev->reason == TETHER_REASON_PROTECTED && ev->rule_id != TETHER_RULE_NONE)) {
		r |= sb_printf(out, ",\"rule\":%u", ev->rule_id);
		if (ev->rule_id < st->rule_count && st->rule_paths[ev->rule_id]) {
			r |= sb_printf(out, ",\"rule_path\":");
			r |= sb_json_string(out, st->rule_paths[ev->rule_id], 4096);
		}
	}
	r |= sb_printf(out, ",\"pid\":%u,\"tgid\":%u,\"uid\":%u,\"comm\":", ev->hdr.pid,
		       ev->hdr.tgid, ev->uid);
	r |= sb_json_string(out, ev->comm, sizeof(ev->comm));
	r |= sb_printf(out, ",\"exe\":");
	r |= sb_json_string(out, ev->exe, sizeof(ev->exe));
	r |= sb_printf(out, ",\"cgroup_id\":%llu}", (unsigned long long)ev->hdr.cgroup_id);
	return r ? -ENOMEM : 0;
}

const char *audit_net_op_name(uint32_t op)
{
	switch (op) {
	case TETHER_NET_CONNECT:
		return "connect";
	case TETHER_NET_SENDMSG:
		return "sendmsg";
	case TETHER_NET_PACKET:
		return "packet";
	case TETHER_NET_EGRESS_BUDGET:
		return "egress_budget";
	case TETHER_NET_SOCKET_CREATE:
		return "socket_create";
	case TETHER_NET_BIND:
		return "bind";
	case TETHER_NET_SETSOCKOPT:
		return "setsockopt";
	default:
		return "unknown";
	}
}

void audit_format_addr(const uint8_t addr[16], char *buf, size_t size)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!inet_ntop(memcmp(addr, mapped, 12) ? AF_INET6 : AF_INET,
		       memcmp(addr, mapped, 12) ? addr : addr + 12, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

static const char *protocol_name(uint32_t protocol, char *buf, size_t size)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		snprintf(buf, size, "%u", protocol);
		return buf;
	}
}

static int format_net(const struct tether_net_event *ev, const struct audit_stream *st,
		      struct strbuf *out)
{
	char addr[64], proto[16];
	int r = begin_record(out, &ev->hdr, st, "net");

	r |= sb_printf(out, ",\"op\":\"%s\"", audit_net_op_name(ev->op));
	if (ev->op == TETHER_NET_SOCKET_CREATE) {
		r |= sb_printf(out, ",\"family\":%u,\"type\":%u,\"protocol\":%u", ev->family,
			       ev->type, ev->protocol);
	} else if (ev->op == TETHER_NET_SETSOCKOPT) {
		r |= sb_printf(out, ",\"level\":%u,\"optname\":%u", ev->protocol, ev->port);
	} else {
		audit_format_addr(ev->addr, addr, sizeof(addr));
		r |= sb_printf(out, ",\"family\":\"%s\",\"protocol\":\"%s\",\"address\":\"%s\","
			       "\"port\":%u",
			       ev->family == 10 ? "inet6" : ev->family == 2 ? "inet" : "other",
			       protocol_name(ev->protocol, proto, sizeof(proto)), addr, ev->port);
	}
	if (ev->flags & TETHER_NET_DNS_REDIRECTED)
		r |= sb_printf(out, ",\"dns_redirected\":true");
	if (ev->op == TETHER_NET_EGRESS_BUDGET || ev->op == TETHER_NET_PACKET)
		r |= sb_printf(out, ",\"bytes\":%llu", (unsigned long long)ev->bytes);
	r |= sb_printf(out, ",\"decision\":\"%s\"", decision_name(ev->decision));
	if (ev->err)
		r |= sb_printf(out, ",\"errno\":\"%s\"", audit_errno_name(ev->err));
	r |= sb_printf(out, ",\"reason\":\"%s\"", reason_name(ev->reason));
	if (ev->rule_id != TETHER_RULE_NONE) {
		uint32_t i = ev->rule_id & ~TETHER_NET_RULE_HOST;

		if (ev->rule_id & TETHER_NET_RULE_HOST) {
			r |= sb_printf(out, ",\"host_rule\":%u", i);
			if (i < st->host_rule_count) {
				r |= sb_printf(out, ",\"host\":");
				r |= sb_json_string(out, st->host_rule_names[i], 512);
			}
		} else {
			r |= sb_printf(out, ",\"rule\":%u", i);
			if (i < st->net_rule_count) {
				r |= sb_printf(out, ",\"rule_destination\":");
				r |= sb_json_string(out, st->net_rule_names[i], 128);
			}
		}
	}
	/* packet records have no task: see struct tether_net_event */
	if (ev->op != TETHER_NET_PACKET && ev->op != TETHER_NET_EGRESS_BUDGET) {
		r |= sb_printf(out, ",\"pid\":%u,\"tgid\":%u,\"uid\":%u,\"comm\":", ev->hdr.pid,
			       ev->hdr.tgid, ev->uid);
		r |= sb_json_string(out, ev->comm, sizeof(ev->comm));
	}
	r |= sb_printf(out, ",\"cgroup_id\":%llu}", (unsigned long long)ev->hdr.cgroup_id);
	return r ? -ENOMEM : 0;
}

int audit_format_record(const void *data, size_t size, const struct audit_stream *st,
			struct strbuf *out)
{
	const struct tether_event_hdr *hdr = data;

	if (size < sizeof(*hdr) || hdr->size > size)
		return -EBADMSG;
	switch (hdr->kind) {
	case TETHER_EVENT_FS:
	case TETHER_EVENT_PROC:
	case TETHER_EVENT_CAPABILITY:
	case TETHER_EVENT_KERNEL:
	case TETHER_EVENT_UNIX:
	case TETHER_EVENT_NET_SOCKET:
		if (hdr->size != sizeof(struct tether_fs_event))
			return -EBADMSG;
		return format_fs(data, st, out);
	case TETHER_EVENT_NET:
		if (hdr->size != sizeof(struct tether_net_event))
			return -EBADMSG;
		return format_net(data, st, out);
	default:
		return -EBADMSG;
	}
}

static void emit_line(struct audit_stream *st, struct strbuf *sb)
{
	if (fprintf(st->out, "%.*s\n", (int)sb->len, sb->data) < 0 || fflush(st->out) != 0) {
		if (!st->write_error)
			st->write_error = errno ? errno : EIO;
	}
}

int audit_handle_record(void *ctx, void *data, size_t size)
{
	const struct tether_event_hdr *hdr = data;
	struct audit_stream *st = ctx;
	struct strbuf sb = { 0 };

	if (audit_format_record(data, size, st, &sb) == 0) {
		if (hdr->kind == TETHER_EVENT_NET &&
		    ((const struct tether_net_event *)data)->op == TETHER_NET_EGRESS_BUDGET)
			st->egress_exhausted = true;
		emit_line(st, &sb);
		st->records++;
		if (hdr->seq > st->max_seq)
			st->max_seq = hdr->seq;
	} else {
		st->malformed++;
	}
	sb_free(&sb);
	return 0;
}

int audit_write_run_event(struct audit_stream *st, const char *event, const char *extra_json)
{
	struct timespec mono;
	struct strbuf sb = { 0 };
	char when[64];
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	audit_format_time((uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec, when,
			  sizeof(when));
	r |= sb_printf(&sb, "{\"time\":\"%s\",\"run_id\":", when);
	r |= sb_json_string(&sb, st->run_id, 256);
	r |= sb_printf(&sb, ",\"kind\":\"run\",\"event\":\"%s\"", event);
	if (extra_json)
		r |= sb_printf(&sb, ",%s", extra_json);
	r |= sb_printf(&sb, "}");
	if (!r)
		emit_line(st, &sb);
	sb_free(&sb);
	return r ? -ENOMEM : 0;
}

static const char *rcode_name(uint8_t rcode)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED" };

	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : "OTHER";
}

int audit_write_dns_event(struct audit_stream *st, const struct dns_event *ev)
{
	static const char *const reasons[] = {
		[DNS_EV_ALLOWED] = "listed",
		[DNS_EV_REFUSED_NAME] = "not_listed",
		[DNS_EV_REFUSED_ANSWER] = "rebinding",
		[DNS_EV_UPSTREAM_FAILED] = "upstream_failed",
		[DNS_EV_MALFORMED] = "malformed",
		[DNS_EV_REFUSED_TYPE] = "type_refused",
	};
	struct timespec mono;
	struct strbuf sb = { 0 };
	char when[64], addr[64];
	const char *type = dns_type_name(ev->qtype);
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	audit_format_time((uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec, when,
			  sizeof(when));
	r |= sb_printf(&sb, "{\"time\":\"%s\",\"run_id\":", when);
	r |= sb_json_string(&sb, st->run_id, 256);
	r |= sb_printf(&sb, ",\"kind\":\"dns\",\"name\":");
	/* names only, never payloads: a name the parser could not read is left out */
	if (ev->name)
		r |= sb_json_string(&sb, ev->name, 256);
	else
		r |= sb_printf(&sb, "null");
	if (type)
		r |= sb_printf(&sb, ",\"qtype\":\"%s\"", type);
	else
		r |= sb_printf(&sb, ",\"qtype\":%u", ev->qtype);
	r |= sb_printf(&sb, ",\"transport\":\"%s\",\"decision\":\"%s\",\"reason\":\"%s\","
		       "\"rcode\":\"%s\"",
		       ev->transport == IPPROTO_TCP ? "tcp" : "udp",
		       ev->kind == DNS_EV_ALLOWED ? "allow" : "deny",
		       (size_t)ev->kind < sizeof(reasons) / sizeof(reasons[0]) ? reasons[ev->kind]
									     : "unknown",
		       rcode_name(ev->rcode));
	if (ev->kind == DNS_EV_ALLOWED) {
		r |= sb_printf(&sb, ",\"answers\":[");
		for (size_t i = 0; i < ev->addr_count; i++) {
			audit_format_addr(ev->addrs[i].addr, addr, sizeof(addr));
			r |= sb_printf(&sb, "%s{\"address\":\"%s\",\"ttl\":%u}", i ? "," : "", addr,
				       ev->addrs[i].ttl);
		}
		r |= sb_printf(&sb, "]");
	}
	if (ev->kind == DNS_EV_REFUSED_ANSWER && ev->refused_addr) {
		audit_format_addr(ev->refused_addr, addr, sizeof(addr));
		r |= sb_printf(&sb, ",\"refused_address\":\"%s\",\"refused_class\":\"%s\"", addr,
			       dns_addr_class_name(ev->refused_class));
	}
	if (ev->suspected_tunnel)
		r |= sb_printf(&sb, ",\"suspected_tunnel\":true");
	r |= sb_printf(&sb, "}");
	if (!r)
		emit_line(st, &sb);
	sb_free(&sb);
	return r ? -ENOMEM : 0;
}
