// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's runs: each a run object (runtime/run/run.h) on the daemon's
 * event loop, with its journal (runtime/daemon/journal.h) written before
 * every transition is acted on or reported, and its API record (the Run
 * object of docs/api.yaml) rebuilt from that journal the same way live and
 * after a restart (drun_apply).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/clock.h"
#include "common/version.h"
#include "loader/loader.h"
#include "policyc/policy.h"
#include "policyc/policyc_internal.h"
#include "runtime/daemon/internal.h"
#include "runtime/daemon/journal.h"
#include "runtime/fsutil.h"
#include "runtime/runs.h"


const char *const metric_kind_names[METRIC_KINDS] = {
	"fs", "proc", "capability", "kernel", "unix", "net", "dns", "run", "other",
};

static const char *const limit_keys[TP_LIMIT_COUNT] = {
#define X(id, key) [id] = key,
	X(TP_LIMIT_WALL_CLOCK_MS, "wall_clock_ms")
	X(TP_LIMIT_CPU_MILLI, "cpu_milli")
	X(TP_LIMIT_MEMORY_BYTES, "memory_bytes")
	X(TP_LIMIT_PROCESS_COUNT, "process_count")
	X(TP_LIMIT_OPEN_FILES, "open_files")
	X(TP_LIMIT_OUTPUT_BYTES, "output_bytes")
	X(TP_LIMIT_LEASE_MS, "lease_ms")
	X(TP_LIMIT_WORKSPACE_BYTES, "workspace_max_bytes")
#undef X
};

/* ---- the Run object, from journal events -------------------------------- */

static const char *state_name(enum drun_state s)
{
	return s == DRUN_CREATED ? "created" : s == DRUN_RUNNING ? "running" : "ended";
}

/* Sets rec.times.<key> and appends a transition. */
static void rec_transition(json_t *rec, const char *state, const char *time_key, json_t *ev)
{
	json_t *time = json_object_get(ev, "time");
	json_t *times = json_object_get(rec, "times"), *tr = json_object_get(rec, "transitions");

	if (times && time_key)
		json_object_set(times, time_key, time);
	if (tr)
		json_array_append_new(tr, json_pack("{s:s,s:O}", "state", state, "time", time));
}

/* An event's members, but its name and time, into the Run object. */
static void copy_members(json_t *rec, json_t *ev)
{
	const char *key;
	json_t *value;

	json_object_foreach(ev, key, value)
		if (strcmp(key, "event") && strcmp(key, "time"))
			json_object_set(rec, key, value);
}

/*
 * Applies one journal event to the Run object; the state it leaves the
 * run in.  The same for a live run and for one read back at start.
 */
static enum drun_state drun_apply(json_t *rec, json_t *ev, enum drun_state state)
{
	const char *name = json_string_value(json_object_get(ev, "event"));

	if (!name)
		return state;
	if (strcmp(name, "created") == 0) {
		json_object_update(rec, json_object_get(ev, "run"));
		json_object_set_new(rec, "state", json_string("created"));
		rec_transition(rec, "created", "created", ev);
		return DRUN_CREATED;
	}
	if (strcmp(name, "running") == 0) {
		copy_members(rec, ev);
		json_object_set_new(rec, "state", json_string("running"));
		rec_transition(rec, "running", "started", ev);
		return DRUN_RUNNING;
	}
	if (strcmp(name, "cancel") == 0) {
		json_object_set(rec, "cancel_requested", json_object_get(ev, "why"));
		return state;
	}
	if (strcmp(name, "adopted") == 0) {
		json_t *list = json_object_get(rec, "adopted");
		json_t *copy = json_deep_copy(ev);

		json_object_del(copy, "event");
		json_array_append_new(list, copy);
		return state;
	}
	if (strcmp(name, "ended") == 0) {
		copy_members(rec, ev);
		json_object_set_new(rec, "state", json_string("ended"));
		rec_transition(rec, "ended", "ended", ev);
		if (json_object_get(ev, "cleanup") != json_null())
			json_object_set(json_object_get(rec, "times"), "cleaned",
					json_object_get(ev, "time"));
		return DRUN_ENDED;
	}
	return state;
}

static json_t *rec_new(void)
{
	return json_pack("{s:n,s:n,s:n,s:n,s:{s:n,s:n,s:n,s:n},s:[],s:n,s:n,s:[]}", "reason", "budget",
			 "exit_status", "error", "times", "created", "started", "ended",
			 "cleaned", "transitions", "cleanup", "counters", "adopted");
}

/* ---- journal writes ------------------------------------------------------ */

/* Journals `ev` (stolen) as `name`, then applies it.  A failed write is logged and returned. */
static int drun_journal(struct drun *r, const char *name, json_t *ev)
{
	int ret = -EBADF;

	if (!ev)
		return -ENOMEM;
	if (r->journal_fd >= 0)
		ret = journal_append(r->journal_fd, name, ev);
	if (ret)
		daemon_log(r->d, "run %s: writing the journal (%s): %s", r->id, name,
			   strerror(-ret));
	else
		r->state = drun_apply(r->rec, ev, r->state);
	json_decref(ev);
	return ret;
}

