// SPDX-License-Identifier: GPL-2.0
/*
 * The API of docs/api.yaml over libevent's evhttp.  Every request is
 * checked against the caller's SO_PEERCRED first: a caller the daemon's
 * configuration does not list gets 403, and a node record names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <sys/queue.h>

#include "common/version.h"
#include "loader/loader.h"
#include "policyc/policy.h"
#include "runtime/base64.h"
#include "runtime/daemon/internal.h"
#include "runtime/daemon/journal.h"


/* A request body at most this big: an envelope is at most TP_POLICY_MAX_BYTES, base64 a third more. */
#define API_MAX_BODY (TP_POLICY_MAX_BYTES / 3 * 4 + (1 << 20))

static void count_reply(struct daemon *d, int code)
{
	d->m.requests[code >= 100 && code < 600 ? code / 100 : 0]++;
}

static struct daemon *api_daemon;

void api_json_reply(struct evhttp_request *req, int code, json_t *body)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	if (text) {
		evbuffer_add(buf, text, strlen(text));
		evbuffer_add(buf, "\n", 1);
	}
	free(text);
	count_reply(api_daemon, code);
	evhttp_send_reply(req, code, NULL, buf);
	evbuffer_free(buf);
	json_decref(body);
}

static void error_reply(struct evhttp_request *req, int code, const char *msg, json_t *diags)
{
	json_t *body = json_pack("{s:s}", "error", msg);

	if (diags)
		json_object_set_new(body, "diagnostics", diags);
	api_json_reply(req, code, body);
}

void api_error(struct evhttp_request *req, int code, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error_reply(req, code, msg, NULL);
}

int caller_of(int fd, struct caller *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t groups[64];
	socklen_t glen = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	*c = (struct caller){ .uid = cred.uid, .gid = cred.gid, .pid = cred.pid };
	c->gids[c->gid_count++] = cred.gid;
	/* supplementary groups, as the kernel had them when the client connected */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
		for (size_t i = 0; i < glen / sizeof(gid_t) && c->gid_count < 64; i++)
			c->gids[c->gid_count++] = groups[i];
	return 0;
}

static int request_caller(struct evhttp_request *req, struct caller *c)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;

	return bev ? caller_of(bufferevent_getfd(bev), c) : -ENOTCONN;
}

/* ---- small helpers ------------------------------------------------------- */

static bool may_see(struct daemon *d, const struct caller *c, const char *tenant)
{
	return daemon_config_allows(&d->cfg, c->uid, c->gids, c->gid_count, tenant);
}

/* The query's value of `key` (NULL: absent); `q` is parsed from the request's URI. */
static const char *query(struct evkeyvalq *q, const char *key)
{
	return evhttp_find_header(q, key);
}

