// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON Lines sink: each record one JSON object on one line, in the
 * shapes docs/audit.md documents.  Strings go through sb_json_string, so a
 * file name or a DNS name the run chose cannot break a line or the JSON.
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
#include <time.h>
#include <unistd.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "policyc/access.h"
#include "policyc/policy.h"
#include "runtime/dnsproxy.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/sink.h"

static void format_addr(const uint8_t addr[16], char *buf, size_t size)
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

static const char *rcode_name(uint8_t rcode)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED" };

	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : "OTHER";
}

/* A string of the envelope, or null. */
static int ctx_string(struct strbuf *out, const char *key, const char *value, size_t max)
{
	int r = sb_lit(out, ",\"") | sb_str(out, key) | sb_lit(out, "\":");

	return r | (value ? sb_json_string(out, value, max) : sb_lit(out, "null"));
}

/* ,"KEY":"VALUE" for a value of our own (a name: nothing to escape) */
static int name_member(struct strbuf *out, const char *key, const char *value)
{
	return sb_lit(out, ",\"") | sb_str(out, key) | sb_lit(out, "\":\"") | sb_str(out, value) |
	       sb_lit(out, "\"");
}

/* ,"KEY":N */
static int num_member(struct strbuf *out, const char *key, unsigned long long v)
{
	return sb_lit(out, ",\"") | sb_str(out, key) | sb_lit(out, "\":") | sb_u64(out, v);
}

/*
 * The record envelope (docs/audit.md): {"schema_version":3,"seq":N,
 * "time":"...","host":...,"boot_id":...,"tether_version":...,"run_id":...,
 * "attempt":N,"tenant":...,"trace_id":...,"span_id":...,
 * "policy_digest":...,"kind":"KIND".  Without a context (a record outside
 * any run's stream) only schema_version, seq, time, run_id and kind.
 */
/* The envelope's members from ,"host" to "policy_digest" (run_id among them). */
static int context_members(struct strbuf *out, const struct record_context *ctx, const char *run_id)
{
	int r = 0;

	if (ctx) {
		r |= ctx_string(out, "host", ctx->host, 256);
		r |= ctx_string(out, "boot_id", ctx->boot_id, 64);
		r |= ctx_string(out, "tether_version", ctx->tether_version, 64);
	}
	r |= sb_lit(out, ",\"run_id\":");
	r |= sb_json_string(out, run_id ? run_id : "", 256);
	if (ctx) {
		r |= num_member(out, "attempt", ctx->attempt);
		r |= ctx_string(out, "tenant", ctx->tenant, 64);
		r |= ctx_string(out, "trace_id", ctx->trace_id, 32);
		r |= ctx_string(out, "span_id", ctx->span_id, 16);
		r |= ctx_string(out, "policy_digest", ctx->policy_digest, 80);
	}
	return r;
}

int sink_jsonl_encode_context(const struct record_context *ctx, const char *run_id,
			      struct strbuf *out)
{
	return context_members(out, ctx, run_id) ? -ENOMEM : 0;
}

static int begin(struct strbuf *out, const struct record *rec, const char *kind)
{
	const struct record_context *ctx = rec->ctx;
	char when[64];
	int r = sb_lit(out, "{\"schema_version\":") | sb_u64(out, RECORD_SCHEMA_VERSION);

	record_format_time(record_real_ns(rec), when, sizeof(when));
	if (rec->seq)
		r |= num_member(out, "seq", rec->seq);
	r |= name_member(out, "time", when);
	if (ctx && ctx->encoded && rec->run_id && ctx->encoded_run_id &&
	    !strcmp(rec->run_id, ctx->encoded_run_id))
		r |= sb_append(out, ctx->encoded, ctx->encoded_len);
	else
		r |= context_members(out, ctx, rec->run_id);
	r |= name_member(out, "kind", kind);
	return r;
}

