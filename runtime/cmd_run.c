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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include "runtime/net.h"
#include "runtime/rules.h"
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
		"Exit status: COMMAND's own (128+N if signal N ended it), or\n"
		"  120  refused: this host cannot confine the run (see tether doctor); nothing ran\n"
		"  121  the envelope is invalid; nothing ran\n"
		"  122  usage error; nothing ran\n"
		"  123  setup or cleanup of the run failed (the message says which)\n"
		"  126  COMMAND could not be executed;  127  COMMAND was not found\n");
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

/* Run ids name a cgroup directory and appear in audit records. */
static bool valid_run_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_' || id[i] == '.'))
			return false;
	return true;
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

/*
 * Starts argv in the run cgroup.  The child reports a failed exec through a
 * close-on-exec pipe, so "not found" is told apart from the command's own
 * exit status 127.
 */
static int spawn(int cgroup_fd, char **argv, const sigset_t *child_mask, pid_t *pid_out,
		 int *pidfd_out, int *errpipe_out)
{
	struct clone_args args = { 0 };
	int pidfd = -1, pipefd[2];
	long pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cgroup_fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int r = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	if (pid == 0) {
		/* Child: async-signal-safe calls only until exec. */
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		int e;

		close(pipefd[0]);
		/* SIG_IGN survives exec: give the command the SIGPIPE it expects */
		sigaction(SIGPIPE, &dfl, NULL);
		sigprocmask(SIG_SETMASK, child_mask, NULL);
		/*
		 * A new session: no controlling terminal, so the run cannot reach
		 * the invoking shell's tty (bubblewrap's --new-session, for the
		 * TIOCSTI class of escapes).
		 */
		if (setsid() < 0)
			goto fail;
		/*
		 * Descriptors the caller left open beyond stdio (a file opened for
		 * writing outside the workspace, a socket) would carry authority
		 * the envelope does not grant.  The error pipe is close-on-exec
		 * already and stays usable until exec.
		 */
		if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
			goto fail;
		if (seccomp_deny_mount_api() < 0)
			goto fail;
		execvp(argv[0], argv);
fail:
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0) {
			/* nothing left to tell it to */
		}
		_exit(e == ENOENT ? TETHER_EXIT_NOTFOUND : TETHER_EXIT_NOEXEC);
	}
	close(pipefd[1]);
	*pid_out = (pid_t)pid;
	*pidfd_out = pidfd;
	*errpipe_out = pipefd[0];
	return 0;
}

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
	bool budget_ended;		/* the egress cap was reached and the run was ended */
	unsigned int batch;		/* records handled in this pass over the ring */
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

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
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

	if (!valid_run_id(run_id))
		return;
	snprintf(pattern, sizeof(pattern), TMPDIR_BASE "/%s-??????", run_id);
	if (glob(pattern, GLOB_NOSORT, NULL, &found) != 0)
		return;
	for (size_t i = 0; i < found.gl_pathc; i++)
		remove_tree(found.gl_pathv[i]);
	globfree(&found);
}