static int query_bool(struct evkeyvalq *q, const char *key, bool *out)
{
	const char *v = query(q, key);

	if (!v) {
		*out = false;
		return 0;
	}
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int query_u64(struct evkeyvalq *q, const char *key, uint64_t *out)
{
	const char *v = query(q, key);
	char *end;

	*out = 0;
	if (!v)
		return 0;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return (errno || end == v || *end || v[0] == '-') ? -EINVAL : 0;
}

/* ---- routes -------------------------------------------------------------- */

static void get_health(struct daemon *d, struct evhttp_request *req)
{
	api_json_reply(req, 200,
		       json_pack("{s:s,s:s,s:I,s:s,s:s}", "status", "ok", "version", TETHER_VERSION,
				 "runs_active", (json_int_t)d->live, "pin_dir", tl_pin_dir(),
				 "kernel", d->kernel));
}

static void get_metrics(struct daemon *d, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	static const char *const reasons[] = { "unknown", "succeeded", "failed", "cancelled",
					       "timed_out", "budget_exhausted", "refused" };

	for (struct drun *r = d->runs; r; r = r->next)
		if (r->state != DRUN_ENDED)
			drun_count_records(r);
	evbuffer_add_printf(b, "# HELP tether_runs_active Runs live on this node.\n"
			       "# TYPE tether_runs_active gauge\ntether_runs_active %zu\n", d->live);
	evbuffer_add_printf(b, "# HELP tether_runs_started_total Runs whose command started.\n"
			       "# TYPE tether_runs_started_total counter\n"
			       "tether_runs_started_total %llu\n", (unsigned long long)d->m.started);
	evbuffer_add_printf(b, "# HELP tether_runs_refused_total Runs refused before their command "
			       "started.\n# TYPE tether_runs_refused_total counter\n"
			       "tether_runs_refused_total %llu\n", (unsigned long long)d->m.refused);
	evbuffer_add_printf(b, "# HELP tether_runs_ended_total Runs that ended, by terminal reason.\n"
			       "# TYPE tether_runs_ended_total counter\n");
	for (size_t i = 1; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		evbuffer_add_printf(b, "tether_runs_ended_total{reason=\"%s\"} %llu\n", reasons[i],
				    (unsigned long long)d->m.ended[i]);
	evbuffer_add_printf(b, "# HELP tether_records_total Audit records of runs that ended.\n"
			       "# TYPE tether_records_total counter\ntether_records_total %llu\n",
			    (unsigned long long)d->m.records);
	evbuffer_add_printf(b, "# HELP tether_records_lost_total Audit records that found a run's "
			       "ring full.\n# TYPE tether_records_lost_total counter\n"
			       "tether_records_lost_total %llu\n", (unsigned long long)d->m.lost);
	evbuffer_add_printf(b, "# HELP tether_denials_total Refusals recorded, by record kind.\n"
			       "# TYPE tether_denials_total counter\n");
	for (int i = 0; i < METRIC_KINDS && metric_kind_names[i]; i++)
		evbuffer_add_printf(b, "tether_denials_total{kind=\"%s\"} %llu\n",
				    metric_kind_names[i], (unsigned long long)d->m.denials[i]);
	evbuffer_add_printf(b, "# HELP tether_api_forbidden_total API calls refused (403).\n"
			       "# TYPE tether_api_forbidden_total counter\n"
			       "tether_api_forbidden_total %llu\n", (unsigned long long)d->m.forbidden);
	evbuffer_add_printf(b, "# HELP tether_api_requests_total API replies, by status class.\n"
			       "# TYPE tether_api_requests_total counter\n");
	for (int i = 1; i < 6; i++)
		evbuffer_add_printf(b, "tether_api_requests_total{code=\"%dxx\"} %llu\n", i,
				    (unsigned long long)d->m.requests[i]);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4");
	count_reply(d, 200);
	evhttp_send_reply(req, 200, NULL, b);
	evbuffer_free(b);
}

static const char *const create_keys[] = {
	"envelope", "policy", "envelope_name", "argv", "env", "cwd", "workspace", "run_id",
	"tenant", "traceparent", "retry_of", "stdin", "stdio", "stdio_token", "audit_allowed",
	"audit_sinks", NULL,
};

static bool known_key(const char *key)
{
	for (const char *const *k = create_keys; *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/* A member that must be a string when present: its value, or NULL (absent). */
static int opt_string(json_t *body, const char *key, const char **out, char *msg, size_t len)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(msg, len, "%s: must be a string", key);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

/*
 * audit_sinks: names of the configuration's sinks (docs/daemon.md, "sinks")
 * that get this run's records besides the node-wide ones; each once.  The
 * names point into `body`.  0, or -EINVAL with `msg` filled.
 */
static int audit_sinks_of(struct daemon *d, json_t *body, const char ***names, size_t *count,
			  char *msg, size_t len)
{
	json_t *list = json_object_get(body, "audit_sinks"), *item;
	size_t i, configured = d->cfg.sink_count;

	*names = NULL;
	*count = 0;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list)) {
		snprintf(msg, len, "audit_sinks: must be an array of the names of sinks the daemon "
				   "configuration lists (it lists %zu)", configured);
		return -EINVAL;
	}
	*names = calloc(json_array_size(list) + 1, sizeof(**names));
	if (!*names) {
		snprintf(msg, len, "out of memory");
		return -EINVAL;
	}
	json_array_foreach(list, i, item) {
		const char *name = json_string_value(item);

		if (!name || strlen(name) != json_string_length(item)) {
			snprintf(msg, len, "audit_sinks[%zu]: must be a sink's name (a string)", i);
			return -EINVAL;
		}
		if (!daemon_config_sink(&d->cfg, name)) {
			snprintf(msg, len, "audit_sinks[%zu]: the daemon configuration has no sink "
					   "named '%.64s'%s (docs/daemon.md, \"sinks\")", i, name,
				 configured ? "" : ": it lists none");
			return -EINVAL;
		}
		for (size_t j = 0; j < *count; j++) {
			if (strcmp((*names)[j], name) == 0) {
				snprintf(msg, len, "audit_sinks[%zu]: '%.64s' is listed twice", i,
					 name);
				return -EINVAL;
			}
		}
		(*names)[(*count)++] = name;
	}
	return 0;
}

static void post_runs(struct daemon *d, struct evhttp_request *req, const struct caller *c)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct create_request cr = { .passed = { -1, -1, -1 }, .caller = *c };
	char msg[2048] = "", *decoded = NULL;
	const char *envelope = NULL, *policy_b64 = NULL, *stdin_mode = NULL, *stdio = NULL;
	const char *token = NULL, *workspace = NULL, *key;
	json_t *body, *argv, *value, *diags = NULL;
	json_error_t jerr;
	struct drun *r = NULL;
	char **args = NULL;
	size_t i;
	int code;

	body = json_loadb((const char *)evbuffer_pullup(in, (ev_ssize_t)len), len,
			  JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(body)) {
		json_decref(body);
		api_error(req, 400, "the request body is not a JSON object: %s (line %d, column %d)",
			  jerr.text, jerr.line, jerr.column);
		return;
	}
	json_object_foreach(body, key, value) {
		if (!known_key(key)) {
			snprintf(msg, sizeof(msg), "unknown member '%s' (see docs/api.yaml)", key);
			goto bad;
		}
	}
	if (opt_string(body, "envelope", &envelope, msg, sizeof(msg)) ||
	    opt_string(body, "policy", &policy_b64, msg, sizeof(msg)) ||
	    opt_string(body, "envelope_name", &cr.envelope_name, msg, sizeof(msg)) ||
	    opt_string(body, "cwd", &cr.cwd, msg, sizeof(msg)) ||
	    opt_string(body, "workspace", &workspace, msg, sizeof(msg)) ||
	    opt_string(body, "run_id", &cr.run_id, msg, sizeof(msg)) ||
	    opt_string(body, "tenant", &cr.tenant, msg, sizeof(msg)) ||
	    opt_string(body, "traceparent", &cr.traceparent, msg, sizeof(msg)) ||
	    opt_string(body, "retry_of", &cr.retry_of, msg, sizeof(msg)) ||
	    opt_string(body, "stdin", &stdin_mode, msg, sizeof(msg)) ||
	    opt_string(body, "stdio", &stdio, msg, sizeof(msg)) ||
	    opt_string(body, "stdio_token", &token, msg, sizeof(msg)))
		goto bad;
	if (!envelope == !policy_b64) {
		snprintf(msg, sizeof(msg), "give exactly one of 'envelope' (YAML text) and 'policy' "
					   "(a compiled policy, base64)");
		goto bad;
	}
	if (envelope) {
		cr.envelope = envelope;
		cr.envelope_len = json_string_length(json_object_get(body, "envelope"));
	} else if (base64_decode(policy_b64, strlen(policy_b64), &decoded, &cr.envelope_len)) {
		snprintf(msg, sizeof(msg), "policy: not base64 (RFC 4648, padded)");
		goto bad;
	} else {
		cr.envelope = decoded;
	}
	if (!cr.envelope_name)
		cr.envelope_name = "envelope";
	if (!cr.tenant)
		cr.tenant = "default";
	cr.workspace = workspace;
	if (cr.cwd && cr.cwd[0] != '/') {
		snprintf(msg, sizeof(msg), "cwd: must be an absolute path");
		goto bad;
	}
	if (cr.traceparent && !run_traceparent_valid(cr.traceparent)) {
		snprintf(msg, sizeof(msg), "traceparent: not a W3C trace context "
					   "(00-<32 hex>-<16 hex>-<2 hex>)");
		goto bad;
	}
	if (stdin_mode && strcmp(stdin_mode, "null") != 0 && strcmp(stdin_mode, "pipe") != 0) {
		snprintf(msg, sizeof(msg), "stdin: must be \"null\" or \"pipe\"");
		goto bad;
	}
	cr.stdin_pipe = stdin_mode && strcmp(stdin_mode, "pipe") == 0;
	value = json_object_get(body, "audit_allowed");
	if (value && !json_is_boolean(value)) {
		snprintf(msg, sizeof(msg), "audit_allowed: must be true or false");
		goto bad;
	}
	cr.audit_allowed = json_is_true(value);
	if (audit_sinks_of(d, body, &cr.audit_sinks, &cr.audit_sink_count, msg, sizeof(msg)))
		goto bad;
	cr.env = json_object_get(body, "env");
	if (cr.env) {
		if (!json_is_object(cr.env)) {
			snprintf(msg, sizeof(msg), "env: must be an object of names to string values");
			goto bad;
		}
		json_object_foreach(cr.env, key, value) {
			if (!json_is_string(value) || strlen(json_string_value(value)) !=
							      json_string_length(value)) {
				snprintf(msg, sizeof(msg), "env: %s: the value must be a string "
							   "without NUL", key);
				goto bad;
			}
		}
	}
	argv = json_object_get(body, "argv");
	if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > 4096) {
		snprintf(msg, sizeof(msg), "argv: must be a non-empty array of strings");
		goto bad;
	}
	args = calloc(json_array_size(argv) + 1, sizeof(char *));
	if (!args) {
		snprintf(msg, sizeof(msg), "out of memory");
		goto bad;
	}
	json_array_foreach(argv, i, value) {
		if (!json_is_string(value) ||
		    strlen(json_string_value(value)) != json_string_length(value)) {
			snprintf(msg, sizeof(msg), "argv[%zu]: must be a string without NUL", i);
			goto bad;
		}
		args[i] = (char *)json_string_value(value);
	}
	cr.argv = args;
	if (stdio && strcmp(stdio, "passed") != 0) {
		snprintf(msg, sizeof(msg), "stdio: must be \"passed\" (with stdio_token)");
		goto bad;
	}
	if (!stdio != !token) {
		snprintf(msg, sizeof(msg), "stdio and stdio_token go together");
		goto bad;
	}
	if (stdio && cr.stdin_pipe) {
		snprintf(msg, sizeof(msg), "stdin: \"pipe\" and stdio: \"passed\" exclude each other");
		goto bad;
	}
	if (token && stdio_claim(d, token, c->uid, cr.passed)) {
		snprintf(msg, sizeof(msg), "stdio_token: no descriptors of uid %u wait under that "
					   "token (pass them on the stdio socket first)", c->uid);
		goto bad;
	}
	code = drun_create(d, &cr, &r, msg, sizeof(msg), &diags);
	if (code) {
		for (int k = 0; k < 3; k++)
			if (cr.passed[k] >= 0)
				close(cr.passed[k]);
		if (code == 403) {
			d->m.forbidden++;
			daemon_node_record(d, "forbidden", c, msg);
		}
		error_reply(req, code, msg, diags);
	} else {
		api_json_reply(req, 201, json_incref(r->rec));
	}
	free(cr.audit_sinks);
	free(args);
	free(decoded);
	json_decref(body);
	return;
bad:
	free(cr.audit_sinks);
	free(args);
	free(decoded);
	json_decref(body);
	error_reply(req, 400, msg, NULL);
}

