// SPDX-License-Identifier: GPL-2.0
/*
 * The run's lifecycle (runtime/run/run.h):
 *
 *   preflight (doctor) -> workspace, TMPDIR, rules -> run cgroup, limits
 *   -> DNS proxy -> map entries -> audit sink -> start record
 *   -> clone3(CLONE_INTO_CGROUP) -> exec -> dispatch until the command exits
 *   -> kill what is left -> drain output and records -> remove map entries
 *   -> remove cgroup, TMPDIR, run file -> cleanup and end records
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/abi/rules.h"
#include "runtime/dnsproxy.h"
#include "runtime/launch.h"
#include "runtime/plan/plan.h"
#include "runtime/plan/rules.h"
#include "runtime/run/internal.h"
#include "runtime/runs.h"
#include "runtime/sink/sink.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/*
 * Records handled per pass over the ring.  libbpf's consume keeps going while
 * records keep coming, so a flooding run would hold the loop there: signals,
 * the DNS proxy and the byte cap would wait.  A pass stops after this many
 * and the loop comes back to the ring through epoll.
 */
#define RECORD_BATCH 4096

static const char *const reason_names[] = {
	[RUN_REASON_NONE] = "unknown",
	[RUN_REASON_SUCCEEDED] = "succeeded",
	[RUN_REASON_FAILED] = "failed",
	[RUN_REASON_CANCELLED] = "cancelled",
	[RUN_REASON_TIMED_OUT] = "timed_out",
	[RUN_REASON_BUDGET] = "budget_exhausted",
	[RUN_REASON_REFUSED] = "refused",
};

const char *run_reason_name(enum run_reason reason)
{
	return (size_t)reason < sizeof(reason_names) / sizeof(reason_names[0])
		       ? reason_names[reason]
		       : "unknown";
}

int run_fail(struct run_error *err, enum run_error_kind kind, enum run_step step, int errnum,
	     const char *fmt, ...)
{
	va_list ap;

	err->kind = kind;
	err->step = step;
	err->err = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -(errnum ? errnum : EIO);
}

