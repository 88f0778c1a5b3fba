// SPDX-License-Identifier: GPL-2.0
/*
 * The run's own scratch space: a mount namespace and an IPC namespace per
 * run, in which /tmp, /var/tmp, /dev/shm and the run's HOME are fresh
 * tmpfs mounts and /dev/mqueue a fresh mqueue instance.  They are visible to
 * the run's processes alone and go away with the namespace, when the last of
 * them exits.  Their pages are charged to the run's memory cgroup (the
 * writer's), so they count against resources.memory_bytes, and each mount is
 * no larger than that limit.
 *
 * The run's first process is created by clone3(CLONE_NEWNS | CLONE_NEWIPC |
 * CLONE_INTO_CGROUP) and waits before its first step.  It cannot make the
 * mounts itself: it is inside the run from its first instruction, and
 * BPF-LSM refuses every mount there.  So a helper cloned from the
 * controller, outside the run, joins the child's namespaces through its
 * pidfd, makes the mounts and exits; then the child goes on.
 *
 * The workspace, the inputs and the unix sockets the envelope lets the run
 * connect to are the host's objects: when one lies beneath a private tree
 * (a workspace in /tmp) it is bind-mounted at its own path, so every path
 * means in the run what it means in the envelope.  Every other path beneath
 * a private tree names the run's own file.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "common/cleanup.h"
#include "runtime/fsutil.h"
#include "runtime/run/internal.h"

#define RW (TETHER_ACCESS_READ | TETHER_ACCESS_WRITE)

static const struct {
	const char *path;
	enum scratch_kind kind;
	uint32_t access;	/* + EXEC for the temporary trees with filesystem.exec @tmp */
	bool tmp;		/* a temporary tree: what @tmp makes executable */
	const char *sub;	/* its directory on the run's file system (storage.c) */
} scratch_trees[] = {
	/* unix sockets in /tmp are the run's own: CONNECT, as on a host */
	{ "/tmp", SCRATCH_TMPFS, RW | TETHER_ACCESS_CONNECT, true, "tmp" },
	{ "/var/tmp", SCRATCH_TMPFS, RW | TETHER_ACCESS_CONNECT, true, "var_tmp" },
	{ "/dev/shm", SCRATCH_TMPFS, RW, false, "shm" },	/* POSIX shared memory, semaphores */
	{ "/dev/mqueue", SCRATCH_MQUEUE, RW, false, NULL },	/* POSIX message queues */
	{ RUN_HOME, SCRATCH_HOME, RW | TETHER_ACCESS_CONNECT, false, "home" },
};