static void get_runs(struct daemon *d, struct evhttp_request *req, const struct caller *c,
		     struct evkeyvalq *q)
{
	const char *state = query(q, "state"), *tenant = query(q, "tenant");
	json_t *list = json_array();

	if (state && strcmp(state, "running") && strcmp(state, "ended")) {
		json_decref(list);
		api_error(req, 400, "state: must be running (created ones included) or ended");
		return;
	}
	for (struct drun *r = d->runs; r; r = r->next) {
		bool ended = r->state == DRUN_ENDED;

		if (!may_see(d, c, r->tenant) || (tenant && strcmp(tenant, r->tenant)) ||
		    (state && ended != (strcmp(state, "ended") == 0)))
			continue;
		json_array_append(list, r->rec);
	}
	api_json_reply(req, 200, json_pack("{s:o}", "runs", list));
}

/* The client went away mid-stream: its request is freed with the connection. */
static void follower_gone(struct evhttp_connection *conn, void *arg)
{
	struct follower *f = arg;

	f->req = NULL;
}

static void follow(struct daemon *d, struct evhttp_request *req, struct drun *r,
		   enum follow_kind kind, struct evkeyvalq *q)
{
	struct follower *f;
	bool follow_on;
	uint64_t n;

	if (query_bool(q, "follow", &follow_on) ||
	    query_u64(q, kind == FOLLOW_RECORDS ? "seq" : "offset", &n)) {
		api_error(req, 400, "follow must be true or false; %s a number",
			  kind == FOLLOW_RECORDS ? "seq" : "offset");
		return;
	}
	if (kind != FOLLOW_RECORDS && r->stdio_passed) {
		api_error(req, 404, "run %s's output went to its client's descriptors; nothing was "
				    "captured", r->id);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		api_error(req, 500, "out of memory");
		return;
	}
	*f = (struct follower){ .run = r, .req = req, .kind = kind, .follow = follow_on };
	if (kind == FOLLOW_RECORDS)
		f->from_seq = n;
	else
		f->offset = (off_t)n;
	f->next = r->followers;
	r->followers = f;
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  kind == FOLLOW_RECORDS ? "application/x-ndjson"
						 : "application/octet-stream");
	count_reply(d, 200);
	evhttp_send_reply_start(req, 200, NULL);
	evhttp_connection_set_closecb(evhttp_request_get_connection(req), follower_gone, f);
	drun_follow_poll(r);
	daemon_tick_arm(d);
}