/* ---- helpers ------------------------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static const char *error_kind_name(enum run_error_kind k)
{
	switch (k) {
	case RUN_ERROR_REFUSED:
		return "refused";
	case RUN_ERROR_INVALID:
		return "invalid";
	case RUN_ERROR_USAGE:
		return "usage";
	default:
		return "setup";
	}
}

static json_t *error_json(const struct run_error *err)
{
	json_t *e = json_pack("{s:s,s:s}", "kind", error_kind_name(err->kind), "message",
			      err->msg[0] ? err->msg : "the run could not be set up");

	if (err->has_report) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (f) {
			doctor_print(&err->report, f);
			fclose(f);
			json_object_set_new(e, "report", json_string(text ? text : ""));
			free(text);
		}
	}
	return e;
}

static void run_log_fn(void *ctx, const char *fmt, va_list ap)
{
	struct drun *r = ctx;
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	daemon_log(r->d, "run %s: %s", r->id, line);
	json_array_append_new(json_object_get(r->rec, "messages"), json_string(line));
}

struct drun *drun_find(struct daemon *d, const char *id)
{
	for (struct drun *r = d->runs; r; r = r->next)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

static struct drun *drun_alloc(struct daemon *d, const char *id)
{
	struct drun *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->d = d;
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->dir_fd = r->journal_fd = r->stdin_pipe = -1;
	r->stdio[0] = r->stdio[1] = r->stdio[2] = -1;
	r->out[0] = r->out[1] = -1;
	r->rec = rec_new();
	json_object_set_new(r->rec, "messages", json_array());
	return r;
}

void drun_free(struct drun *r)
{
	if (!r)
		return;
	for (struct follower *f = r->followers, *n; f; f = n) {
		n = f->next;
		if (f->req)
			evhttp_send_reply_end(f->req);
		free(f->partial);
		free(f);
	}
	if (r->ev)
		event_free(r->ev);
	if (r->lease_ev)
		event_free(r->lease_ev);
	run_free(r->run);
	free(r->sinks);
	tp_policy_free(r->policy);
	free_strv(r->argv);
	free_strv(r->environ);
	for (int i = 0; i < 3; i++)
		close_fd(&r->stdio[i]);
	close_fd(&r->out[0]);
	close_fd(&r->out[1]);
	close_fd(&r->stdin_pipe);
	close_fd(&r->journal_fd);
	close_fd(&r->dir_fd);
	json_decref(r->rec);
	free(r);
}

/*
 * Opens `name` in the run's directory.  A live run holds the directory
 * open; an ended one does not (a daemon that has served thousands of runs
 * would hold thousands of descriptors), so it is opened for the call.
 */
int drun_openat(struct drun *r, const char *name, int flags)
{
	int dir, fd, e;

	if (r->dir_fd >= 0)
		return openat(r->dir_fd, name, flags | O_CLOEXEC | O_NOFOLLOW);
	dir = openat(r->d->runs_fd, r->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dir < 0)
		return -1;
	fd = openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW);
	e = errno;
	close(dir);
	errno = e;
	return fd;
}

/* ---- a run ends ---------------------------------------------------------- */

static json_t *counters_json(struct drun *r, const struct run_info *info)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "records", (json_int_t)info->records,
			 "lost", (json_int_t)info->audit_lost, "coalesced",
			 (json_int_t)info->coalesced, "seq_last", (json_int_t)info->seq_last,
			 "output_bytes", (json_int_t)info->output_bytes, "egress_bytes",
			 (json_int_t)info->egress_bytes);
}

/*
 * The command exited, or the run can no longer be supervised: tear it down
 * (kill what is left, drain, remove every trace, cleanup and end records),
 * then journal how it ended.
 */
void drun_finish(struct drun *r)
{
	struct run_result res = { 0 };
	struct run_error err;
	struct run_info info;
	json_t *ev;
	int ret;

	if (r->ev) {
		event_free(r->ev);
		r->ev = NULL;
	}
	if (r->lease_ev) {
		event_free(r->lease_ev);
		r->lease_ev = NULL;
	}
	ret = run_teardown(r->run, &res, &err);
	run_get_info(r->run, &info);
	ev = json_pack("{s:s,s:o,s:o,s:o,s:{s:b,s:i},s:o}", "reason",
		       ret && res.reason == RUN_REASON_SUCCEEDED ? "failed"
								 : run_reason_name(res.reason),
		       "budget", res.budget ? json_string(res.budget) : json_null(),
		       "exit_status", res.exit_status >= 0 ? json_integer(res.exit_status) : json_null(),
		       "error",
		       ret ? json_pack("{s:s,s:s}", "kind", "setup", "message",
				       "the run's cleanup could not be verified, or its audit "
				       "stream could not be written")
			   : json_null(),
		       "cleanup", "verified", res.cleanup_verified, "killed", 0,
		       "counters", counters_json(r, &info));
	drun_journal(r, "ended", ev);
	r->d->m.ended[res.reason < 8 ? res.reason : 0]++;
	r->d->m.records += info.records;
	r->d->m.lost += info.audit_lost;
	if (r->d->live)
		r->d->live--;
	run_free(r->run);
	r->run = NULL;
	close_fd(&r->journal_fd);
	close_fd(&r->stdin_pipe);
	for (int i = 0; i < 3; i++)
		close_fd(&r->stdio[i]);
	close_fd(&r->out[0]);
	close_fd(&r->out[1]);
	drun_count_records(r);
	drun_follow_poll(r);
	/* what is left is read through drun_openat */
	close_fd(&r->dir_fd);
}

static void on_run_event(evutil_socket_t fd, short what, void *arg)
{
	struct drun *r = arg;
	struct run_error err;
	int ret = run_dispatch(r->run, 0, NULL, &err);

	if (ret)
		daemon_log(r->d, "run %s: %s", r->id, err.msg[0] ? err.msg : strerror(-ret));
	if (ret || run_exited(r->run))
		drun_finish(r);
	else
		daemon_tick_arm(r->d);
}

int drun_cancel(struct drun *r, const char *why)
{
	if (r->state == DRUN_ENDED || !r->run)
		return -EALREADY;
	drun_journal(r, "cancel", json_pack("{s:s}", "why", why));
	run_cancel(r->run, why);
	return 0;
}

int drun_write_stdin(struct drun *r, const void *data, size_t len, bool close_after)
{
	int ret;

	if (r->stdin_pipe < 0)
		return -EPIPE;
	ret = write_all(r->stdin_pipe, data, len);
	if (ret)
		return ret;
	if (close_after)
		close_fd(&r->stdin_pipe);
	return 0;
}