/* Creates and checks the workspace, then resolves the rules' paths. */
static int prepare_workspace(struct run_ctx *ctx)
{
	char why[PATH_MAX + 256];
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
		remove_orphan_tmpdirs(basename(name));
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

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
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
	r = net_admit(&ctx->net, name, addr, ttl_s + 1, boottime_ns(), &entry);
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

/* Everything up to, not including, the child: returns 0 or an exit status. */
static int setup(struct run_ctx *ctx)
{
	struct tl_run_net net;
	struct doctor_report rep;
	struct tl_error err = { "" };
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
	r = cg_run_create(rep.cgroup2_mount, ctx->run_id, &ctx->cg);
	close(parent_lock);
	if (r) {
		fprintf(stderr, "tether run: creating the run cgroup %s/%s/%s: %s%s\n",
			rep.cgroup2_mount, TETHER_CGROUP_PARENT, ctx->run_id, strerror(-r),
			r == -EEXIST ? " (a run with this id is live; pick another --run-id)" : "");
		return TETHER_EXIT_RUN_ERROR;
	}
	ctx->cg_created = true;

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
	r = tl_run_install(&ctx->node, ctx->cg.id,
			   ctx->policy->mode == TP_MODE_AUDIT ? TETHER_MODE_AUDIT : TETHER_MODE_ENFORCE,
			   ctx->opts.audit_allowed ? TETHER_RUN_AUDIT_ALLOWED : 0, ctx->rules,
			   ctx->rule_count, ctx->policy->abstract_sockets,
			   ctx->policy->abstract_socket_count, &net, &ctx->run, &err);
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
 * Tears down in the order that keeps the audit stream complete: kill what is
 * left, drain, read the counters, remove map entries, drain once more, remove
 * the cgroup.  Returns 0 or TETHER_EXIT_RUN_ERROR.
 */
static int teardown(struct run_ctx *ctx, int status_for_record, bool ran)
{
	uint64_t seq = 0, lost = 0, egress = 0;
	uint32_t ingress_dropped = 0;
	struct tl_error err = { "" };
	unsigned int left = 0;
	bool verified = true;
	char extra[512];
	int ret = 0, r;

	if (ctx->cg_created) {
		r = cg_run_kill_and_wait(&ctx->cg, CLEANUP_TIMEOUT_MS, &left);
		if (r) {
			fprintf(stderr, "tether run: processes of run %s survived cgroup.kill for %d ms\n",
				ctx->run_id, CLEANUP_TIMEOUT_MS);
			verified = false;
			ret = TETHER_EXIT_RUN_ERROR;
		}
	}
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
		if (c.egress_exhausted)
			ctx->budget_ended = true;
		/* Leave the rules in place while anything of the run may still live. */
		if (verified && tl_run_remove(&ctx->node, &ctx->run, &err)) {
			fprintf(stderr, "tether run: %s\n", err.msg);
			ret = TETHER_EXIT_RUN_ERROR;
		}
	}
	if (ctx->ring)
		drain(ctx);
	if (ran && ctx->audit.out) {
		snprintf(extra, sizeof(extra),
			 "\"exit_status\":%d,%s\"audit_records\":%llu,\"audit_seq_last\":%llu,"
			 "\"audit_lost\":%llu,\"audit_malformed\":%llu,\"egress_bytes\":%llu,"
			 "\"ingress_dropped\":%u,\"leftover_processes\":%u,\"cleanup_verified\":%s",
			 status_for_record,
			 ctx->budget_ended ? "\"reason\":\"budget_exhausted\"," : "",
			 (unsigned long long)ctx->audit.records, (unsigned long long)seq,
			 (unsigned long long)lost, (unsigned long long)ctx->audit.malformed,
			 (unsigned long long)egress, ingress_dropped, left, verified ? "true" : "false");
		audit_write_run_event(&ctx->audit, "end", extra);
	}
	/* lost records never took a sequence number: seq counts those queued */
	if (lost || ctx->audit.records != seq)
		fprintf(stderr,
			"tether run: warning: run %s lost %llu audit records to a full ring; %llu "
			"of the %llu queued were written\n",
			ctx->run_id, (unsigned long long)lost, (unsigned long long)ctx->audit.records,
			(unsigned long long)seq);
	if (ctx->audit.write_error) {
		fprintf(stderr, "tether run: writing audit records: %s\n",
			strerror(ctx->audit.write_error));
		ret = TETHER_EXIT_RUN_ERROR;
	}
	ring_buffer__free(ctx->ring);
	ctx->ring = NULL;
	/* the run is gone or its entries are: nothing can ask the proxy any more */
	dns_proxy_free(ctx->dns);
	ctx->dns = NULL;
	if (ctx->run_installed && verified)
		tl_run_free(&ctx->run);
	if (ctx->node_open)
		tl_node_close(&ctx->node);
	if (ctx->cg_created) {
		if (verified && (r = cg_run_destroy(&ctx->cg))) {
			fprintf(stderr, "tether run: removing cgroup %s: %s\n", ctx->cg.path,
				strerror(-r));
			ret = TETHER_EXIT_RUN_ERROR;
		} else if (!verified) {
			fprintf(stderr,
				"tether run: run %s left its cgroup %s and map entries in place "
				"because it could not be emptied\n",
				ctx->run_id, ctx->cg.path);
			cg_run_free(&ctx->cg);
		}
	}
	/* Only once nothing of the run can still be writing there. */
	if (verified)
		remove_tmpdir(ctx);
	else if (ctx->tmpdir[0])
		fprintf(stderr, "tether run: left the run's temporary directory %s in place\n",
			ctx->tmpdir);
	if (ctx->audit_file && fclose(ctx->audit_file) != 0 && !ret) {
		fprintf(stderr, "tether run: closing audit file: %s\n", strerror(errno));
		ret = TETHER_EXIT_RUN_ERROR;
	}
	ctx->audit_file = NULL;
	return ret;
}

/* Waits for the child while forwarding audit records; returns its wait status. */
static int supervise(struct run_ctx *ctx, int pidfd, int sigfd, int *wstatus)
{
	struct epoll_event ev, events[8];
	int ep, ring_fd = ring_buffer__epoll_fd(ctx->ring), dns_fd = dns_proxy_fd(ctx->dns);
	bool killed = false;
	siginfo_t si;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = pidfd };
	epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sigfd };
	epoll_ctl(ep, EPOLL_CTL_ADD, sigfd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = ring_fd };
	epoll_ctl(ep, EPOLL_CTL_ADD, ring_fd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = dns_fd };
	epoll_ctl(ep, EPOLL_CTL_ADD, dns_fd, &ev);
	for (;;) {
		int n = epoll_wait(ep, events, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(ep);
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			if (events[i].data.fd == ring_fd) {
				struct tl_run_counters c = { 0 };

				consume_batch(ctx);
				/*
				 * network_egress.max_bytes: the kernel drops, the controller
				 * ends.  The kernel's flag decides: its record may have
				 * found the ring full.
				 */
				tl_run_counters(&ctx->node, &ctx->run, &c);
				if ((c.egress_exhausted || ctx->audit.egress_exhausted) &&
				    !ctx->budget_ended && !killed) {
					unsigned int left;

					fprintf(stderr, "tether run: run %s spent network_egress."
							"max_bytes: ending it\n", ctx->run_id);
					cg_run_kill_and_wait(&ctx->cg, 0, &left);
					ctx->budget_ended = killed = true;
				}
			} else if (events[i].data.fd == dns_fd) {
				dns_proxy_dispatch(ctx->dns);
			} else if (events[i].data.fd == sigfd) {
				struct signalfd_siginfo ssi;

				if (read(sigfd, &ssi, sizeof(ssi)) == sizeof(ssi) && !killed) {
					unsigned int left;

					fprintf(stderr, "tether run: signal %u: ending run %s\n",
						ssi.ssi_signo, ctx->run_id);
					cg_run_kill_and_wait(&ctx->cg, 0, &left);
					killed = true;
				}
			} else if (events[i].data.fd == pidfd) {
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
 * this version does not enforce.
 */
static void write_start_record(struct run_ctx *ctx)
{
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
	r = r ?: sb_printf(&sb, "]");
	if (r)
		fprintf(stderr, "tether run: formatting the start record: %s\n", strerror(-r));
	audit_write_run_event(&ctx->audit, "start", r ? NULL : sb.data);
	sb_free(&sb);
}

int cmd_run(int argc, char **argv)
{
	struct run_ctx ctx = { .cg = { .dir_fd = -1, .lock_fd = -1 } };
	sigset_t block, old;
	int pidfd = -1, errpipe = -1, sigfd = -1, status = 0, exec_errno = 0, ret, r;
	pid_t pid;

	if (parse_opts(argc, argv, &ctx.opts)) {
		usage(stderr);
		return TETHER_EXIT_RUN_USAGE;
	}
	if (ctx.opts.run_id) {
		if (!valid_run_id(ctx.opts.run_id)) {
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
		teardown(&ctx, 0, false);
		goto out_policy;
	}

	/* A closed audit pipe is an error to report (EPIPE), not a reason to die mid-run. */
	signal(SIGPIPE, SIG_IGN);
	/* SIGINT/SIGTERM end the run through the loop, never leave it unsupervised. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);

	write_start_record(&ctx);
	/* the run's private temporary directory (make_tmpdir) */
	if (setenv("TMPDIR", ctx.tmpdir, 1) < 0) {
		fprintf(stderr, "tether run: setting TMPDIR: %s\n", strerror(errno));
		teardown(&ctx, -1, true);
		ret = TETHER_EXIT_RUN_ERROR;
		goto out_sig;
	}

	r = sigfd < 0 ? -errno : spawn(ctx.cg.dir_fd, ctx.opts.argv, &old, &pid, &pidfd, &errpipe);
	if (r) {
		fprintf(stderr, "tether run: starting %s in cgroup %s: %s\n", ctx.opts.argv[0],
			ctx.cg.path, strerror(-r));
		teardown(&ctx, -1, true);
		ret = TETHER_EXIT_RUN_ERROR;
		goto out_sig;
	}
	if (read(errpipe, &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
		exec_errno = 0;
	close(errpipe);

	r = supervise(&ctx, pidfd, sigfd, &status);
	if (r) {
		fprintf(stderr, "tether run: waiting for %s: %s\n", ctx.opts.argv[0], strerror(-r));
		status = TETHER_EXIT_RUN_ERROR;
	}
	if (exec_errno)
		fprintf(stderr, "tether run: cannot execute %s: %s\n", ctx.opts.argv[0],
			strerror(exec_errno));
	ret = teardown(&ctx, status, true);
	if (!ret)
		ret = ctx.budget_ended ? TETHER_EXIT_BUDGET : status;
out_sig:
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
out_policy:
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
