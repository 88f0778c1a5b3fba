// SPDX-License-Identifier: GPL-2.0
/*
 * tether run: one confined run, from envelope to exit status.
 *
 *   envelope -> rules -> preflight (doctor) -> run cgroup -> map entries
 *   -> clone3(CLONE_INTO_CGROUP) -> exec -> audit loop -> kill what is left
 *   -> drain audit -> remove map entries -> remove cgroup -> exit status
 *
 * Enforcement is switched on (the runs map entry) before the child exists, and
 * the child is born inside the run cgroup, so no instruction of the command
 * runs unconfined.  If anything on the way fails, the command does not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/abi/rules.h"
#include "loader/loader.h"
#include "policyc/policy.h"
#include "runtime/audit.h"
#include "runtime/cgroup.h"
#include "runtime/dnsproxy.h"
#include "runtime/doctor.h"
#include "runtime/launch.h"
#include "runtime/net.h"
#include "runtime/plan.h"
#include "runtime/rules.h"
#include "runtime/runs.h"
#include "runtime/seccomp.h"
#include "runtime/tether.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Time the leftovers of a run get to die after cgroup.kill before we give up. */
#define CLEANUP_TIMEOUT_MS 10000

struct run_opts {
	const char *envelope;
	const char *run_id;
	const char *audit_path;
	bool audit_allowed;
	char **argv;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tether run --envelope FILE [--run-id ID] [--audit FILE] [--audit-allowed]\n"
		"                  -- COMMAND [ARGS...]\n"
		"\n"
		"Runs COMMAND in a fresh cgroup confined by the envelope's rules (BPF-LSM).\n"
		"FILE is an envelope or a policy compiled by tether compile.  One JSON audit\n"
		"record per line goes to --audit FILE (default: the envelope's audit.sink,\n"
		"else stderr): every denial, and with --audit-allowed (or the envelope's\n"
		"audit.record_allowed) every allowed write operation too.\n"
		"\n"
		"The run's terminal reason is its exit status (and the end record's \"reason\"):\n"
		"  0    succeeded: COMMAND exited 0\n"
		"  N    failed: COMMAND's own non-zero status (128+N if signal N ended it);\n"
		"       126: COMMAND could not be executed, 127: COMMAND was not found\n"
		"  120  refused: this host cannot enforce the envelope (see tether doctor); nothing ran\n"
		"  121  refused: the envelope is invalid; nothing ran\n"
		"  122  usage error; nothing ran\n"
		"  123  setup failed, or the run's cleanup could not be verified (the message says which)\n"
		"  124  timed_out: resources.wall_clock ran out; the run was killed\n"
		"  125  budget_exhausted: resources.memory_bytes (OOM kill), process_count (forks\n"
		"       refused repeatedly), output_bytes or network_egress.max_bytes\n"
		"  130  cancelled: SIGINT, SIGTERM or SIGHUP to tether, or tether kill RUN\n");
}

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "envelope", required_argument, NULL, 'e' },
		{ "run-id", required_argument, NULL, 'i' },
		{ "audit", required_argument, NULL, 'a' },
		{ "audit-allowed", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:i:a:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->envelope = optarg;
			break;
		case 'i':
			o->run_id = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 'A':
			o->audit_allowed = true;
			break;
		case 'h':
			usage(stdout);
			exit(TETHER_EXIT_OK);
		default:
			return -EINVAL;
		}
	}
	if (!o->envelope) {
		fprintf(stderr, "tether run: --envelope FILE is required\n");
		return -EINVAL;
	}
	if (optind >= argc) {
		fprintf(stderr, "tether run: no command given (tether run --envelope FILE -- COMMAND)\n");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

static int make_run_id(char *buf, size_t size)
{
	unsigned char rnd[6];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -errno;
	snprintf(buf, size, "run-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3],
		 rnd[4], rnd[5]);
	return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * The workspace rule is installed by root on a path the envelope names.  If
 * another user could redirect that path (a symlink planted in /tmp, a
 * directory they own or may write above it), root would grant the run write
 * access to wherever they point it.  So the path must contain no symlink and
 * every directory above the workspace must be root's or ours and writable by
 * nobody else, unless it is sticky and root's (/tmp).
 */
static int check_workspace(const char *ws, char *why, size_t why_len)
{
	char resolved[PATH_MAX], prefix[PATH_MAX];
	struct stat st;
	size_t len;

	if (!realpath(ws, resolved)) {
		snprintf(why, why_len, "cannot resolve %s: %s", ws, strerror(errno));
		return -errno;
	}
	if (strcmp(resolved, ws) != 0) {
		snprintf(why, why_len, "%s resolves to %s through a symbolic link; name the real "
			 "directory in the envelope", ws, resolved);
		return -ELOOP;
	}
	len = strlen(ws);
	for (size_t i = 0; i < len; i++) {
		if (ws[i] != '/')
			continue;
		memcpy(prefix, ws, i ? i : 1);
		prefix[i ? i : 1] = 0;
		if (lstat(prefix, &st) < 0) {
			snprintf(why, why_len, "cannot stat %s: %s", prefix, strerror(errno));
			return -errno;
		}
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
			snprintf(why, why_len, "%s, above the workspace, belongs to uid %u, who could "
				 "redirect it", prefix, (unsigned)st.st_uid);
			return -EPERM;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !((st.st_mode & S_ISVTX) && st.st_uid == 0)) {
			snprintf(why, why_len, "%s, above the workspace, is writable by group or others "
				 "(mode %04o), who could redirect it", prefix,
				 (unsigned)(st.st_mode & 07777));
			return -EPERM;
		}
	}
	return 0;
}

static int refuse(const struct doctor_report *rep, const char *why)
{
	fprintf(stderr, "tether run: refusing to run: %s; the command was not started.\n", why);
	if (rep)
		doctor_print(rep, stderr);
	return TETHER_EXIT_REFUSED;
}

/* The terminal reasons a run that started can end with (the seed's). */
enum run_reason {
	RUN_REASON_NONE = 0,
	RUN_REASON_SUCCEEDED,
	RUN_REASON_FAILED,
	RUN_REASON_CANCELLED,
	RUN_REASON_TIMED_OUT,
	RUN_REASON_BUDGET,
	RUN_REASON_REFUSED,		/* the child could not shed the controller's authority */
};

static const char *const run_reason_names[] = {
	[RUN_REASON_NONE] = "unknown",
	[RUN_REASON_SUCCEEDED] = "succeeded",
	[RUN_REASON_FAILED] = "failed",
	[RUN_REASON_CANCELLED] = "cancelled",
	[RUN_REASON_TIMED_OUT] = "timed_out",
	[RUN_REASON_BUDGET] = "budget_exhausted",
	[RUN_REASON_REFUSED] = "refused",
};

struct run_ctx {
	struct run_opts opts;
	char run_id[80];
	struct tp_policy *policy;
	char digest[TP_DIGEST_TEXT_MAX];
	char tmpdir[PATH_MAX];		/* the run's private TMPDIR; "" until created */
	struct tl_path_rule *rules;
	size_t rule_count;
	const char **rule_paths;	/* views into rules[], for audit records */
	struct cg_run cg;
	struct tl_node node;
	struct tl_run run;
	struct ring_buffer *ring;
	struct audit_stream audit;
	FILE *audit_file;
	bool cg_created, node_open, run_installed;
	/* network: address rules in kernel form, the DNS proxy, names for records */
	struct net_plan net;
	struct dns_proxy *dns;
	char **net_rule_names;
	const char **host_rule_names;
	unsigned int batch;		/* records handled in this pass over the ring */
	/* identity, limits and the run's lifecycle */
	uint64_t t0_ns;			/* CLOCK_MONOTONIC when tether run started */
	uint64_t setup_us;		/* from t0 to just before clone3 */
	uid_t uid;
	gid_t gid;
	struct cg_limits limits;
	char **envp;
	char pidfile[PATH_MAX];		/* /run/tether/runs/<run id>: for tether kill */
	enum run_reason reason;		/* the first cause that ended the run */
	const char *budget;		/* reason BUDGET: which one ("output_bytes", ...) */
	int timer_fd;			/* resources.wall_clock; -1: none */
	int events_fd;			/* inotify on memory.events and pids.events; -1: none */
	struct out_stream {
		int fd;			/* read end of the run's pipe; -1: not captured, or closed */
		bool watching_target;	/* the loop waits for room in tether's own fd */
		bool stalled;		/* at the end, tether's own fd had no room: drop the rest */
		size_t len, off;	/* bytes in buf, and how many of them went */
		char *buf;		/* OUTPUT_CHUNK bytes */
	} out[2];			/* the run's stdout and stderr (resources.output_bytes) */
	unsigned int killed;		/* processes end_run() found alive and killed */
	uint64_t out_bytes;		/* captured bytes forwarded (both streams) */
	bool out_truncated;
};

/*
 * Records handled per pass over the ring.  libbpf's consume keeps going while
 * records keep coming, so a flooding run would hold the loop there: signals,
 * the DNS proxy and the byte cap would wait.  A pass stops after this many
 * and the loop comes back to the ring through epoll.
 */
#define RECORD_BATCH 4096

static int handle_record(void *p, void *data, size_t size)
{
	struct run_ctx *ctx = p;

	audit_handle_record(&ctx->audit, data, size);
	return ++ctx->batch >= RECORD_BATCH ? -EAGAIN : 0;
}

/* One pass: true when records were left for the next. */
static bool consume_batch(struct run_ctx *ctx)
{
	ctx->batch = 0;
	return ring_buffer__consume(ctx->ring) == -EAGAIN;
}

/* Everything in the ring (the run is gone, so it ends). */
static void drain(struct run_ctx *ctx)
{
	while (consume_batch(ctx))
		;
}

/*
 * Loads the envelope (or compiled policy): no side effects on the host.  The
 * command line's --audit and --audit-allowed take precedence over the
 * envelope's audit.sink and audit.record_allowed.
 */
static int load_envelope(struct run_ctx *ctx)
{
	uint8_t digest[32];

	if (policy_load(ctx->opts.envelope, &ctx->policy) < 0)
		return TETHER_EXIT_RUN_INVALID;
	if (tp_policy_digest(ctx->policy, digest) < 0) {
		fprintf(stderr, "tether run: encoding the policy of %s failed\n", ctx->opts.envelope);
		return TETHER_EXIT_RUN_INVALID;
	}
	tp_digest_text(digest, ctx->digest);
	if (!ctx->opts.audit_path)
		ctx->opts.audit_path = ctx->policy->audit_sink;
	if (ctx->policy->flags & TP_POLICY_AUDIT_RECORD_ALLOWED)
		ctx->opts.audit_allowed = true;
	ctx->uid = ctx->policy->uid;
	ctx->gid = ctx->policy->gid;
	ctx->limits = (struct cg_limits){
		.cpu_milli = ctx->policy->limits[TP_LIMIT_CPU_MILLI],
		.memory_bytes = ctx->policy->limits[TP_LIMIT_MEMORY_BYTES],
		.pids = ctx->policy->limits[TP_LIMIT_PROCESS_COUNT],
	};
	return 0;
}

/*
 * Where runs' temporary directories live: beneath /run/tether, a protected
 * path no run may read or write (policyc/path.c), so no other run can rename,
 * replace or read what is there, and a run's own tmpdir is writable only
 * through the longer rule its run gets.  Every component must be a real
 * directory owned by root and writable by nobody else.
 */
#define TMPDIR_BASE "/run/tether/tmp"

static int check_root_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0711) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	/*
	 * The run's uid must pass through (search, not list) to reach its
	 * TMPDIR: versions before identities made these 0700.
	 */
	if ((st.st_mode & 0011) != 0011 && chmod(path, (st.st_mode & 07777) | 0011) < 0)
		return -errno;
	return 0;
}

