// SPDX-License-Identifier: GPL-2.0
/*
 * tether daemon (runtime/daemon/daemon.h): configuration, the state
 * directory and its lock, the sockets, the event loop, and what the
 * journal says at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "runtime/daemon/internal.h"
#include "runtime/daemon/journal.h"
#include "runtime/doctor.h"
#include "runtime/fsutil.h"
#include "runtime/sink/sink.h"
#include "runtime/tether.h"

void daemon_log(struct daemon *d, const char *fmt, ...)
{
	char now[32];
	va_list ap;

	journal_now(now);
	fprintf(stderr, "%s tether daemon: ", now);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A record of the node, not of a run: a refused caller, a run reclaimed at
 * start.  One JSON line in <state>/node.jsonl (0600), fsync'd.
 */
void daemon_node_record(struct daemon *d, const char *what, const struct caller *c,
			const char *detail)
{
	char now[32], *line;
	json_t *rec;
	int fd;

	journal_now(now);
	rec = json_pack("{s:s,s:s,s:s,s:s}", "time", now, "kind", "node", "event", what, "detail",
			detail ? detail : "");
	if (c)
		json_object_set_new(rec, "caller",
				    json_pack("{s:i,s:i,s:i}", "uid", c->uid, "gid", c->gid, "pid",
					      c->pid));
	line = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(rec);
	if (!line)
		return;
	daemon_log(d, "%s", line);
	fd = openat(d->state_fd, "node.jsonl",
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		size_t len = strlen(line);

		line[len] = '\n';
		if (write(fd, line, len + 1) < 0 || fdatasync(fd) < 0)
			daemon_log(d, "writing %s/node.jsonl: %s", d->cfg.state_dir, strerror(errno));
		close(fd);
	}
	free(line);
}

/* ---- the tick: followers and leases -------------------------------------- */

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	bool again = false;

	for (struct drun *r = d->runs; r; r = r->next) {
		if (r->followers)
			drun_follow_poll(r);
		again |= r->followers != NULL;
	}
	if (again)
		daemon_tick_arm(d);
}

static void on_node_log_tick(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	sink_flush(d->node_log);
}

void daemon_tick_arm(struct daemon *d)
{
	const struct timeval every = { 0, 100 * 1000 };

	if (!evtimer_pending(d->tick, NULL))
		evtimer_add(d->tick, &every);
}

/* ---- sockets ------------------------------------------------------------- */

/*
 * A unix socket at `path`, mode 0660, group `gid`.  The stale socket of a
 * daemon that died is replaced: only after the state directory's lock was
 * taken, so never a live daemon's.
 */
