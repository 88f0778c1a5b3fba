// SPDX-License-Identifier: GPL-2.0
/*
 * The OCSF sink: each record one OCSF 1.x event (runtime/sink/ocsf.h), the
 * mapping docs/audit.md's "OCSF" section.  Every string a run controls (a
 * path, a comm, a DNS name, a rule path) goes through sb_json_string, so it
 * cannot break the JSON or the line.  Nothing here reads the environment or
 * an argument beyond argv[0]: a record carries neither.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "policyc/access.h"
#include "policyc/policy.h"
#include "runtime/dnsproxy.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/ocsf.h"
#include "runtime/sink/sink.h"

/* Class uids (category_uid * 1000 + the class's own uid). */
enum {
	OCSF_FILE_ACTIVITY = 1001,
	OCSF_PROCESS_ACTIVITY = 1007,
	OCSF_NETWORK_ACTIVITY = 4001,
	OCSF_DNS_ACTIVITY = 4003,
};

#define OCSF_ACTIVITY_OTHER 99

/* security_control profile: action_id, disposition_id; base event: status_id, severity_id */
enum {
	OCSF_ACTION_ALLOWED = 1,
	OCSF_ACTION_DENIED = 2,
	OCSF_ACTION_OBSERVED = 3,
	OCSF_DISPOSITION_ALLOWED = 1,
	OCSF_DISPOSITION_BLOCKED = 2,
	OCSF_DISPOSITION_DETECTED = 15,
	OCSF_DISPOSITION_LOGGED = 17,
	OCSF_STATUS_SUCCESS = 1,
	OCSF_STATUS_FAILURE = 2,
	OCSF_SEVERITY_INFORMATIONAL = 1,
	OCSF_SEVERITY_LOW = 2,
	OCSF_SEVERITY_MEDIUM = 3,
	OCSF_SEVERITY_HIGH = 4,
	OCSF_FILE_TYPE_UNKNOWN = 0,
	OCSF_FILE_TYPE_FOLDER = 2,
	OCSF_FILE_TYPE_LOCAL_SOCKET = 5,
	OCSF_FILE_TYPE_SYMLINK = 7,
	OCSF_DIRECTION_UNKNOWN = 0,
	OCSF_DIRECTION_INBOUND = 1,
	OCSF_DIRECTION_OUTBOUND = 2,
};

/* What every event's classification and outcome attributes say. */
struct ocsf_head {
	unsigned int class_uid;
	unsigned int activity_id;
	int action_id, disposition_id, status_id, severity_id;
	const char *kind, *op;	   /* metadata.event_code: "kind/op" */
	const char *status_code;   /* the errno's name; NULL or "": none */
	const char *status_detail; /* the reason's name; NULL: none */
	uint64_t count;		   /* a coalesced record's count; 0: one event */
};

/* allow: allowed; deny: denied, blocked; would_deny (mode audit): allowed, detected. */
static void head_verdict(struct ocsf_head *h, uint32_t decision)
{
	switch (decision) {
	case TETHER_DECISION_ALLOW:
		h->action_id = OCSF_ACTION_ALLOWED;
		h->disposition_id = OCSF_DISPOSITION_ALLOWED;
		h->status_id = OCSF_STATUS_SUCCESS;
		h->severity_id = OCSF_SEVERITY_INFORMATIONAL;
		break;
	case TETHER_DECISION_WOULD_DENY:
		h->action_id = OCSF_ACTION_ALLOWED;
		h->disposition_id = OCSF_DISPOSITION_DETECTED;
		h->status_id = OCSF_STATUS_SUCCESS;
		h->severity_id = OCSF_SEVERITY_LOW;
		break;
	default:
		h->action_id = OCSF_ACTION_DENIED;
		h->disposition_id = OCSF_DISPOSITION_BLOCKED;
		h->status_id = OCSF_STATUS_FAILURE;
		h->severity_id = OCSF_SEVERITY_MEDIUM;
		break;
	}
}

/*
 * The node the record was made on: the run's host, or (a record outside
 * any run's stream) this node's name, where the sink encodes it.
 */
static int sb_node_name(struct strbuf *out, const struct record *rec)
{
	struct utsname u;

	if (rec->ctx && rec->ctx->host)
		return sb_json_string(out, rec->ctx->host, 256);
	if (uname(&u) == 0)
		return sb_json_string(out, u.nodename, sizeof(u.nodename));
	return sb_printf(out, "\"localhost\"");
}

static void format_addr(const uint8_t addr[16], char *buf, size_t size, bool *v4)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	*v4 = memcmp(addr, mapped, 12) == 0;
	if (!inet_ntop(*v4 ? AF_INET : AF_INET6, *v4 ? addr + 12 : addr, buf, (socklen_t)size))
		snprintf(buf, size, "::");
}

static const char *protocol_name(uint32_t protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "ipv6-icmp";
	default:
		return NULL;
	}
}

/*
 * {"class_uid":..,"category_uid":..,"activity_id":..,"type_uid":..,
 *  "severity_id":..,"time":..,"status_id":..,"action_id":..,
 *  "disposition_id":..,"metadata":{..},"device":{..}
 */