/*
 * The run's private temporary directory: created fresh by mkdtemp (0700)
 * under TMPDIR_BASE, writable by the run and never executable; TMPDIR names
 * it.  Removed when the run's processes are gone.
 */
static int make_tmpdir(struct run_ctx *ctx)
{
	static const char *const dirs[] = { "/run", "/run/tether", TMPDIR_BASE };
	char template[PATH_MAX];
	int r;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		r = check_root_dir(dirs[i]);
		if (r) {
			fprintf(stderr, "tether run: %s must be a directory of root's that only root "
					"may write (it holds runs' temporary directories): %s\n",
				dirs[i], strerror(-r));
			return TETHER_EXIT_RUN_ERROR;
		}
	}
	snprintf(template, sizeof(template), TMPDIR_BASE "/%s-XXXXXX", ctx->run_id);
	if (!mkdtemp(template)) {
		fprintf(stderr, "tether run: creating the run's temporary directory %s: %s\n",
			template, strerror(errno));
		return TETHER_EXIT_RUN_ERROR;
	}
	/* no realpath: every component was checked above and no run can write them */
	snprintf(ctx->tmpdir, sizeof(ctx->tmpdir), "%s", template);
	if (chown(ctx->tmpdir, ctx->uid, ctx->gid) < 0) {
		fprintf(stderr, "tether run: giving the run's temporary directory %s to uid %u: %s\n",
			ctx->tmpdir, (unsigned)ctx->uid, strerror(errno));
		return TETHER_EXIT_RUN_ERROR;
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* keep going: one entry that will not go (chattr +i) must not keep the rest */
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) < 0)
		fprintf(stderr, "tether run: removing %s: %s\n", path, strerror(errno));
	return 0;
}

/*
 * Removes the temporary directory and everything the run left in it,
 * without following links (FTW_PHYS) or crossing into mounts (FTW_MOUNT).
 * Only once the run's processes are gone, and no other run can write
 * beneath TMPDIR_BASE, so nothing renames a directory under the walk.
 */
static void remove_tree(const char *dir)
{
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		fprintf(stderr, "tether run: removing the run's temporary directory %s: %s\n", dir,
			strerror(errno));
}

static void remove_tmpdir(struct run_ctx *ctx)
{
	if (!ctx->tmpdir[0])
		return;
	remove_tree(ctx->tmpdir);
	ctx->tmpdir[0] = 0;
}

/* The temporary directories a dead run left (run ids name them; see make_tmpdir). */
static void remove_orphan_tmpdirs(const char *run_id)
{
	char pattern[PATH_MAX];
	glob_t found;

	if (!run_id_valid(run_id))
		return;
	snprintf(pattern, sizeof(pattern), TMPDIR_BASE "/%s-??????", run_id);
	if (glob(pattern, GLOB_NOSORT, NULL, &found) != 0)
		return;
	for (size_t i = 0; i < found.gl_pathc; i++)
		remove_tree(found.gl_pathv[i]);
	globfree(&found);
}

/* The run file a dead controller left (write_pidfile). */
static void remove_orphan_run_file(const char *run_id)
{
	char path[PATH_MAX];

	if (!run_id_valid(run_id))
		return;
	snprintf(path, sizeof(path), TETHER_RUNS_DIR "/%s", run_id);
	if (unlink(path) < 0 && errno != ENOENT)
		fprintf(stderr, "tether run: removing %s: %s\n", path, strerror(errno));
}