static bool within(const char *path, const char *tree)
{
	size_t n = strlen(tree);

	return strncmp(path, tree, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* The private tree that `path` lies in, or NULL. */
static const struct scratch_mount *scratch_of(const struct run *run, const char *path)
{
	for (size_t i = 0; i < run->scratch_count; i++)
		if (within(path, run->scratch[i].target))
			return &run->scratch[i];
	return NULL;
}

static int add_bind(struct run *run, const char *path, struct run_error *err)
{
	char resolved[PATH_MAX];
	struct stat st;

	if (!realpath(path, resolved) || stat(resolved, &st) < 0)
		return 0;	/* nothing there: the run's own tree has nothing either */
	/* a fresh workspace is no host object; what the envelope names in it is */
	if (run->fs_workspace && strcmp(resolved, run->policy->workspace) == 0)
		return 0;
	if (!scratch_of(run, resolved) &&
	    !(run->fs_workspace && within(resolved, run->policy->workspace)))
		return 0;
	for (size_t i = 0; i < run->bind_count; i++)
		if (within(resolved, run->binds[i].path))
			return 0;	/* a bind of a directory above brings it along */
	if (run->bind_count == SCRATCH_BINDS_MAX)
		return run_fail(err, RUN_ERROR_INVALID, RUN_STEP_TMPDIR, E2BIG,
				"more than %d of the envelope's paths lie in /tmp, /var/tmp or "
				"/dev/shm, which are private to each run; move the workspace, "
				"inputs and sockets elsewhere", SCRATCH_BINDS_MAX);
	snprintf(run->binds[run->bind_count].path, PATH_MAX, "%s", resolved);
	run->binds[run->bind_count].is_dir = S_ISDIR(st.st_mode);
	run->binds[run->bind_count].input = 0;
	run->bind_count++;
	return 0;
}

/* Input i's verified copy, over its path wherever it is (inputs.c made it). */
static int add_input_copy(struct run *run, size_t i, struct run_error *err)
{
	const char *path = run->policy->inputs[i].path;
	struct scratch_bind *b = &run->binds[run->bind_count];
	struct stat st;

	if (run->bind_count == SCRATCH_BINDS_MAX)
		return run_fail(err, RUN_ERROR_INVALID, RUN_STEP_TMPDIR, E2BIG,
				"more than %d inputs with a digest and paths in the private trees",
				SCRATCH_BINDS_MAX);
	/* it was read whole a moment ago: gone now, the bind fails and says so */
	if (!realpath(path, b->path) || stat(b->path, &st) < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
				"input %s, verified a moment ago: %s", path, strerror(errno));
	b->is_dir = S_ISDIR(st.st_mode);
	b->input = (int)i + 1;
	run->bind_count++;
	return 0;
}

int run_scratch_plan(struct run *run, struct run_error *err)
{
	const struct tp_policy *pol = run->policy;
	bool tmp_exec = pol->flags & TP_POLICY_TMP_EXEC;
	int r;

	run->scratch_count = run->bind_count = 0;
	for (size_t i = 0; i < sizeof(scratch_trees) / sizeof(*scratch_trees); i++) {
		struct scratch_mount *m = &run->scratch[run->scratch_count];
		char resolved[PATH_MAX];
		struct stat st;

		/* a tree the host lacks (no /dev/mqueue) is not there in the run either */
		if (!realpath(scratch_trees[i].path, resolved) || stat(resolved, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		/* /var/tmp -> /tmp: the link leads into a tree that is private already */
		if (scratch_of(run, resolved))
			continue;
		snprintf(m->target, sizeof(m->target), "%s", resolved);
		m->kind = scratch_trees[i].kind;
		m->sub = run->fs_scratch ? scratch_trees[i].sub : NULL;
		m->access = scratch_trees[i].access |
			    (scratch_trees[i].tmp && tmp_exec ? TETHER_ACCESS_EXEC : 0);
		run->scratch_count++;
	}
	/* the host's objects the envelope names, where a private tree would hide them */
	r = add_bind(run, pol->workspace, err);
	for (size_t i = 0; !r && i < pol->input_count; i++)
		if (!pol->inputs[i].has_digest)
			r = add_bind(run, pol->inputs[i].path, err);
	for (size_t i = 0; !r && i < pol->path_rule_count; i++)
		if (pol->path_rules[i].access & TETHER_ACCESS_CONNECT)
			r = add_bind(run, pol->path_rules[i].path, err);
	/* last: over whatever the binds above brought along */
	for (size_t i = 0; !r && i < pol->input_count; i++)
		if (pol->inputs[i].has_digest)
			r = add_input_copy(run, i, err);
	return r;
}

/*
 * What the helper reports: when a step fails, which, on what, and the
 * errno; else (step 0) the identity of each tree's root, for the hooks that
 * decide by inode (timestamps, xattrs), which the plan could not know.
 */
struct scratch_report {
	int step;
	int errnum;
	char path[PATH_MAX];
	struct { uint32_t dev; uint64_t ino; } roots[SCRATCH_MAX], ws;
	char commit[72], tree[72];	/* a git source's HEAD and HEAD^{tree} */
};

enum { STEP_JOIN = 1, STEP_PROPAGATION, STEP_OPEN, STEP_MOUNT, STEP_MOUNTPOINT, STEP_BIND,
       STEP_STAT, STEP_STAGE, STEP_WORKSPACE, STEP_UNSTAGE, STEP_INPUT, STEP_GITCONFIG,
       STEP_SOURCE };

static const char *const step_names[] = {
	[STEP_JOIN] = "joining the run's namespaces",
	[STEP_PROPAGATION] = "keeping the run's mounts from the host (MS_SLAVE)",
	[STEP_OPEN] = "opening",
	[STEP_MOUNT] = "mounting the run's private",
	[STEP_MOUNTPOINT] = "creating the mount point",
	[STEP_BIND] = "bind-mounting the host's",
	[STEP_STAT] = "reading the identity of the run's",
	[STEP_STAGE] = "attaching the run's own file system at",
	[STEP_WORKSPACE] = "mounting the run's fresh workspace (overlayfs for fresh_overlay) at",
	[STEP_UNSTAGE] = "detaching the run's own file system from",
	[STEP_INPUT] = "mounting the verified copy of input",
	[STEP_GITCONFIG] = "writing the run's git configuration",
	[STEP_SOURCE] = "laying out the workspace's git source at its commit:",
};

/* A directory of the run's file system, attached at RUN_FS_STAGE, bound at `dst`. */
static int bind_own(const char *sub, const char *dst)
{
	char src[sizeof(RUN_FS_STAGE) + 16];

	snprintf(src, sizeof(src), RUN_FS_STAGE "/%s", sub);
	return mount(src, dst, NULL, MS_BIND, NULL);
}

/*
 * fresh_overlay: the source's copy as the lower layer, the run's writes in
 * the upper ("ws"), all three on the run's own file system.  overlayfs keeps
 * private clones of the layers' mounts, so the staging point goes as usual.
 */
static int mount_overlay(const char *dst)
{
	return mount("tether-overlay", dst, "overlay", MS_NOSUID | MS_NODEV,
		     "lowerdir=" RUN_FS_STAGE "/lower,upperdir=" RUN_FS_STAGE "/ws,workdir=" RUN_FS_STAGE
		     "/work");
}

static int mount_tree(const struct run *run, const struct scratch_mount *m)
{
	unsigned long flags = MS_NOSUID | MS_NODEV;
	uint64_t max = run->policy->limits[TP_LIMIT_MEMORY_BYTES];
	char opts[128], size[48] = "";

	if (m->kind == SCRATCH_MQUEUE)
		return mount("mqueue", m->target, "mqueue", flags | MS_NOEXEC, NULL);
	if (m->sub)
		return bind_own(m->sub, m->target);
	if (max)
		snprintf(size, sizeof(size), ",size=%llu", (unsigned long long)max);
	if (m->kind == SCRATCH_HOME)
		snprintf(opts, sizeof(opts), "mode=0700,uid=%u,gid=%u%s", (unsigned)run->uid,
			 (unsigned)run->gid, size);
	else
		snprintf(opts, sizeof(opts), "mode=1777%s", size);
	return mount("tether-scratch", m->target, "tmpfs", flags, opts);
}

bool run_home_gitconfig_wanted(const struct tp_policy *pol)
{
	for (size_t i = 0; i < pol->input_count; i++)
		if (!pol->inputs[i].has_digest)
			return true;
	return false;
}

/*
 * HOME/.gitconfig, the run's own, listing each input without a digest under
 * safe.directory: they are the host's, usually root's, and git (2.35.2 on)
 * refuses a repository another uid owns unless its global configuration
 * says so.  A verified input's copy is the run's uid's and needs nothing.
 */
/* No stdio or malloc: the helper shares the controller's memory (CLONE_VM). */
static int write_gitconfig(const struct run *run, const char *home)
{
	static const char head[] = "# tether: the run's inputs are the host's, another uid's; "
				   "git may read them\n[safe]\n";
	const struct tp_policy *pol = run->policy;
	char path[PATH_MAX], line[2 * PATH_MAX + 32];
	int fd, r;

	snprintf(path, sizeof(path), "%s/.gitconfig", home);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	r = fchown(fd, run->uid, run->gid) < 0 ? -1 : write_all(fd, head, sizeof(head) - 1);
	for (size_t i = 0; !r && i < pol->input_count; i++) {
		size_t n = 0;

		if (pol->inputs[i].has_digest)
			continue;
		n += (size_t)snprintf(line, sizeof(line), "\tdirectory = \"");
		/* a quoted value: " and \ escaped (paths hold no newline: policyc) */
		for (const char *c = pol->inputs[i].path; *c && n < sizeof(line) - 4; c++) {
			if (*c == '"' || *c == '\\')
				line[n++] = '\\';
			line[n++] = *c;
		}
		line[n++] = '"';
		line[n++] = '\n';
		r = write_all(fd, line, n);
	}
	if (close(fd) < 0)
		r = -1;
	return r;
}

/* The helper: in the run's namespaces, outside its cgroup.  Never returns. */
static void __attribute__((noreturn)) helper(const struct run *run, int pidfd, int report_fd)
{
	struct scratch_report rep = { 0 };
	int fds[SCRATCH_BINDS_MAX];
	char src[sizeof(RUN_INPUTS_STAGE) + 24];

	if (syscall(SYS_setns, pidfd, CLONE_NEWNS | CLONE_NEWIPC) < 0) {
		rep.step = STEP_JOIN;
		goto fail;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		rep.step = STEP_PROPAGATION;
		goto fail;
	}
	/*
	 * Before the trees are covered: these name the host's objects.  The
	 * paths were resolved and checked (no symlink: realpath, and the
	 * workspace's check_workspace); RESOLVE_NO_SYMLINKS keeps a link
	 * planted since from redirecting the mount.
	 */
	for (size_t i = 0; i < run->bind_count; i++) {
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		fds[i] = -1;
		if (run->binds[i].input)
			continue;	/* the verified copy, not the host's object */
		fds[i] = (int)syscall(SYS_openat2, AT_FDCWD, run->binds[i].path, &how, sizeof(how));
		if (fds[i] < 0) {
			rep.step = STEP_OPEN;
			snprintf(rep.path, sizeof(rep.path), "%s", run->binds[i].path);
			goto fail;
		}
	}
	/* the run's own file system: detached until here (storage.c) */
	if (run->fs_fd >= 0 &&
	    move_mount(run->fs_fd, "", AT_FDCWD, RUN_FS_STAGE, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		rep.step = STEP_STAGE;
		snprintf(rep.path, sizeof(rep.path), "%s", RUN_FS_STAGE);
		goto fail;
	}
	if (run->fs_overlay && run->policy->workspace_ref &&
	    run_git_layout(run, rep.commit, sizeof(rep.commit), rep.tree, sizeof(rep.tree), rep.path,
			   sizeof(rep.path)) < 0) {
		rep.step = STEP_SOURCE;
		errno = EINVAL;
		goto fail;
	}
	if (run->in_fd >= 0 &&
	    move_mount(run->in_fd, "", AT_FDCWD, RUN_INPUTS_STAGE, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		rep.step = STEP_STAGE;
		snprintf(rep.path, sizeof(rep.path), "%s", RUN_INPUTS_STAGE);
		goto fail;
	}
	for (size_t i = 0; i < run->scratch_count; i++) {
		const struct scratch_mount *m = &run->scratch[i];

		if (mount_tree(run, m) < 0) {
			rep.step = STEP_MOUNT;
			snprintf(rep.path, sizeof(rep.path), "%s", m->target);
			goto fail;
		}
		if (m->kind == SCRATCH_HOME && run_home_gitconfig_wanted(run->policy) &&
		    write_gitconfig(run, m->target) < 0) {
			rep.step = STEP_GITCONFIG;
			snprintf(rep.path, sizeof(rep.path), "%s/.gitconfig", m->target);
			goto fail;
		}
	}
	/*
	 * A fresh workspace, before the host's objects: one the envelope names
	 * inside it is bound on top.  Its mount point exists on the host
	 * (run_prepare_workspace), or is made in a private tree above it.
	 */
	if (run->fs_workspace) {
		const char *ws = run->policy->workspace;
		int r = mkdir_p(ws, 0755);
		struct stat st;

		if (r) {
			errno = -r;
			rep.step = STEP_MOUNTPOINT;
			snprintf(rep.path, sizeof(rep.path), "%s", ws);
			goto fail;
		}
		if ((run->fs_overlay ? mount_overlay(ws) : bind_own("ws", ws)) < 0 ||
		    stat(ws, &st) < 0) {
			rep.step = STEP_WORKSPACE;
			snprintf(rep.path, sizeof(rep.path), "%s", ws);
			goto fail;
		}
		rep.ws.dev = (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev));
		rep.ws.ino = st.st_ino;
	}
	for (size_t i = 0; i < run->bind_count; i++) {
		const char *dst = run->binds[i].path;
		char parent[PATH_MAX];
		int r, fd;

		/* the directories above it are root's, in the run's own tmpfs */
		snprintf(parent, sizeof(parent), "%s", dst);
		*strrchr(parent, '/') = 0;
		r = parent[0] ? mkdir_p(parent, 0755) : 0;
		if (!r && run->binds[i].input && lstat(dst, &(struct stat){ 0 }) == 0)
			;	/* the host's input, which its copy covers */
		else if (!r && run->binds[i].is_dir)
			r = mkdir(dst, 0755) < 0 && errno != EEXIST ? -errno : 0;
		else if (!r && (fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0)
			close(fd);
		else if (!r)
			r = -errno;
		if (r) {
			errno = -r;
			rep.step = STEP_MOUNTPOINT;
			snprintf(rep.path, sizeof(rep.path), "%s", dst);
			goto fail;
		}
		if (run->binds[i].input)
			snprintf(src, sizeof(src), RUN_INPUTS_STAGE "/%d", run->binds[i].input - 1);
		else
			snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0) {
			rep.step = run->binds[i].input ? STEP_INPUT : STEP_BIND;
			snprintf(rep.path, sizeof(rep.path), "%s", dst);
			goto fail;
		}
	}
	/* the binds keep it; nothing of the run reaches its root or another directory */
	if (run->fs_fd >= 0 && umount2(RUN_FS_STAGE, MNT_DETACH) < 0) {
		rep.step = STEP_UNSTAGE;
		snprintf(rep.path, sizeof(rep.path), "%s", RUN_FS_STAGE);
		goto fail;
	}
	if (run->in_fd >= 0 && umount2(RUN_INPUTS_STAGE, MNT_DETACH) < 0) {
		rep.step = STEP_UNSTAGE;
		snprintf(rep.path, sizeof(rep.path), "%s", RUN_INPUTS_STAGE);
		goto fail;
	}
	for (size_t i = 0; i < run->scratch_count; i++) {
		struct stat st;

		if (stat(run->scratch[i].target, &st) < 0) {
			rep.step = STEP_STAT;
			snprintf(rep.path, sizeof(rep.path), "%s", run->scratch[i].target);
			goto fail;
		}
		rep.roots[i].dev = (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev));
		rep.roots[i].ino = st.st_ino;
	}
	_exit(write(report_fd, &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 1);
fail:
	rep.errnum = errno;
	if (write(report_fd, &rep, sizeof(rep)) < 0) {
		/* the exit status says it failed */
	}
	_exit(1);
}

/*
 * Each tree's rule, entered by the identity of its root too: timestamps and
 * xattrs (no mount in their hooks) decide by the nearest ruled ancestor
 * inode on the same file system.  The rule at the tree's path (the tree's
 * own, or a policy rule on that path, which decides there) gets the root's
 * identity instead of the one the plan found on the host.
 */
static int scratch_identities(struct run *run, struct run_error *err)
{
	/* a fresh workspace's rule: its root in the run, not the mount point on the host */
	if (run->fs_workspace) {
		const char *ws = run->policy->workspace;
		struct tl_error lerr = { "" };
		size_t governing = 0, governing_len = 0;
		int r = 0;

		for (size_t j = 0; !r && j < run->rule_count; j++) {
			size_t len = strlen(run->rules[j].path);

			/* the rule nearest above the workspace, for the layers' records */
			if ((strcmp(run->rules[j].path, "/") == 0 || within(ws, run->rules[j].path)) &&
			    len >= governing_len) {
				governing = j;
				governing_len = len;
			}
			if (strcmp(run->rules[j].path, ws) == 0)
				r = tl_run_inode_rule_add(&run->node, &run->run, j, run->ws_dev,
							  run->ws_ino, run->rules[j].access, &lerr);
		}
		/*
		 * fresh_overlay: overlayfs sets the times and xattrs of what it
		 * copies up on the upper layer and in its work directory, which
		 * nothing of the run reaches but overlayfs: the run's own change
		 * was decided on the workspace's path (a workspace.write list
		 * narrows that decision, not this one).
		 */
		if (!r && run->fs_overlay && run->rule_count)
			r = tl_run_inode_identity_add(&run->node, &run->run, governing, run->fs_dev,
						      run->upper_ino, RW, &lerr) ?:
			    tl_run_inode_identity_add(&run->node, &run->run, governing, run->fs_dev,
						      run->work_ino, RW, &lerr);
		if (r)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r, "%s", lerr.msg);
	}
	for (size_t i = 0; i < run->scratch_count; i++) {
		const struct scratch_mount *m = &run->scratch[i];
		struct tl_error lerr = { "" };
		int r;

		for (size_t j = 0; j < run->rule_count; j++) {
			if (strcmp(run->rules[j].path, m->target) != 0)
				continue;
			r = tl_run_inode_rule_add(&run->node, &run->run, j, m->dev, m->ino,
						  run->rules[j].access, &lerr);
			if (r)
				return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, -r, "%s",
						lerr.msg);
			break;
		}
	}
	return 0;
}

#define HELPER_STACK (256 * 1024)

struct helper_arg {
	const struct run *run;
	int pidfd, report_fd;
};

static int helper_main(void *data)
{
	const struct helper_arg *a = data;

	helper(a->run, a->pidfd, a->report_fd);
}

int run_scratch_enter(struct run *run, int pidfd, struct run_error *err)
{
	struct scratch_report rep = { 0 };
	struct helper_arg arg;
	int pipefd[2], status = 0;
	void *stack;
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, errno,
				"preparing the run's private /tmp: %s", strerror(errno));
	/*
	 * CLONE_VM | CLONE_VFORK, as posix_spawn does: no copy of the
	 * controller's page tables (its rings and maps), and the controller
	 * waits until the helper has exited.  The helper gets its own
	 * descriptor table and fs_struct (setns into a mount namespace needs
	 * one of its own) and a stack of its own.
	 */
	stack = malloc(HELPER_STACK);
	arg = (struct helper_arg){ run, pidfd, pipefd[1] };
	pid = stack ? clone(helper_main, (char *)stack + HELPER_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
			    &arg)
		    : -1;
	if (pid < 0) {
		int e = stack ? errno : ENOMEM;

		free(stack);
		close(pipefd[0]);
		close(pipefd[1]);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, e,
				"starting the helper that sets up the run's private /tmp: %s",
				strerror(e));
	}
	free(stack);
	close(pipefd[1]);
	n = read(pipefd[0], &rep, sizeof(rep));
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(rep) && rep.step == STEP_WORKSPACE && run->fs_overlay &&
	    rep.errnum == ENODEV)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_TMPDIR, ENODEV,
				"refusing to run: 'mode: fresh_overlay' needs overlayfs, which "
				"this kernel does not have loaded (modprobe overlay); the command "
				"was not started");
	if (n == (ssize_t)sizeof(rep) && rep.step == STEP_SOURCE) {
		rep.path[strcspn(rep.path, "\n")] = 0;	/* git's first line says what failed */
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EINVAL,
				"refusing to run: git could not lay out the workspace's source %s "
				"at commit %s: %s; the command was not started",
				run->policy->workspace_source, run->policy->workspace_ref,
				rep.path[0] ? rep.path : "it failed without a message");
	}
	if (n == (ssize_t)sizeof(rep) && rep.step > 0 &&
	    rep.step < (int)(sizeof(step_names) / sizeof(*step_names)))
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, rep.errnum,
				"%s%s%s: %s", step_names[rep.step], rep.path[0] ? " " : "",
				rep.path, strerror(rep.errnum));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != (ssize_t)sizeof(rep))
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, EIO,
				"setting up the run's private /tmp: the helper died (status %d)",
				status);
	for (size_t i = 0; i < run->scratch_count; i++) {
		run->scratch[i].dev = rep.roots[i].dev;
		run->scratch[i].ino = rep.roots[i].ino;
	}
	run->ws_dev = rep.ws.dev;
	run->ws_ino = rep.ws.ino;
	if (run->fs_overlay && run->policy->workspace_ref) {
		int r;

		if (unlinkat(run->fs_fd, RUN_GIT_CONFIG, 0) < 0)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
					"removing the git configuration that laid out the "
					"workspace's source: %s", strerror(errno));
		/* run_git_resolve() found them in the source before the run existed */
		if (strcmp(rep.commit, run->source_commit) != 0 ||
		    strcmp(rep.tree, run->source_tree) != 0)
			return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, EINVAL,
					"refusing to run: the workspace's source %s checked out "
					"commit %s, tree %s, not commit %s, tree %s; the command "
					"was not started", run->policy->workspace_source,
					rep.commit, rep.tree, run->source_commit,
					run->source_tree);
		r = run_storage_settle(run, err);
		if (r)
			return r;
	}
	return scratch_identities(run, err);
}

/*
 * The mount points on the host of HOME and of the run's file system's
 * staging point: empty directories of root's.
 */
int run_scratch_prepare_home(struct run *run, struct run_error *err)
{
	static const char *const dirs[] = { "/run", "/run/tether", RUN_HOME, RUN_FS_STAGE,
					    RUN_INPUTS_STAGE };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int r = run_check_root_dir(dirs[i]);

		if (r)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_TMPDIR, -r,
					"%s must be a directory of root's that only root may write "
					"(runs' own trees are mounted on it): %s",
					dirs[i], strerror(-r));
	}
	return 0;
}