static int begin(struct strbuf *out, const struct record *rec, const struct ocsf_head *h)
{
	const struct record_context *ctx = rec->ctx;
	int r;

	r = sb_printf(out,
		      "{\"class_uid\":%u,\"category_uid\":%u,\"activity_id\":%u,"
		      "\"type_uid\":%u,\"severity_id\":%d,\"time\":%lld,\"status_id\":%d,"
		      "\"action_id\":%d,\"disposition_id\":%d",
		      h->class_uid, h->class_uid / 1000, h->activity_id,
		      h->class_uid * 100 + h->activity_id, h->severity_id,
		      (long long)(record_real_ns(rec) / 1000000), h->status_id, h->action_id,
		      h->disposition_id);
	if (!r && h->status_code && *h->status_code)
		r = sb_printf(out, ",\"status_code\":\"%s\"", h->status_code);
	if (!r && h->status_detail)
		r = sb_printf(out, ",\"status_detail\":\"%s\"", h->status_detail);
	if (!r && h->count)
		r = sb_printf(out, ",\"count\":%llu", (unsigned long long)h->count);
	r = r
		?: sb_printf(out,
			     ",\"metadata\":{\"version\":\"%s\",\"profiles\":[\"host\","
			     "\"security_control\"],\"product\":{\"name\":\"tether\","
			     "\"vendor_name\":\"tether\"",
			     OCSF_VERSION);
	if (!r && ctx && ctx->tether_version) {
		r = sb_printf(out, ",\"version\":");
		r = r ?: sb_json_string(out, ctx->tether_version, 128);
	}
	r = r ?: sb_printf(out, "},\"event_code\":\"%s/%s\"", h->kind, h->op);
	if (!r && rec->run_id) {
		/* a record's id: its run's and its sequence number there */
		struct strbuf uid = {0};

		r = sb_printf(&uid, "%.256s:%llu", rec->run_id, (unsigned long long)rec->seq);
		r = r ?: sb_printf(out, ",\"uid\":");
		r = r ?: sb_json_string(out, uid.data, uid.len);
		sb_free(&uid);
		r = r ?: sb_printf(out, ",\"correlation_uid\":");
		r = r ?: sb_json_string(out, rec->run_id, 256);
	}
	if (!r && rec->seq)
		r = sb_printf(out, ",\"sequence\":%llu", (unsigned long long)rec->seq);
	if (!r && ctx && ctx->tenant) {
		r = sb_printf(out, ",\"tenant_uid\":");
		r = r ?: sb_json_string(out, ctx->tenant, 256);
	}
	/* device.type_id is required; tether does not know the node's type */
	r = r ?: sb_printf(out, "},\"device\":{\"type_id\":0,\"hostname\":");
	r = r ?: sb_node_name(out, rec);
	return r ?: sb_printf(out, "}");
}

/* The part of a path after its last '/': what OCSF's file.name is. */
static void path_base(const char *path, size_t len, const char **base, size_t *base_len)
{
	const char *slash = memrchr(path, '/', len);

	*base = slash ? slash + 1 : path;
	*base_len = len - (size_t)(*base - path);
}

/* {"name":..,"path":..,"type_id":..}: path need not be NUL-bounded */
static int file_object(struct strbuf *out, const char *path, size_t len, int type_id)
{
	const char *base;
	size_t base_len;
	int r;

	len = strnlen(path, len);
	path_base(path, len, &base, &base_len);
	r = sb_printf(out, "{\"name\":");
	r = r ?: sb_json_string(out, base, base_len);
	r = r ?: sb_printf(out, ",\"path\":");
	r = r ?: sb_json_string(out, path, len);
	return r ?: sb_printf(out, ",\"type_id\":%d}", type_id);
}

/* A process of the run: {"pid":tgid,"tid":pid,"name":comm,"user":{"uid":"N"},"file":{exe}} */
static int process_object(struct strbuf *out, const struct tether_event_hdr *hdr, uint32_t uid,
			  const char *comm, const char *exe, size_t exe_size)
{
	int r;

	r = sb_printf(out, "{\"pid\":%u,\"tid\":%u,\"name\":", hdr->tgid, hdr->pid);
	r = r ?: sb_json_string(out, comm, TETHER_COMM_LEN);
	r = r ?: sb_printf(out, ",\"user\":{\"uid\":\"%u\"}", uid);
	if (!r && exe && strnlen(exe, exe_size)) {
		r = sb_printf(out, ",\"file\":");
		r = r ?: file_object(out, exe, exe_size, OCSF_FILE_TYPE_UNKNOWN);
	}
	return r ?: sb_printf(out, "}");
}

/*
 * ,"unmapped":{"kind":..,"run_id":..,"seq":..,<the envelope>: the start of
 * tether's own fields, under their docs/audit.md names.  The envelope's host
 * and tether_version are mapped (device.hostname, metadata.product.version)
 * and not repeated; a net record's host rule name is "rule_host", as in docs/audit.md.
 */
static int unmapped_begin(struct strbuf *out, const struct record *rec, const char *kind)
{
	const struct record_context *ctx = rec->ctx;
	const struct {
		const char *name, *value;
		size_t max;
	} strings[] = {
	    {"boot_id", ctx ? ctx->boot_id : NULL, 64},
	    {"tenant", ctx ? ctx->tenant : NULL, 256},
	    {"trace_id", ctx ? ctx->trace_id : NULL, 64},
	    {"span_id", ctx ? ctx->span_id : NULL, 32},
	    {"policy_digest", ctx ? ctx->policy_digest : NULL, 128},
	};
	int r;

	r = sb_printf(out, ",\"unmapped\":{\"kind\":\"%s\",\"run_id\":", kind);
	r = r ?: sb_json_string(out, rec->run_id ? rec->run_id : "", 256);
	r = r ?: sb_printf(out, ",\"seq\":%llu", (unsigned long long)rec->seq);
	if (!r && ctx)
		r = sb_printf(out, ",\"attempt\":%u", ctx->attempt);
	for (size_t i = 0; r == 0 && i < sizeof(strings) / sizeof(strings[0]); i++) {
		if (!strings[i].value)
			continue;
		r = sb_printf(out, ",\"%s\":", strings[i].name);
		r = r ?: sb_json_string(out, strings[i].value, strings[i].max);
	}
	return r;
}