/* ---- creating a run ------------------------------------------------------ */

/*
 * The declared artifacts of a run of the API go to <state>/runs/<id>/artifacts
 * (root's, 0700; findings of artifacts.scan to artifacts.quarantine beside
 * it), made now; GET /v1/runs/{id}/artifacts/{path} serves the exported ones.
 */
static int artifacts_dir_make(struct daemon *d, struct drun *r)
{
	if (!r->policy->artifact_count)
		return 0;
	if ((size_t)snprintf(r->artifacts_dir, sizeof(r->artifacts_dir), "%s/%s/" DRUN_ARTIFACTS_DIR,
			     d->runs_path, r->id) >= sizeof(r->artifacts_dir))
		return -ENAMETOOLONG;
	return mkdirat(r->dir_fd, DRUN_ARTIFACTS_DIR, 0700) < 0 ? -errno : 0;
}

static int open_capture(struct drun *r, const char *name)
{
	return openat(r->dir_fd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		      0600);
}

static bool env_name_listed(const struct tp_policy *p, const char *name)
{
	if (tp_env_name_is_default(name))
		return true;
	for (size_t i = 0; i < p->env_name_count; i++)
		if (strcmp(p->env_names[i], name) == 0)
			return true;
	return false;
}

static int fail(int code, char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(int code, char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return code;
}

static json_t *diags_json(const struct tp_diags *diags)
{
	json_t *arr = json_array();
	char *text = NULL;

	if (tp_diags_format(diags, &text) == 0 && text) {
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			json_array_append_new(arr, json_string(line));
	}
	free(text);
	return arr;
}

static json_t *gaps_json(const struct tp_policy *p)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < p->gap_count; i++)
		json_array_append_new(arr, json_string(p->gaps[i]));
	return arr;
}

static json_t *limits_json(const struct tp_policy *p)
{
	json_t *o = json_object();

	for (int i = 0; i < TP_LIMIT_COUNT; i++)
		if (limit_keys[i])
			json_object_set_new(o, limit_keys[i],
					    p->limits[i] ? json_integer((json_int_t)p->limits[i])
							 : json_null());
	return o;
}

static json_t *argv_json(char **argv)
{
	json_t *arr = json_array();

	for (char **a = argv; *a; a++)
		json_array_append_new(arr, json_string(*a));
	return arr;
}

/* The daemon's name for the BPF object: the last part of the pin directory. */
static const char *bpf_digest(void)
{
	const char *dir = tl_pin_dir(), *slash = strrchr(dir, '/');

	return slash ? slash + 1 : dir;
}

static void drun_link(struct daemon *d, struct drun *r)
{
	r->next = d->runs;
	d->runs = r;
}

/*
 * The command's descriptors: the client's (passed), else /dev/null or a
 * pipe for stdin and the run directory's capture files for its output.
 */
static int setup_stdio(struct drun *r, const struct create_request *req)
{
	if (req->passed[0] >= 0) {
		for (int i = 0; i < 3; i++)
			r->stdio[i] = req->passed[i];
		r->stdio_passed = true;
	} else {
		int p[2];

		if (req->stdin_pipe) {
			if (pipe2(p, O_CLOEXEC) < 0)
				return -errno;
			r->stdio[0] = p[0];
			r->stdin_pipe = p[1];
		} else {
			r->stdio[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		}
		r->stdio[1] = open_capture(r, "stdout");
		r->stdio[2] = open_capture(r, "stderr");
		if (r->stdio[0] < 0 || r->stdio[1] < 0 || r->stdio[2] < 0)
			return -errno;
	}
	/* resources.output_bytes: the capture pipes' bytes go where the output would */
	for (int i = 0; i < 2; i++) {
		r->out[i] = fcntl(r->stdio[i + 1], F_DUPFD_CLOEXEC, 3);
		if (r->out[i] < 0)
			return -errno;
	}
	return 0;
}

static char **build_environ(json_t *env)
{
	size_t n = env ? json_object_size(env) : 0, i = 0;
	char **v = calloc(n + 1, sizeof(char *));
	const char *key;
	json_t *value;

	if (!v)
		return NULL;
	if (env) {
		json_object_foreach(env, key, value) {
			if (asprintf(&v[i], "%s=%s", key, json_string_value(value)) < 0) {
				free_strv(v);
				return NULL;
			}
			i++;
		}
	}
	return v;
}

/*
 * Whether a rule of `policy` reaches one of the daemon's own files: the
 * node log's key, the node log, the journals and records, the spools, the
 * files of its sinks.  A rule at or below one does; so does one above it
 * (a subtree) unless a built-in protected path lies between, which keeps
 * every run out (policyc/path.c: /var/lib/tether, ...).  Workspaces below
 * the state directory (/var/lib/tether/workspaces/...) reach none of them.
 * Returns the rule's path, with the file it reaches in `what`, or NULL.
 */
static const char *reaches_daemon_files(const struct daemon *d, const struct tp_policy *policy,
					char *what, size_t len)
{
	char key[PATH_MAX], audit[PATH_MAX], runs[PATH_MAX], spool[PATH_MAX];
	const char *own[8 + 2 * 16];
	size_t n = 0;

	snprintf(audit, sizeof(audit), "%s/" DAEMON_NODE_LOG_DIR, d->cfg.state_dir);
	snprintf(runs, sizeof(runs), "%s/runs", d->cfg.state_dir);
	snprintf(spool, sizeof(spool), "%s/spool", d->cfg.state_dir);
	own[n++] = daemon_node_log_key(d, key, sizeof(key));
	own[n++] = audit;
	own[n++] = runs;
	own[n++] = spool;
	for (size_t i = 0; i < d->cfg.sink_count && n + 2 <= sizeof(own) / sizeof(own[0]); i++) {
		if (d->cfg.sinks[i].type == DAEMON_SINK_JSONL_FILE)
			own[n++] = d->cfg.sinks[i].path;
		if (d->cfg.sinks[i].key_file)
			own[n++] = d->cfg.sinks[i].key_file;
	}
	for (size_t i = 0; i < policy->path_rule_count; i++) {
		const struct tp_path_rule *r = &policy->path_rules[i];

		if (!r->access)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (tp_path_within(r->path, own[j]) ||
			    (r->kind == TP_PATH_SUBTREE && tp_path_within(own[j], r->path) &&
			     !tp_path_protected_between(r->path, own[j]))) {
				snprintf(what, len, "%s", own[j]);
				return r->path;
			}
		}
	}
	return NULL;
}