/* Creates and checks the workspace, then resolves the rules' paths. */
static int prepare_workspace(struct run_ctx *ctx)
{
	char why[PATH_MAX + 256];
	struct stat st;
	bool created = lstat(ctx->policy->workspace, &st) < 0 && errno == ENOENT;
	int r;

	r = mkdir_p(ctx->policy->workspace, 0755);
	if (r) {
		fprintf(stderr, "tether run: cannot create workspace %s: %s\n",
			ctx->policy->workspace, strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}
	r = check_workspace(ctx->policy->workspace, why, sizeof(why));
	if (r) {
		fprintf(stderr, "tether run: refusing the workspace: %s\n", why);
		return TETHER_EXIT_RUN_ERROR;
	}
	/*
	 * A workspace tether made is the run's own; one that existed is used as
	 * it is (its owner decides whether the run's identity may write it).
	 * check_workspace() made sure nobody but root can redirect the path.
	 */
	if (created && chown(ctx->policy->workspace, ctx->uid, ctx->gid) < 0) {
		fprintf(stderr, "tether run: giving workspace %s to uid %u: %s\n",
			ctx->policy->workspace, (unsigned)ctx->uid, strerror(errno));
		return TETHER_EXIT_RUN_ERROR;
	}
	r = make_tmpdir(ctx);
	if (r)
		return r;
	r = run_rules_resolve(ctx->policy, ctx->tmpdir, ctx->opts.audit_path, &ctx->rules,
			      &ctx->rule_count);
	if (r) {
		fprintf(stderr, "tether run: resolving the rules of %s: %s\n", ctx->opts.envelope,
			strerror(-r));
		/* A link on a rule's path is the host's state, not the envelope's fault. */
		return r == -ELOOP ? TETHER_EXIT_RUN_ERROR : TETHER_EXIT_RUN_INVALID;
	}
	return 0;
}

/*
 * Runs whose controller died (SIGKILL, a crash) stay confined but leak their
 * cgroup, processes and map entries.  Under the parent lock, reclaim them:
 * kill what is left, remove their entries, remove their cgroups.  Entries
 * whose cgroup no longer exists at all are removed too.  Best effort: a
 * failure is reported and this run goes on.
 */
static void reclaim_orphans(struct run_ctx *ctx, const char *mount_point)
{
	struct tl_error err = { "" };
	struct cg_run *orphans = NULL;
	uint64_t *dirs = NULL, *registered = NULL;
	size_t n = 0, ndirs = 0, nreg = 0;
	char name[PATH_MAX];	/* basename() may write to its argument */
	const char *id;
	unsigned int left;

	if (cg_find_orphans(mount_point, &orphans, &n, &dirs, &ndirs))
		return;
	for (size_t i = 0; i < n; i++) {
		if (cg_run_kill_and_wait(&orphans[i], CLEANUP_TIMEOUT_MS, &left)) {
			fprintf(stderr, "tether run: warning: orphaned run %s could not be emptied\n",
				orphans[i].path);
			cg_run_free(&orphans[i]);
			continue;
		}
		if (tl_run_reclaim(&ctx->node, orphans[i].id, &err) && err.msg[0])
			fprintf(stderr, "tether run: warning: %s\n", err.msg);
		fprintf(stderr, "tether run: reclaimed run %s, whose controller died (killed: %u "
				"processes)\n", orphans[i].path, left);
		/* its processes are gone: its temporary directory can go too */
		snprintf(name, sizeof(name), "%s", orphans[i].path);
		id = basename(name);
		remove_orphan_tmpdirs(id);
		remove_orphan_run_file(id);
		cg_run_destroy(&orphans[i]);
	}
	if (tl_runs_list(&ctx->node, &registered, &nreg) == 0) {
		for (size_t i = 0; i < nreg; i++) {
			bool found = false;

			for (size_t j = 0; j < ndirs && !found; j++)
				found = dirs[j] == registered[i];
			if (!found && tl_run_reclaim(&ctx->node, registered[i], &err) == 0)
				fprintf(stderr, "tether run: removed the map entries of cgroup %llu, "
						"which no longer exists\n",
					(unsigned long long)registered[i]);
		}
	}
	free(registered);
	free(dirs);
	free(orphans);
}

/*
 * Whether the run could rewrite the audit file: when it lies in the
 * workspace, or the rule the kernel applies to it grants write (the longest
 * resolved rule path above it).  Returns NULL when the file is safe, else
 * why not, with `where` naming the directory concerned.  A file that exists
 * must be a regular one (not a device, FIFO or symlink).
 */
static const char *audit_path_unsafe(const struct run_ctx *ctx, char where[PATH_MAX])
{
	char copy[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	const char *ws = ctx->policy->workspace;	/* check_workspace: its own realpath */
	size_t best = 0, n = strlen(ws);
	const struct tl_path_rule *rule = NULL;
	struct stat st;

	if (snprintf(copy, sizeof(copy), "%s", ctx->opts.audit_path) >= (int)sizeof(copy) ||
	    !realpath(dirname(copy), dir))
		return NULL;	/* opening it fails later, with the reason */
	snprintf(copy, sizeof(copy), "%s", ctx->opts.audit_path);
	if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", basename(copy)) >=
	    (int)sizeof(path))
		return NULL;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(where, PATH_MAX, "%s", path);
		return "is not a regular file";
	}
	if (strncmp(dir, ws, n) == 0 && (dir[n] == '/' || dir[n] == 0)) {
		snprintf(where, PATH_MAX, "%s", ws);
		return "is inside the workspace";
	}
	/* The policy's own rules come first; the protected ones after them grant nothing. */
	for (size_t i = 0; i < ctx->policy->path_rule_count && i < ctx->rule_count; i++) {
		const char *p = ctx->rules[i].path;
		size_t len = strlen(p);
		bool within = strcmp(p, "/") == 0 ||
			      (strncmp(path, p, len) == 0 && (path[len] == '/' || path[len] == 0));

		if (within && len >= best) {
			best = len;
			rule = &ctx->rules[i];
		}
	}
	if (rule && (rule->access & TETHER_ACCESS_WRITE)) {
		snprintf(where, PATH_MAX, "%s", rule->path);
		return "is in a directory the run may write";
	}
	return NULL;
}

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool dns_name_allowed(void *p, const char *name)
{
	return net_name_allowed(&((struct run_ctx *)p)->net, name);
}

static bool dns_range_allowed(void *p, const uint8_t addr[16])
{
	return net_range_allowed(&((struct run_ctx *)p)->net, addr);
}

/* A listed name's answer: into the run's allow trie before the reply is released. */
static int dns_admit(void *p, const char *name, const uint8_t addr[16], uint32_t ttl_s)
{
	struct run_ctx *ctx = p;
	struct tl_error err = { "" };
	struct tl_net_entry entry;
	int r;

	if (!ctx->run_installed)
		return -EAGAIN;
	/* one second of grace: the client's cache starts counting a little later */
	r = net_admit(&ctx->net, name, addr, ttl_s + 1, clock_ns(CLOCK_BOOTTIME), &entry);
	if (r == 1)
		return 0;
	if (!r)
		r = tl_run_net_write(&ctx->node, &ctx->run, &entry, &err);
	if (!r)
		r = net_admit_commit(&ctx->net, &entry);
	if (r)
		fprintf(stderr, "tether run: admitting an answer for %s: %s\n", name,
			err.msg[0] ? err.msg : r == -ENOSPC ? "the run has admitted as many addresses "
			"as it may (" STRINGIFY(NET_ADMITTED_MAX) ")" : strerror(-r));
	return r;
}

static void dns_record(void *p, const struct dns_event *ev)
{
	struct run_ctx *ctx = p;

	if (ctx->audit.out)
		audit_write_dns_event(&ctx->audit, ev);
}

/*
 * The run's address rules in kernel form, their names for records, and its
 * DNS proxy: before the run is installed, which needs the proxy's ports.
 */