/* "decision":..,"errno":..,"reason":..: the verdict in tether's words */
static int unmapped_verdict(struct strbuf *out, uint32_t decision, int32_t err, uint32_t reason)
{
	int r = sb_printf(out, ",\"decision\":\"%s\"", record_decision_name(decision));

	if (!r && err)
		r = sb_printf(out, ",\"errno\":\"%s\"", record_errno_name(err));
	return r ?: sb_printf(out, ",\"reason\":\"%s\"", record_reason_name(reason));
}

/* File System Activity's activity for an fs-body op of kind fs or unix: 99 Other where none fits.
 */
static unsigned int file_activity(uint32_t op)
{
	switch (op) {
	case TETHER_FS_CREATE:
	case TETHER_FS_MKDIR:
	case TETHER_FS_LINK:
	case TETHER_FS_SYMLINK:
	case TETHER_FS_MKNOD_DEVICE:
		return 1; /* Create */
	case TETHER_FS_OPEN_READ:
		return 2; /* Read */
	case TETHER_FS_OPEN_WRITE:
	case TETHER_FS_TRUNCATE:
	case TETHER_FS_OPEN_DEVICE:
		return 3; /* Update */
	case TETHER_FS_UNLINK:
	case TETHER_FS_RMDIR:
		return 4; /* Delete */
	case TETHER_FS_RENAME:
		return 5; /* Rename */
	case TETHER_FS_SETXATTR:
	case TETHER_FS_REMOVEXATTR:
	case TETHER_FS_UTIMES:
		return 6; /* Set Attributes */
	case TETHER_FS_CHMOD:
	case TETHER_FS_CHOWN:
	case TETHER_FS_SET_ACL:
	case TETHER_FS_REMOVE_ACL:
		return 7; /* Set Security: permissions, owner, ACLs */
	case TETHER_FS_MOUNT:
	case TETHER_FS_MOVE_MOUNT:
		return 12; /* Mount */
	case TETHER_FS_UMOUNT:
		return 13; /* Unmount */
	case TETHER_FS_UNIX_CONNECT:
		return 14; /* Open: a handle on the socket */
	default:
		return OCSF_ACTIVITY_OTHER;
	}
}

static int file_type(uint32_t op)
{
	switch (op) {
	case TETHER_FS_MKDIR:
	case TETHER_FS_RMDIR:
		return OCSF_FILE_TYPE_FOLDER;
	case TETHER_FS_SYMLINK:
		return OCSF_FILE_TYPE_SYMLINK;
	case TETHER_FS_UNIX_CONNECT:
	case TETHER_FS_UNIX_SEND:
		return OCSF_FILE_TYPE_LOCAL_SOCKET;
	default:
		return OCSF_FILE_TYPE_UNKNOWN;
	}
}

/* Process Activity's activity for an fs-body op of kind proc, capability or kernel, or exec. */
static unsigned int process_activity(uint32_t op)
{
	switch (op) {
	case TETHER_FS_EXEC:
	case TETHER_FS_CLONE_INTO_CGROUP:
		return 1; /* Launch */
	case TETHER_FS_PTRACE:
		return 3; /* Open: a handle on another process */
	default:
		return OCSF_ACTIVITY_OTHER;
	}
}

/* The fs path a coalesced record stands for first, or the record's own. */
static void fs_path(const struct record_fs *fs, const char **path, size_t *len)
{
	const struct record_coalesced *c = fs->coalesced;

	if (c && c->paths_listed) {
		*path = c->path_count ? c->paths[0].text : "";
		*len = c->path_count ? c->paths[0].len : 0;
	} else {
		*path = fs->path;
		*len = fs->path_len;
	}
}

/* tether's own fields of a kernel record with an fs body, after the envelope. */
static int unmapped_fs(struct strbuf *out, const struct record_fs *fs, bool path_mapped)
{
	const struct record_coalesced *c = fs->coalesced;
	int r = sb_printf(out, ",\"op\":\"%s\"", fs->op);

	if (!r && !path_mapped) {
		r = sb_printf(out, ",\"path\":");
		r = r ?: sb_json_string(out, fs->path, fs->path_len);
	}
	if (!r && fs->path_truncated)
		r = sb_printf(out, ",\"path_truncated\":true");
	if (!r && fs->path_fs_relative)
		r = sb_printf(out, ",\"path_scope\":\"filesystem\"");
	if (!r && fs->access) {
		const char *sep = "";

		r = sb_printf(out, ",\"access\":\"");
		for (size_t i = 0; r == 0 && i < TP_ACCESS_RIGHT_COUNT; i++) {
			if (fs->access & tp_access_rights[i].bit) {
				r = sb_printf(out, "%s%s", sep, tp_access_rights[i].name);
				sep = ",";
			}
		}
		r = r ?: sb_printf(out, "\"");
	}
	r = r ?: unmapped_verdict(out, fs->decision, fs->err, fs->reason);
	if (!r && fs->has_rule) {
		r = sb_printf(out, ",\"rule\":%u", fs->rule);
		if (!r && fs->rule_path) {
			r = sb_printf(out, ",\"rule_path\":");
			r = r ?: sb_json_string(out, fs->rule_path, 4096);
		}
	}
	r = r ?: sb_printf(out, ",\"cgroup_id\":%llu", (unsigned long long)fs->ev->hdr.cgroup_id);
	if (!r && c) {
		r = sb_printf(out, ",\"coalesced\":%llu,\"first_seq\":%llu,\"coalesced_seqs\":[",
			      (unsigned long long)c->count, (unsigned long long)c->first_seq);
		for (size_t i = 0; r == 0 && i < c->seq_range_count; i++)
			r = sb_printf(out, "%s[%llu,%llu]", i ? "," : "",
				      (unsigned long long)c->seqs[i].first,
				      (unsigned long long)c->seqs[i].last);
		r = r ?: sb_printf(out, "]");
	}
	if (!r && c && c->paths_listed) {
		r = sb_printf(out, ",\"paths\":[");
		for (size_t i = 0; r == 0 && i < c->path_count; i++) {
			r = sb_printf(out, "%s", i ? "," : "");
			r = r ?: sb_json_string(out, c->paths[i].text, c->paths[i].len);
		}
		r = r
			?: sb_printf(out, "],\"paths_unlisted\":%llu",
				     (unsigned long long)c->paths_unlisted);
	}
	return r;
}

