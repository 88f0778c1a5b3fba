// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel records into typed records (runtime/record.h): the layout checks,
 * the names of the values, and what only the run knows (rule paths,
 * destinations).  No text is made here but the parts of a record that need
 * the run's context to exist at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/json.h"
#include "runtime/record.h"

const char *record_fs_op_name(uint32_t op)
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
		[TETHER_FS_ANON_INODE] = "anon_inode",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "unknown";
}

const char *record_errno_name(int err)
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

const char *record_reason_name(uint32_t reason)
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
	case TETHER_REASON_OWN_SOCKET:
		return "own_socket";
	case TETHER_REASON_NO_LISTENER:
		return "no_listener";
	case TETHER_REASON_PERMISSION:
		return "permission";
	default:
		return "unknown";
	}
}

const char *record_decision_name(uint32_t decision)
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

const char *record_capability_name(const char *number, char *buf, size_t size)
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

const char *record_net_op_name(uint32_t op)
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
	case TETHER_NET_INGRESS:
		return "ingress";
	default:
		return "unknown";
	}
}

/*
 * The path a record names.  The kernel writes a capability's number (a name
 * per capability would crowd its .rodata), and for a hook decided below a
 * rule's root only the part below it: the decoder puts the name, or the
 * root, back.
 */
static void decode_fs_path(const struct tether_fs_event *ev, const struct record_names *names,
			   struct record_scratch *scratch, struct record_fs *fs)
{
	size_t len = strnlen(ev->path, sizeof(ev->path));

	fs->path = ev->path;
	fs->path_len = len;
	if (ev->op == TETHER_FS_CAPABILITY) {
		char number[sizeof(ev->path)];

		memcpy(number, ev->path, len);
		number[len < sizeof(number) ? len : sizeof(number) - 1] = 0;
		fs->path = record_capability_name(number, scratch->text, sizeof(scratch->text));
		if (fs->path != scratch->text) {
			/* not a number: shown as it came, cut to what the copy held */
			fs->path = ev->path;
			fs->path_len = strlen(number);
			return;
		}
		fs->path_len = strlen(fs->path);
	} else if ((ev->flags & TETHER_FS_PATH_BELOW_RULE) && ev->rule_id < names->rule_count &&
		   names->rule_paths[ev->rule_id]) {
		const char *root = names->rule_paths[ev->rule_id];
		int n;

		/* "/" followed by "/a" would double the slash */
		n = snprintf(scratch->text, sizeof(scratch->text), "%s%.*s",
			     strcmp(root, "/") ? root : "", (int)len, ev->path);
		if (n <= 0) {
			n = snprintf(scratch->text, sizeof(scratch->text), "/");
		} else if ((size_t)n >= sizeof(scratch->text)) {
			n = (int)sizeof(scratch->text) - 1;
		}
		fs->path = scratch->text;
		fs->path_len = (size_t)n;
	}
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

static void decode_fs(const struct tether_fs_event *ev, const struct record_names *names,
		      struct record_scratch *scratch, struct record_fs *fs)
{
	*fs = (struct record_fs){
		.kind = "fs",
		.op = record_fs_op_name(ev->op),
		.path_truncated = ev->flags & TETHER_FS_PATH_TRUNCATED,
		.path_fs_relative = ev->flags & TETHER_FS_PATH_FS_RELATIVE,
		.access = ev->access & TETHER_ACCESS_ALL,
		.decision = ev->decision,
		.err = ev->err,
		.reason = ev->reason,
		.has_rule = ev->reason == TETHER_REASON_RULE ||
			    (ev->reason == TETHER_REASON_PROTECTED && ev->rule_id != TETHER_RULE_NONE),
		.rule = ev->rule_id,
		.ev = ev,
	};
	if (fs->has_rule && ev->rule_id < names->rule_count)
		fs->rule_path = names->rule_paths[ev->rule_id];
	decode_fs_path(ev, names, scratch, fs);
}

static void decode_net(const struct tether_net_event *ev, const struct record_names *names,
		       struct record_net *net)
{
	uint32_t i = ev->rule_id & ~TETHER_NET_RULE_HOST;