static int check_request(struct daemon *d, const struct create_request *req, const char *id,
			 struct tp_policy **policy_out, uint8_t envelope_digest[32],
			 unsigned int *attempt, char *msg, size_t msg_len, json_t **diagnostics)
{
	const struct tp_run_binding bind = { id, req->workspace };
	char digest_text[TP_DIGEST_TEXT_MAX];
	struct tp_diags diags = { 0 };
	struct tp_policy *policy = NULL;
	const char *key;
	json_t *value;
	int r;

	if (!daemon_tenant_valid(req->tenant))
		return fail(400, msg, msg_len,
			    "invalid tenant '%s': use 1 to 64 of [A-Za-z0-9._-]", req->tenant);
	if (!daemon_config_allows(&d->cfg, req->caller.uid, req->caller.gids,
				  req->caller.gid_count, req->tenant))
		return fail(403, msg, msg_len, "uid %u may not create runs of tenant '%s'",
			    req->caller.uid, req->tenant);
	if (req->run_id && !run_id_valid(req->run_id))
		return fail(400, msg, msg_len,
			    "invalid run id '%s': use 1 to 64 of [A-Za-z0-9._-], not '.' or '..'",
			    req->run_id);
	if (req->retry_of) {
		struct drun *old = drun_find(d, req->retry_of);

		if (!old || strcmp(old->tenant, req->tenant) != 0)
			return fail(404, msg, msg_len, "retry_of: no run '%s' of tenant '%s'",
				    req->retry_of, req->tenant);
		if (old->state != DRUN_ENDED)
			return fail(409, msg, msg_len,
				    "retry_of: run '%s' has not ended; cancel it first",
				    req->retry_of);
		*attempt = (unsigned int)json_integer_value(json_object_get(old->rec, "attempt")) + 1;
	}
	if (d->live >= d->cfg.max_runs)
		return fail(503, msg, msg_len, "%zu runs are live, the most this daemon allows "
					       "(max_runs in its configuration)", d->live);
	r = tp_policy_load_bound(req->envelope_name, req->envelope, req->envelope_len, &bind, &policy,
				 envelope_digest, &diags);
	if (r) {
		*diagnostics = diags_json(&diags);
		tp_diags_free(&diags);
		return fail(400, msg, msg_len, "%s is not a valid envelope or compiled policy",
			    req->envelope_name);
	}
	tp_diags_free(&diags);
	/* an envelope written for a tenant runs for that tenant only */
	if (policy->tenant && strcmp(policy->tenant, req->tenant) != 0) {
		fail(400, msg, msg_len,
		     "the envelope's identity.tenant is '%s', the request's tenant '%s' (\"default\" "
		     "when not given): create the run for the envelope's tenant", policy->tenant,
		     req->tenant);
		tp_policy_free(policy);
		return 400;
	}
	/* what the caller may run, and where: daemon.yaml's envelopes and workspaces */
	tp_digest_text(envelope_digest, digest_text);
	if (!daemon_config_allows_envelope(&d->cfg, req->caller.uid, req->caller.gids,
					   req->caller.gid_count, digest_text)) {
		tp_policy_free(policy);
		return fail(403, msg, msg_len,
			    "uid %u may not run envelope %s: it is not among the envelopes "
			    "daemon.yaml lists for this caller", req->caller.uid, digest_text);
	}
	if (req->workspace &&
	    !daemon_config_allows_workspace(&d->cfg, req->caller.uid, req->caller.gids,
					    req->caller.gid_count, policy->workspace)) {
		char ws[256];

		snprintf(ws, sizeof(ws), "%s", policy->workspace);
		tp_policy_free(policy);
		return fail(403, msg, msg_len,
			    "uid %u may not give a run the workspace %s: it is in none of the "
			    "workspaces daemon.yaml lists for this caller", req->caller.uid, ws);
	}
	{
		char what[PATH_MAX], rule[256];
		const char *hit = reaches_daemon_files(d, policy, what, sizeof(what));

		if (hit) {
			snprintf(rule, sizeof(rule), "%s", hit);
			tp_policy_free(policy);
			return fail(403, msg, msg_len,
				    "the envelope's rule for %s reaches %s, which is the daemon's own "
				    "(its node log and key, journals, spools or sinks): no run may; "
				    "narrow the rule, or keep the state directory beneath %s",
				    rule, what, DAEMON_DEFAULT_STATE_DIR);
		}
	}
	if (req->env) {
		json_object_foreach(req->env, key, value) {
			if (!tp_env_name_valid(key) || !env_name_listed(policy, key)) {
				tp_policy_free(policy);
				return fail(400, msg, msg_len,
					    "env: %s is not a name the envelope lists "
					    "(sandbox.environment) or passes by default", key);
			}
		}
	}
	*policy_out = policy;
	return 0;
}