void run_log(const struct run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (run->cfg.log) {
		run->cfg.log(run->cfg.log_ctx, fmt, ap);
	} else {
		fprintf(stderr, "tether run: ");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

void run_trace(struct run *run, const char *step)
{
	uint64_t now;

	if (!run->cfg.trace_steps)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	run_log(run, "step %s: %.2f ms", step,
		(double)(now - (run->trace_ns ? run->trace_ns : run->cfg.started_ns)) / 1e6);
	/* the line's own cost is nobody's step */
	run->trace_ns = clock_ns(CLOCK_MONOTONIC);
}

void run_epoll_add(struct run *run, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	if (fd >= 0)
		epoll_ctl(run->ep, EPOLL_CTL_ADD, fd, &ev);
}

void run_epoll_mod(struct run *run, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	epoll_ctl(run->ep, EPOLL_CTL_MOD, fd, &ev);
}

void run_epoll_del(struct run *run, int fd)
{
	epoll_ctl(run->ep, EPOLL_CTL_DEL, fd, NULL);
}

static int handle_record(void *p, void *data, size_t size)
{
	struct run *run = p;

	audit_handle_record(&run->audit, data, size);
	return ++run->batch >= RECORD_BATCH ? -EAGAIN : 0;
}

/* One pass: true when records were left for the next. */
static bool consume_batch(struct run *run)
{
	bool more;

	run->batch = 0;
	more = ring_buffer__consume(run->ring) == -EAGAIN;
	/* what the sinks buffered (the node log does), once per batch, not per record */
	if (run->sink)
		sink_flush(run->sink);
	return more;
}

/*
 * The stream's coalesced records are due when their window ends, whether
 * or not more records come: the timer wakes the loop for them.
 */
static void arm_coalesce_timer(struct run *run)
{
	struct itimerspec when = { 0 };
	uint64_t due = 0;

	if (run->coalesce_fd < 0)
		return;
	if (!audit_next_expiry(&run->audit, &due))
		due = 0;
	if (due == run->coalesce_armed_ns)
		return;
	when.it_value.tv_sec = (time_t)(due / 1000000000);
	when.it_value.tv_nsec = (long)(due % 1000000000);
	if (timerfd_settime(run->coalesce_fd, TFD_TIMER_ABSTIME, &when, NULL) == 0)
		run->coalesce_armed_ns = due;
}

/* The timer went off: what is in the ring first, so it counts in its window. */
static void coalesce_timer_event(struct run *run)
{
	uint64_t expirations;

	if (read(run->coalesce_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return;
	run->coalesce_armed_ns = 0;	/* a one-shot timer is disarmed once it fired */
	if (run->ring)
		consume_batch(run);
	audit_expire(&run->audit, clock_ns(CLOCK_MONOTONIC));
}

/* Everything in the ring (the run is gone, so it ends). */
void run_drain(struct run *run)
{
	while (consume_batch(run))
		;
}

static int refuse(struct run_error *err, const struct doctor_report *rep, int errnum,
		  const char *why)
{
	if (rep) {
		err->has_report = true;
		err->report = *rep;
	}
	return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_PREFLIGHT, errnum,
			"refusing to run: %s; the command was not started.", why);
}

/*
 * Runs whose controller died (SIGKILL, a crash) stay confined but leak their
 * cgroup, processes and map entries.  Under the parent lock, reclaim them:
 * kill what is left, remove their entries, remove their cgroups.  Entries
 * whose cgroup no longer exists at all are removed too.  Best effort: a
 * failure is logged and this run goes on.
 */
static void reclaim_orphans(struct run *run, const char *mount_point, bool leave_daemons)
{
	struct tl_error err = { "" };
	struct cg_run *orphans = NULL;
	uint64_t *dirs = NULL, *registered = NULL;
	size_t n = 0, ndirs = 0, nreg = 0;
	char name[PATH_MAX];	/* basename() may write to its argument */
	unsigned int left;

	if (cg_find_orphans(mount_point, &orphans, &n, &dirs, &ndirs))
		return;
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s", orphans[i].path);
		/* a node agent's run, while no agent holds it: the next agent's */
		if (leave_daemons && run_is_daemons(basename(name))) {
			cg_run_free(&orphans[i]);
			continue;
		}
		if (cg_run_kill_and_wait(&orphans[i], CLEANUP_TIMEOUT_MS, &left)) {
			run_log(run, "warning: orphaned run %s could not be emptied", orphans[i].path);
			cg_run_free(&orphans[i]);
			continue;
		}
		if (tl_run_reclaim(&run->node, orphans[i].id, true, &err) && err.msg[0])
			run_log(run, "warning: %s", err.msg);
		run_log(run, "reclaimed run %s, whose controller died (killed: %u processes)",
			orphans[i].path, left);
		/* its processes are gone: its temporary directory can go too */
		snprintf(name, sizeof(name), "%s", orphans[i].path);
		run_remove_orphan_files(run, basename(name));
		cg_run_destroy(&orphans[i]);
	}
	if (tl_runs_list(&run->node, &registered, &nreg) == 0) {
		for (size_t i = 0; i < nreg; i++) {
			bool found = false;

			for (size_t j = 0; j < ndirs && !found; j++)
				found = dirs[j] == registered[i];
			if (!found && tl_run_reclaim(&run->node, registered[i], true, &err) == 0)
				run_log(run, "removed the map entries of cgroup %llu, which no longer "
					     "exists", (unsigned long long)registered[i]);
		}
	}
	free(registered);
	free(dirs);
	free(orphans);
}

int run_reclaim_node(void (*log)(void *ctx, const char *fmt, va_list ap), void *ctx)
{
	struct run *tmp = calloc(1, sizeof(*tmp));
	struct tl_error lerr = { "" };
	char mount_point[PATH_MAX];
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	int lock, r;

	if (!tmp || !mi) {
		if (mi)
			fclose(mi);
		free(tmp);
		return -ENOMEM;
	}
	r = cg_find_mount(mi, mount_point, sizeof(mount_point));
	fclose(mi);
	tmp->cfg.log = log;
	tmp->cfg.log_ctx = ctx;
	if (r) {
		free(tmp);
		return r;
	}
	lock = cg_parent_lock(mount_point);
	if (lock < 0) {
		free(tmp);
		return lock;
	}
	r = tl_node_open(TETHER_RUN_CGROUP_LEVEL, lock, &tmp->node, &lerr);
	if (r) {
		run_log(tmp, "the BPF programs could not be opened: %s", lerr.msg);
	} else {
		reclaim_orphans(tmp, mount_point, false);
		tl_node_close(&tmp->node);
	}
	close(lock);
	free(tmp);
	return r;
}

/*
 * cgroup v2 controllers for resources.cpu, memory_bytes and process_count:
 * a host whose hierarchy lacks one cannot enforce the envelope, and the run
 * is refused (never started unlimited).  Under the parent lock.
 */
static int enable_controllers(struct run *run, const char *mount_point, struct run_error *err)
{
	char *available = cg_controllers(mount_point), missing[64], why[PATH_MAX + 128];
	int r;

	cg_missing_controllers(available, &run->limits, missing, sizeof(missing));
	if (missing[0]) {
		r = run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_CONTROLLERS, EOPNOTSUPP,
			     "refusing to run: the envelope's resources need the cgroup v2 "
			     "controllers '%s', which %s does not offer (it has: '%s'); run on a "
			     "host whose cgroup2 hierarchy has them, or drop those limits. The "
			     "command was not started.",
			     missing, mount_point, available && available[0] ? available : "none");
		free(available);
		return r;
	}
	free(available);
	r = cg_enable_controllers(mount_point, &run->limits, why, sizeof(why));
	if (r)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_CONTROLLERS, -r,
				"refusing to run: %s; the command was not started.", why);
	return 0;
}