static int listen_unix(const char *path, uint32_t gid, int *out, char *why, size_t why_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], *slash;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(why, why_len, "socket path %s is longer than %zu bytes", path,
			 sizeof(sun.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		r = mkdir_p(dir, 0755);
		if (r) {
			snprintf(why, why_len, "creating %s: %s", dir, strerror(-r));
			return r;
		}
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, why_len, "socket: %s", strerror(errno));
		return -errno;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		r = -errno;
		snprintf(why, why_len, "removing the old socket %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	/* never a moment with wider permissions than 0660 */
	old = umask(0117);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r < 0 || chown(path, 0, gid) < 0 || chmod(path, 0660) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		snprintf(why, why_len, "listening on %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

/* ---- state directory ----------------------------------------------------- */

static int open_state(struct daemon *d, char *why, size_t why_len)
{
	const char *dir = d->cfg.state_dir;
	char holder[64] = "", parent[PATH_MAX], *slash;
	int r;

	/*
	 * Missing parents get 0755 (a /var made 0700 would lock every user out
	 * of /var/tmp); only the state directory itself is root's alone.
	 */
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	r = slash && slash != parent ? mkdir_p(parent, 0755) : 0;
	if (!r && mkdir(dir, 0700) < 0 && errno != EEXIST)
		r = -errno;
	if (r) {
		snprintf(why, why_len, "creating the state directory %s: %s", dir, strerror(-r));
		return r;
	}
	d->state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->state_fd < 0) {
		snprintf(why, why_len, "opening %s: %s", dir, strerror(errno));
		return -errno;
	}
	d->lock_fd = openat(d->state_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->lock_fd < 0) {
		snprintf(why, why_len, "opening %s/lock: %s", dir, strerror(errno));
		return -errno;
	}
	/* one daemon per state directory: the second is refused, it never shares the runs */
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (pread(d->lock_fd, holder, sizeof(holder) - 1, 0) < 0)
			holder[0] = 0;
		holder[strcspn(holder, "\n")] = 0;
		snprintf(why, why_len, "another tether daemon (pid %s) holds %s/lock; stop it first",
			 holder[0] ? holder : "unknown", dir);
		return r == -EWOULDBLOCK ? -EBUSY : r;
	}
	{
		char pid[32];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (ftruncate(d->lock_fd, 0) < 0 || pwrite(d->lock_fd, pid, (size_t)n, 0) != n)
			daemon_log(d, "warning: writing the pid into %s/lock: %s", dir,
				   strerror(errno));
	}
	if (mkdirat(d->state_fd, "runs", 0700) < 0 && errno != EEXIST) {
		snprintf(why, why_len, "creating %s/runs: %s", dir, strerror(errno));
		return -errno;
	}
	d->runs_fd = openat(d->state_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (d->runs_fd < 0) {
		snprintf(why, why_len, "opening %s/runs: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(d->runs_path, sizeof(d->runs_path), "%s/runs", dir);
	return 0;
}

/* ---- what the journal says at start -------------------------------------- */

/* The reason and exit status of the run's end record, when its stream has one. */
static bool end_record(struct drun *r, json_t **out)
{
	int fd = drun_openat(r, JOURNAL_RECORDS_FILE, O_RDONLY);
	struct stat st;
	char buf[8192];
	ssize_t n;
	off_t from;
	char *p, *nl;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	from = st.st_size > (off_t)sizeof(buf) - 1 ? st.st_size - (off_t)sizeof(buf) + 1 : 0;
	n = pread(fd, buf, sizeof(buf) - 1, from);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		json_t *rec = json_loadb(p, (size_t)(nl - p), 0, NULL);

		if (json_is_object(rec) &&
		    strcmp(json_string_value(json_object_get(rec, "kind")) ?: "", "run") == 0 &&
		    strcmp(json_string_value(json_object_get(rec, "event")) ?: "", "end") == 0) {
			json_decref(*out);
			*out = rec;
		} else {
			json_decref(rec);
		}
	}
	return *out != NULL;
}

/*
 * Runs the journal leaves live whose daemon stopped: each was reclaimed
 * (killed, its entries and cgroup removed) by run_reclaim_node() or had
 * ended already.  Its journal gets the end it did not write: the end
 * record's reason when the run's stream has one, else cancelled.
 */
static void reconcile(struct daemon *d)
{
	for (struct drun *r = d->runs; r; r = r->next) {
		json_t *end = NULL, *ev;
		int ret;

		if (r->state == DRUN_ENDED || r->run)
			continue;
		ret = r->journal_fd >= 0 ? 0 : journal_open_append(r->dir_fd, &r->journal_fd);
		if (ret) {
			daemon_log(d, "run %s: opening its journal: %s", r->id, strerror(-ret));
			continue;
		}
		if (end_record(r, &end)) {
			json_t *status = json_object_get(end, "exit_status");

			ev = json_pack("{s:O,s:O,s:O,s:n,s:{s:O},s:s}", "reason",
				       json_object_get(end, "reason") ?: json_string("failed"),
				       "budget", json_object_get(end, "budget") ?: json_null(),
				       "exit_status",
				       json_integer_value(status) >= 0 ? status : json_null(),
				       "error", "cleanup", "verified",
				       json_object_get(end, "cleanup_verified") ?: json_false(),
				       "note",
				       "the daemon stopped after the run's end record; its journal "
				       "was completed at the next start");
		} else {
			ev = json_pack("{s:s,s:n,s:n,s:{s:s,s:s},s:n,s:s}", "reason", "cancelled",
				       "budget", "exit_status", "error", "kind", "setup", "message",
				       "the daemon stopped while the run was live; the run was "
				       "ended and cleaned up when a daemon started again",
				       "cleanup", "note", "reconciled at daemon start");
		}
		json_decref(end);
		journal_append(r->journal_fd, "ended", ev);
		drun_reload(r);
		json_decref(ev);
		close(r->journal_fd);
		r->journal_fd = -1;
		if (r->state == DRUN_ENDED && r->dir_fd >= 0) {
			close(r->dir_fd);	/* drun_openat from now on */
			r->dir_fd = -1;
		}
		daemon_log(d, "run %s: ended at start (the daemon that ran it stopped)", r->id);
	}
}

static void reclaim_log(void *ctx, const char *fmt, va_list ap)
{
	struct daemon *d = ctx;
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* what the sweep did to a run is a node record; anything else, a log line */
	if (strncmp(line, "reclaimed ", 10) == 0 || strncmp(line, "removed ", 8) == 0)
		daemon_node_record(d, "reclaimed", NULL, line);
	else
		daemon_log(d, "%s", line);
}

/* ---- signals and the loop ------------------------------------------------ */

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	daemon_log(d, "signal %d: stopping", (int)sig);
	d->stopping = true;
	event_base_loopbreak(d->base);
}

static void daemon_free(struct daemon *d)
{
	while (d->runs) {
		struct drun *r = d->runs;

		d->runs = r->next;
		/* live runs stay confined and live: the next daemon adopts them */
		if (r->run)
			drun_detach(r);
		drun_free(r);
	}
	stdio_free_all(d);
	if (d->http)
		evhttp_free(d->http);
	for (int i = 0; i < 3; i++)
		if (d->sig[i])
			event_free(d->sig[i]);
	if (d->tick)
		event_free(d->tick);
	if (d->node_log_ev)
		event_free(d->node_log_ev);
	if (d->base)
		event_base_free(d->base);
	if (d->http_fd >= 0)
		close(d->http_fd);
	if (d->stdio_fd >= 0)
		close(d->stdio_fd);
	if (d->runs_fd >= 0)
		close(d->runs_fd);
	if (d->state_fd >= 0)
		close(d->state_fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	daemon_sinks_close(d);
	daemon_config_free(&d->cfg);
}

/*
 * A live run holds about 30 of the daemon's descriptors (its ring, maps,
 * pidfd, pipes, journal, capture files).  The soft limit is raised to the
 * hard one, as deploy/tether.service does with LimitNOFILE; a hard limit
 * too low for max_runs is said at start, not found at the 35th run.
 */
#define DESCRIPTORS_PER_RUN 32

static void warn_descriptors(struct daemon *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)d->cfg.max_runs * DESCRIPTORS_PER_RUN + 64)
		daemon_log(d, "warning: the descriptor limit (%llu) holds about %llu live runs, "
			      "fewer than max_runs (%u); raise it (ulimit -n, LimitNOFILE=) or lower "
			      "max_runs: a run past it is refused with 503",
			   (unsigned long long)rl.rlim_cur,
			   (unsigned long long)((rl.rlim_cur - 64) / DESCRIPTORS_PER_RUN),
			   d->cfg.max_runs);
}

int daemon_main(const struct daemon_options *opts)
{
	struct daemon d = { .http_fd = -1, .stdio_fd = -1, .state_fd = -1, .runs_fd = -1,
			    .lock_fd = -1 };
	struct daemon_config_files files = { 0 };
	struct tp_diags diags = { 0 };
	char why[PATH_MAX + 256], stdio_path[PATH_MAX];
	struct utsname un;
	int r, ret = TETHER_EXIT_RUN_ERROR;
	static const int stop_signals[3] = { SIGTERM, SIGINT, SIGHUP };

	d.opts = *opts;
	if (!d.opts.config_path)
		d.opts.config_path = DAEMON_CONFIG_PATH;
	if (geteuid() != 0) {
		fprintf(stderr, "tether daemon: needs root: it loads BPF-LSM programs, creates "
				"cgroups and writes pinned maps\n");
		return TETHER_EXIT_REFUSED;
	}
	/* the file decides who may drive runs as root: only root may be able to change it */
	{
		struct stat st;

		if (stat(d.opts.config_path, &st) == 0 && (st.st_uid != 0 || (st.st_mode & 022))) {
			fprintf(stderr, "tether daemon: %s is %s; it decides who may start runs, so "
					"only root may write it (chown root; chmod go-w)\n",
				d.opts.config_path, st.st_uid != 0 ? "not owned by root"
								   : "writable by group or others");
			return TETHER_EXIT_INVALID;
		}
	}
	r = daemon_config_load(d.opts.config_path, &files, &d.cfg, &diags);
	if (r && r != -ENOENT) {
		char *text = NULL;

		if (tp_diags_format(&diags, &text) == 0 && text)
			fputs(text, stderr);
		free(text);
		tp_diags_free(&diags);
		fprintf(stderr, "tether daemon: %s is not valid; nothing was started\n",
			d.opts.config_path);
		return TETHER_EXIT_INVALID;
	}
	tp_diags_free(&diags);
	if (opts->socket_path) {
		free(d.cfg.socket_path);
		d.cfg.socket_path = strdup(opts->socket_path);
	}
	if (opts->state_dir) {
		free(d.cfg.state_dir);
		d.cfg.state_dir = strdup(opts->state_dir);
	}
	if (!d.cfg.socket_path || !d.cfg.state_dir) {
		daemon_config_free(&d.cfg);
		return TETHER_EXIT_RUN_ERROR;
	}
	signal(SIGPIPE, SIG_IGN);
	if (uname(&un) == 0)
		snprintf(d.kernel, sizeof(d.kernel), "%s", un.release);
	warn_descriptors(&d);

	r = open_state(&d, why, sizeof(why));
	if (r) {
		fprintf(stderr, "tether daemon: %s\n", why);
		ret = r == -EBUSY ? TETHER_EXIT_DAEMON_RUNNING : TETHER_EXIT_RUN_ERROR;
		goto out;
	}
	if (daemon_sinks_open(&d, why, sizeof(why))) {
		fprintf(stderr, "tether daemon: %s\n", why);
		goto out;
	}
	snprintf(stdio_path, sizeof(stdio_path), "%s" DAEMON_STDIO_SUFFIX, d.cfg.socket_path);
	if (listen_unix(d.cfg.socket_path, d.cfg.socket_gid, &d.http_fd, why, sizeof(why)) ||
	    listen_unix(stdio_path, d.cfg.socket_gid, &d.stdio_fd, why, sizeof(why))) {
		fprintf(stderr, "tether daemon: %s\n", why);
		goto out;
	}
	d.base = event_base_new();
	if (!d.base || api_init(&d) || stdio_init(&d)) {
		fprintf(stderr, "tether daemon: setting up the event loop failed\n");
		goto out;
	}
	d.tick = evtimer_new(d.base, on_tick, &d);
	if (d.node_log) {
		/* the node log's interval checkpoints are due by time too, records or not */
		const struct timeval every = { 1, 0 };

		d.node_log_ev = event_new(d.base, -1, EV_PERSIST, on_node_log_tick, &d);
		if (!d.node_log_ev || event_add(d.node_log_ev, &every)) {
			fprintf(stderr, "tether daemon: setting up the node log's timer failed\n");
			goto out;
		}
	}
	for (int i = 0; i < 3; i++) {
		d.sig[i] = evsignal_new(d.base, stop_signals[i], on_stop, &d);
		if (!d.sig[i] || event_add(d.sig[i], NULL)) {
			fprintf(stderr, "tether daemon: setting up signals failed\n");
			goto out;
		}
	}
	druns_load(&d);
	/* runs a daemon that stopped left running: taken over, before any sweep */
	{
		size_t adopted = 0;

		for (struct drun *run = d.runs; run; run = run->next)
			if (run->state == DRUN_RUNNING && drun_adopt(run) == 0)
				adopted++;
		if (adopted)
			daemon_log(&d, "took over %zu live runs", adopted);
	}
	/* runs no daemon owns any more: ended, their journals completed */
	run_reclaim_node(reclaim_log, &d);
	reconcile(&d);
	{
		size_t n = 0;

		for (struct drun *run = d.runs; run; run = run->next)
			n++;
		daemon_log(&d, "serving %s (state %s: %zu runs in the journal, %zu live)",
			   d.cfg.socket_path, d.cfg.state_dir, n, d.live);
	}
	event_base_dispatch(d.base);
	ret = TETHER_EXIT_OK;
out:
	daemon_free(&d);
	return ret;
}