static void post_stdin(struct evhttp_request *req, struct drun *r, struct evkeyvalq *q)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	bool close_after;
	int ret;

	if (query_bool(q, "close", &close_after)) {
		api_error(req, 400, "close must be true or false");
		return;
	}
	if (r->stdin_pipe < 0) {
		api_error(req, 409, "run %s has no open stdin pipe (create it with \"stdin\": \"pipe\"; "
				    "it closes once closed or ended)", r->id);
		return;
	}
	ret = drun_write_stdin(r, evbuffer_pullup(in, (ev_ssize_t)len), len, close_after);
	if (ret) {
		api_error(req, 409, "writing run %s's stdin: %s", r->id, strerror(-ret));
		return;
	}
	api_json_reply(req, 200, json_pack("{s:I,s:b}", "written", (json_int_t)len, "closed",
					   close_after));
}

/*
 * GET /v1/runs/{id}/artifacts/{path}: an artifact the run exported (its
 * record, in /records, says "exported" with its size and sha256), once the
 * run has ended.  Found beneath the run's artifacts directory only, no link
 * followed; quarantined files are not served (they are the node's evidence).
 */
static void get_artifact(struct evhttp_request *req, struct drun *r, const char *raw)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	size_t len = 0;
	char *path = evhttp_uridecode(raw, 0, &len);
	struct evbuffer *buf;
	struct stat st;
	int dir = -1, fd = -1;

	if (!path || !len || strlen(path) != len || path[0] == '/') {
		api_error(req, 400, "an artifact's path is relative to the workspace, as its record "
				    "names it");
		goto out;
	}
	if (r->state != DRUN_ENDED) {
		api_error(req, 409, "run %s has not ended: its artifacts leave the workspace when its "
				    "process tree is empty", r->id);
		goto out;
	}
	dir = drun_openat(r, DRUN_ARTIFACTS_DIR, O_RDONLY | O_DIRECTORY);
	if (dir < 0) {
		api_error(req, 404, "run %s declares no artifacts", r->id);
		goto out;
	}
	fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		api_error(req, 404, "run %s exported no artifact '%s' (its records say what became "
				    "of each)", r->id, path);
		goto out;
	}
	buf = evbuffer_new();
	if (!buf || (st.st_size > 0 && evbuffer_add_file(buf, fd, 0, st.st_size) < 0)) {
		if (buf)
			evbuffer_free(buf);
		api_error(req, 500, "reading artifact '%s' of run %s failed", path, r->id);
		goto out;
	}
	if (st.st_size > 0)
		fd = -1;	/* the buffer owns it */
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/octet-stream");
	count_reply(api_daemon, 200);
	evhttp_send_reply(req, 200, NULL, buf);
	evbuffer_free(buf);