/*
 * A kernel record with an fs body: kinds fs and unix are File System
 * Activity (exec excepted: Process Activity's Launch); proc, capability
 * and kernel are Process Activity; net (socket_create) Network Activity.
 */
static int encode_fs(const struct record *rec, struct strbuf *out)
{
	const struct record_fs *fs = &rec->fs;
	const struct tether_fs_event *ev = fs->ev;
	uint16_t kind = tether_fs_op_kind(ev->op);
	struct ocsf_head h = {.kind = fs->kind,
			      .op = fs->op,
			      .status_code = record_errno_name(fs->err),
			      .status_detail = record_reason_name(fs->reason),
			      .count = fs->coalesced ? fs->coalesced->count : 0};
	bool file_class =
	    (kind == TETHER_EVENT_FS || kind == TETHER_EVENT_UNIX) && ev->op != TETHER_FS_EXEC;
	const char *path;
	size_t path_len;
	int r;

	head_verdict(&h, fs->decision);
	fs_path(fs, &path, &path_len);
	if (file_class) {
		h.class_uid = OCSF_FILE_ACTIVITY;
		h.activity_id = file_activity(ev->op);
	} else if (kind == TETHER_EVENT_NET_SOCKET) {
		h.class_uid = OCSF_NETWORK_ACTIVITY;
		h.activity_id = OCSF_ACTIVITY_OTHER;
	} else {
		h.class_uid = OCSF_PROCESS_ACTIVITY;
		h.activity_id = process_activity(ev->op);
	}
	r = begin(out, rec, &h);
	r = r ?: sb_printf(out, ",\"actor\":{\"process\":");
	r = r ?: process_object(out, &ev->hdr, ev->uid, ev->comm, ev->exe, sizeof(ev->exe));
	r = r ?: sb_printf(out, "}");
	if (r)
		return -ENOMEM;
	if (file_class) {
		r = sb_printf(out, ",\"file\":");
		r = r ?: file_object(out, path, path_len, file_type(ev->op));
	} else if (ev->op == TETHER_FS_EXEC) {
		/* the image the process was about to run: the process is the same pid */
		const char *base;
		size_t base_len;

		path_base(path, strnlen(path, path_len), &base, &base_len);
		r = sb_printf(out, ",\"process\":{\"pid\":%u,\"name\":", ev->hdr.tgid);
		r = r ?: sb_json_string(out, base, base_len);
		r = r ?: sb_printf(out, ",\"user\":{\"uid\":\"%u\"},\"file\":", ev->uid);
		r = r ?: file_object(out, path, path_len, OCSF_FILE_TYPE_UNKNOWN);
		r = r ?: sb_printf(out, "}");
	} else if (kind == TETHER_EVENT_NET_SOCKET) {
		r = sb_printf(out, ",\"src_endpoint\":{\"hostname\":");
		r = r ?: sb_node_name(out, rec);
		r = r ?: sb_printf(out, "}");
	} else {
		/*
		 * The kernel's record does not name the target (a process
		 * outside the run, the kernel itself): Process Activity
		 * requires a process, and the one the record names is the
		 * actor's.
		 */
		r = sb_printf(out, ",\"process\":");
		r = r ?: process_object(out, &ev->hdr, ev->uid, ev->comm, ev->exe, sizeof(ev->exe));
	}
	r = r ?: unmapped_begin(out, rec, fs->kind);
	r = r ?: unmapped_fs(out, fs, file_class || ev->op == TETHER_FS_EXEC);
	r = r ?: sb_printf(out, "}}");
	return r ? -ENOMEM : 0;
}

static unsigned int network_activity(uint32_t op)
{
	switch (op) {
	case TETHER_NET_CONNECT:
		return 1; /* Open */
	case TETHER_NET_SENDMSG:
	case TETHER_NET_PACKET:
	case TETHER_NET_INGRESS:
		return 6; /* Traffic */
	default:
		return OCSF_ACTIVITY_OTHER; /* egress_budget, socket_create, bind, setsockopt */
	}
}

/* "ip":"..","port":N */
static int endpoint_addr(struct strbuf *out, const struct tether_net_event *ev, bool *v4)
{
	char addr[64];

	format_addr(ev->addr, addr, sizeof(addr), v4);
	return sb_printf(out, "\"ip\":\"%s\",\"port\":%u", addr, ev->port);
}