static int setup_network(struct run_ctx *ctx)
{
	const struct tp_policy *policy = ctx->policy;
	struct dns_proxy_config cfg = {
		.upstreams = policy->dns_upstreams,
		.upstream_count = policy->dns_upstream_count,
		.ttl_min_s = policy->dns_ttl_min_s,
		.ttl_max_s = policy->dns_ttl_max_s,
		/* without hostnames every query is refused: no upstream is needed */
		.upstream_optional = policy->host_rule_count == 0,
		.name_allowed = dns_name_allowed,
		.range_allowed = dns_range_allowed,
		.admit = dns_admit,
		.event = dns_record,
		.ctx = ctx,
	};
	char why[256];
	int r;

	r = net_plan_build(policy, &ctx->net, why, sizeof(why));
	if (r == -E2BIG) {
		fprintf(stderr, "tether run: network_egress.allowed_destinations: %s\n", why);
		return TETHER_EXIT_RUN_INVALID;
	}
	ctx->net_rule_names = calloc(policy->net_rule_count + 1, sizeof(char *));
	ctx->host_rule_names = calloc(policy->host_rule_count + 1, sizeof(char *));
	if (r || !ctx->net_rule_names || !ctx->host_rule_names) {
		fprintf(stderr, "tether run: %s\n", strerror(ENOMEM));
		return TETHER_EXIT_RUN_ERROR;
	}
	for (size_t i = 0; i < policy->net_rule_count; i++) {
		char block[64];

		net_format_block(policy->net_rules[i].addr, policy->net_rules[i].prefixlen, block,
				 sizeof(block));
		ctx->net_rule_names[i] = strdup(block);
		if (!ctx->net_rule_names[i]) {
			fprintf(stderr, "tether run: %s\n", strerror(ENOMEM));
			return TETHER_EXIT_RUN_ERROR;
		}
	}
	for (size_t i = 0; i < policy->host_rule_count; i++)
		ctx->host_rule_names[i] = policy->host_rules[i].name;
	ctx->audit.net_rule_names = (const char *const *)ctx->net_rule_names;
	ctx->audit.net_rule_count = policy->net_rule_count;
	ctx->audit.host_rule_names = ctx->host_rule_names;
	ctx->audit.host_rule_count = policy->host_rule_count;
	r = dns_proxy_start(&cfg, &ctx->dns, why, sizeof(why));
	if (r && policy->host_rule_count && !policy->dns_upstream_count && r == -ENOENT) {
		fprintf(stderr, "tether run: refusing to run: the envelope lists hostnames, but no "
				"DNS upstream is known (%s); set network_egress.dns.upstream or add a "
				"nameserver to /etc/resolv.conf\n", why);
		return TETHER_EXIT_REFUSED;
	}
	if (r) {
		fprintf(stderr, "tether run: starting the run's DNS proxy: %s\n", why);
		return TETHER_EXIT_RUN_ERROR;
	}
	return 0;
}

/*
 * cgroup v2 controllers for resources.cpu, memory_bytes and process_count:
 * a host whose hierarchy lacks one cannot enforce the envelope, and the run
 * is refused (never started unlimited).  Under the parent lock.
 */
static int enable_controllers(struct run_ctx *ctx, const char *mount_point)
{
	char *available = cg_controllers(mount_point), missing[64], why[PATH_MAX + 128];
	int r;

	cg_missing_controllers(available, &ctx->limits, missing, sizeof(missing));
	if (missing[0]) {
		fprintf(stderr, "tether run: refusing to run: the envelope's resources need the "
				"cgroup v2 controllers '%s', which %s does not offer (it has: '%s'); "
				"run on a host whose cgroup2 hierarchy has them, or drop those "
				"limits. The command was not started.\n",
			missing, mount_point, available && available[0] ? available : "none");
		free(available);
		return TETHER_EXIT_REFUSED;
	}
	free(available);
	r = cg_enable_controllers(mount_point, &ctx->limits, why, sizeof(why));
	if (r) {
		fprintf(stderr, "tether run: refusing to run: %s; the command was not started.\n",
			why);
		return TETHER_EXIT_REFUSED;
	}
	return 0;
}

/*
 * /run/tether/runs/<run id> names the controller for `tether kill`: its pid
 * and its start time (field 22 of /proc/PID/stat), which tells it from a
 * later process that reuses the pid.  /run/tether is protected: no run can
 * read or forge it.
 */
static int write_pidfile(struct run_ctx *ctx)
{
	unsigned long long start = 0;
	char tmp[PATH_MAX + 8];
	FILE *f;
	int r = check_root_dir(TETHER_RUNS_DIR);

	if (!r)
		r = proc_start_time(getpid(), &start);
	if (r) {
		fprintf(stderr, "tether run: preparing %s: %s\n", TETHER_RUNS_DIR, strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}
	snprintf(ctx->pidfile, sizeof(ctx->pidfile), TETHER_RUNS_DIR "/%s", ctx->run_id);
	/* "~" is in no run id: no other run's file can have this name */
	snprintf(tmp, sizeof(tmp), "%s~", ctx->pidfile);
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%d %llu\n", (int)getpid(), start) < 0 || fclose(f) != 0 ||
	    rename(tmp, ctx->pidfile) < 0) {
		fprintf(stderr, "tether run: writing %s: %s\n", ctx->pidfile, strerror(errno));
		unlink(tmp);
		ctx->pidfile[0] = 0;
		return TETHER_EXIT_RUN_ERROR;
	}
	return 0;
}

/* Everything up to, not including, the child: returns 0 or an exit status. */
static int setup(struct run_ctx *ctx)
{
	struct tl_run_net net;
	struct tl_run_plan plan;
	struct doctor_report rep;
	struct tl_error err = { "" };
	char limits_why[PATH_MAX + 256];
	int parent_lock, r;

	if (geteuid() != 0)
		return refuse(NULL, "tether run needs root: it loads BPF-LSM programs, creates "
				    "cgroups and writes pinned maps");
	/* Cheap checks first; the trial load happens below as the real load. */
	doctor_run(&rep, false);
	if (!doctor_ok(&rep))
		return refuse(&rep, "this host cannot enforce the envelope");
	r = prepare_workspace(ctx);
	if (r)
		return r;
	if (ctx->opts.audit_path) {
		char where[PATH_MAX];
		const char *why = audit_path_unsafe(ctx, where);

		if (why) {
			fprintf(stderr, "tether run: the audit file %s %s (%s), where the run could "
					"rewrite or redirect its own audit records; write it elsewhere\n",
				ctx->opts.audit_path, why, where);
			return TETHER_EXIT_RUN_USAGE;
		}
	}

	/* Held until this run's cgroup exists and is locked: see runtime/cgroup.h. */
	parent_lock = cg_parent_lock(rep.cgroup2_mount);
	if (parent_lock < 0) {
		fprintf(stderr, "tether run: locking %s/%s: %s%s\n", rep.cgroup2_mount,
			TETHER_CGROUP_PARENT, strerror(-parent_lock),
			parent_lock == -EBUSY ? " (another process has held it for 10 s)" : "");
		return TETHER_EXIT_RUN_ERROR;
	}
	r = tl_node_open(TETHER_RUN_CGROUP_LEVEL, parent_lock, &ctx->node, &err);
	if (r) {
		close(parent_lock);
		if (r == -EUCLEAN || r == -ESTALE) {
			fprintf(stderr, "tether run: %s\n", err.msg);
			return TETHER_EXIT_RUN_ERROR;
		}
		snprintf(rep.checks[DOCTOR_LSM_LOAD].detail, sizeof(rep.checks[0].detail), "%s",
			 err.msg);
		snprintf(rep.checks[DOCTOR_LSM_LOAD].fix, sizeof(rep.checks[0].fix),
			 "%s", r == -EPERM ? "this kernel refuses BPF-LSM programs even for root; "
					     "use a kernel that allows them"
					   : "tether -v run ... shows libbpf's log");
		rep.checks[DOCTOR_LSM_LOAD].ok = false;
		rep.checks[DOCTOR_LSM_LOAD].skipped = false;
		return refuse(&rep, "the BPF programs (BPF-LSM and cgroup-BPF) could not be loaded");
	}
	ctx->node_open = true;

	reclaim_orphans(ctx, rep.cgroup2_mount);
	r = enable_controllers(ctx, rep.cgroup2_mount);
	if (r) {
		close(parent_lock);
		return r;
	}
	r = cg_run_create(rep.cgroup2_mount, ctx->run_id, &ctx->cg);
	close(parent_lock);
	if (r) {
		fprintf(stderr, "tether run: creating the run cgroup %s/%s/%s: %s%s\n",
			rep.cgroup2_mount, TETHER_CGROUP_PARENT, ctx->run_id, strerror(-r),
			r == -EEXIST ? " (a run with this id is live; pick another --run-id)" : "");
		return TETHER_EXIT_RUN_ERROR;
	}
	ctx->cg_created = true;
	r = cg_run_set_limits(&ctx->cg, &ctx->limits, limits_why, sizeof(limits_why));
	if (r) {
		fprintf(stderr, "tether run: refusing to run: the envelope's resources cannot be "
				"enforced: %s; the command was not started.\n", limits_why);
		return TETHER_EXIT_REFUSED;
	}
	r = write_pidfile(ctx);
	if (r)
		return r;

	r = setup_network(ctx);
	if (r)
		return r;
	net = (struct tl_run_net){
		.entries = ctx->net.entries,
		.count = ctx->net.count,
		.egress_max = ctx->policy->limits[TP_LIMIT_EGRESS_BYTES],
		.dns_port4 = dns_proxy_port(ctx->dns, AF_INET),
		.dns_port6 = dns_proxy_port(ctx->dns, AF_INET6),
	};
	/* tp_policy and the kernel number the modes alike (policyc/policy.h) */
	r = run_plan_build(ctx->rules, ctx->rule_count, &plan, &err);
	if (!r)
		r = tl_run_install(&ctx->node, ctx->cg.id,
				   ctx->policy->mode == TP_MODE_AUDIT ? TETHER_MODE_AUDIT
								      : TETHER_MODE_ENFORCE,
				   ctx->opts.audit_allowed ? TETHER_RUN_AUDIT_ALLOWED : 0, &plan,
				   ctx->policy->abstract_sockets, ctx->policy->abstract_socket_count,
				   &net, &ctx->run, &err);
	run_plan_free(&plan);
	if (r) {
		fprintf(stderr, "tether run: installing the run's rules: %s\n", err.msg);
		return TETHER_EXIT_RUN_ERROR;
	}
	ctx->run_installed = true;

	if (ctx->opts.audit_path) {
		/*
		 * O_NOFOLLOW and O_NONBLOCK, then a type check on what was opened:
		 * audit_path_unsafe() looked at the name, but whoever can write its
		 * directory could swap in a symlink or a FIFO since.
		 */
		int fd = open(ctx->opts.audit_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			      O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
		struct stat st;

		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			errno = EINVAL;
		}
		if (fd < 0 || !(ctx->audit_file = fdopen(fd, "a"))) {
			fprintf(stderr, "tether run: opening audit file %s: %s\n",
				ctx->opts.audit_path,
				errno == EINVAL ? "not a regular file" : strerror(errno));
			if (fd >= 0)
				close(fd);
			return TETHER_EXIT_RUN_ERROR;
		}
	}
	ctx->audit.out = ctx->audit_file ? ctx->audit_file : stderr;
	ctx->audit.run_id = ctx->run_id;
	ctx->rule_paths = calloc(ctx->rule_count ? ctx->rule_count : 1, sizeof(char *));
	if (!ctx->rule_paths) {
		fprintf(stderr, "tether run: %s\n", strerror(ENOMEM));
		return TETHER_EXIT_RUN_ERROR;
	}
	for (size_t i = 0; i < ctx->rule_count; i++)
		ctx->rule_paths[i] = ctx->rules[i].path;
	ctx->audit.rule_paths = ctx->rule_paths;
	ctx->audit.rule_count = ctx->rule_count;
	ctx->ring = ring_buffer__new(ctx->run.ring_fd, handle_record, ctx, NULL);
	if (!ctx->ring) {
		fprintf(stderr, "tether run: opening the run's audit ring: %s\n", strerror(errno));
		return TETHER_EXIT_RUN_ERROR;
	}
	return 0;
}