	*net = (struct record_net){ .op = record_net_op_name(ev->op), .ev = ev };
	if (ev->rule_id == TETHER_RULE_NONE)
		return;
	if (ev->rule_id & TETHER_NET_RULE_HOST) {
		if (i < names->host_rule_count)
			net->rule_name = names->host_rule_names[i];
	} else if (i < names->net_rule_count) {
		net->rule_name = names->net_rule_names[i];
	}
}

const char *const record_flood_kinds[RECORD_FLOOD_KINDS] = {
	"fs", "proc", "capability", "kernel", "unix", "net",
};

void record_boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

uint64_t record_real_ns(const struct record *rec)
{
	struct timespec mono, real;
	int64_t real_ns;

	if (rec->real_ns)
		return rec->real_ns;
	clock_gettime(CLOCK_REALTIME, &real);
	real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	if (rec->mono_ns) {
		clock_gettime(CLOCK_MONOTONIC, &mono);
		real_ns -= (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec - (int64_t)rec->mono_ns;
	}
	return real_ns > 0 ? (uint64_t)real_ns : 1;
}

void record_format_time(uint64_t real_ns, char *buf, size_t size)
{
	/* the date and time of the last second formatted, per thread: records come in bursts */
	static _Thread_local time_t cached_secs = -1;
	static _Thread_local char cached[64];
	struct record now = { 0 };
	unsigned int us;
	time_t secs;
	struct tm tm;

	if (!real_ns)
		real_ns = record_real_ns(&now);
	secs = (time_t)(real_ns / 1000000000);
	if (secs != cached_secs) {
		gmtime_r(&secs, &tm);
		snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec);
		cached_secs = secs;
	}
	us = (unsigned int)((real_ns % 1000000000) / 1000);
	if (size < 28) {
		if (size)
			buf[0] = '\0';
		return;
	}
	/* YYYY-MM-DDTHH:MM:SS.uuuuuuZ */
	memcpy(buf, cached, 19);
	buf[19] = '.';
	for (int i = 25; i >= 20; i--, us /= 10)
		buf[i] = (char)('0' + us % 10);
	buf[26] = 'Z';
	buf[27] = '\0';
}

int record_decode(const void *data, size_t size, const struct record_names *names,
		  struct record_scratch *scratch, struct record *rec)
{
	const struct tether_event_hdr *hdr = data;

	if (size < sizeof(*hdr) || hdr->size > size)
		return -EBADMSG;
	*rec = (struct record){ .seq = hdr->seq, .mono_ns = hdr->ts_ns, .run_id = names->run_id,
				.ctx = names->ctx };
	switch (hdr->kind) {
	case TETHER_EVENT_FS:
	case TETHER_EVENT_PROC:
	case TETHER_EVENT_CAPABILITY:
	case TETHER_EVENT_KERNEL:
	case TETHER_EVENT_UNIX:
	case TETHER_EVENT_NET_SOCKET:
		if (hdr->size != sizeof(struct tether_fs_event))
			return -EBADMSG;
		rec->kind = RECORD_KERNEL_FS;
		decode_fs(data, names, scratch, &rec->fs);
		rec->fs.kind = kind_names[hdr->kind];
		return 0;
	case TETHER_EVENT_NET:
		if (hdr->size != sizeof(struct tether_net_event))
			return -EBADMSG;
		rec->kind = RECORD_KERNEL_NET;
		decode_net(data, names, &rec->net);
		return 0;
	default:
		return -EBADMSG;
	}
}

int record_encode_source(const struct record_run_start *s, struct strbuf *out)
{
	int r = 0;

	if (s->source) {
		r = sb_printf(out, ",\"source\":");
		r = r ?: sb_json_string(out, s->source, 4096);
	}
	if (!r && s->source_digest)
		r = sb_printf(out, ",\"source_digest\":\"%s\"", s->source_digest);
	if (!r && s->source_commit) {
		r = sb_printf(out, ",\"source_commit\":");
		r = r ?: sb_json_string(out, s->source_commit, 72);
		r = r ?: sb_printf(out, ",\"source_tree\":");
		r = r ?: sb_json_string(out, s->source_tree ? s->source_tree : "", 72);
	}
	return r;
}