out:
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	free(path);
}

/* /v1/runs/{id}[/{what}]: the run, or 404 (also for a tenant the caller may not see). */
static void run_route(struct daemon *d, struct evhttp_request *req, const struct caller *c,
		      const char *rest, struct evkeyvalq *q)
{
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	char id[80];
	const char *slash = strchr(rest, '/'), *what = slash ? slash + 1 : "";
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
	struct drun *r;

	if (n == 0 || n >= sizeof(id)) {
		api_error(req, 404, "no such run");
		return;
	}
	memcpy(id, rest, n);
	id[n] = 0;
	r = drun_find(d, id);
	if (!r || !may_see(d, c, r->tenant)) {
		api_error(req, 404, "no run '%s'", id);
		return;
	}
	if (!*what) {
		if (method != EVHTTP_REQ_GET)
			goto method;
		api_json_reply(req, 200, json_incref(r->rec));
	} else if (strcmp(what, "records") == 0 || strcmp(what, "stdout") == 0 ||
		   strcmp(what, "stderr") == 0) {
		if (method != EVHTTP_REQ_GET)
			goto method;
		follow(d, req, r,
		       what[0] == 'r' ? FOLLOW_RECORDS : what[3] == 'o' ? FOLLOW_STDOUT
									 : FOLLOW_STDERR, q);
	} else if (strcmp(what, "cancel") == 0) {
		char why[128];

		if (method != EVHTTP_REQ_POST)
			goto method;
		snprintf(why, sizeof(why), "cancelled through the API by uid %u (pid %d)", c->uid,
			 c->pid);
		if (drun_cancel(r, why)) {
			api_error(req, 409, "run %s has ended", r->id);
			return;
		}
		api_json_reply(req, 202, json_incref(r->rec));
	} else if (strcmp(what, "stdin") == 0) {
		if (method != EVHTTP_REQ_POST)
			goto method;
		post_stdin(req, r, q);
	} else if (strncmp(what, "artifacts/", 10) == 0) {
		if (method != EVHTTP_REQ_GET)
			goto method;
		get_artifact(req, r, what + 10);
	} else {
		api_error(req, 404, "no such path");
	}
	return;
method:
	api_error(req, 405, "method not allowed here (see docs/api.yaml)");
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct daemon *d = arg;
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	const char *qs = uri ? evhttp_uri_get_query(uri) : NULL;
	struct evkeyvalq q = { 0 };
	struct caller c;

	TAILQ_INIT(&q);
	if (request_caller(req, &c)) {
		api_error(req, 500, "the caller's credentials cannot be read");
		return;
	}
	if (!daemon_config_allows(&d->cfg, c.uid, c.gids, c.gid_count, NULL)) {
		d->m.forbidden++;
		daemon_node_record(d, "forbidden", &c, path ? path : "");
		api_error(req, 403, "uid %u (gid %u) may not call this daemon (callers in %s)", c.uid,
			  c.gid, d->opts.config_path);
		return;
	}
	if (!path || (qs && evhttp_parse_query_str(qs, &q))) {
		api_error(req, 400, "the request's URI cannot be parsed");
		return;
	}
	if (strcmp(path, "/v1/health") == 0) {
		if (method != EVHTTP_REQ_GET)
			api_error(req, 405, "method not allowed here");
		else
			get_health(d, req);
	} else if (strcmp(path, "/metrics") == 0) {
		if (method != EVHTTP_REQ_GET)
			api_error(req, 405, "method not allowed here");
		else
			get_metrics(d, req);
	} else if (strcmp(path, "/v1/runs") == 0) {
		if (method == EVHTTP_REQ_POST)
			post_runs(d, req, &c);
		else if (method == EVHTTP_REQ_GET)
			get_runs(d, req, &c, &q);
		else
			api_error(req, 405, "method not allowed here");
	} else if (strncmp(path, "/v1/runs/", 9) == 0) {
		run_route(d, req, &c, path + 9, &q);
	} else {
		api_error(req, 404, "no such path (see docs/api.yaml)");
	}
	evhttp_clear_headers(&q);
}

int api_init(struct daemon *d)
{
	api_daemon = d;
	d->http = evhttp_new(d->base);
	if (!d->http)
		return -ENOMEM;
	evhttp_set_max_body_size(d->http, API_MAX_BODY);
	evhttp_set_allowed_methods(d->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
						    EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD);
	/* a follow stream may stay quiet for long: idle connections still end */
	evhttp_set_timeout(d->http, 3600);
	evhttp_set_gencb(d->http, on_request, d);
	if (!evhttp_accept_socket_with_handle(d->http, d->http_fd))
		return -EIO;
	return 0;
}