/*
 * O_NOFOLLOW and O_NONBLOCK, then a type check on what was opened:
 * run_audit_path_unsafe() looked at the name, but whoever can write its
 * directory could swap in a symlink or a FIFO since.
 */
static int open_own_sink(struct run *run, struct run_error *err)
{
	struct stat st;
	int fd, r;

	if (!run->audit_path)
		return sink_jsonl_open(STDERR_FILENO, false, &run->sink);
	/* read too: the sink looks at the last byte (a line an earlier writer left cut) */
	fd = open(run->audit_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
		  O_NONBLOCK | O_NOCTTY, 0600);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_AUDIT_FILE, errno,
				"opening audit file %s: %s", run->audit_path,
				errno == EINVAL ? "not a regular file" : strerror(errno));
	r = sink_jsonl_open(fd, true, &run->sink);
	if (r) {
		close(fd);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_AUDIT_FILE, -r,
				"opening audit file %s: %s", run->audit_path, strerror(-r));
	}
	return 0;
}

/* The run's own sink and, around it, the node's shared ones. */
static int open_sink(struct run *run, struct run_error *err)
{
	struct sink *own;
	int r = open_own_sink(run, err);

	if (r || !run->cfg.shared_sink_count)
		return r;
	own = run->sink;
	r = sink_fanout_open(own, run->cfg.shared_sinks, run->cfg.shared_sink_count, &run->sink);
	if (r) {
		run->sink = NULL;
		sink_close(own);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_AUDIT_FILE, -r,
				"opening the node's audit sinks: %s", strerror(-r));
	}
	return 0;
}

/* The run cgroup, its limits, the run file: under the parent lock until the cgroup exists. */
static int make_cgroup(struct run *run, struct doctor_report *rep, struct run_error *err)
{
	struct tl_error lerr = { "" };
	char limits_why[PATH_MAX + 256];
	int parent_lock, r;

	/* Held until this run's cgroup exists and is locked: see runtime/cgroup.h. */
	parent_lock = cg_parent_lock(rep->cgroup2_mount);
	if (parent_lock < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_LOCK, -parent_lock,
				"locking %s/%s: %s%s", rep->cgroup2_mount, TETHER_CGROUP_PARENT,
				strerror(-parent_lock),
				parent_lock == -EBUSY ? " (another process has held it for 10 s)" : "");
	r = tl_node_open(TETHER_RUN_CGROUP_LEVEL, parent_lock, &run->node, &lerr);
	if (r) {
		close(parent_lock);
		if (r == -EUCLEAN || r == -ESTALE)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_LOAD, -r, "%s", lerr.msg);
		snprintf(rep->checks[DOCTOR_LSM_LOAD].detail, sizeof(rep->checks[0].detail), "%s",
			 lerr.msg);
		snprintf(rep->checks[DOCTOR_LSM_LOAD].fix, sizeof(rep->checks[0].fix), "%s",
			 r == -EPERM ? "this kernel refuses BPF-LSM programs even for root; use a "
				       "kernel that allows them"
				     : "tether -v run ... shows libbpf's log");
		rep->checks[DOCTOR_LSM_LOAD].ok = false;
		rep->checks[DOCTOR_LSM_LOAD].skipped = false;
		r = refuse(err, rep, -r, "the BPF programs (BPF-LSM and cgroup-BPF) could not be "
					 "loaded");
		err->step = RUN_STEP_LOAD;
		return r;
	}
	run->node_open = true;
	run_trace(run, "load");

	reclaim_orphans(run, rep->cgroup2_mount, !run->cfg.daemon_owned);
	run_trace(run, "reclaim");
	r = enable_controllers(run, rep->cgroup2_mount, err);
	if (r) {
		close(parent_lock);
		return r;
	}
	r = cg_run_create(rep->cgroup2_mount, run->run_id, &run->cg);
	close(parent_lock);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_CGROUP, -r,
				"creating the run cgroup %s/%s/%s: %s%s", rep->cgroup2_mount,
				TETHER_CGROUP_PARENT, run->run_id, strerror(-r),
				r == -EEXIST ? " (a run with this id is live; pick another --run-id)"
					     : "");
	run->cg_created = true;
	run_trace(run, "cgroup");
	r = cg_run_set_limits(&run->cg, &run->limits, limits_why, sizeof(limits_why));
	if (r)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_LIMITS, -r,
				"refusing to run: the envelope's resources cannot be enforced: %s; "
				"the command was not started.", limits_why);
	if (run->cfg.daemon_owned && (r = run_write_owner_mark(run, err)))
		return r;
	/* a supervisor that is asked to end its runs has no use for tether kill's file */
	return run->cfg.no_run_file ? 0 : run_write_pidfile(run, err);
}