/* "coalesced":N,"first_seq":F,"coalesced_seqs":[[A,B],...] */
static int encode_coalesced(const struct record_coalesced *c, struct strbuf *out)
{
	int r = sb_printf(out, ",\"coalesced\":%llu,\"first_seq\":%llu,\"coalesced_seqs\":[",
			  (unsigned long long)c->count, (unsigned long long)c->first_seq);

	for (size_t i = 0; i < c->seq_range_count; i++)
		r |= sb_printf(out, "%s[%llu,%llu]", i ? "," : "",
			       (unsigned long long)c->seqs[i].first,
			       (unsigned long long)c->seqs[i].last);
	return r | sb_printf(out, "]");
}

static int encode_fs(const struct record *rec, struct strbuf *out)
{
	const struct record_fs *fs = &rec->fs;
	const struct tether_fs_event *ev = fs->ev;
	const struct record_coalesced *c = fs->coalesced;
	int r = begin(out, rec, fs->kind);

	r |= name_member(out, "op", fs->op);
	if (c)
		r |= encode_coalesced(c, out);
	if (c && c->paths_listed) {
		r |= sb_printf(out, ",\"paths\":[");
		for (size_t i = 0; i < c->path_count; i++) {
			r |= sb_printf(out, "%s", i ? "," : "");
			r |= sb_json_string(out, c->paths[i].text, c->paths[i].len);
		}
		r |= sb_printf(out, "],\"paths_unlisted\":%llu", (unsigned long long)c->paths_unlisted);
	} else {
		r |= sb_lit(out, ",\"path\":");
		r |= sb_json_string(out, fs->path, fs->path_len);
	}
	if (fs->path_truncated)
		r |= sb_printf(out, ",\"path_truncated\":true");
	if (fs->path_fs_relative)
		r |= sb_printf(out, ",\"path_scope\":\"filesystem\"");
	if (fs->access) {
		const char *sep = "";

		r |= sb_lit(out, ",\"access\":\"");
		for (size_t i = 0; i < TP_ACCESS_RIGHT_COUNT; i++) {
			if (fs->access & tp_access_rights[i].bit) {
				r |= sb_str(out, sep) | sb_str(out, tp_access_rights[i].name);
				sep = ",";
			}
		}
		r |= sb_lit(out, "\"");
	}
	r |= name_member(out, "decision", record_decision_name(fs->decision));
	if (fs->err)
		r |= name_member(out, "errno", record_errno_name(fs->err));
	r |= name_member(out, "reason", record_reason_name(fs->reason));
	if (fs->has_rule) {
		r |= num_member(out, "rule", fs->rule);
		if (fs->rule_path) {
			r |= sb_lit(out, ",\"rule_path\":");
			r |= sb_json_string(out, fs->rule_path, 4096);
		}
	}
	r |= num_member(out, "pid", ev->hdr.pid) | num_member(out, "tgid", ev->hdr.tgid) |
	     num_member(out, "ppid", ev->ppid) | num_member(out, "uid", ev->uid);
	r |= sb_lit(out, ",\"comm\":");
	r |= sb_json_string(out, ev->comm, sizeof(ev->comm));
	r |= sb_lit(out, ",\"exe\":");
	r |= sb_json_string(out, ev->exe, sizeof(ev->exe));
	r |= sb_lit(out, ",\"parent_exe\":");
	r |= sb_json_string(out, ev->parent_exe, sizeof(ev->parent_exe));
	r |= num_member(out, "cgroup_id", ev->hdr.cgroup_id) | sb_lit(out, "}");
	return r ? -ENOMEM : 0;
}