/*
 * Ends the run for `reason` unless something ended it first: the first
 * cause is the one reported.  cgroup.kill without waiting: the loop sees
 * the command die, and teardown waits for the rest.
 */
static void end_run(struct run_ctx *ctx, enum run_reason reason, const char *budget,
		    const char *why)
{
	unsigned int left;

	if (ctx->reason != RUN_REASON_NONE)
		return;
	ctx->reason = reason;
	ctx->budget = budget;
	fprintf(stderr, "tether run: %s: ending run %s (%s)\n", why, ctx->run_id,
		run_reason_names[reason]);
	cg_run_kill_and_wait(&ctx->cg, 0, &left);
	/* the cleanup record counts these: teardown finds only stragglers */
	ctx->killed = left;
}

/*
 * Captured output (resources.output_bytes).  The run's stdout and stderr are
 * pipes the controller reads and forwards to its own, counting both
 * together.  At the cap it forwards the bytes that fit, records the
 * truncation, closes the pipes and ends the run (budget_exhausted): a run
 * never blocks on a full pipe nobody reads.
 *
 * Forwarding must not hold up the loop either: whoever reads tether's own
 * stdout may be slow or stop, and the wall clock, signals, DNS and the
 * audit ring are served by the same loop.  So a stream writes at most
 * PIPE_BUF bytes at a time, and only when poll() says its destination has
 * room (a pipe, socket or terminal then takes them without blocking; a
 * regular file always does).  While bytes wait, the stream stops reading
 * the run's pipe (the run then waits on its own full pipe, as it would
 * without tether) and the loop watches the destination instead.
 */
#define OUTPUT_CHUNK 65536
/* How long the last bytes may wait for tether's stdout at the end of a run. */
#define OUTPUT_FINAL_WAIT_MS 1000

static int out_target(int i)
{
	return i ? STDERR_FILENO : STDOUT_FILENO;
}

static void output_close(struct run_ctx *ctx, int i, int ep)
{
	struct out_stream *o = &ctx->out[i];

	if (o->fd >= 0) {
		if (ep >= 0)
			epoll_ctl(ep, EPOLL_CTL_DEL, o->fd, NULL);
		close(o->fd);
		o->fd = -1;
	}
	if (o->watching_target && ep >= 0)
		epoll_ctl(ep, EPOLL_CTL_DEL, out_target(i), NULL);
	o->watching_target = false;
}

/*
 * Writes what stream i holds while its destination has room, waiting at
 * most wait_ms for it.  Returns true when nothing is left.  With a loop
 * (ep >= 0), a destination without room is watched and the run's pipe is
 * not: the loop comes back here when it has room.
 */
static bool output_flush(struct run_ctx *ctx, int i, int ep, int wait_ms)
{
	struct out_stream *o = &ctx->out[i];
	struct pollfd pfd = { .fd = out_target(i), .events = POLLOUT };

	while (o->off < o->len) {
		size_t n = o->len - o->off;
		ssize_t w;

		if (poll(&pfd, 1, o->stalled ? 0 : wait_ms) <= 0 || !(pfd.revents & POLLOUT)) {
			if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
				break;	/* nobody reads tether's stdout: drop */
			if (ep < 0) {
				/* the run is over: what cannot go is dropped, without waiting again */
				o->stalled = true;
				break;
			}
			if (!o->watching_target) {
				struct epoll_event ev = { .events = EPOLLOUT, .data.fd = pfd.fd };

				/* EPERM: a regular file, which poll says always has room */
				o->watching_target = epoll_ctl(ep, EPOLL_CTL_ADD, pfd.fd, &ev) == 0;
			}
			if (o->fd >= 0) {
				struct epoll_event ev = { .events = 0, .data.fd = o->fd };

				epoll_ctl(ep, EPOLL_CTL_MOD, o->fd, &ev);
			}
			return false;
		}
		w = write(pfd.fd, o->buf + o->off, n < PIPE_BUF ? n : PIPE_BUF);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			break;	/* tether's stdout is gone: the bytes are dropped, counted */
		o->off += (size_t)w;
	}
	o->off = o->len = 0;
	if (ep >= 0) {
		if (o->watching_target)
			epoll_ctl(ep, EPOLL_CTL_DEL, pfd.fd, NULL);
		if (o->fd >= 0) {
			struct epoll_event ev = { .events = EPOLLIN, .data.fd = o->fd };

			epoll_ctl(ep, EPOLL_CTL_MOD, o->fd, &ev);
		}
	}
	o->watching_target = false;
	return true;
}

/*
 * Reads what stream i (0 stdout, 1 stderr) has and forwards it: 1 bytes
 * moved on, 0 none now (or waiting for room), -1 closed.
 */
