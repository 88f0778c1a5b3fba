// SPDX-License-Identifier: GPL-2.0
/*
 * A fresh_overlay workspace whose source is a git repository at a pinned
 * commit (workspace.ref; docs/envelope.md, "A fresh_overlay workspace").
 *
 * Before the run exists the controller asks the source for ref's commit and
 * tree (git rev-parse), so that a name that is not a commit, or a commit the
 * repository lacks, refuses the run before anything of it is made, and the
 * start record can name both.  Once the run's mount namespace exists, the
 * scratch helper has git clone the source onto the run's own file system
 * (RUN_FS_STAGE/lower) and check the commit out, then reads back HEAD and its
 * tree, which must be the ones resolved before.
 *
 * git runs as the run's uid and gid (so the clone is theirs and git in the
 * workspace accepts it), outside the run's cgroup, with an environment and a
 * configuration of tether's: no system or user configuration, no hooks, the
 * local file protocol only, and safe.directory = * so that a source another
 * uid owns (root's) may be read.  The source is the envelope's, that is the
 * node's configuration; git is a step of the controller's, not the run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/fsutil.h"
#include "runtime/run/internal.h"

/* git's output kept for a message: its first lines say what failed */
#define GIT_OUTPUT_MAX 2048

/*
 * The only git configuration that git reads (GIT_CONFIG_GLOBAL, with
 * GIT_CONFIG_NOSYSTEM): `-c` options do not reach the upload-pack that a
 * clone from a local path starts (git clears GIT_CONFIG_PARAMETERS for the
 * other repository), and that one must accept a source of another uid.
 * Root's, 0644, at the root of the run's own file system (0711 for a git
 * source), removed once git is done (scratch.c).
 */