/*
 * The number of a record the controller makes: from the counter the
 * kernel's records take theirs from, while the run is installed, so the
 * run has one sequence; at teardown from where it stopped.
 */
static int next_seq(void *p, uint64_t *seq)
{
	struct run *run = p;

	if (run->seq_local) {
		*seq = ++run->seq_last;
		return 0;
	}
	return tl_run_seq_next(&run->node, &run->run, seq);
}

/* The map entries that turn enforcement on, then the ring and the sink. */
static int install(struct run *run, struct run_error *err)
{
	const struct run_plan_input in = {
		.policy = run->policy,
		.rules = run->rules,
		.rule_count = run->rule_count,
		.net = &run->net,
		.dns_port4 = dns_proxy_port(run->dns, AF_INET),
		.dns_port6 = dns_proxy_port(run->dns, AF_INET6),
		.audit_allowed = run->audit_allowed,
	};
	struct tl_error lerr = { "" };
	struct tl_run_plan plan;
	int r;

	r = run_plan_make(&in, &plan, &lerr);
	plan.layer_dev = run->fs_overlay ? run->fs_dev : 0;
	run_trace(run, "plan");
	if (!r)
		r = tl_run_install(&run->node, run->cg.id, &plan, &run->run, &lerr);
	run_plan_free(&plan);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_INSTALL, -r,
				"installing the run's rules: %s", lerr.msg);
	run->run_installed = true;
	run_trace(run, "install");
	r = run_open_stream(run, err);
	if (!r)
		run_trace(run, "stream");
	return r;
}

/* The audit stream over the installed run's ring: sequence, sink, names, ring, timers. */
int run_open_stream(struct run *run, struct run_error *err)
{
	int r;

	run->audit.seq_next = next_seq;
	run->audit.seq_ctx = run;
	run->audit.cgroup_id = run->cg.id;

	r = open_sink(run, err);
	if (r)
		return r;
	run->audit.sink = run->sink;
	run->rule_paths = calloc(run->rule_count ? run->rule_count : 1, sizeof(char *));
	if (!run->rule_paths)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RING, ENOMEM, "%s", strerror(ENOMEM));
	for (size_t i = 0; i < run->rule_count; i++)
		run->rule_paths[i] = run->rules[i].path;
	run->audit.names.rule_paths = run->rule_paths;
	run->audit.names.rule_count = run->rule_count;
	run->ring = ring_buffer__new(run->run.ring_fd, handle_record, run, NULL);
	if (!run->ring)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RING, errno,
				"opening the run's audit ring: %s", strerror(errno));
	run_epoll_add(run, ring_buffer__epoll_fd(run->ring), EPOLLIN);
	run_epoll_add(run, dns_proxy_fd(run->dns), EPOLLIN);
	run->coalesce_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (run->coalesce_fd < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RING, errno,
				"creating the audit stream's timer: %s", strerror(errno));
	run_epoll_add(run, run->coalesce_fd, EPOLLIN);
	return 0;
}

