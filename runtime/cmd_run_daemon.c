// SPDX-License-Identifier: GPL-2.0
/*
 * tether run through the daemon: the same command line, exit statuses,
 * output and records as standalone (runtime/cmd_run.c), with the run owned
 * by the node agent.  The client's stdin, stdout and stderr are lent to the
 * run (SCM_RIGHTS on the stdio socket), so the command uses them directly;
 * the records come back over GET /v1/runs/{id}/records?follow and go where
 * standalone writes them (--audit FILE, the envelope's audit.sink, stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/base64.h"
#include "runtime/daemon/client.h"
#include "runtime/daemon/daemon.h"
#include "runtime/fsutil.h"
#include "runtime/run_daemon.h"
#include "runtime/tether.h"

static volatile sig_atomic_t cancel_signal;
static bool cancel_sent;

static void on_signal(int sig)
{
	cancel_signal = sig;
}

struct ctx {
	const char *socket;
	const char *run_id;
	char run_id_buf[80];
	int audit_fd;
};

/* A signal arrived while the client waited: ask the daemon to cancel the run, once. */
static void maybe_cancel(void *p)
{
	struct ctx *c = p;
	char target[256], *body = NULL;
	int status;

	if (!cancel_signal || cancel_sent)
		return;
	cancel_sent = true;
	snprintf(target, sizeof(target), "/v1/runs/%s/cancel", c->run_id);
	if (client_request(c->socket, "POST", target, "", 0, &status, &body, NULL) == 0)
		free(body);
}

static int to_audit(void *p, const char *data, size_t len)
{
	struct ctx *c = p;

	return write_all(c->audit_fd, data, len);
}

static int read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return -errno;
	do {
		if (n + 65536 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got && n <= TP_POLICY_MAX_BYTES);
	fclose(f);
	*data = buf;
	*len = n;
	return 0;
}

int tether_policy_bytes(const char *path, char **data, size_t *len)
{
	struct tp_diags diags = { 0 };
	const char *p;
	int r;

	if (!policy_path_is_stdin(path))
		return -ENOSYS;
	r = policy_read_stdin(&p, len, &diags);
	tp_diags_free(&diags);
	if (r)
		return r;
	*data = malloc(*len + 1);
	if (!*data)
		return -ENOMEM;
	memcpy(*data, p, *len);
	return 0;
}

static int exit_status_of(json_t *rec)
{
	const char *reason = json_string_value(json_object_get(rec, "reason"));
	const char *kind = json_string_value(json_object_get(json_object_get(rec, "error"), "kind"));
	json_t *st = json_object_get(rec, "exit_status");

	if (!reason)
		return TETHER_EXIT_RUN_ERROR;
	if (kind && strcmp(reason, "refused") == 0)
		return strcmp(kind, "invalid") == 0 ? TETHER_EXIT_RUN_INVALID
		     : strcmp(kind, "usage") == 0  ? TETHER_EXIT_RUN_USAGE
						   : TETHER_EXIT_REFUSED;
	if (kind)
		return TETHER_EXIT_RUN_ERROR;
	if (strcmp(reason, "succeeded") == 0)
		return TETHER_EXIT_OK;
	if (strcmp(reason, "cancelled") == 0)
		return TETHER_EXIT_CANCELLED;
	if (strcmp(reason, "timed_out") == 0)
		return TETHER_EXIT_TIMED_OUT;
	if (strcmp(reason, "budget_exhausted") == 0)
		return TETHER_EXIT_BUDGET;
	if (strcmp(reason, "refused") == 0)
		return TETHER_EXIT_REFUSED;
	return json_is_integer(st) ? (int)json_integer_value(st) : TETHER_EXIT_RUN_ERROR;
}

static void print_messages(json_t *rec)
{
	json_t *msgs = json_object_get(rec, "messages"), *m;
	json_t *err = json_object_get(rec, "error");
	size_t i;

	json_array_foreach(msgs, i, m)
		fprintf(stderr, "tether run: %s\n", json_string_value(m));
	if (json_is_object(err)) {
		const char *report = json_string_value(json_object_get(err, "report"));

		fprintf(stderr, "tether run: %s\n",
			json_string_value(json_object_get(err, "message")) ?: "the run failed");
		if (report)
			fputs(report, stderr);
	}
}

