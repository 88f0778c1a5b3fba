// SPDX-License-Identifier: GPL-2.0
/*
 * The run's files on the host: its workspace, the run file `tether kill`
 * reads, and the same of runs whose controller died.
 * Everything here is created by root for a run, so every path is checked
 * for a place where someone else could redirect it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "runtime/cgroup.h"
#include "runtime/fsutil.h"
#include "runtime/plan/rules.h"
#include "runtime/run/internal.h"
#include "runtime/runs.h"

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

/*
 * A directory of the controller's beneath /run/tether (a protected path no
 * run may read or write): a real directory owned by root and writable by
 * nobody else, searchable so the run's uid can pass through.
 */
int run_check_root_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0711) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	/* versions before identities made these 0700 */
	if ((st.st_mode & 0011) != 0011 && chmod(path, (st.st_mode & 07777) | 0011) < 0)
		return -errno;
	return 0;
}

/*
 * What a dead run left on the host: its run file (run_write_pidfile).  Its
 * private trees went with its mount namespace.
 */
void run_remove_orphan_files(const struct run *run, const char *run_id)
{
	static const char *const dirs[] = { TETHER_RUNS_DIR, TETHER_DAEMON_RUNS_DIR };
	char path[PATH_MAX];

	if (!run_id_valid(run_id))
		return;
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], run_id);
		if (unlink(path) < 0 && errno != ENOENT)
			run_log(run, "removing %s: %s", path, strerror(errno));
	}
}

void run_set_owner_mark(struct run *run)
{
	snprintf(run->owner_mark, sizeof(run->owner_mark), TETHER_DAEMON_RUNS_DIR "/%s",
		 run->run_id);
}

/* An empty file: its name is the mark.  /run/tether is protected from every run. */
int run_write_owner_mark(struct run *run, struct run_error *err)
{
	int r = run_check_root_dir(TETHER_DAEMON_RUNS_DIR), fd;

	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RUN_FILE, -r, "preparing %s: %s",
				TETHER_DAEMON_RUNS_DIR, strerror(-r));
	run_set_owner_mark(run);
	fd = open(run->owner_mark, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RUN_FILE, errno, "writing %s: %s",
			     run->owner_mark, strerror(errno));
		run->owner_mark[0] = 0;
		return r;
	}
	close(fd);
	return 0;
}

void run_remove_owner_mark(struct run *run)
{
	if (run->owner_mark[0] && unlink(run->owner_mark) < 0 && errno != ENOENT)
		run_log(run, "removing %s: %s", run->owner_mark, strerror(errno));
	run->owner_mark[0] = 0;
}

bool run_is_daemons(const char *run_id)
{
	char path[PATH_MAX];

	if (!run_id_valid(run_id))
		return false;
	snprintf(path, sizeof(path), TETHER_DAEMON_RUNS_DIR "/%s", run_id);
	return access(path, F_OK) == 0;
}

/*
 * Creates and checks the workspace, plans the private trees, then resolves
 * the rules' paths.
 */
int run_prepare_workspace(struct run *run, struct run_error *err)
{
	const char *ws = run->policy->workspace;
	struct tl_path_rule extra[SCRATCH_MAX + 2];
	char why[PATH_MAX + 256], cg_parent[PATH_MAX + 16], cg_own[PATH_MAX + 96];
	size_t extra_count;
	struct stat st;
	bool created = lstat(ws, &st) < 0 && errno == ENOENT;
	int r;

	r = mkdir_p(ws, 0755);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"cannot create workspace %s: %s", ws, strerror(-r));
	r = check_workspace(ws, why, sizeof(why));
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"refusing the workspace: %s", why);
	/*
	 * A workspace tether made is the run's own; one that existed is used as
	 * it is (its owner decides whether the run's identity may write it).
	 * check_workspace() made sure nobody but root can redirect the path.
	 */
	/*
	 * A fresh workspace is the run's own file system, mounted on this
	 * directory in the run's namespace only: on the host it stays an empty
	 * directory of root's, removed at the end when tether made it.
	 */
	run_storage_plan(run);
	if (run->fs_workspace)
		run->ws_mountpoint_made = created;
	else if (created && chown(ws, run->uid, run->gid) < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
				"giving workspace %s to uid %u: %s", ws, (unsigned)run->uid,
				strerror(errno));
	r = run_scratch_prepare_home(run, err);
	r = r ?: run_storage_create(run, err);
	r = r ?: run_inputs_verify(run, err);
	r = r ?: run_scratch_plan(run, err);
	if (r)
		return r;
	for (size_t i = 0; i < run->scratch_count && r == 0; i++) {
		extra[i].path = run->scratch[i].target;
		extra[i].access = run->scratch[i].access;
		/* TMPDIR: the first temporary tree, /tmp unless the host has none */
		if (!run->tmpdir[0] && run->scratch[i].kind == SCRATCH_TMPFS)
			snprintf(run->tmpdir, sizeof(run->tmpdir), "%s", run->scratch[i].target);
	}
	extra_count = run->scratch_count;
	/*
	 * <cgroup2>/tether lists every run, and each run's cgroup.procs its
	 * processes: protected, but the run's own cgroup, which runtimes read
	 * for their limits (memory.max, cpu.max: the JVM, Go, Node).
	 */
	if (run->cg_mount[0]) {
		snprintf(cg_parent, sizeof(cg_parent), "%s/" TETHER_CGROUP_PARENT, run->cg_mount);
		snprintf(cg_own, sizeof(cg_own), "%s/%s", cg_parent, run->run_id);
		extra[extra_count++] = (struct tl_path_rule){ .path = cg_own,
							      .access = TETHER_ACCESS_READ };
		extra[extra_count++] = (struct tl_path_rule){ .path = cg_parent,
							      .access = TETHER_ACCESS_PROTECTED };
	}
	r = run_rules_resolve(run->policy, extra, extra_count, run->audit_path, &run->rules,
			      &run->rule_count);
	if (r)
		/* A link on a rule's path is the host's state, not the envelope's fault. */
		return run_fail(err, r == -ELOOP ? RUN_ERROR_SETUP : RUN_ERROR_INVALID,
				RUN_STEP_RULES, -r, "resolving the rules of %s: %s",
				run->cfg.policy_path, strerror(-r));
	return run_artifacts_check(run, err);
}