/* Everything up to, not including, the child. */
static int setup(struct run *run, struct run_error *err)
{
	struct doctor_report rep;
	int r;

	run_trace(run, "init");
	if (geteuid() != 0)
		return refuse(err, NULL, EPERM, "tether run needs root: it loads BPF-LSM programs, "
						"creates cgroups and writes pinned maps");
	/* Cheap checks first; the trial load happens below as the real load. */
	doctor_run(&rep, false);
	run_trace(run, "doctor");
	/* Said first: in a chroot the other checks fail too, for want of /sys. */
	if (!rep.checks[DOCTOR_ROOT].ok) {
		char why[sizeof(rep.checks[0].detail) + sizeof(rep.checks[0].fix) + 2];

		snprintf(why, sizeof(why), "%s; %s", rep.checks[DOCTOR_ROOT].detail,
			 rep.checks[DOCTOR_ROOT].fix);
		return refuse(err, &rep, EOPNOTSUPP, why);
	}
	if (!doctor_ok(&rep))
		return refuse(err, &rep, EOPNOTSUPP, "this host cannot enforce the envelope");
	snprintf(run->cg_mount, sizeof(run->cg_mount), "%s", rep.cgroup2_mount);
	r = run_prepare_workspace(run, err);
	if (r)
		return r;
	run_trace(run, "workspace");
	if (run->audit_path) {
		char where[PATH_MAX];
		const char *why = run_audit_path_unsafe(run, where);

		if (why)
			return run_fail(err, RUN_ERROR_USAGE, RUN_STEP_AUDIT_FILE, EPERM,
					"the audit file %s %s (%s), where the run could rewrite or "
					"redirect its own audit records; write it elsewhere",
					run->audit_path, why, where);
	}
	r = make_cgroup(run, &rep, err);
	r = r ?: run_setup_network(run, err);
	if (!r)
		run_trace(run, "network");
	return r ?: install(run, err);
}

int run_init(const struct run_config *cfg, struct run **out, struct run_error *err)
{
	const struct tp_policy *policy = cfg->policy;
	struct run *run = calloc(1, sizeof(*run));
	uint8_t digest[32];
	*err = (struct run_error){ 0 };
	/* it names a cgroup directory, a run file and a TMPDIR: no "..", no "/" */
	if (!cfg->run_id || !run_id_valid(cfg->run_id)) {
		free(run);
		return run_fail(err, RUN_ERROR_USAGE, RUN_STEP_PREFLIGHT, EINVAL,
				"invalid run id '%s': use 1 to 64 of [A-Za-z0-9._-], not '.' or '..'",
				cfg->run_id ? cfg->run_id : "");
	}
	if (!run)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_PREFLIGHT, ENOMEM, "%s",
				strerror(ENOMEM));
	*run = (struct run){
		.cfg = *cfg,
		.policy = policy,
		.cg = { .dir_fd = -1, .lock_fd = -1 },
		.ep = -1,
		.pidfd = -1,
		.launch_fd = -1,
		.status = -1,
		.timer_fd = -1,
		.lease_fd = -1,
		.events_fd = -1,
		.coalesce_fd = -1,
		.fs_fd = -1,
		.disk_fd = -1,
		.in_fd = -1,
		.out = { { .fd = -1, .target = cfg->out_fd[0] }, { .fd = -1, .target = cfg->out_fd[1] } },
		/* the command line's --audit and --audit-allowed come before the envelope's */
		.audit_path = cfg->audit_path ? cfg->audit_path : policy->audit_sink,
		.audit_allowed = cfg->audit_allowed || (policy->flags & TP_POLICY_AUDIT_RECORD_ALLOWED),
		.uid = policy->uid,
		.gid = policy->gid,
		.limits = {
			.cpu_milli = policy->limits[TP_LIMIT_CPU_MILLI],
			.memory_bytes = policy->limits[TP_LIMIT_MEMORY_BYTES],
			.pids = policy->limits[TP_LIMIT_PROCESS_COUNT],
		},
	};
	snprintf(run->run_id, sizeof(run->run_id), "%s", cfg->run_id);
	run->audit.names.run_id = run->run_id;
	run->audit.rate_limit = !cfg->audit_rate_limit	       ? AUDIT_RATE_LIMIT_DEFAULT
				: cfg->audit_rate_limit == UINT64_MAX ? 0
								      : cfg->audit_rate_limit;
	run->binds = calloc(SCRATCH_BINDS_MAX, sizeof(*run->binds));
	if (!run->binds) {
		free(run);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_PREFLIGHT, ENOMEM, "%s",
				strerror(ENOMEM));
	}
	/* where the command starts, looked up again in its namespace; none: the workspace */
	if (cfg->cwd)
		snprintf(run->cwd, sizeof(run->cwd), "%s", cfg->cwd);
	else if (!getcwd(run->cwd, sizeof(run->cwd)))
		run->cwd[0] = 0;
	if (tp_policy_digest(policy, digest) < 0) {
		free(run->binds);
		free(run);
		return run_fail(err, RUN_ERROR_INVALID, RUN_STEP_PREFLIGHT, EINVAL,
				"encoding the policy of %s failed", cfg->policy_path);
	}
	tp_digest_text(digest, run->digest);
	run_context_init(run);
	/* cleanup.lease counts from the run's creation: its setup is inside the lease */
	if (policy->limits[TP_LIMIT_LEASE_MS])
		run->lease_end_ns = (cfg->started_ns ? cfg->started_ns : clock_ns(CLOCK_MONOTONIC)) +
				    policy->limits[TP_LIMIT_LEASE_MS] * 1000000;
	snprintf(run->envelope_digest, sizeof(run->envelope_digest), "%s",
		 cfg->envelope_digest ? cfg->envelope_digest : run->digest);
	run->ep = epoll_create1(EPOLL_CLOEXEC);
	if (run->ep < 0) {
		int r = run_fail(err, RUN_ERROR_SETUP, RUN_STEP_PREFLIGHT, errno,
				 "creating the run's event loop: %s", strerror(errno));

		run->torn_down = true;
		run_free(run);
		return r;
	}
	*out = run;
	return 0;
}