static int output_forward(struct run_ctx *ctx, int i, int ep, int wait_ms)
{
	struct out_stream *o = &ctx->out[i];
	uint64_t cap = ctx->policy->limits[TP_LIMIT_OUTPUT_BYTES];
	char extra[160];
	ssize_t n;

	if (!output_flush(ctx, i, ep, wait_ms))
		return 0;
	if (o->fd < 0)
		return -1;
	n = read(o->fd, o->buf, OUTPUT_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		output_close(ctx, i, ep);
		return -1;
	}
	if (ctx->out_bytes + (uint64_t)n <= cap) {
		o->len = (size_t)n;
		ctx->out_bytes += (uint64_t)n;
		output_flush(ctx, i, ep, wait_ms);
		return 1;
	}
	o->len = (size_t)(cap - ctx->out_bytes);
	ctx->out_bytes = cap;
	ctx->out_truncated = true;
	snprintf(extra, sizeof(extra), "\"stream\":\"%s\",\"output_bytes_max\":%llu",
		 i ? "stderr" : "stdout", (unsigned long long)cap);
	if (ctx->audit.out)
		audit_write_run_event(&ctx->audit, "output_truncated", extra);
	output_close(ctx, 0, ep);
	output_close(ctx, 1, ep);
	end_run(ctx, RUN_REASON_BUDGET, "output_bytes",
		"its output reached resources.output_bytes");
	/* the bytes that fit still go, waiting a little if they must */
	output_flush(ctx, 0, -1, OUTPUT_FINAL_WAIT_MS);
	output_flush(ctx, 1, -1, OUTPUT_FINAL_WAIT_MS);
	return -1;
}

/*
 * What the pipes hold, without a loop: when the command has exited (0: what
 * is there now) and at teardown, once every writer is gone (until EOF).
 */
static void output_drain(struct run_ctx *ctx, int wait_ms)
{
	for (int i = 0; i < 2; i++)
		while (output_forward(ctx, i, -1, wait_ms) == 1)
			;
}

/* More than this many refused forks (pids.events "max") end a run: it is not recovering. */
#define PIDS_MAX_HITS 32

/*
 * memory.events and pids.events change when the kernel acts on a limit;
 * inotify says when (cgroup v2 files notify on change).
 */
static int watch_limits(struct run_ctx *ctx)
{
	static const char *const files[] = { "memory.events", "pids.events" };
	char path[PATH_MAX];

	ctx->events_fd = -1;
	if (!ctx->limits.memory_bytes && !ctx->limits.pids)
		return 0;
	ctx->events_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ctx->events_fd < 0)
		return -errno;
	for (size_t i = 0; i < 2; i++) {
		if ((i == 0 && !ctx->limits.memory_bytes) || (i == 1 && !ctx->limits.pids))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ctx->cg.path, files[i]);
		if (inotify_add_watch(ctx->events_fd, path, IN_MODIFY) < 0)
			return -errno;
	}
	return 0;
}

/* Whether the kernel's OOM killer acted in the run (memory.events counts its subtree). */
static bool oom_killed(struct run_ctx *ctx)
{
	uint64_t n;

	return ctx->limits.memory_bytes &&
	       cg_run_read_counter(&ctx->cg, "memory.events", "oom_kill", &n) == 0 && n > 0;
}

static void check_limits(struct run_ctx *ctx)
{
	char buf[4096];
	uint64_t n;

	while (ctx->events_fd >= 0 && read(ctx->events_fd, buf, sizeof(buf)) > 0)
		;
	if (oom_killed(ctx))
		end_run(ctx, RUN_REASON_BUDGET, "memory_bytes",
			"the kernel's OOM killer acted at resources.memory_bytes");
	if (ctx->limits.pids && cg_run_read_counter(&ctx->cg, "pids.events", "max", &n) == 0 &&
	    n > PIDS_MAX_HITS)
		end_run(ctx, RUN_REASON_BUDGET, "process_count",
			"more than " STRINGIFY(PIDS_MAX_HITS) " forks were refused at "
			"resources.process_count");
}

/*
 * Tears down in the order that keeps the audit stream complete: kill what is
 * left, drain output and records, read the counters, remove map entries,
 * drain once more, remove the cgroup, then write the cleanup and end
 * records.  Returns 0 or TETHER_EXIT_RUN_ERROR (cleanup not verified).
 */
static int teardown(struct run_ctx *ctx, int status_for_record, bool ran)
{
	uint64_t seq = 0, lost = 0, egress = 0, t0 = clock_ns(CLOCK_MONOTONIC);
	uint32_t ingress_dropped = 0;
	struct tl_error err = { "" };
	unsigned int left = 0;
	bool empty = true, maps_removed = !ctx->run_installed, cg_removed = !ctx->cg_created;
	bool tmp_removed = !ctx->tmpdir[0];
	struct strbuf sb = { 0 };
	int ret = 0, r;

	if (ctx->cg_created) {
		r = cg_run_kill_and_wait(&ctx->cg, CLEANUP_TIMEOUT_MS, &left);
		/* end_run() already killed them all (the command among them) */
		if (ctx->killed > left)
			left = ctx->killed;
		if (r) {
			fprintf(stderr, "tether run: processes of run %s survived cgroup.kill for %d ms\n",
				ctx->run_id, CLEANUP_TIMEOUT_MS);
			empty = false;
			ret = TETHER_EXIT_RUN_ERROR;
		}
		/* an OOM kill that ended the command before the loop saw the event */
		if (ran && ctx->reason == RUN_REASON_NONE && oom_killed(ctx)) {
			ctx->reason = RUN_REASON_BUDGET;
			ctx->budget = "memory_bytes";
		}
	}
	/* every writer is gone once the tree is empty: what is left is the last output */
	if (empty)
		output_drain(ctx, OUTPUT_FINAL_WAIT_MS);
	if (ctx->ring)
		drain(ctx);
	if (ctx->run_installed) {
		struct tl_run_counters c = { 0 };

		tl_run_counters(&ctx->node, &ctx->run, &c);
		seq = c.seq;
		lost = c.audit_lost;
		egress = c.egress_bytes;
		ingress_dropped = c.ingress_dropped;
		/* the cap's record may have found the ring full: the kernel's flag decides */
		if ((c.egress_exhausted || ctx->audit.egress_exhausted) &&
		    ctx->reason == RUN_REASON_NONE) {
			ctx->reason = RUN_REASON_BUDGET;
			ctx->budget = "egress_bytes";
		}
		/* Leave the rules in place while anything of the run may still live. */
		if (empty) {
			if (tl_run_remove(&ctx->node, &ctx->run, &err)) {
				fprintf(stderr, "tether run: %s\n", err.msg);
				ret = TETHER_EXIT_RUN_ERROR;
			} else {
				maps_removed = true;
			}
		}
	}
	if (ctx->ring)
		drain(ctx);
	if (ctx->reason == RUN_REASON_NONE)
		ctx->reason = status_for_record == 0 ? RUN_REASON_SUCCEEDED : RUN_REASON_FAILED;
	/* lost records never took a sequence number: seq counts those queued */
	if (lost || ctx->audit.records != seq)
		fprintf(stderr,
			"tether run: warning: run %s lost %llu audit records to a full ring; %llu "
			"of the %llu queued were written\n",
			ctx->run_id, (unsigned long long)lost, (unsigned long long)ctx->audit.records,
			(unsigned long long)seq);
	ring_buffer__free(ctx->ring);
	ctx->ring = NULL;
	/* the run is gone or its entries are: nothing can ask the proxy any more */
	dns_proxy_free(ctx->dns);
	ctx->dns = NULL;
	if (ctx->run_installed && empty)
		tl_run_free(&ctx->run);
	if (ctx->node_open)
		tl_node_close(&ctx->node);
	ctx->node_open = false;
	if (ctx->cg_created) {
		if (empty && (r = cg_run_destroy(&ctx->cg))) {
			fprintf(stderr, "tether run: removing cgroup %s: %s\n", ctx->cg.path,
				strerror(-r));
			ret = TETHER_EXIT_RUN_ERROR;
		} else if (!empty) {
			fprintf(stderr,
				"tether run: run %s left its cgroup %s and map entries in place "
				"because it could not be emptied\n",
				ctx->run_id, ctx->cg.path);
			cg_run_free(&ctx->cg);
		} else {
			cg_removed = true;
		}
		ctx->cg_created = false;
	}
	/* Only once nothing of the run can still be writing there. */
	if (empty) {
		remove_tmpdir(ctx);
		tmp_removed = true;
	} else if (ctx->tmpdir[0]) {
		fprintf(stderr, "tether run: left the run's temporary directory %s in place\n",
			ctx->tmpdir);
	}
	if (ctx->pidfile[0] && unlink(ctx->pidfile) < 0 && errno != ENOENT)
		fprintf(stderr, "tether run: removing %s: %s\n", ctx->pidfile, strerror(errno));
	ctx->pidfile[0] = 0;

	/*
	 * The evidence: what was killed, how long it took, and whether each part
	 * of the run was seen gone.  A cleanup that was not verified says so,
	 * and tether exits 123.
	 */
	if (ran && ctx->audit.out) {
		bool verified = empty && maps_removed && cg_removed && tmp_removed;

		r = sb_printf(&sb, "\"killed\":%u,\"duration_us\":%llu,\"tree_empty\":%s,"
			      "\"map_entries_removed\":%s,\"cgroup_removed\":%s,"
			      "\"tmpdir_removed\":%s,\"verified\":%s",
			      left, (unsigned long long)((clock_ns(CLOCK_MONOTONIC) - t0) / 1000),
			      empty ? "true" : "false", maps_removed ? "true" : "false",
			      cg_removed ? "true" : "false", tmp_removed ? "true" : "false",
			      verified ? "true" : "false");
		audit_write_run_event(&ctx->audit, "cleanup", r ? NULL : sb.data);
		sb_free(&sb);
		if (!verified && !ret)
			ret = TETHER_EXIT_RUN_ERROR;
		r = sb_printf(&sb,
			      "\"exit_status\":%d,\"audit_records\":%llu,\"audit_seq_last\":%llu,"
			      "\"audit_lost\":%llu,\"audit_malformed\":%llu,\"egress_bytes\":%llu,"
			      "\"ingress_dropped\":%u,\"leftover_processes\":%u,"
			      "\"cleanup_verified\":%s,\"reason\":\"%s\"",
			      status_for_record, (unsigned long long)ctx->audit.records,
			      (unsigned long long)seq, (unsigned long long)lost,
			      (unsigned long long)ctx->audit.malformed, (unsigned long long)egress,
			      ingress_dropped, left, verified ? "true" : "false",
			      run_reason_names[ctx->reason]);
		if (!r && ctx->reason == RUN_REASON_BUDGET && ctx->budget)
			r = sb_printf(&sb, ",\"budget\":\"%s\"", ctx->budget);
		if (!r && ctx->policy->limits[TP_LIMIT_OUTPUT_BYTES])
			r = sb_printf(&sb, ",\"output_bytes\":%llu,\"output_truncated\":%s",
				      (unsigned long long)ctx->out_bytes,
				      ctx->out_truncated ? "true" : "false");
		audit_write_run_event(&ctx->audit, "end", r ? NULL : sb.data);
		sb_free(&sb);
	}
	if (ctx->audit.write_error) {
		fprintf(stderr, "tether run: writing audit records: %s\n",
			strerror(ctx->audit.write_error));
		ret = TETHER_EXIT_RUN_ERROR;
	}
	if (ctx->audit_file && fclose(ctx->audit_file) != 0 && !ret) {
		fprintf(stderr, "tether run: closing audit file: %s\n", strerror(errno));
		ret = TETHER_EXIT_RUN_ERROR;
	}
	ctx->audit_file = NULL;
	return ret;
}