static int encode_net(const struct record *rec, struct strbuf *out)
{
	const struct tether_net_event *ev = rec->net.ev;
	struct ocsf_head h = {.class_uid = OCSF_NETWORK_ACTIVITY,
			      .kind = "net",
			      .op = rec->net.op,
			      .activity_id = network_activity(ev->op),
			      .status_code = record_errno_name(ev->err),
			      .status_detail = record_reason_name(ev->reason)};
	bool has_addr = ev->op != TETHER_NET_SOCKET_CREATE && ev->op != TETHER_NET_SETSOCKOPT;
	bool inbound = ev->op == TETHER_NET_INGRESS, bind = ev->op == TETHER_NET_BIND, v4 = false;
	const char *proto = protocol_name(ev->protocol);
	int r;

	head_verdict(&h, ev->decision);
	r = begin(out, rec, &h);
	/* packet records have no task: see struct tether_net_event */
	if (!r && ev->op != TETHER_NET_PACKET && ev->op != TETHER_NET_EGRESS_BUDGET) {
		r = sb_printf(out, ",\"actor\":{\"process\":{\"pid\":%u,\"tid\":%u,\"name\":",
			      ev->hdr.tgid, ev->hdr.pid);
		r = r ?: sb_json_string(out, ev->comm, sizeof(ev->comm));
		r = r ?: sb_printf(out, ",\"user\":{\"uid\":\"%u\"}}}", ev->uid);
	}
	/*
	 * The run's side is this node; the peer is the address the record
	 * names (bind: the node's own address and port).
	 */
	r = r ?: sb_printf(out, ",\"%s\":{", inbound ? "dst_endpoint" : "src_endpoint");
	r = r ?: sb_printf(out, "\"hostname\":");
	r = r ?: sb_node_name(out, rec);
	if (!r && bind) {
		r = sb_printf(out, ",");
		r = r ?: endpoint_addr(out, ev, &v4);
	}
	r = r ?: sb_printf(out, "}");
	if (!r && has_addr && !bind) {
		r = sb_printf(out, ",\"%s\":{", inbound ? "src_endpoint" : "dst_endpoint");
		r = r ?: endpoint_addr(out, ev, &v4);
		r = r ?: sb_printf(out, "}");
	}
	if (!r && has_addr) {
		r = sb_printf(out,
			      ",\"connection_info\":{\"direction_id\":%d,\"protocol_num\":%u,"
			      "\"protocol_ver_id\":%d",
			      inbound ? OCSF_DIRECTION_INBOUND
			      : bind  ? OCSF_DIRECTION_UNKNOWN
				      : OCSF_DIRECTION_OUTBOUND,
			      ev->protocol, v4 ? 4 : 6);
		if (!r && proto)
			r = sb_printf(out, ",\"protocol_name\":\"%s\"", proto);
		r = r ?: sb_printf(out, "}");
	}
	r = r ?: unmapped_begin(out, rec, "net");
	r = r ?: sb_printf(out, ",\"op\":\"%s\"", rec->net.op);
	if (!r && ev->op == TETHER_NET_SOCKET_CREATE)
		r = sb_printf(out, ",\"family\":%u,\"type\":%u,\"protocol\":%u", ev->family,
			      ev->type, ev->protocol);
	else if (!r && ev->op == TETHER_NET_SETSOCKOPT)
		r = sb_printf(out, ",\"level\":%u,\"optname\":%u", ev->protocol, ev->port);
	if (!r && (ev->flags & TETHER_NET_DNS_REDIRECTED))
		r = sb_printf(out, ",\"dns_redirected\":true");
	if (!r && (ev->op == TETHER_NET_EGRESS_BUDGET || ev->op == TETHER_NET_PACKET))
		r = sb_printf(out, ",\"bytes\":%llu", (unsigned long long)ev->bytes);
	r = r ?: unmapped_verdict(out, ev->decision, ev->err, ev->reason);
	if (!r && ev->rule_id != TETHER_RULE_NONE) {
		uint32_t i = ev->rule_id & ~TETHER_NET_RULE_HOST;
		bool host = ev->rule_id & TETHER_NET_RULE_HOST;

		r = sb_printf(out, host ? ",\"host_rule\":%u" : ",\"rule\":%u", i);
		if (!r && rec->net.rule_name) {
			r = sb_printf(out, host ? ",\"rule_host\":" : ",\"rule_destination\":");
			r = r ?: sb_json_string(out, rec->net.rule_name, host ? 512 : 128);
		}
	}
	r = r ?: sb_printf(out, ",\"cgroup_id\":%llu}}", (unsigned long long)ev->hdr.cgroup_id);
	return r ? -ENOMEM : 0;
}

static const char *boolean(bool b)
{
	return b ? "true" : "false";
}

/*
 * A run record is Process Activity of the run's command: start is its
 * Launch, end its Terminate, the others Other.  The actor is the
 * controller (this process); the command has no pid in the record, and is
 * identified by the run (process.uid: the run id).
 */
static const char *const run_event_names[] = {
    [RECORD_RUN_START] = "start",     [RECORD_RUN_OUTPUT_TRUNCATED] = "output_truncated",
    [RECORD_RUN_CLEANUP] = "cleanup", [RECORD_RUN_END] = "end",
    [RECORD_RUN_ADOPTED] = "adopted", [RECORD_RUN_SUPPRESSED] = "suppressed",
    [RECORD_RUN_ARTIFACT] = "artifact",
};