int run_create(const struct run_config *cfg, struct run **out, struct run_error *err)
{
	struct run *run;
	int r = run_init(cfg, &run, err);

	if (r)
		return r;
	r = setup(run, err);
	if (r) {
		run_cleanup(run, -1, false);
		run->torn_down = true;
		run_free(run);
		return r;
	}
	*out = run;
	return 0;
}

int run_start(struct run *run, struct run_error *err)
{
	const struct tp_policy *policy = run->policy;
	struct launch_spec spec = {
		.argv = run->cfg.argv,
		.uid = run->uid,
		.gid = run->gid,
		.nofile = policy->limits[TP_LIMIT_OPEN_FILES],
		.cgroup_fd = run->cg.dir_fd,
		.stdin_fd = run->cfg.stdio_set ? run->cfg.stdio_fd[0] : -1,
		.stdout_fd = run->cfg.stdio_set ? run->cfg.stdio_fd[1] : -1,
		.stderr_fd = run->cfg.stdio_set ? run->cfg.stdio_fd[2] : -1,
		.mask = run->cfg.child_mask,
		.last_cap = launch_last_cap(),
		.private_ns = true,
		.cwd = run->cwd[0] ? run->cwd : NULL,
		.fallback_cwd = policy->workspace,
	};
	int write_fd[2] = { -1, -1 }, errpipe = -1, gopipe = -1, r;
	pid_t pid;

	*err = (struct run_error){ 0 };
	/* from here on, teardown writes the cleanup and end records */
	run->started = true;
	/* Everything the child needs, prepared here: it may only make async-signal-safe calls. */
	run->envp = launch_env_build(run->cfg.environ, (const char *const *)policy->env_names,
				     policy->env_name_count, run->tmpdir[0] ? run->tmpdir : NULL,
				     RUN_HOME);
	r = run->envp ? 0 : -ENOMEM;
	spec.envp = run->envp;
	if (!r && policy->limits[TP_LIMIT_OUTPUT_BYTES]) {
		r = run_output_capture(run, write_fd);
		spec.stdout_fd = write_fd[0];
		spec.stderr_fd = write_fd[1];
	}
	r = r ?: run_watch_limits(run);
	r = r ?: run_storage_watch(run);
	if (r) {
		for (int i = 0; i < 2; i++)
			if (write_fd[i] >= 0)
				close(write_fd[i]);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_PREPARE, -r, "preparing run %s: %s",
				run->run_id, strerror(-r));
	}

	run_trace(run, "prepare");
	run_record_start(run, (clock_ns(CLOCK_MONOTONIC) - run->cfg.started_ns) / 1000);
	run_trace(run, "start record");
	r = launch_spawn(&spec, &pid, &run->pidfd, &errpipe, &gopipe);
	run_trace(run, "spawn");
	if (!r) {
		struct tl_error lerr = { "" };

		run->child_pid = pid;
		/*
		 * The kernel keeps the command's exit status for a supervisor
		 * that adopts the run; written before the child may run at all
		 * (it waits for launch_go).
		 */
		if (tl_run_set_main(&run->node, &run->run, (uint32_t)pid, &lerr))
			run_log(run, "warning: %s", lerr.msg);
	}
	for (int i = 0; i < 2; i++)
		if (write_fd[i] >= 0)
			close(write_fd[i]);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_SPAWN, -r,
				"starting %s in cgroup %s: %s", run->cfg.argv[0], run->cg.path,
				strerror(-r));
	/* the child waits in its new namespaces until its trees are mounted */
	r = run_scratch_enter(run, run->pidfd, err);
	run_trace(run, "mounts");
	launch_go(gopipe, r == 0);
	if (r) {
		close(errpipe);
		run_epoll_add(run, run->pidfd, EPOLLIN);
		return r;
	}
	r = run_start_timer(run);
	if (r) {
		close(errpipe);
		run_epoll_add(run, run->pidfd, EPOLLIN);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_SPAWN, -r,
				"starting %s in cgroup %s: %s", run->cfg.argv[0], run->cg.path,
				strerror(-r));
	}
	/*
	 * The child sheds the controller's authority and execs while the
	 * caller goes on (a node agent takes its next request): what its
	 * launch reports is read when the pipe is readable (launch_event), or
	 * at the latest when the command is reaped.
	 */
	run->launch_fd = errpipe;
	run_epoll_add(run, run->launch_fd, EPOLLIN);
	run_epoll_add(run, run->pidfd, EPOLLIN);
	return 0;
}