static void epoll_add(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd >= 0)
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* Waits for the command while forwarding records and output and watching limits. */
static int supervise(struct run_ctx *ctx, int pidfd, int sigfd, int *wstatus)
{
	struct epoll_event events[8];
	int ep, ring_fd = ring_buffer__epoll_fd(ctx->ring), dns_fd = dns_proxy_fd(ctx->dns);
	siginfo_t si;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	epoll_add(ep, pidfd);
	epoll_add(ep, sigfd);
	epoll_add(ep, ring_fd);
	epoll_add(ep, dns_fd);
	epoll_add(ep, ctx->timer_fd);
	epoll_add(ep, ctx->events_fd);
	epoll_add(ep, ctx->out[0].fd);
	epoll_add(ep, ctx->out[1].fd);
	for (;;) {
		int n = epoll_wait(ep, events, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(ep);
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			int fd = events[i].data.fd;

			if (fd == ring_fd) {
				struct tl_run_counters c = { 0 };

				consume_batch(ctx);
				/*
				 * network_egress.max_bytes: the kernel drops, the controller
				 * ends.  The kernel's flag decides: its record may have
				 * found the ring full.
				 */
				tl_run_counters(&ctx->node, &ctx->run, &c);
				if (c.egress_exhausted || ctx->audit.egress_exhausted)
					end_run(ctx, RUN_REASON_BUDGET, "egress_bytes",
						"it spent network_egress.max_bytes");
			} else if (fd == dns_fd) {
				dns_proxy_dispatch(ctx->dns);
			} else if (fd == ctx->out[0].fd || fd == ctx->out[1].fd) {
				output_forward(ctx, fd == ctx->out[1].fd, ep, 0);
			} else if (fd == STDOUT_FILENO || fd == STDERR_FILENO) {
				/* tether's own stdout or stderr has room again */
				int s = fd == STDERR_FILENO;

				if (ctx->out[s].watching_target && output_flush(ctx, s, ep, 0))
					output_forward(ctx, s, ep, 0);
			} else if (fd == ctx->timer_fd) {
				uint64_t ticks;

				if (read(ctx->timer_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
					end_run(ctx, RUN_REASON_TIMED_OUT, NULL,
						"it ran for resources.wall_clock");
			} else if (fd == ctx->events_fd) {
				check_limits(ctx);
			} else if (fd == sigfd) {
				struct signalfd_siginfo ssi;
				char why[64];

				if (read(sigfd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
					snprintf(why, sizeof(why), "signal %u (%s)", ssi.ssi_signo,
						 strsignal((int)ssi.ssi_signo));
					end_run(ctx, RUN_REASON_CANCELLED, NULL, why);
				}
			} else if (fd == pidfd) {
				/* output written just before the exit waits in the pipes for teardown */
				memset(&si, 0, sizeof(si));
				if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0) {
					close(ep);
					return -errno;
				}
				*wstatus = si.si_code == CLD_EXITED ? si.si_status
								    : 128 + si.si_status;
				close(ep);
				return 0;
			}
		}
	}
}

/*
 * The run's "start" record: what runs (argv[0] only: arguments may carry
 * secrets), where, under which policy, and what that policy asks for that
 * this version does not enforce; the identity and limits it runs with, and
 * how long tether took to set it up (setup_us: from tether's start to just
 * before clone3).
 */
static void write_start_record(struct run_ctx *ctx)
{
	static const struct {
		const char *name;
		enum tp_limit limit;
	} start_limits[] = {
		{ "cpu_milli", TP_LIMIT_CPU_MILLI },
		{ "memory_bytes", TP_LIMIT_MEMORY_BYTES },
		{ "process_count", TP_LIMIT_PROCESS_COUNT },
		{ "open_files", TP_LIMIT_OPEN_FILES },
		{ "output_bytes", TP_LIMIT_OUTPUT_BYTES },
		{ "wall_clock_ms", TP_LIMIT_WALL_CLOCK_MS },
	};
	struct strbuf sb = { 0 };
	int r;

	r = sb_printf(&sb, "\"command\":");
	r = r ?: sb_json_string(&sb, ctx->opts.argv[0], 1024);
	r = r ?: sb_printf(&sb, ",\"tmpdir\":");
	r = r ?: sb_json_string(&sb, ctx->tmpdir, sizeof(ctx->tmpdir));
	r = r ?: sb_printf(&sb, ",\"cgroup_id\":%llu,\"run_slot\":%u,\"mode\":\"%s\",\"rules\":%zu,"
			   "\"policy_digest\":\"%s\",\"unenforced\":[",
			   (unsigned long long)ctx->cg.id, ctx->run.run_slot,
			   ctx->policy->mode == TP_MODE_AUDIT ? "audit" : "enforce", ctx->rule_count,
			   ctx->digest);
	for (size_t i = 0; r == 0 && i < ctx->policy->gap_count; i++) {
		r = sb_printf(&sb, "%s", i ? "," : "");
		r = r ?: sb_json_string(&sb, ctx->policy->gaps[i], 256);
	}
	r = r ?: sb_printf(&sb, "],\"uid\":%u,\"gid\":%u", (unsigned)ctx->uid, (unsigned)ctx->gid);
	for (size_t i = 0; r == 0 && i < sizeof(start_limits) / sizeof(start_limits[0]); i++)
		if (ctx->policy->limits[start_limits[i].limit])
			r = sb_printf(&sb, ",\"%s\":%llu", start_limits[i].name,
				      (unsigned long long)ctx->policy->limits[start_limits[i].limit]);
	r = r ?: sb_printf(&sb, ",\"setup_us\":%llu", (unsigned long long)ctx->setup_us);
	if (r)
		fprintf(stderr, "tether run: formatting the start record: %s\n", strerror(-r));
	audit_write_run_event(&ctx->audit, "start", r ? NULL : sb.data);
	sb_free(&sb);
}

/* resources.output_bytes: the pipes the run writes its stdout and stderr to. */
static int capture_output(struct run_ctx *ctx, int write_fd[2])
{
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
			close(p[0]);
			close(p[1]);
			return -errno;
		}
		ctx->out[i].fd = p[0];
		write_fd[i] = p[1];
		ctx->out[i].buf = malloc(OUTPUT_CHUNK);
		if (!ctx->out[i].buf)
			return -ENOMEM;
	}
	return 0;
}