int drun_create(struct daemon *d, const struct create_request *req, struct drun **out, char *msg,
		size_t msg_len, json_t **diagnostics)
{
	struct tp_policy *policy = NULL;
	unsigned int attempt = 1;
	char id[80], digest_text[TP_DIGEST_TEXT_MAX], envelope_text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32], envelope_digest[32], *bytes = NULL;
	size_t bytes_len = 0;
	struct run_config cfg = { 0 };
	struct run_error err = { 0 };
	struct run_info info;
	sigset_t none;
	struct drun *r;
	json_t *run_obj;
	int code;

	/* the id first: ${RUN_ID} in the envelope's workspace path is filled with it */
	if (req->run_id)
		snprintf(id, sizeof(id), "%s", req->run_id);
	else if (run_id_generate(id, sizeof(id)))
		return fail(500, msg, msg_len, "generating a run id failed");
	code = check_request(d, req, id, &policy, envelope_digest, &attempt, msg, msg_len,
			     diagnostics);
	if (code)
		return code;
	r = drun_alloc(d, id);
	if (!r) {
		tp_policy_free(policy);
		return fail(500, msg, msg_len, "out of memory");
	}
	r->policy = policy;
	snprintf(r->tenant, sizeof(r->tenant), "%s", req->tenant);
	code = journal_create(d->runs_fd, id, &r->dir_fd, &r->journal_fd);
	if (code) {
		drun_free(r);
		if (code == -EEXIST)
			return fail(409, msg, msg_len,
				    "run id '%s' is in use or was used before: run ids are never "
				    "reused (a retry is a new run with retry_of)", id);
		return fail(500, msg, msg_len, "creating the journal of run %s in %s: %s", id,
			    d->runs_path, strerror(-code));
	}
	if (tp_policy_encode(policy, &bytes, &bytes_len) || tp_policy_digest(policy, digest)) {
		free(bytes);
		drun_free(r);
		return fail(500, msg, msg_len, "encoding the policy failed");
	}
	tp_digest_text(digest, digest_text);
	tp_digest_text(envelope_digest, envelope_text);
	code = journal_write_file(r->dir_fd, JOURNAL_POLICY_FILE, bytes, bytes_len);
	free(bytes);
	if (!code)
		code = artifacts_dir_make(d, r);
	r->argv = calloc(1, sizeof(char *));
	for (size_t i = 0; r->argv && req->argv[i]; i++) {
		char **nv = realloc(r->argv, (i + 2) * sizeof(char *));

		if (!nv)
			break;
		r->argv = nv;
		r->argv[i] = strdup(req->argv[i]);
		r->argv[i + 1] = NULL;
	}
	r->environ = build_environ(req->env);
	if (code || !r->argv || !r->environ || (code = setup_stdio(r, req)) < 0) {
		drun_free(r);
		/* out of descriptors: a shortage that passes, like max_runs */
		return fail(code == -EMFILE || code == -ENFILE ? 503 : 500, msg, msg_len,
			    "preparing run %s: %s", id, strerror(code < 0 ? -code : ENOMEM));
	}

	/* The run's record: who, what, under which policy, on which node. */
	run_obj = json_pack("{s:s,s:i,s:o,s:s,s:{s:i,s:i,s:i},s:o,s:o,s:o,s:o,s:s,s:s,s:o,s:s,s:s,"
			    "s:s,s:o,s:s,s:b}",
			    "id", id, "attempt", attempt, "retry_of",
			    req->retry_of ? json_string(req->retry_of) : json_null(), "tenant",
			    req->tenant, "principal", "uid", req->caller.uid, "gid",
			    req->caller.gid, "pid", req->caller.pid, "traceparent",
			    req->traceparent ? json_string(req->traceparent) : json_null(), "argv",
			    argv_json(r->argv), "cwd", req->cwd ? json_string(req->cwd) : json_null(),
			    "workspace", json_string(policy->workspace), "envelope_digest",
			    envelope_text, "policy_digest", digest_text, "acknowledged_gaps",
			    gaps_json(policy), "tether_version", TETHER_VERSION, "bpf_digest", bpf_digest(), "kernel_release", d->kernel,
			    "limits", limits_json(policy), "stdio",
			    r->stdio_passed ? "passed" : req->stdin_pipe ? "pipe" : "null",
			    "audit_allowed", req->audit_allowed);
	if (run_obj) {
		json_t *names = json_array();

		for (size_t i = 0; names && i < req->audit_sink_count; i++)
			json_array_append_new(names, json_string(req->audit_sinks[i]));
		json_object_set_new(run_obj, "audit_sinks", names);
	}
	if (drun_journal(r, "created", json_pack("{s:o}", "run", run_obj))) {
		drun_free(r);
		return fail(500, msg, msg_len, "writing the journal of run %s failed", id);
	}
	drun_link(d, r);

	cfg.policy = policy;
	cfg.policy_path = req->envelope_name;
	cfg.run_id = r->id;
	cfg.artifacts_dir = r->artifacts_dir[0] ? r->artifacts_dir : NULL;
	cfg.envelope_digest = envelope_text;
	cfg.tenant = r->tenant;
	cfg.attempt = attempt;
	cfg.audit_rate_limit = d->cfg.audit_rate_limit;
	cfg.traceparent = req->traceparent;
	char audit_path[PATH_MAX];

	if ((size_t)snprintf(audit_path, sizeof(audit_path), "%s/%s/" JOURNAL_RECORDS_FILE,
			     d->runs_path, r->id) >= sizeof(audit_path))
		audit_path[0] = 0;	/* cannot be: runs_path is a directory we opened */
	cfg.audit_path = audit_path;
	if (daemon_sinks_for_run(d, req->audit_sinks, req->audit_sink_count, &r->sinks,
				 &r->sink_count) < 0)
		daemon_log(d, "run %s: its records go to its records file only: the node's sinks "
			      "could not be listed (out of memory)", r->id);
	cfg.shared_sinks = r->sinks;
	cfg.shared_sink_count = r->sink_count;
	cfg.audit_allowed = req->audit_allowed;
	cfg.argv = r->argv;
	cfg.environ = r->environ;
	cfg.out_fd[0] = r->out[0];
	cfg.out_fd[1] = r->out[1];
	cfg.stdio_set = true;
	memcpy(cfg.stdio_fd, r->stdio, sizeof(cfg.stdio_fd));
	cfg.cwd = req->cwd;
	cfg.no_run_file = true;
	cfg.daemon_owned = true;
	sigemptyset(&none);
	cfg.child_mask = &none;
	cfg.started_ns = clock_ns(CLOCK_MONOTONIC);
	cfg.log = run_log_fn;
	cfg.log_ctx = r;

	if (run_create(&cfg, &r->run, &err)) {
		r->run = NULL;
		d->m.refused++;
		drun_journal(r, "ended",
			     json_pack("{s:s,s:o}", "reason",
				       err.kind == RUN_ERROR_SETUP ? "failed" : "refused", "error",
				       error_json(&err)));
		close_fd(&r->journal_fd);
		*out = r;
		return 0;
	}
	d->live++;
	if (drun_journal(r, "starting", json_object())) {
		drun_finish(r);
		*out = r;
		return 0;
	}
	if (run_start(r->run, &err)) {
		json_array_append_new(json_object_get(r->rec, "messages"), json_string(err.msg));
		drun_finish(r);
		*out = r;
		return 0;
	}
	/* the command holds its descriptors now; ours would keep pipes open */
	for (int i = 0; i < 3; i++)
		close_fd(&r->stdio[i]);
	run_get_info(r->run, &info);
	d->m.started++;
	drun_journal(r, "running",
		     json_pack("{s:i,s:I,s:s,s:I,s:i,s:I,s:I}", "pid", info.pid, "pid_start",
			       (json_int_t)info.pid_start, "cgroup", info.cgroup_path, "cgroup_id",
			       (json_int_t)info.cgroup_id, "run_slot", (int)info.run_slot,
			       "deadline_ns", (json_int_t)info.deadline_ns, "lease_end_ns",
			       (json_int_t)info.lease_end_ns));
	r->ev = event_new(d->base, run_fd(r->run), EV_READ | EV_PERSIST, on_run_event, r);
	if (!r->ev || event_add(r->ev, NULL)) {
		run_cancel(r->run, "the daemon cannot watch the run");
		drun_finish(r);
	}
	daemon_tick_arm(d);
	*out = r;
	return 0;
}