int run_via_daemon(const char *socket, const struct run_daemon_request *q)
{
	struct ctx c = { .socket = socket, .audit_fd = STDERR_FILENO };
	const int stdio[3] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO };
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: waits end */
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char token[64], target[256], cwd[4096], *data = NULL, *reply = NULL, *text;
	size_t len = 0;
	json_t *body, *env, *argv, *rec = NULL;
	int conn = -1, status = 0, r, ret = TETHER_EXIT_RUN_ERROR;

	r = tether_policy_bytes(q->envelope, &data, &len);
	if (r == -ENOSYS)
		r = read_file(q->envelope, &data, &len);
	if (r) {
		fprintf(stderr, "tether run: reading %s: %s\n", q->envelope, strerror(-r));
		return TETHER_EXIT_RUN_INVALID;
	}
	body = json_object();
	if (len >= 4 && memcmp(data, TP_FORMAT_MAGIC, 4) == 0) {
		char *b64 = base64_encode(data, len);

		json_object_set_new(body, "policy", json_string(b64));
		free(b64);
	} else {
		json_object_set_new(body, "envelope", json_stringn(data, len));
	}
	free(data);
	json_object_set_new(body, "envelope_name", json_string(q->envelope_name));
	argv = json_array();
	for (char **a = q->argv; *a; a++)
		json_array_append_new(argv, json_string(*a));
	json_object_set_new(body, "argv", argv);
	/* the values of the names the envelope lists or passes by default: nothing else leaves */
	env = json_object();
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];
		bool listed;

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = 0;
		listed = tp_env_name_is_default(name);
		for (size_t i = 0; !listed && i < q->policy->env_name_count; i++)
			listed = strcmp(q->policy->env_names[i], name) == 0;
		if (listed && tp_env_name_valid(name))
			json_object_set_new(env, name, json_string(eq + 1));
	}
	json_object_set_new(body, "env", env);
	if (getcwd(cwd, sizeof(cwd)))
		json_object_set_new(body, "cwd", json_string(cwd));
	if (q->run_id)
		json_object_set_new(body, "run_id", json_string(q->run_id));
	if (q->workspace)
		json_object_set_new(body, "workspace", json_string(q->workspace));
	if (q->traceparent)
		json_object_set_new(body, "traceparent", json_string(q->traceparent));
	/* an envelope written for a tenant runs for it (the daemon refuses another) */
	if (q->policy->tenant)
		json_object_set_new(body, "tenant", json_string(q->policy->tenant));
	if (q->audit_allowed)
		json_object_set_new(body, "audit_allowed", json_true());
	r = client_stdio_lease(socket, stdio, token, &conn);
	if (r) {
		fprintf(stderr, "tether run: lending stdin, stdout and stderr to the daemon on %s"
				DAEMON_STDIO_SUFFIX ": %s\n", socket, strerror(-r));
		json_decref(body);
		return TETHER_EXIT_RUN_ERROR;
	}
	json_object_set_new(body, "stdio", json_string("passed"));
	json_object_set_new(body, "stdio_token", json_string(token));
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	r = text ? client_request(socket, "POST", "/v1/runs", text, strlen(text), &status, &reply,
				  NULL)
		 : -ENOMEM;
	free(text);
	close(conn);
	if (r) {
		fprintf(stderr, "tether run: asking the daemon on %s: %s\n", socket, strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}
	rec = json_loads(reply, 0, NULL);
	free(reply);
	if (status != 201) {
		json_t *d = json_object_get(rec, "diagnostics"), *line;
		size_t i;

		json_array_foreach(d, i, line)
			fprintf(stderr, "%s\n", json_string_value(line));
		fprintf(stderr, "tether run: the daemon refused the run (%d): %s\n", status,
			json_string_value(json_object_get(rec, "error")) ?: "no reason given");
		json_decref(rec);
		return status == 400 ? TETHER_EXIT_RUN_INVALID
		     : status == 403 || status == 409 || status == 404 ? TETHER_EXIT_RUN_USAGE
								       : TETHER_EXIT_RUN_ERROR;
	}
	snprintf(c.run_id_buf, sizeof(c.run_id_buf), "%s",
		 json_string_value(json_object_get(rec, "id")) ?: "");
	c.run_id = c.run_id_buf;
	json_decref(rec);
	rec = NULL;

	/* records go where standalone writes them */
	if (q->audit_path || q->policy->audit_sink) {
		const char *p = q->audit_path ? q->audit_path : q->policy->audit_sink;

		c.audit_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
				  0600);
		if (c.audit_fd < 0) {
			fprintf(stderr, "tether run: opening audit file %s: %s\n", p, strerror(errno));
			c.audit_fd = STDERR_FILENO;
		}
	}
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, NULL);
	snprintf(target, sizeof(target), "/v1/runs/%s/records?follow=true", c.run_id);
	for (;;) {
		r = client_stream(socket, target, to_audit, &c, &status, maybe_cancel);
		maybe_cancel(&c);
		if (r != -EINTR)
			break;
	}
	if (r)
		fprintf(stderr, "tether run: following run %s's records: %s\n", c.run_id,
			strerror(-r));
	snprintf(target, sizeof(target), "/v1/runs/%s", c.run_id);
	if (client_request(socket, "GET", target, NULL, 0, &status, &reply, NULL) == 0) {
		rec = json_loads(reply, 0, NULL);
		free(reply);
	}
	if (rec && status == 200) {
		print_messages(rec);
		ret = exit_status_of(rec);
	} else {
		fprintf(stderr, "tether run: run %s: the daemon did not say how it ended\n",
			c.run_id);
	}
	json_decref(rec);
	if (c.audit_fd != STDERR_FILENO)
		close(c.audit_fd);
	return ret;
}