/*
 * Whether the run could rewrite the audit file: when it lies in the
 * workspace, or the rule the kernel applies to it grants write (the longest
 * resolved rule path above it).  Returns NULL when the file is safe, else
 * why not, with `where` naming the directory concerned.  A file that exists
 * must be a regular one (not a device, FIFO or symlink).
 */
const char *run_audit_path_unsafe(const struct run *run, char where[PATH_MAX])
{
	char copy[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	const char *ws = run->policy->workspace;	/* check_workspace: its own realpath */
	size_t best = 0, n = strlen(ws);
	const struct tl_path_rule *rule = NULL;
	struct stat st;

	if (snprintf(copy, sizeof(copy), "%s", run->audit_path) >= (int)sizeof(copy) ||
	    !realpath(dirname(copy), dir))
		return NULL;	/* opening it fails later, with the reason */
	snprintf(copy, sizeof(copy), "%s", run->audit_path);
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
	for (size_t i = 0; i < run->policy->path_rule_count && i < run->rule_count; i++) {
		const char *p = run->rules[i].path;
		size_t len = strlen(p);
		bool within = strcmp(p, "/") == 0 ||
			      (strncmp(path, p, len) == 0 && (path[len] == '/' || path[len] == 0));

		if (within && len >= best) {
			best = len;
			rule = &run->rules[i];
		}
	}
	if (rule && (rule->access & TETHER_ACCESS_WRITE)) {
		snprintf(where, PATH_MAX, "%s", rule->path);
		return "is in a directory the run may write";
	}
	return NULL;
}

/*
 * /run/tether/runs/<run id> names the controller for `tether kill`: its pid
 * and its start time (field 22 of /proc/PID/stat), which tells it from a
 * later process that reuses the pid.  /run/tether is protected: no run can
 * read or forge it.
 */
int run_write_pidfile(struct run *run, struct run_error *err)
{
	unsigned long long start = 0;
	char tmp[PATH_MAX + 8];
	FILE *f;
	int r = run_check_root_dir(TETHER_RUNS_DIR);

	if (!r)
		r = proc_start_time(getpid(), &start);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RUN_FILE, -r, "preparing %s: %s",
				TETHER_RUNS_DIR, strerror(-r));
	snprintf(run->pidfile, sizeof(run->pidfile), TETHER_RUNS_DIR "/%s", run->run_id);
	/* "~" is in no run id: no other run's file can have this name */
	snprintf(tmp, sizeof(tmp), "%s~", run->pidfile);
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%d %llu\n", (int)getpid(), start) < 0 || fclose(f) != 0 ||
	    rename(tmp, run->pidfile) < 0) {
		r = run_fail(err, RUN_ERROR_SETUP, RUN_STEP_RUN_FILE, errno, "writing %s: %s",
			     run->pidfile, strerror(errno));
		unlink(tmp);
		run->pidfile[0] = 0;
		return r;
	}
	return 0;
}

void run_remove_pidfile(struct run *run)
{
	if (run->pidfile[0] && unlink(run->pidfile) < 0 && errno != ENOENT)
		run_log(run, "removing %s: %s", run->pidfile, strerror(errno));
	run->pidfile[0] = 0;
}