static int run_head(const struct record *rec, struct ocsf_head *h)
{
	const struct record_run *run = &rec->run;

	if (run->event < RECORD_RUN_START || run->event > RECORD_RUN_ARTIFACT)
		return -EINVAL;
	*h = (struct ocsf_head){.class_uid = OCSF_PROCESS_ACTIVITY,
				.kind = "run",
				.op = run_event_names[run->event],
				.activity_id = OCSF_ACTIVITY_OTHER,
				.action_id = OCSF_ACTION_OBSERVED,
				.disposition_id = OCSF_DISPOSITION_LOGGED,
				.status_id = OCSF_STATUS_SUCCESS,
				.severity_id = OCSF_SEVERITY_INFORMATIONAL};
	switch (run->event) {
	case RECORD_RUN_START:
		h->activity_id = 1; /* Launch */
		h->action_id = OCSF_ACTION_ALLOWED;
		h->disposition_id = OCSF_DISPOSITION_ALLOWED;
		break;
	case RECORD_RUN_END:
		h->activity_id = 2; /* Terminate */
		if (run->end.exit_status != 0 || !run->end.cleanup_verified)
			h->status_id = OCSF_STATUS_FAILURE;
		/* records lost or a cleanup not verified: the audit itself is in doubt */
		if (run->end.audit_lost || run->end.audit_malformed || !run->end.cleanup_verified)
			h->severity_id = OCSF_SEVERITY_MEDIUM;
		break;
	case RECORD_RUN_CLEANUP:
		if (!run->cleanup.verified) {
			h->status_id = OCSF_STATUS_FAILURE;
			h->severity_id = OCSF_SEVERITY_MEDIUM;
		}
		break;
	case RECORD_RUN_ADOPTED:
		if (run->adopted.audit_lost)
			h->severity_id = OCSF_SEVERITY_MEDIUM;
		break;
	case RECORD_RUN_SUPPRESSED:
		/* records counted, not written: what they were is in the counts only */
		h->severity_id = OCSF_SEVERITY_MEDIUM;
		break;
	case RECORD_RUN_OUTPUT_TRUNCATED:
		break;
	case RECORD_RUN_ARTIFACT:
		/* kept back: a finding (quarantined) or a file that may not leave (refused) */
		if (strcmp(run->artifact.decision, "exported") != 0) {
			h->action_id = OCSF_ACTION_DENIED;
			h->disposition_id = OCSF_DISPOSITION_BLOCKED;
			h->severity_id = strcmp(run->artifact.decision, "quarantined") == 0
						 ? OCSF_SEVERITY_HIGH : OCSF_SEVERITY_MEDIUM;
		}
		if (strcmp(run->artifact.decision, "failed") == 0)
			h->status_id = OCSF_STATUS_FAILURE;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* ctx_digest: the envelope already wrote policy_digest (the same value) */
static int unmapped_start(struct strbuf *out, const struct record_run_start *s, bool ctx_digest)
{
	int r;

	r = sb_printf(out, ",\"tmpdir\":");
	r = r ?: sb_json_string(out, s->tmpdir ? s->tmpdir : "", 4096);
	r = r
		?: sb_printf(out,
			     ",\"cgroup_id\":%llu,\"run_slot\":%u,\"mode\":\"%s\",\"rules\":%zu",
			     (unsigned long long)s->cgroup_id, s->run_slot,
			     s->audit_mode ? "audit" : "enforce", s->rules);
	if (!r && !ctx_digest && s->policy_digest) {
		r = sb_printf(out, ",\"policy_digest\":");
		r = r ?: sb_json_string(out, s->policy_digest, 128);
	}
	r = r ?: sb_printf(out, ",\"envelope_digest\":");
	r = r
		?: sb_json_string(out,
				  s->envelope_digest ? s->envelope_digest
				  : s->policy_digest ? s->policy_digest
						     : "",
				  128);
	r = r ?: sb_printf(out, ",\"unenforced\":[");
	for (size_t i = 0; r == 0 && i < s->unenforced_count; i++) {
		r = sb_printf(out, "%s", i ? "," : "");
		r = r ?: sb_json_string(out, s->unenforced[i], 256);
	}
	r = r ?: sb_printf(out, "],\"uid\":%u,\"gid\":%u", s->uid, s->gid);
	for (size_t i = 0; r == 0 && s->limits && i < TP_LIMIT_COUNT; i++)
		if (tp_limits[i].record_name && s->limits[i])
			r = sb_printf(out, ",\"%s\":%llu", tp_limits[i].record_name,
				      (unsigned long long)s->limits[i]);
	r = r ?: sb_printf(out, ",\"setup_us\":%llu", (unsigned long long)s->setup_us);
	return r ?: record_encode_source(s, out);
}

static int unmapped_run(struct strbuf *out, const struct record *rec)
{
	const struct record_run *run = &rec->run;
	const struct record_run_cleanup *c = &run->cleanup;
	const struct record_run_end *e = &run->end;
	int r = sb_printf(out, ",\"event\":\"%s\"", run_event_names[run->event]);

	if (r)
		return r;
	switch (run->event) {
	case RECORD_RUN_START:
		return unmapped_start(out, &run->start, rec->ctx && rec->ctx->policy_digest);
	case RECORD_RUN_OUTPUT_TRUNCATED:
		return sb_printf(out, ",\"stream\":\"%s\",\"output_bytes_max\":%llu",
				 run->truncated.stream,
				 (unsigned long long)run->truncated.output_bytes_max);
	case RECORD_RUN_CLEANUP:
		return sb_printf(out,
				 ",\"killed\":%u,\"duration_us\":%llu,\"tree_empty\":%s,"
				 "\"map_entries_removed\":%s,\"cgroup_removed\":%s,"
				 "\"tmpdir_removed\":%s,\"verified\":%s",
				 c->killed, (unsigned long long)c->duration_us,
				 boolean(c->tree_empty), boolean(c->map_entries_removed),
				 boolean(c->cgroup_removed), boolean(c->tmpdir_removed),
				 boolean(c->verified));
	case RECORD_RUN_END:
		r = sb_printf(
		    out,
		    ",\"exit_status\":%d,\"audit_records\":%llu,"
		    "\"audit_seq_last\":%llu,\"audit_lost\":%llu,"
		    "\"audit_malformed\":%llu,\"audit_coalesced\":%llu,"
		    "\"audit_suppressed\":%llu,"
		    "\"egress_bytes\":%llu,\"ingress_dropped\":%u,"
		    "\"leftover_processes\":%u,\"cleanup_verified\":%s,\"reason\":",
		    e->exit_status, (unsigned long long)e->audit_records,
		    (unsigned long long)e->audit_seq_last, (unsigned long long)e->audit_lost,
		    (unsigned long long)e->audit_malformed, (unsigned long long)e->audit_coalesced,
		    (unsigned long long)e->audit_suppressed, (unsigned long long)e->egress_bytes, e->ingress_dropped, e->leftover_processes,
		    boolean(e->cleanup_verified));
		r = r ?: sb_json_string(out, e->reason ? e->reason : "", 64);
		if (!r && e->budget) {
			r = sb_printf(out, ",\"budget\":");
			r = r ?: sb_json_string(out, e->budget, 64);
		}
		if (!r && e->has_output)
			r = sb_printf(out, ",\"output_bytes\":%llu,\"output_truncated\":%s",
				      (unsigned long long)e->output_bytes,
				      boolean(e->output_truncated));
		if (!r && e->fail_closed)
			r = sb_printf(out, ",\"audit_refused\":%llu",
				      (unsigned long long)e->audit_refused);
		return r;
	case RECORD_RUN_ADOPTED:
		return sb_printf(out,
				 ",\"gap_ms\":%llu,\"audit_lost\":%llu,\"backlog\":%llu,"
				 "\"command_alive\":%s",
				 (unsigned long long)run->adopted.gap_ms,
				 (unsigned long long)run->adopted.audit_lost,
				 (unsigned long long)run->adopted.backlog,
				 boolean(run->adopted.command_alive));
	case RECORD_RUN_SUPPRESSED: {
		const struct record_run_suppressed *f = &run->suppressed;

		r = sb_printf(out,
			      ",\"suppressed\":%llu,\"denied\":%llu,\"rate_limit\":%llu,"
			      "\"window_ms\":%llu,\"seqs_unlisted\":%llu",
			      (unsigned long long)f->count, (unsigned long long)f->denied,
			      (unsigned long long)f->rate_limit, (unsigned long long)f->window_ms,
			      (unsigned long long)f->seqs_unlisted);
		for (size_t i = 0; !r && f->by_kind && i < RECORD_FLOOD_KINDS; i++)
			if (f->by_kind[i])
				r = sb_printf(out, ",\"suppressed_%s\":%llu", record_flood_kinds[i],
					      (unsigned long long)f->by_kind[i]);
		return r;
	}
	case RECORD_RUN_ARTIFACT: {
		const struct record_run_artifact *a = &run->artifact;

		r = sb_printf(out, ",\"path\":");
		r = r ?: sb_json_string(out, a->path, 4096);
		r = r ?: sb_printf(out, ",\"decision\":\"%s\",\"reason\":", a->decision);
		r = r ?: (a->reason ? sb_json_string(out, a->reason, 512) : sb_printf(out, "null"));
		r = r ?: sb_printf(out, ",\"size\":%llu,\"sha256\":", (unsigned long long)a->size);
		return r ?: (a->sha256 ? sb_printf(out, "\"%s\"", a->sha256) : sb_printf(out, "null"));
	}
	}
	return -EINVAL;
}

static int encode_run(const struct record *rec, struct strbuf *out)
{
	const struct record_run *run = &rec->run;
	struct ocsf_head h;
	int r = run_head(rec, &h);

	if (r)
		return r;
	r = begin(out, rec, &h);
	r = r
		?: sb_printf(out,
			     ",\"actor\":{\"process\":{\"pid\":%d,\"name\":\"tether\","
			     "\"user\":{\"uid\":\"%u\"}}},\"process\":{\"uid\":",
			     (int)getpid(), (unsigned int)geteuid());
	r = r ?: sb_json_string(out, rec->run_id ? rec->run_id : "", 256);
	if (!r && run->event == RECORD_RUN_START && run->start.command) {
		/* argv[0] only, as the record holds it: arguments may carry secrets */
		const char *cmd = run->start.command, *base;
		size_t base_len;

		path_base(cmd, strnlen(cmd, 1024), &base, &base_len);
		r = sb_printf(out, ",\"name\":");
		r = r ?: sb_json_string(out, base, base_len);
		r = r ?: sb_printf(out, ",\"user\":{\"uid\":\"%u\"}", run->start.uid);
		if (!r && strchr(cmd, '/')) {
			r = sb_printf(out, ",\"file\":");
			r = r ?: file_object(out, cmd, 1024, OCSF_FILE_TYPE_UNKNOWN);
		}
	}
	r = r ?: sb_printf(out, "}");
	if (!r && run->event == RECORD_RUN_END)
		r = sb_printf(out, ",\"exit_code\":%d", run->end.exit_status);
	r = r ?: unmapped_begin(out, rec, "run");
	r = r ?: unmapped_run(out, rec);
	r = r ?: sb_printf(out, "}}");
	return r ? -ENOMEM : 0;
}

static const char *rcode_name(uint8_t rcode)
{
	/* OCSF's rcode captions for rcode_id 0..5, the rcodes the proxy sends */
	static const char *const names[] = {"NoError",	"FormError", "ServError",
					    "NXDomain", "NotImp",    "Refused"};

	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : NULL;
}

static int encode_dns(const struct record *rec, struct strbuf *out)
{
	static const char *const reasons[] = {
	    [DNS_EV_ALLOWED] = "listed",	   [DNS_EV_REFUSED_NAME] = "not_listed",
	    [DNS_EV_REFUSED_ANSWER] = "rebinding", [DNS_EV_UPSTREAM_FAILED] = "upstream_failed",
	    [DNS_EV_MALFORMED] = "malformed",	   [DNS_EV_REFUSED_TYPE] = "type_refused",
	};
	const struct dns_event *ev = rec->dns;
	const char *type = dns_type_name(ev->qtype), *rcode = rcode_name(ev->rcode);
	struct ocsf_head h = {.class_uid = OCSF_DNS_ACTIVITY,
			      .kind = "dns",
			      .op = "query",
			      .activity_id = 1 /* Query */,
			      .status_detail =
				  (size_t)ev->kind < sizeof(reasons) / sizeof(reasons[0])
				      ? reasons[ev->kind]
				      : "unknown"};
	char addr[64];
	bool v4;
	int r;

	head_verdict(&h, ev->kind == DNS_EV_ALLOWED ? TETHER_DECISION_ALLOW : TETHER_DECISION_DENY);
	r = begin(out, rec, &h);
	r = r ?: sb_printf(out, ",\"src_endpoint\":{\"hostname\":");
	r = r ?: sb_node_name(out, rec);
	r = r
		?: sb_printf(out,
			     "},\"connection_info\":{\"direction_id\":%d,\"protocol_num\":%d,"
			     "\"protocol_name\":\"%s\"}",
			     OCSF_DIRECTION_OUTBOUND,
			     ev->transport == IPPROTO_TCP ? IPPROTO_TCP : IPPROTO_UDP,
			     ev->transport == IPPROTO_TCP ? "tcp" : "udp");
	/* names only, never payloads: a name the parser could not read is left out */
	if (!r && ev->name) {
		r = sb_printf(out, ",\"query\":{\"hostname\":");
		r = r ?: sb_json_string(out, ev->name, 256);
		if (!r && type)
			r = sb_printf(out, ",\"type\":\"%s\"", type);
		r = r ?: sb_printf(out, ",\"class\":\"IN\"}");
	}
	if (!r)
		r = rcode ? sb_printf(out, ",\"rcode_id\":%u,\"rcode\":\"%s\"", ev->rcode, rcode)
			  : sb_printf(out, ",\"rcode_id\":99");
	if (!r && ev->kind == DNS_EV_ALLOWED) {
		r = sb_printf(out, ",\"answers\":[");
		for (size_t i = 0; r == 0 && i < ev->addr_count; i++) {
			format_addr(ev->addrs[i].addr, addr, sizeof(addr), &v4);
			r = sb_printf(out,
				      "%s{\"rdata\":\"%s\",\"ttl\":%u,\"type\":\"%s\","
				      "\"class\":\"IN\"}",
				      i ? "," : "", addr, ev->addrs[i].ttl, v4 ? "A" : "AAAA");
		}
		r = r ?: sb_printf(out, "]");
	}
	r = r ?: unmapped_begin(out, rec, "dns");
	if (!r && !type)
		r = sb_printf(out, ",\"qtype\":%u", ev->qtype);
	r = r
		?: sb_printf(out, ",\"decision\":\"%s\",\"reason\":\"%s\"",
			     ev->kind == DNS_EV_ALLOWED ? "allow" : "deny",
			     (size_t)ev->kind < sizeof(reasons) / sizeof(reasons[0])
				 ? reasons[ev->kind]
				 : "unknown");
	if (!r && ev->kind == DNS_EV_REFUSED_ANSWER && ev->refused_addr) {
		format_addr(ev->refused_addr, addr, sizeof(addr), &v4);
		r = sb_printf(out, ",\"refused_address\":\"%s\",\"refused_class\":\"%s\"", addr,
			      dns_addr_class_name(ev->refused_class));
	}
	if (!r && ev->suspected_tunnel)
		r = sb_printf(out, ",\"suspected_tunnel\":true");
	r = r ?: sb_printf(out, "}}");
	return r ? -ENOMEM : 0;
}

int ocsf_encode(const struct record *rec, struct strbuf *out)
{
	switch (rec->kind) {
	case RECORD_KERNEL_FS:
		return encode_fs(rec, out);
	case RECORD_KERNEL_NET:
		return encode_net(rec, out);
	case RECORD_RUN:
		return encode_run(rec, out);
	case RECORD_DNS:
		return encode_dns(rec, out);
	case RECORD_NODE_LINE:
		return 1;	/* no OCSF class: the node log's own lines stay JSON */
	}
	return -EINVAL;
}

int sink_ocsf_open(int fd, bool own_fd, struct sink **out)
{
	return sink_lines_open(fd, own_fd, "ocsf", ocsf_encode, out);
}
