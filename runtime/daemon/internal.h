/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of runtime/daemon/ share; nothing outside it includes this. */
#ifndef TETHER_RUNTIME_DAEMON_INTERNAL_H
#define TETHER_RUNTIME_DAEMON_INTERNAL_H

#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/daemon/config.h"
#include "runtime/daemon/daemon.h"
#include "runtime/run/run.h"

struct tp_policy;
struct daemon;

/* Who is calling: SO_PEERCRED and SO_PEERGROUPS of the connection. */
struct caller {
	uint32_t uid, gid;
	int pid;
	uint32_t gids[64];
	size_t gid_count;
};

enum drun_state { DRUN_CREATED = 1, DRUN_RUNNING, DRUN_ENDED };

enum follow_kind { FOLLOW_RECORDS, FOLLOW_STDOUT, FOLLOW_STDERR };

/* A client reading a run's records or output as they come (GET ...?follow). */
struct follower {
	struct follower *next;
	struct drun *run;
	struct evhttp_request *req;	/* NULL once the client went away */
	enum follow_kind kind;
	bool follow;
	bool in_flight;			/* a chunk is queued: wait until it went */
	uint64_t from_seq;		/* records: the first seq wanted */
	off_t offset;			/* where the next read starts */
	char *partial;			/* records: a line read without its newline yet */
	size_t partial_len;
};

/* One run of the node, live or ended: its journal, its record, its run object. */
/* <state>/runs/<id>/DRUN_ARTIFACTS_DIR: a run's exported artifacts */
#define DRUN_ARTIFACTS_DIR "artifacts"

struct drun {
	struct drun *next;
	struct daemon *d;
	char id[80];
	char tenant[80];
	int dir_fd;			/* <state>/runs/<id> */
	/* <state>/runs/<id>/artifacts, where its declared artifacts go; "": none declared */
	char artifacts_dir[PATH_MAX];
	int journal_fd;			/* -1 once ended */
	enum drun_state state;
	json_t *rec;			/* the API's Run object, kept current from the journal */
	struct tp_policy *policy;
	struct run *run;		/* live only */
	struct sink **sinks;		/* the node's sinks its records go to (borrowed ones) */
	size_t sink_count;
	struct event *ev;		/* run_fd readable */
	struct event *lease_ev;		/* cleanup.lease */
	char **argv;
	char **environ;
	int stdio[3];			/* the command's stdin, stdout, stderr (owned) */
	int out[2];			/* captured output's targets (resources.output_bytes) */
	int stdin_pipe;			/* write end ("stdin": "pipe"); -1: none or closed */
	bool stdio_passed;		/* the client's own descriptors: nothing captured */
	bool adopted;			/* taken over from a daemon that stopped */
	uint64_t denials_counted_to;	/* records file offset the metrics have counted to */
	struct follower *followers;
};

/* A client's stdin, stdout and stderr, passed on the stdio socket, until a run claims them. */
struct stdio_lease {
	struct stdio_lease *next;
	struct daemon *d;
	char token[40];
	uint32_t uid;
	int fds[3];
	int conn;			/* the client's connection: its close ends the lease */
	struct event *ev;
};

#define METRIC_KINDS 12

struct daemon_metrics {
	uint64_t started, refused, records, lost, forbidden;
	uint64_t ended[8];		/* by enum run_reason */
	uint64_t denials[METRIC_KINDS];	/* by record kind (metric_kind_names) */
	uint64_t requests[6];		/* by status class: 1xx..5xx, [0]: other */
};

struct daemon {
	struct daemon_config cfg;
	struct daemon_options opts;
	struct event_base *base;
	struct evhttp *http;
	int http_fd, stdio_fd;		/* listening sockets */
	struct event *stdio_ev;
	struct event *tick;		/* followers, metrics, leases: every 100 ms while needed */
	struct event *sig[3];
	int state_fd, runs_fd, lock_fd;
	char runs_path[PATH_MAX];
	char cgroup2[PATH_MAX];		/* the cgroup2 mount */
	char kernel[128];
	struct drun *runs;
	size_t live;
	struct stdio_lease *leases;
	struct daemon_metrics m;
	bool stopping;
	/* the configuration's sinks (cfg.sinks, same order), open while the daemon is */
	struct sink **sinks;
	/* the node log (cfg.node_log; docs/audit.md, "The node log"); NULL: disabled */
	struct sink *node_log;
	struct event *node_log_ev;	/* its interval checkpoints when no record comes */
};