static int encode_net(const struct record *rec, struct strbuf *out)
{
	const struct tether_net_event *ev = rec->net.ev;
	char addr[64], proto[16];
	int r = begin(out, rec, "net");

	r |= sb_printf(out, ",\"op\":\"%s\"", rec->net.op);
	if (ev->op == TETHER_NET_SOCKET_CREATE) {
		r |= sb_printf(out, ",\"family\":%u,\"type\":%u,\"protocol\":%u", ev->family,
			       ev->type, ev->protocol);
	} else if (ev->op == TETHER_NET_SETSOCKOPT) {
		r |= sb_printf(out, ",\"level\":%u,\"optname\":%u", ev->protocol, ev->port);
	} else {
		format_addr(ev->addr, addr, sizeof(addr));
		r |= sb_printf(out, ",\"family\":\"%s\",\"protocol\":\"%s\",\"address\":\"%s\","
			       "\"port\":%u",
			       ev->family == 10 ? "inet6" : ev->family == 2 ? "inet" : "other",
			       protocol_name(ev->protocol, proto, sizeof(proto)), addr, ev->port);
	}
	if (ev->flags & TETHER_NET_DNS_REDIRECTED)
		r |= sb_printf(out, ",\"dns_redirected\":true");
	if (ev->op == TETHER_NET_EGRESS_BUDGET || ev->op == TETHER_NET_PACKET)
		r |= sb_printf(out, ",\"bytes\":%llu", (unsigned long long)ev->bytes);
	r |= sb_printf(out, ",\"decision\":\"%s\"", record_decision_name(ev->decision));
	if (ev->err)
		r |= sb_printf(out, ",\"errno\":\"%s\"", record_errno_name(ev->err));
	r |= sb_printf(out, ",\"reason\":\"%s\"", record_reason_name(ev->reason));
	if (ev->rule_id != TETHER_RULE_NONE) {
		uint32_t i = ev->rule_id & ~TETHER_NET_RULE_HOST;
		bool host = ev->rule_id & TETHER_NET_RULE_HOST;

		r |= sb_printf(out, host ? ",\"host_rule\":%u" : ",\"rule\":%u", i);
		if (rec->net.rule_name) {
			r |= sb_printf(out, host ? ",\"rule_host\":" : ",\"rule_destination\":");
			r |= sb_json_string(out, rec->net.rule_name, host ? 512 : 128);
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

static const char *boolean(bool b)
{
	return b ? "true" : "false";
}

static int encode_start(const struct record_run_start *s, struct strbuf *out)
{
	int r;

	r = sb_printf(out, ",\"command\":");
	r = r ?: sb_json_string(out, s->command, 1024);
	r = r ?: sb_printf(out, ",\"tmpdir\":");
	r = r ?: sb_json_string(out, s->tmpdir, 4096);
	r = r ?: sb_printf(out, ",\"cgroup_id\":%llu,\"run_slot\":%u,\"mode\":\"%s\",\"rules\":%zu,"
			   "\"envelope_digest\":\"%s\",\"unenforced\":[",
			   (unsigned long long)s->cgroup_id, s->run_slot,
			   s->audit_mode ? "audit" : "enforce", s->rules,
			   s->envelope_digest ? s->envelope_digest : s->policy_digest);
	for (size_t i = 0; r == 0 && i < s->unenforced_count; i++) {
		r = sb_printf(out, "%s", i ? "," : "");
		r = r ?: sb_json_string(out, s->unenforced[i], 256);
	}
	r = r ?: sb_printf(out, "],\"uid\":%u,\"gid\":%u", s->uid, s->gid);
	/* the limits the envelope sets, in tp_limit order, under their record names */
	for (size_t i = 0; r == 0 && i < TP_LIMIT_COUNT; i++)
		if (tp_limits[i].record_name && s->limits[i])
			r = sb_printf(out, ",\"%s\":%llu", tp_limits[i].record_name,
				      (unsigned long long)s->limits[i]);
	r = r ?: sb_printf(out, ",\"setup_us\":%llu", (unsigned long long)s->setup_us);
	return r ?: record_encode_source(s, out);
}

static int encode_cleanup(const struct record_run_cleanup *c, struct strbuf *out)
{
	return sb_printf(out, ",\"killed\":%u,\"duration_us\":%llu,\"tree_empty\":%s,"
			 "\"map_entries_removed\":%s,\"cgroup_removed\":%s,"
			 "\"tmpdir_removed\":%s,\"verified\":%s",
			 c->killed, (unsigned long long)c->duration_us, boolean(c->tree_empty),
			 boolean(c->map_entries_removed), boolean(c->cgroup_removed),
			 boolean(c->tmpdir_removed), boolean(c->verified));
}

static int encode_end(const struct record_run_end *e, struct strbuf *out)
{
	int r = sb_printf(out,
			  ",\"exit_status\":%d,\"audit_records\":%llu,\"audit_seq_last\":%llu,"
			  "\"audit_lost\":%llu,\"audit_malformed\":%llu,\"audit_coalesced\":%llu,"
			  "\"audit_suppressed\":%llu,"
			  "\"egress_bytes\":%llu,"
			  "\"ingress_dropped\":%u,\"leftover_processes\":%u,"
			  "\"cleanup_verified\":%s,\"reason\":\"%s\"",
			  e->exit_status, (unsigned long long)e->audit_records,
			  (unsigned long long)e->audit_seq_last, (unsigned long long)e->audit_lost,
			  (unsigned long long)e->audit_malformed,
			  (unsigned long long)e->audit_coalesced,
			  (unsigned long long)e->audit_suppressed, (unsigned long long)e->egress_bytes,
			  e->ingress_dropped, e->leftover_processes, boolean(e->cleanup_verified),
			  e->reason);

	if (!r && e->budget)
		r = sb_printf(out, ",\"budget\":\"%s\"", e->budget);
	if (!r && e->has_output)
		r = sb_printf(out, ",\"output_bytes\":%llu,\"output_truncated\":%s",
			      (unsigned long long)e->output_bytes, boolean(e->output_truncated));
	if (!r && e->fail_closed)
		r = sb_printf(out, ",\"audit_refused\":%llu", (unsigned long long)e->audit_refused);
	return r;
}

/* "suppressed":N,"denied":D,"rate_limit":R,"window_ms":W,"suppressed_seqs":[[A,B],...],
 * "seqs_unlisted":U,"by_kind":{"fs":N,...} (the kinds with a count) */
static int encode_suppressed(const struct record_run_suppressed *f, struct strbuf *out)
{
	const char *sep = "";
	int r = sb_printf(out, ",\"suppressed\":%llu,\"denied\":%llu,\"rate_limit\":%llu,"
			  "\"window_ms\":%llu,\"suppressed_seqs\":[",
			  (unsigned long long)f->count, (unsigned long long)f->denied,
			  (unsigned long long)f->rate_limit, (unsigned long long)f->window_ms);

	for (size_t i = 0; i < f->seq_range_count; i++)
		r |= sb_printf(out, "%s[%llu,%llu]", i ? "," : "",
			       (unsigned long long)f->seqs[i].first,
			       (unsigned long long)f->seqs[i].last);
	r |= sb_printf(out, "],\"seqs_unlisted\":%llu,\"by_kind\":{",
		       (unsigned long long)f->seqs_unlisted);
	for (size_t i = 0; i < RECORD_FLOOD_KINDS; i++) {
		if (!f->by_kind[i])
			continue;
		r |= sb_printf(out, "%s\"%s\":%llu", sep, record_flood_kinds[i],
			       (unsigned long long)f->by_kind[i]);
		sep = ",";
	}
	return r | sb_printf(out, "}");
}

static int encode_artifact(const struct record_run_artifact *a, struct strbuf *out)
{
	int r = sb_printf(out, ",\"path\":");

	r = r ?: sb_json_string(out, a->path, 4096);
	r = r ?: sb_printf(out, ",\"decision\":\"%s\",\"reason\":", a->decision);
	r = r ?: (a->reason ? sb_json_string(out, a->reason, 512) : sb_printf(out, "null"));
	r = r ?: sb_printf(out, ",\"size\":%llu,\"sha256\":", (unsigned long long)a->size);
	r = r ?: (a->sha256 ? sb_printf(out, "\"%s\"", a->sha256) : sb_printf(out, "null"));
	return r;
}

static int encode_run(const struct record *rec, struct strbuf *out)
{
	static const char *const events[] = {
		[RECORD_RUN_START] = "start",
		[RECORD_RUN_OUTPUT_TRUNCATED] = "output_truncated",
		[RECORD_RUN_CLEANUP] = "cleanup",
		[RECORD_RUN_END] = "end",
		[RECORD_RUN_ADOPTED] = "adopted",
		[RECORD_RUN_SUPPRESSED] = "suppressed",
		[RECORD_RUN_ARTIFACT] = "artifact",
	};
	const struct record_run *run = &rec->run;
	int r = begin(out, rec, "run");

	r |= sb_printf(out, ",\"event\":\"%s\"", events[run->event]);
	if (r)
		return -ENOMEM;
	switch (run->event) {
	case RECORD_RUN_START:
		r = encode_start(&run->start, out);
		break;
	case RECORD_RUN_OUTPUT_TRUNCATED:
		r = sb_printf(out, ",\"stream\":\"%s\",\"output_bytes_max\":%llu",
			      run->truncated.stream,
			      (unsigned long long)run->truncated.output_bytes_max);
		break;
	case RECORD_RUN_CLEANUP:
		r = encode_cleanup(&run->cleanup, out);
		break;
	case RECORD_RUN_END:
		r = encode_end(&run->end, out);
		break;
	case RECORD_RUN_SUPPRESSED:
		r = encode_suppressed(&run->suppressed, out);
		break;
	case RECORD_RUN_ADOPTED:
		r = sb_printf(out, ",\"gap_ms\":%llu,\"audit_lost\":%llu,\"backlog\":%llu,"
				   "\"command_alive\":%s",
			      (unsigned long long)run->adopted.gap_ms,
			      (unsigned long long)run->adopted.audit_lost,
			      (unsigned long long)run->adopted.backlog,
			      boolean(run->adopted.command_alive));
		break;
	case RECORD_RUN_ARTIFACT:
		r = encode_artifact(&run->artifact, out);
		break;
	}
	return r ?: sb_printf(out, "}");
}

static int encode_dns(const struct record *rec, struct strbuf *out)
{
	static const char *const reasons[] = {
		[DNS_EV_ALLOWED] = "listed",
		[DNS_EV_REFUSED_NAME] = "not_listed",
		[DNS_EV_REFUSED_ANSWER] = "rebinding",
		[DNS_EV_UPSTREAM_FAILED] = "upstream_failed",
		[DNS_EV_MALFORMED] = "malformed",
		[DNS_EV_REFUSED_TYPE] = "type_refused",
	};
	const struct dns_event *ev = rec->dns;
	const char *type = dns_type_name(ev->qtype);
	char addr[64];
	int r = begin(out, rec, "dns");

	r |= sb_printf(out, ",\"name\":");
	/* names only, never payloads: a name the parser could not read is left out */
	if (ev->name)
		r |= sb_json_string(out, ev->name, 256);
	else
		r |= sb_printf(out, "null");
	if (type)
		r |= sb_printf(out, ",\"qtype\":\"%s\"", type);
	else
		r |= sb_printf(out, ",\"qtype\":%u", ev->qtype);
	r |= sb_printf(out, ",\"transport\":\"%s\",\"decision\":\"%s\",\"reason\":\"%s\","
		       "\"rcode\":\"%s\"",
		       ev->transport == IPPROTO_TCP ? "tcp" : "udp",
		       ev->kind == DNS_EV_ALLOWED ? "allow" : "deny",
		       (size_t)ev->kind < sizeof(reasons) / sizeof(reasons[0]) ? reasons[ev->kind]
									     : "unknown",
		       rcode_name(ev->rcode));
	if (ev->kind == DNS_EV_ALLOWED) {
		r |= sb_printf(out, ",\"answers\":[");
		for (size_t i = 0; i < ev->addr_count; i++) {
			format_addr(ev->addrs[i].addr, addr, sizeof(addr));
			r |= sb_printf(out, "%s{\"address\":\"%s\",\"ttl\":%u}", i ? "," : "", addr,
				       ev->addrs[i].ttl);
		}
		r |= sb_printf(out, "]");
	}
	if (ev->kind == DNS_EV_REFUSED_ANSWER && ev->refused_addr) {
		format_addr(ev->refused_addr, addr, sizeof(addr));
		r |= sb_printf(out, ",\"refused_address\":\"%s\",\"refused_class\":\"%s\"", addr,
			       dns_addr_class_name(ev->refused_class));
	}
	if (ev->suspected_tunnel)
		r |= sb_printf(out, ",\"suspected_tunnel\":true");
	r |= sb_printf(out, "}");
	return r ? -ENOMEM : 0;
}

int sink_jsonl_encode(const struct record *rec, struct strbuf *out)
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
		return sb_printf(out, "%.*s", (int)rec->line.len, rec->line.text) ? -ENOMEM : 0;
	}
	return -EINVAL;
}

struct lines_sink {
	struct sink sink;
	struct sink_ops ops;
	int (*encode)(const struct record *rec, struct strbuf *out);
	int fd;
	bool own_fd;
	/*
	 * The stream does not end with a newline: a line was cut short (a full
	 * filesystem), by this sink or by an earlier writer of the file.  The
	 * next line starts with one, so the cut line stays alone on its line
	 * (a consumer drops it as invalid JSON) and glues nothing to itself.
	 */
	bool line_open;
	int error;		/* the first write error, as a negative errno */
	struct strbuf line;	/* reused: one allocation for the stream, not per record */
};

/* All n bytes: 0, or a negative errno with *written saying how many went. */
static int write_all(int fd, const char *p, size_t n, size_t *written)
{
	*written = 0;
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		*written += (size_t)w;
	}
	return 0;
}