int run_fd(const struct run *run)
{
	return run->ep;
}

bool run_exited(const struct run *run)
{
	return run->exited;
}

/*
 * Ends the run for `reason` unless something ended it first: the first
 * cause is the one reported.  cgroup.kill without waiting: the loop sees
 * the command die, and teardown waits for the rest.
 */
void run_end(struct run *run, enum run_reason reason, const char *budget, const char *why)
{
	unsigned int left;

	if (run->reason != RUN_REASON_NONE)
		return;
	run->reason = reason;
	run->budget = budget;
	run_log(run, "%s: ending run %s (%s)", why, run->run_id, run_reason_name(reason));
	if (!run->cg_created)
		return;
	cg_run_kill_and_wait(&run->cg, 0, &left);
	/* the cleanup record counts these: teardown finds only stragglers */
	run->killed = left;
}

void run_cancel(struct run *run, const char *why)
{
	run_end(run, RUN_REASON_CANCELLED, NULL, why);
}

/*
 * EOF once the child exec'd, or its failed step and errno: its launch is
 * over, one way or the other.  The write end is the child's alone (it is
 * closed on exec and at exit), so once the child is gone this never waits.
 */
static void launch_event(struct run *run)
{
	ssize_t n;

	if (run->launch_fd < 0)
		return;
	do
		n = read(run->launch_fd, run->launch_report, sizeof(run->launch_report));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(run->launch_report))
		run->launch_report[0] = 0;
	run_epoll_del(run, run->launch_fd);
	close(run->launch_fd);
	run->launch_fd = -1;
	run_trace(run, "exec");
}

/* The command exited: its status, and what its launch reported. */
static int reap(struct run *run, struct run_error *err)
{
	siginfo_t si = { 0 };

	if (run->adopted) {
		run_adopted_exit(run);
		return 0;
	}
	if (waitid((idtype_t)P_PIDFD, (id_t)run->pidfd, &si, WEXITED) < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WAIT, errno, "waiting for %s: %s",
				run->cfg.argv[0], strerror(errno));
	/* output written just before the exit waits in the pipes for teardown */
	run->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	run->exited = true;
	run_epoll_del(run, run->pidfd);
	launch_event(run);
	if (run->launch_report[0] == LAUNCH_STEP_EXEC) {
		run_log(run, "cannot execute %s: %s", run->cfg.argv[0],
			strerror(run->launch_report[1]));
	} else if (run->launch_report[0]) {
		/* the command never ran: the boundary could not be set up around it */
		run_log(run, "refusing to run %s: %s failed: %s; the command was not started.",
			run->cfg.argv[0], launch_step_name(run->launch_report[0]),
			strerror(run->launch_report[1]));
		if (run->reason == RUN_REASON_NONE)
			run->reason = RUN_REASON_REFUSED;
	}
	return 0;
}