static int start_timer(struct run_ctx *ctx)
{
	uint64_t ms = ctx->policy->limits[TP_LIMIT_WALL_CLOCK_MS];
	struct itimerspec its = { 0 };

	if (!ms)
		return 0;
	ctx->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ctx->timer_fd < 0)
		return -errno;
	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	if (timerfd_settime(ctx->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

/* tether's exit status for a run that started (documented in usage() and the README). */
static int run_exit_status(const struct run_ctx *ctx, int status)
{
	switch (ctx->reason) {
	case RUN_REASON_SUCCEEDED:
		return TETHER_EXIT_OK;
	case RUN_REASON_CANCELLED:
		return TETHER_EXIT_CANCELLED;
	case RUN_REASON_TIMED_OUT:
		return TETHER_EXIT_TIMED_OUT;
	case RUN_REASON_BUDGET:
		return TETHER_EXIT_BUDGET;
	case RUN_REASON_REFUSED:
		return TETHER_EXIT_REFUSED;
	default:
		return status;
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_ctx ctx = {
		.cg = { .dir_fd = -1, .lock_fd = -1 },
		.timer_fd = -1,
		.events_fd = -1,
		.out = { { .fd = -1 }, { .fd = -1 } },
		.t0_ns = clock_ns(CLOCK_MONOTONIC),
	};
	struct launch_spec spec = { .stdout_fd = -1, .stderr_fd = -1 };
	int pidfd = -1, errpipe = -1, sigfd = -1, status = -1, ret, r;
	int write_fd[2] = { -1, -1 }, report[2] = { 0, 0 };
	sigset_t block, old;
	pid_t pid;

	/*
	 * A closed stdin, stdout or stderr would be reused by the next open
	 * (the audit file, a map): the run would write there.  /dev/null
	 * fills the hole.
	 */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return TETHER_EXIT_RUN_ERROR;
	if (parse_opts(argc, argv, &ctx.opts)) {
		usage(stderr);
		return TETHER_EXIT_RUN_USAGE;
	}
	if (ctx.opts.run_id) {
		if (!run_id_valid(ctx.opts.run_id)) {
			fprintf(stderr, "tether run: invalid --run-id '%s': use 1 to 64 of "
					"[A-Za-z0-9._-], not '.' or '..'\n",
				ctx.opts.run_id);
			return TETHER_EXIT_RUN_USAGE;
		}
		snprintf(ctx.run_id, sizeof(ctx.run_id), "%s", ctx.opts.run_id);
	} else if ((r = make_run_id(ctx.run_id, sizeof(ctx.run_id)))) {
		fprintf(stderr, "tether run: generating a run id: %s\n", strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}

	ret = load_envelope(&ctx);
	if (ret)
		goto out_policy;
	ret = setup(&ctx);
	if (ret) {
		teardown(&ctx, -1, false);
		goto out_policy;
	}

	/* A closed audit pipe is an error to report (EPIPE), not a reason to die mid-run. */
	signal(SIGPIPE, SIG_IGN);
	/* SIGINT/SIGTERM/SIGHUP cancel the run through the loop, never leave it unsupervised. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);

	/* Everything the child needs, prepared here: it may only make async-signal-safe calls. */
	spec = (struct launch_spec){
		.argv = ctx.opts.argv,
		.uid = ctx.uid,
		.gid = ctx.gid,
		.nofile = ctx.policy->limits[TP_LIMIT_OPEN_FILES],
		.cgroup_fd = ctx.cg.dir_fd,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.mask = &old,
		.last_cap = launch_last_cap(),
	};
	ctx.envp = launch_env_build(environ, (const char *const *)ctx.policy->env_names,
				    ctx.policy->env_name_count, ctx.tmpdir, ctx.policy->workspace);
	r = ctx.envp ? 0 : -ENOMEM;
	spec.envp = ctx.envp;
	if (!r && ctx.policy->limits[TP_LIMIT_OUTPUT_BYTES]) {
		r = capture_output(&ctx, write_fd);
		spec.stdout_fd = write_fd[0];
		spec.stderr_fd = write_fd[1];
	}
	r = r ?: sigfd < 0 ? -errno : 0;
	r = r ?: watch_limits(&ctx);
	if (r) {
		fprintf(stderr, "tether run: preparing run %s: %s\n", ctx.run_id, strerror(-r));
		teardown(&ctx, -1, true);
		ret = TETHER_EXIT_RUN_ERROR;
		goto out_sig;
	}

	ctx.setup_us = (clock_ns(CLOCK_MONOTONIC) - ctx.t0_ns) / 1000;
	write_start_record(&ctx);
	r = launch_spawn(&spec, &pid, &pidfd, &errpipe);
	for (int i = 0; i < 2; i++)
		if (write_fd[i] >= 0)
			close(write_fd[i]);
	r = r ?: start_timer(&ctx);
	if (r) {
		fprintf(stderr, "tether run: starting %s in cgroup %s: %s\n", ctx.opts.argv[0],
			ctx.cg.path, strerror(-r));
		teardown(&ctx, -1, true);
		ret = TETHER_EXIT_RUN_ERROR;
		goto out_sig;
	}
	if (read(errpipe, report, sizeof(report)) != sizeof(report))
		report[0] = 0;
	close(errpipe);

	r = supervise(&ctx, pidfd, sigfd, &status);
	if (r) {
		fprintf(stderr, "tether run: waiting for %s: %s\n", ctx.opts.argv[0], strerror(-r));
		status = TETHER_EXIT_RUN_ERROR;
	}
	if (report[0] == LAUNCH_STEP_EXEC) {
		fprintf(stderr, "tether run: cannot execute %s: %s\n", ctx.opts.argv[0],
			strerror(report[1]));
	} else if (report[0]) {
		/* the command never ran: the boundary could not be set up around it */
		fprintf(stderr, "tether run: refusing to run %s: %s failed: %s; the command was "
				"not started.\n",
			ctx.opts.argv[0], launch_step_name(report[0]), strerror(report[1]));
		if (ctx.reason == RUN_REASON_NONE)
			ctx.reason = RUN_REASON_REFUSED;
	}
	ret = teardown(&ctx, status, true);
	if (!ret)
		ret = run_exit_status(&ctx, status);
out_sig:
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
out_policy:
	for (int i = 0; i < 2; i++) {
		if (ctx.out[i].fd >= 0)
			close(ctx.out[i].fd);
		free(ctx.out[i].buf);
	}
	if (ctx.timer_fd >= 0)
		close(ctx.timer_fd);
	if (ctx.events_fd >= 0)
		close(ctx.events_fd);
	launch_env_free(ctx.envp);
	for (size_t i = 0; ctx.net_rule_names && i < ctx.policy->net_rule_count; i++)
		free(ctx.net_rule_names[i]);
	free(ctx.net_rule_names);
	free(ctx.host_rule_names);
	net_plan_free(&ctx.net);
	dns_proxy_free(ctx.dns);
	free(ctx.rule_paths);
	run_rules_free(ctx.rules, ctx.rule_count);
	tp_policy_free(ctx.policy);
	return ret;
}