extern const char *const metric_kind_names[METRIC_KINDS];

/* runtime/daemon/api.c */
int api_init(struct daemon *d);
void api_json_reply(struct evhttp_request *req, int code, json_t *body);
void api_error(struct evhttp_request *req, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void daemon_node_record(struct daemon *d, const char *what, const struct caller *c,
			const char *detail);

/* runtime/daemon/druns.c */
struct create_request {
	const char *envelope;		/* YAML, or a compiled policy's bytes */
	size_t envelope_len;
	const char *envelope_name;
	char **argv;
	json_t *env;			/* NAME -> value */
	const char *cwd;
	const char *workspace;		/* the run's own workspace (tp_run_binding); NULL: the envelope's */
	const char *run_id;
	const char *tenant;
	const char *traceparent;
	const char *retry_of;
	bool stdin_pipe;
	int passed[3];			/* -1: none */
	bool audit_allowed;
	/* audit_sinks: configured sinks (cfg.sinks) named for this run, checked; borrowed */
	const char **audit_sinks;
	size_t audit_sink_count;
	struct caller caller;
};
/* 0 and *out (201), or an HTTP status with `msg` (and diagnostics for 400) filled. */
int drun_create(struct daemon *d, const struct create_request *req, struct drun **out,
		char *msg, size_t msg_len, json_t **diagnostics);
struct drun *drun_find(struct daemon *d, const char *id);
int drun_cancel(struct drun *r, const char *why);
int drun_write_stdin(struct drun *r, const void *data, size_t len, bool close_after);
void drun_free(struct drun *r);
/* Tears a live run down and journals its end. */
void drun_finish(struct drun *r);
/* Takes over a run the journal says is running, left by a daemon that stopped. */
int drun_adopt(struct drun *r);
/* Lets go of a live run for the next daemon (its enforcement goes on). */
void drun_detach(struct drun *r);
/* openat() in the run's directory, which an ended run no longer holds open. */
int drun_openat(struct drun *r, const char *name, int flags);
/* Rebuilds r->rec and r->state from the run's journal. */
int drun_reload(struct drun *r);
int druns_load(struct daemon *d);
void drun_follow_poll(struct drun *r);
void drun_count_records(struct drun *r);
const char *drun_state_name(const struct drun *r);

/* runtime/daemon/stdio.c */
int stdio_init(struct daemon *d);
/* Takes the lease's descriptors (they become the caller's); -ENOENT: no such token of uid. */
int stdio_claim(struct daemon *d, const char *token, uint32_t uid, int fds[3]);
void stdio_free_all(struct daemon *d);

/* runtime/daemon/sinks.c */
struct sink;
/*
 * Opens every configured sink, then the node log (its checkpoints go to the
 * default sinks); 0, or a negative errno with `why` filled (none open).
 */
int daemon_sinks_open(struct daemon *d, char *why, size_t len);
/*
 * Closes the node log (its close checkpoint), then the sinks: each sends
 * what it can within its close time; what is left stays spooled.
 */
void daemon_sinks_close(struct daemon *d);
/*
 * The sinks a run's records go to besides its records file: the node log,
 * every default one and the ones `names` names (checked by the API), in
 * configuration order, each once.  *out is malloc'd (the sinks are the
 * daemon's, shared); 0, -ENOENT (a name no sink has) or -ENOMEM.
 */
int daemon_sinks_for_run(const struct daemon *d, const char *const *names, size_t count,
			 struct sink ***out, size_t *out_count);
/* The node log's directory below the state directory. */
#define DAEMON_NODE_LOG_DIR "audit"
/* The node log's key file: node_log.key_file, else <state_dir>/node-log.key (in buf). */
const char *daemon_node_log_key(const struct daemon *d, char *buf, size_t len);

/* runtime/daemon/daemon.c */
void daemon_log(struct daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void daemon_tick_arm(struct daemon *d);
int caller_of(int fd, struct caller *c);

#endif