/* ---- taking over a run a daemon left --------------------------------------- */

static uint64_t mtime_ms(int dir_fd, const char *name)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return (uint64_t)st.st_mtim.tv_sec * 1000 + (uint64_t)st.st_mtim.tv_nsec / 1000000;
}

/*
 * The records of the run's stream file as its end record counts them: each
 * line, and each record a coalesced or suppressed record stands for.  A
 * torn last line (a daemon killed mid-write) is not one.
 */
static uint64_t stream_records(int dir_fd)
{
	int fd = openat(dir_fd, JOURNAL_RECORDS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t count = 0;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *rec;

		if (line[n - 1] != '\n')
			break;
		rec = json_loadb(line, (size_t)n, 0, NULL);
		count += 1 + (uint64_t)json_integer_value(json_object_get(rec, "coalesced")) +
			 (uint64_t)json_integer_value(json_object_get(rec, "suppressed"));
		json_decref(rec);
	}
	free(line);
	fclose(f);
	return count;
}

#define DAEMON_ADOPT_SINKS_MAX 64

int drun_adopt(struct drun *r)
{
	struct daemon *d = r->d;
	struct run_config cfg = { 0 };
	struct run_adoption a = { 0 };
	struct run_error err = { 0 };
	char audit_path[PATH_MAX], why[128];
	json_t *argv = json_object_get(r->rec, "argv"), *v;
	uint8_t *bytes = NULL;
	size_t len = 0, i;
	uint64_t last, now;
	struct timespec ts;
	sigset_t none;
	int fd, ret;

	fd = openat(r->dir_fd, JOURNAL_POLICY_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	{
		struct stat st;

		if (fstat(fd, &st) < 0 || !(bytes = malloc((size_t)st.st_size + 1)) ||
		    read(fd, bytes, (size_t)st.st_size) != st.st_size) {
			close(fd);
			free(bytes);
			return -EIO;
		}
		len = (size_t)st.st_size;
	}
	close(fd);
	ret = tp_policy_decode(bytes, len, &r->policy, why, sizeof(why));
	free(bytes);
	if (ret) {
		daemon_log(d, "run %s: its policy cannot be read back: %s", r->id, why);
		return ret;
	}
	r->argv = calloc(json_array_size(argv) + 1, sizeof(char *));
	r->environ = calloc(1, sizeof(char *));
	if (!r->argv || !r->environ)
		return -ENOMEM;
	json_array_foreach(argv, i, v)
		r->argv[i] = strdup(json_string_value(v) ?: "");
	r->stdio_passed = strcmp(json_string_value(json_object_get(r->rec, "stdio")) ?: "", "passed") == 0;
	ret = journal_open_append(r->dir_fd, &r->journal_fd);
	if (ret)
		return ret;

	if ((size_t)snprintf(audit_path, sizeof(audit_path), "%s/%s/" JOURNAL_RECORDS_FILE,
			     d->runs_path, r->id) >= sizeof(audit_path))
		return -ENAMETOOLONG;
	cfg.policy = r->policy;
	cfg.policy_path = JOURNAL_POLICY_FILE;
	cfg.run_id = r->id;
	cfg.tenant = r->tenant;
	/* made when the run was created: the adopted run exports there as it would have */
	if (r->policy->artifact_count &&
	    (size_t)snprintf(r->artifacts_dir, sizeof(r->artifacts_dir), "%s/%s/" DRUN_ARTIFACTS_DIR,
			     d->runs_path, r->id) < sizeof(r->artifacts_dir))
		cfg.artifacts_dir = r->artifacts_dir;
	cfg.audit_rate_limit = d->cfg.audit_rate_limit;
	cfg.attempt = (unsigned int)json_integer_value(json_object_get(r->rec, "attempt"));
	cfg.traceparent = json_string_value(json_object_get(r->rec, "traceparent"));
	cfg.audit_path = audit_path;
	{
		/* the sinks its create request named, journaled; those gone from the configuration drop out */
		json_t *list = json_object_get(r->rec, "audit_sinks"), *name;
		const char *names[DAEMON_ADOPT_SINKS_MAX];
		size_t count = 0, j;

		json_array_foreach(list, j, name) {
			const char *n = json_string_value(name);

			for (size_t k = 0; n && k < d->cfg.sink_count && count < DAEMON_ADOPT_SINKS_MAX; k++)
				if (!strcmp(n, d->cfg.sinks[k].name))
					names[count++] = n;
		}
		if (daemon_sinks_for_run(d, names, count, &r->sinks, &r->sink_count) < 0)
			daemon_log(d, "run %s: its records go to its records file only: the node's "
				      "sinks could not be listed", r->id);
	}
	cfg.shared_sinks = r->sinks;
	cfg.shared_sink_count = r->sink_count;
	cfg.audit_allowed = json_is_true(json_object_get(r->rec, "audit_allowed"));
	cfg.argv = r->argv;
	cfg.environ = r->environ;
	cfg.out_fd[0] = cfg.out_fd[1] = -1;
	cfg.no_run_file = true;
	cfg.daemon_owned = true;
	sigemptyset(&none);
	cfg.child_mask = &none;
	cfg.started_ns = clock_ns(CLOCK_MONOTONIC);
	cfg.log = run_log_fn;
	cfg.log_ctx = r;
	a.cgroup_path = json_string_value(json_object_get(r->rec, "cgroup"));
	a.pid = (int)json_integer_value(json_object_get(r->rec, "pid"));
	a.pid_start = (unsigned long long)json_integer_value(json_object_get(r->rec, "pid_start"));
	a.deadline_ns = (uint64_t)json_integer_value(json_object_get(r->rec, "deadline_ns"));
	a.lease_end_ns = (uint64_t)json_integer_value(json_object_get(r->rec, "lease_end_ns"));
	a.records_before = stream_records(r->dir_fd);
	/* the gap: since the last thing the stopped daemon wrote for this run */
	last = mtime_ms(r->dir_fd, JOURNAL_RECORDS_FILE);
	if (mtime_ms(r->dir_fd, JOURNAL_FILE) > last)
		last = mtime_ms(r->dir_fd, JOURNAL_FILE);
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	a.gap_ms = last && now > last ? now - last : 0;
	if (!a.cgroup_path)
		return -ENOENT;
	ret = run_adopt(&cfg, &a, &r->run, &err);
	if (ret) {
		r->run = NULL;
		daemon_log(d, "run %s: cannot be taken over: %s", r->id, err.msg);
		return ret;
	}
	r->adopted = true;
	d->live++;
	drun_journal(r, "adopted", json_pack("{s:I,s:i}", "gap_ms", (json_int_t)a.gap_ms,
					      "daemon_pid", (int)getpid()));
	r->ev = event_new(d->base, run_fd(r->run), EV_READ | EV_PERSIST, on_run_event, r);
	if (!r->ev || event_add(r->ev, NULL)) {
		run_cancel(r->run, "the daemon cannot watch the run");
		drun_finish(r);
		return 0;
	}
	/* a command that ended while nobody watched: the run ends now */
	if (run_exited(r->run))
		drun_finish(r);
	daemon_tick_arm(d);
	return 0;
}

void drun_detach(struct drun *r)
{
	if (r->ev) {
		event_free(r->ev);
		r->ev = NULL;
	}
	run_detach(r->run);
	r->run = NULL;
	if (r->d->live)
		r->d->live--;
}

/* ---- records and output, for followers and metrics ----------------------- */

static const char *capture_name(enum follow_kind k)
{
	return k == FOLLOW_STDOUT ? "stdout" : k == FOLLOW_STDERR ? "stderr" : JOURNAL_RECORDS_FILE;
}

static int metric_kind(const char *kind)
{
	for (int i = 0; i < METRIC_KINDS - 1 && metric_kind_names[i]; i++)
		if (strcmp(metric_kind_names[i], kind) == 0)
			return i;
	return 8;	/* "other" */
}

/* Counts the denials of records written since the last call, for /metrics. */
void drun_count_records(struct drun *r)
{
	int fd = drun_openat(r, JOURNAL_RECORDS_FILE, O_RDONLY);
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = pread(fd, buf, sizeof(buf), (off_t)r->denials_counted_to)) > 0) {
		char *p = buf, *nl;
		size_t used = 0;

		while ((nl = memchr(p, '\n', (size_t)(buf + n - p)))) {
			json_t *rec = json_loadb(p, (size_t)(nl - p), 0, NULL);
			const char *decision = json_string_value(json_object_get(rec, "decision"));
			const char *kind = json_string_value(json_object_get(rec, "kind"));

			if (decision && kind && strcmp(decision, "deny") == 0) {
				json_int_t c = json_integer_value(json_object_get(rec, "coalesced"));

				r->d->m.denials[metric_kind(kind)] += c > 0 ? (uint64_t)c : 1;
			}
			json_decref(rec);
			used += (size_t)(nl - p) + 1;
			p = nl + 1;
		}
		if (!used) {
			/* a line longer than the buffer: skip it */
			if ((size_t)n < sizeof(buf))
				break;
			used = (size_t)n;
		}
		r->denials_counted_to += used;
	}
	close(fd);
}