int run_dispatch(struct run *run, int timeout_ms, const sigset_t *sigmask,
		 struct run_error *err)
{
	struct epoll_event events[8];
	int ring_fd = run->ring ? ring_buffer__epoll_fd(run->ring) : -1;
	int dns_fd = dns_proxy_fd(run->dns);
	int n, r = 0;

	*err = (struct run_error){ 0 };
	if (run->exited)
		return 0;
	n = epoll_pwait(run->ep, events, 8, timeout_ms, sigmask);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WAIT, errno, "waiting for %s: %s",
				run->cfg.argv[0], strerror(errno));
	for (int i = 0; i < n && !run->exited; i++) {
		int fd = events[i].data.fd;

		if (fd == ring_fd) {
			struct tl_run_counters c = { 0 };

			consume_batch(run);
			/*
			 * network_egress.max_bytes: the kernel drops, the controller
			 * ends.  The kernel's flag decides (it is set before the
			 * record, which may have found the ring full).
			 */
			tl_run_counters(&run->node, &run->run, &c);
			if (c.egress_exhausted)
				run_end(run, RUN_REASON_BUDGET, "egress_bytes",
					"it spent network_egress.max_bytes");
		} else if (fd == run->coalesce_fd) {
			coalesce_timer_event(run);
		} else if (fd == dns_fd) {
			dns_proxy_dispatch(run->dns);
		} else if (fd == run->disk_fd) {
			run_storage_event(run);
		} else if (fd == run->timer_fd || fd == run->lease_fd || fd == run->events_fd) {
			run_limits_event(run, fd);
		} else if (fd == run->launch_fd) {
			launch_event(run);
		} else if (fd == run->pidfd) {
			r = reap(run, err);
			break;
		} else {
			run_output_event(run, fd);
		}
	}
	arm_coalesce_timer(run);
	return r;
}

int run_teardown(struct run *run, struct run_result *res, struct run_error *err)
{
	*err = (struct run_error){ 0 };
	if (!run->torn_down) {
		/* a command that never started has no status; one that did, its own */
		run_cleanup(run, run->exited ? run->status : -1, run->started);
		run->torn_down = true;
	}
	*res = run->result;
	if (run->teardown_ret) {
		err->kind = RUN_ERROR_SETUP;
		err->step = RUN_STEP_CLEANUP;
		err->err = -run->teardown_ret;
	}
	return run->teardown_ret;
}

void run_get_info(struct run *run, struct run_info *info)
{
	struct tl_run_counters c = { 0 };

	*info = (struct run_info){
		.run_id = run->run_id,
		.policy_digest = run->digest,
		.cgroup_path = run->cg_created ? run->cg.path : "",
		.cgroup_id = run->cg.id,
		.run_slot = run->run.run_slot,
		.pid = run->child_pid,
		.deadline_ns = run->deadline_ns,
		.lease_end_ns = run->lease_end_ns,
		.started = run->started,
		.exited = run->exited,
		.records = run->audit.records,
		.coalesced = run->audit.coalesced,
		.malformed = run->audit.malformed,
		.seq_last = run->audit.max_seq,
		.egress_bytes = 0,
		.output_bytes = run->out_bytes,
	};
	if (run->child_pid)
		proc_start_time(run->child_pid, &info->pid_start);
	if (run->run_installed && !run->seq_local && tl_run_counters(&run->node, &run->run, &c) == 0) {
		info->audit_lost = c.audit_lost;
		info->egress_bytes = c.egress_bytes;
		if (c.seq > info->seq_last)
			info->seq_last = c.seq;
	}
}

void run_free(struct run *run)
{
	struct run_result res;
	struct run_error err;

	if (!run)
		return;
	if (!run->torn_down)
		run_teardown(run, &res, &err);
	if (run->pidfd >= 0)
		close(run->pidfd);
	if (run->launch_fd >= 0)
		close(run->launch_fd);
	if (run->coalesce_fd >= 0)
		close(run->coalesce_fd);
	audit_stream_release(&run->audit);
	run_output_free(run);
	run_limits_free(run);
	run_storage_free(run);
	run_inputs_free(run);
	if (run->ep >= 0)
		close(run->ep);
	launch_env_free(run->envp);
	run_network_free(run);
	free(run->rule_paths);
	run_rules_free(run->rules, run->rule_count);
	free(run->binds);
	sb_free(&run->ctx_json);
	free(run);
}