int run_git_config_write(int fs_root)
{
	static const char text[] = "# tether: for laying out a git source, then removed\n"
				   "[safe]\n\tdirectory = *\n"
				   "[core]\n\thooksPath = /dev/null\n"
				   "[protocol]\n\tallow = never\n"
				   "[protocol \"file\"]\n\tallow = always\n";
	int fd = openat(fs_root, RUN_GIT_CONFIG,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int r;

	if (fd < 0)
		return -errno;
	r = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, text, sizeof(text) - 1);
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

/*
 * One git command, as the run's uid and gid, in `cwd`; its stdout and
 * stderr in `out` (what does not fit is read and dropped, so git never
 * blocks).  0 when it exited 0.  Raw clone and id system calls: the scratch
 * helper shares the controller's memory and thread pointer, where glibc's
 * fork and setuid (atfork handlers, the setxid broadcast to threads) are
 * not safe; the child makes only system calls until execve.
 */
static int git_run(const struct run *run, const char *cwd, const char *config,
		   const char *const *argv, char *out, size_t out_len)
{
	char config_env[PATH_MAX + 32];
	const char *env[] = {
		"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
		config_env, "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", NULL,
	};
	int p[2], status = -1;	/* not reaped: failed */
	size_t n = 0;
	long pid;

	snprintf(config_env, sizeof(config_env), "GIT_CONFIG_GLOBAL=%s", config);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	if (pid == 0) {
		if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0 ||
		    syscall(SYS_close_range, 3, ~0U, 0) < 0 || syscall(SYS_setgroups, 0, NULL) < 0 ||
		    syscall(SYS_setresgid, run->gid, run->gid, run->gid) < 0 ||
		    syscall(SYS_setresuid, run->uid, run->uid, run->uid) < 0 || chdir(cwd) < 0)
			syscall(SYS_exit_group, 126);
		syscall(SYS_umask, 022);
		syscall(SYS_execve, run->git_path, argv, env);
		syscall(SYS_exit_group, 127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		char rest[256];
		bool room = n + 1 < out_len;
		ssize_t k = room ? read(p[0], out + n, out_len - 1 - n) : read(p[0], rest, sizeof(rest));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (room)
			n += (size_t)k;
	}
	out[n] = 0;
	close(p[0]);
	while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Two lines of hex object ids, as rev-parse prints them, into commit and tree. */
static int two_ids(const char *out, char *commit, size_t commit_len, char *tree, size_t tree_len)
{
	size_t a = strcspn(out, "\n"), b;

	if (out[a] != '\n' || (a != 40 && a != 64) || a >= commit_len)
		return -1;
	b = strcspn(out + a + 1, "\n");
	if (b != a || b >= tree_len || strspn(out, "0123456789abcdef") != a ||
	    strspn(out + a + 1, "0123456789abcdef") != b)
		return -1;
	snprintf(commit, commit_len, "%.*s", (int)a, out);
	snprintf(tree, tree_len, "%.*s", (int)b, out + a + 1);
	return 0;
}

/* git for a git source: the first of the usual places that has it */
static bool find_git(struct run *run)
{
	static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/local/bin" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(run->git_path, sizeof(run->git_path), "%s/git", dirs[i]);
		if (access(run->git_path, X_OK) == 0)
			return true;
	}
	run->git_path[0] = 0;
	return false;
}

int run_git_resolve(struct run *run, struct run_error *err)
{
	const char *src = run->policy->workspace_source, *ref = run->policy->workspace_ref;
	char commit_spec[80], tree_spec[80], out[GIT_OUTPUT_MAX];
	const char *const argv[] = {
		"git", "-c", "safe.directory=*", "rev-parse", "--verify", "--end-of-options",
		commit_spec, NULL,
	};
	const char *const tree_argv[] = {
		"git", "-c", "safe.directory=*", "rev-parse", commit_spec, tree_spec, NULL,
	};

	if (!find_git(run))
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, ENOENT,
				"refusing to run: the workspace's source is a git repository "
				"('ref'), and git is not installed in /usr/bin, /bin or "
				"/usr/local/bin (apt-get install git); the command was not "
				"started");
	snprintf(commit_spec, sizeof(commit_spec), "%s^{commit}", ref);
	snprintf(tree_spec, sizeof(tree_spec), "%s^{tree}", ref);
	/* the source's own directory: git finds the repository there, bare or not */
	if (git_run(run, src, "/dev/null", argv, out, sizeof(out)) < 0) {
		out[strcspn(out, "\n")] = 0;
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EINVAL,
				"refusing to run: the workspace's source %s has no commit %s "
				"(git rev-parse, as uid %u: %s); the command was not started",
				src, ref, (unsigned)run->uid, out[0] ? out : "it failed");
	}
	if (git_run(run, src, "/dev/null", tree_argv, out, sizeof(out)) < 0 ||
	    two_ids(out, run->source_commit, sizeof(run->source_commit), run->source_tree,
		    sizeof(run->source_tree)) < 0)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EINVAL,
				"refusing to run: reading commit %s of %s failed; the command "
				"was not started", ref, src);
	/* a tag object's id names its commit: not what the envelope pinned */
	if (strcmp(run->source_commit, ref) != 0)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EINVAL,
				"refusing to run: 'ref' %s of %s is not a commit (it names commit "
				"%s: a tag?); pin the commit (git rev-parse REF^{commit}); the "
				"command was not started", ref, src, run->source_commit);
	return 0;
}

int run_git_layout(const struct run *run, char *commit, size_t commit_len, char *tree,
		   size_t tree_len, char *why, size_t why_len)
{
	const char *lower = RUN_FS_STAGE "/lower", *config = RUN_FS_STAGE "/" RUN_GIT_CONFIG;
	/* the regular transport: only what the source's refs reach, packed */
	const char *const clone[] = {
		"git", "clone", "--quiet", "--no-local", "--no-checkout", "--",
		run->policy->workspace_source, ".", NULL,
	};
	const char *const checkout[] = {
		"git", "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach",
		run->policy->workspace_ref, "--", NULL,
	};
	const char *const head[] = { "git", "rev-parse", "HEAD", "HEAD^{tree}", NULL };

	if (git_run(run, lower, config, clone, why, why_len) < 0 ||
	    git_run(run, lower, config, checkout, why, why_len) < 0 ||
	    git_run(run, lower, config, head, why, why_len) < 0)
		return -1;
	if (two_ids(why, commit, commit_len, tree, tree_len) < 0) {
		snprintf(why, why_len, "git rev-parse HEAD printed no commit and tree");
		return -1;
	}
	why[0] = 0;
	return 0;
}