static void follower_sent(struct evhttp_connection *conn, void *arg)
{
	struct follower *f = arg;

	f->in_flight = false;
}

static void follower_remove(struct drun *r, struct follower *f)
{
	for (struct follower **p = &r->followers; *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			break;
		}
	}
	free(f->partial);
	free(f);
}

/* Records: only lines whose seq is at least from_seq; always whole lines. */
static void filter_records(struct follower *f, const char *data, size_t len, struct evbuffer *out)
{
	const char *p = data, *end = data + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line_len;

		if (!nl) {
			char *np = realloc(f->partial, f->partial_len + (size_t)(end - p));

			if (np) {
				memcpy(np + f->partial_len, p, (size_t)(end - p));
				f->partial = np;
				f->partial_len += (size_t)(end - p);
			}
			return;
		}
		line_len = (size_t)(nl - p) + 1;
		if (f->partial_len) {
			char *np = realloc(f->partial, f->partial_len + line_len);

			if (np) {
				memcpy(np + f->partial_len, p, line_len);
				f->partial = np;
				f->partial_len += line_len;
			}
		}
		{
			const char *line = f->partial_len ? f->partial : p;
			size_t l = f->partial_len ? f->partial_len : line_len;
			json_t *rec = json_loadb(line, l - 1, 0, NULL);
			json_int_t seq = json_integer_value(json_object_get(rec, "seq"));

			if (!f->from_seq || (seq > 0 && (uint64_t)seq >= f->from_seq))
				evbuffer_add(out, line, l);
			json_decref(rec);
		}
		free(f->partial);
		f->partial = NULL;
		f->partial_len = 0;
		p = nl + 1;
	}
}