static int lines_write(struct sink *sink, const struct record *rec)
{
	struct lines_sink *s = (struct lines_sink *)sink;
	size_t written = 0;
	int r;

	s->line.len = 0;
	r = s->line_open ? sb_printf(&s->line, "\n") : 0;
	r = r ?: s->encode(rec, &s->line);
	if (r > 0)	/* nothing this encoding writes for the record */
		return 0;
	r = r ?: sb_printf(&s->line, "\n");
	if (!r) {
		r = write_all(s->fd, s->line.data, s->line.len, &written);
		/* a line cut short stays open; one that went whole (or not at all) does not */
		if (written)
			s->line_open = written < s->line.len;
	}
	if (r && !s->error)
		s->error = r;
	return r;
}

/*
 * Whether the regular file open as fd ends inside a line (its last byte is
 * no newline).  A descriptor open for writing only cannot tell: taken as
 * ending a line.
 */
static bool ends_open(int fd)
{
	struct stat st;
	char last;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	       pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

static int lines_flush(struct sink *sink)
{
	return ((struct lines_sink *)sink)->error;
}

static int lines_close(struct sink *sink)
{
	struct lines_sink *s = (struct lines_sink *)sink;
	int r = s->error;

	if (s->own_fd && close(s->fd) < 0 && !r)
		r = -errno;
	sb_free(&s->line);
	free(s);
	return r;
}

int sink_lines_open(int fd, bool own_fd, const char *name,
		    int (*encode)(const struct record *rec, struct strbuf *out), struct sink **out)
{
	struct lines_sink *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ops = (struct sink_ops){
		.name = name, .write = lines_write, .flush = lines_flush, .close = lines_close,
	};
	s->sink.ops = &s->ops;
	s->encode = encode;
	s->fd = fd;
	s->own_fd = own_fd;
	s->line_open = ends_open(fd);
	*out = &s->sink;
	return 0;
}

int sink_jsonl_open(int fd, bool own_fd, struct sink **out)
{
	return sink_lines_open(fd, own_fd, "jsonl", sink_jsonl_encode, out);
}