/*
 * Sends each follower what its file gained, 64 KiB at a time and only once
 * the last chunk went (a slow client holds back its own stream, not the
 * daemon's memory); ends the replies of followers who have everything.
 */
void drun_follow_poll(struct drun *r)
{
	for (struct follower *f = r->followers, *next; f; f = next) {
		char buf[65536];
		ssize_t n = 0;
		int fd;

		next = f->next;
		if (!f->req) {
			follower_remove(r, f);
			continue;
		}
		if (f->in_flight)
			continue;
		fd = drun_openat(r, capture_name(f->kind), O_RDONLY);
		if (fd >= 0) {
			n = pread(fd, buf, sizeof(buf), f->offset);
			close(fd);
		}
		if (n > 0) {
			struct evbuffer *out = evbuffer_new();

			f->offset += n;
			if (f->kind == FOLLOW_RECORDS)
				filter_records(f, buf, (size_t)n, out);
			else
				evbuffer_add(out, buf, (size_t)n);
			if (evbuffer_get_length(out)) {
				f->in_flight = true;
				evhttp_send_reply_chunk_with_cb(f->req, out, follower_sent, f);
			}
			evbuffer_free(out);
			continue;
		}
		/* everything sent: the stream ends unless it follows a live run */
		if (!f->follow || r->state == DRUN_ENDED) {
			struct evhttp_connection *conn = evhttp_request_get_connection(f->req);

			evhttp_connection_set_closecb(conn, NULL, NULL);
			evhttp_send_reply_end(f->req);
			follower_remove(r, f);
		}
	}
}

/* ---- reading runs back at start ------------------------------------------ */

/* The Run object and the state the whole journal of `dir_fd` leaves the run in. */
static int fold_journal(int dir_fd, json_t **rec_out, enum drun_state *state_out)
{
	json_t *events, *ev, *rec;
	enum drun_state state = 0;
	size_t i;
	int ret = journal_read(dir_fd, &events);

	if (ret)
		return ret;
	rec = rec_new();
	json_object_set_new(rec, "messages", json_array());
	json_array_foreach(events, i, ev)
		state = drun_apply(rec, ev, state);
	json_decref(events);
	*rec_out = rec;
	*state_out = state;
	return 0;
}

int journal_run_record(int dir_fd, json_t **out)
{
	enum drun_state state;
	json_t *rec;
	int ret = fold_journal(dir_fd, &rec, &state);

	if (ret)
		return ret;
	if (!state) {
		json_decref(rec);
		return -ENOENT;
	}
	*out = rec;
	return 0;
}

/* The Run object and state, rebuilt from the whole journal. */
int drun_reload(struct drun *r)
{
	enum drun_state state;
	json_t *rec;
	int ret = fold_journal(r->dir_fd, &rec, &state);

	if (ret)
		return ret;
	json_decref(r->rec);
	r->rec = rec;
	r->state = state;
	return 0;
}

/*
 * Every run directory's journal, into d->runs; those not ended are handed
 * to daemon_reconcile (runtime/daemon/daemon.c) by the caller.
 */
int druns_load(struct daemon *d)
{
	DIR *dir;
	struct dirent *de;
	int fd = dup(d->runs_fd);

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		struct drun *r;

		if (!run_id_valid(de->d_name) || drun_find(d, de->d_name))
			continue;
		r = drun_alloc(d, de->d_name);
		if (!r)
			break;
		r->dir_fd = openat(d->runs_fd, de->d_name,
				   O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (r->dir_fd < 0 || drun_reload(r) || !r->state) {
			/*
			 * No "created": the daemon stopped while making the directory.
			 * The run never existed (its id stays used); a torn line is cut.
			 */
			if (r->dir_fd >= 0 && journal_open_append(r->dir_fd, &r->journal_fd) == 0)
				close_fd(&r->journal_fd);
			drun_free(r);
			continue;
		}
		snprintf(r->tenant, sizeof(r->tenant), "%s",
			 json_string_value(json_object_get(r->rec, "tenant")) ?: "default");
		/* the metrics count what this daemon sees */
		{
			struct stat st;

			if (fstatat(r->dir_fd, JOURNAL_RECORDS_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0)
				r->denials_counted_to = (uint64_t)st.st_size;
		}
		/* an ended run's directory is opened when needed (drun_openat) */
		if (r->state == DRUN_ENDED)
			close_fd(&r->dir_fd);
		drun_link(d, r);
	}
	closedir(dir);
	return 0;
}

const char *drun_state_name(const struct drun *r)
{
	return state_name(r->state);
}
