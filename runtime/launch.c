// SPDX-License-Identifier: GPL-2.0
/*
 * The run's first process.  Everything between clone3() and exec happens in
 * the child, inside the run cgroup, so the BPF programs already confine it;
 * what it sheds here is the authority it inherited from the controller
 * (root, its groups and capabilities, its keyrings, descriptors and
 * environment).  The order matters:
 *
 *   first it waits until the controller's helper has mounted the run's
 *   private trees in its new mount and IPC namespaces (runtime/run/scratch.c);
 *   securebits and the bounding set need CAP_SETPCAP, so they go first;
 *   raising RLIMIT_NOFILE may need CAP_SYS_RESOURCE;
 *   groups, gid, then uid (CAP_SETGID, CAP_SETUID);
 *   then the remaining capability sets, now unneeded;
 *   the session keyring after the uid change, so the run's uid owns it;
 *   the working directory, looked up again in the run's namespace, as the
 *   run's uid;
 *   no_new_privs last: BPF-LSM capable treats a run task without it as this
 *   setup and lets it use only CAP_SETUID, CAP_SETGID, CAP_SETPCAP and
 *   CAP_SYS_RESOURCE; every check after it is refused.
 *
 * Between fork and exec the child may only make async-signal-safe calls:
 * everything it needs (the environment, the cap count) is prepared before.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/launch.h"
#include "runtime/seccomp.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

static const char *const step_names[] = {
	[LAUNCH_STEP_WAIT] = "waiting for the run's private /tmp",
	[LAUNCH_STEP_SIGNALS] = "resetting signals",
	[LAUNCH_STEP_SETSID] = "starting a new session",
	[LAUNCH_STEP_STDIO] = "connecting stdout and stderr",
	[LAUNCH_STEP_CLOSE_FDS] = "closing inherited descriptors",
	[LAUNCH_STEP_SECUREBITS] = "locking securebits",
	[LAUNCH_STEP_BOUNDING] = "dropping the capability bounding set",
	[LAUNCH_STEP_RLIMITS] = "setting resource limits",
	[LAUNCH_STEP_GROUPS] = "dropping supplementary groups",
	[LAUNCH_STEP_GID] = "switching to the run's gid",
	[LAUNCH_STEP_UID] = "switching to the run's uid",
	[LAUNCH_STEP_AMBIENT] = "clearing ambient capabilities",
	[LAUNCH_STEP_CAPS] = "dropping capabilities",
	[LAUNCH_STEP_KEYRING] = "joining a new session keyring",
	[LAUNCH_STEP_CWD] = "changing to the working directory",
	[LAUNCH_STEP_NO_NEW_PRIVS] = "setting no_new_privs",
	[LAUNCH_STEP_SECCOMP] = "installing the seccomp filter",
	[LAUNCH_STEP_EXEC] = "executing the command",
};

const char *launch_step_name(int step)
{
	if (step <= 0 || step >= (int)(sizeof(step_names) / sizeof(step_names[0])) ||
	    !step_names[step])
		return "preparing the command";
	return step_names[step];
}

int launch_last_cap(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC), n = -1;

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			n = atoi(buf);
		close(fd);
	}
	/* unknown: try every bit a 64-bit capability set has; the kernel refuses the rest */
	return n > 0 && n < 64 ? n : 63;
}

/* "NAME=value" whose NAME is in the default set (policyc/environment.c has it). */
static bool env_default(const char *entry)
{
	char name[TP_ENV_NAME_MAX + 1];
	size_t n = (size_t)(strchr(entry, '=') - entry);

	if (n > TP_ENV_NAME_MAX)
		return false;
	memcpy(name, entry, n);
	name[n] = 0;
	return tp_env_name_is_default(name);
}

static bool env_listed(const char *entry, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		size_t n = strlen(names[i]);

		if (strncmp(entry, names[i], n) == 0 && entry[n] == '=')
			return true;
	}
	return false;
}

static int env_push(char ***envp, size_t *n, char *entry)
{
	char **grown;

	if (!entry)
		return -ENOMEM;
	grown = realloc(*envp, (*n + 2) * sizeof(**envp));
	if (!grown) {
		free(entry);
		return -ENOMEM;
	}
	*envp = grown;
	(*envp)[(*n)++] = entry;
	(*envp)[*n] = NULL;
	return 0;
}

char **launch_env_build(char *const *environ, const char *const *names, size_t name_count,
			const char *tmpdir, const char *home)
{
	bool has_path = false, has_home = false, keep_home = false;
	char **envp = calloc(1, sizeof(*envp)), *entry;
	size_t n = 0;

	if (!envp)
		return NULL;
	for (size_t i = 0; i < name_count; i++)
		keep_home |= strcmp(names[i], "HOME") == 0;
	for (size_t i = 0; environ && environ[i]; i++) {
		const char *e = environ[i];

		if (!strchr(e, '='))
			continue;
		/* tether sets these; a listed HOME keeps the caller's */
		if (strncmp(e, "TMPDIR=", 7) == 0 || (!keep_home && strncmp(e, "HOME=", 5) == 0))
			continue;
		if (!env_default(e) && !env_listed(e, names, name_count))
			continue;
		/* the first of duplicate names wins, as getenv() sees it */
		{
			size_t len = (size_t)(strchr(e, '=') - e) + 1;
			bool dup = false;

			for (size_t j = 0; j < n && !dup; j++)
				dup = strncmp(envp[j], e, len) == 0;
			if (dup)
				continue;
		}
		has_path |= strncmp(e, "PATH=", 5) == 0;
		has_home |= strncmp(e, "HOME=", 5) == 0;
		if (env_push(&envp, &n, strdup(e)))
			goto fail;
	}
	if (!has_path && env_push(&envp, &n, strdup("PATH=" DEFAULT_PATH)))
		goto fail;
	if (tmpdir) {
		if (asprintf(&entry, "TMPDIR=%s", tmpdir) < 0 || env_push(&envp, &n, entry))
			goto fail;
	}
	if (home && !has_home) {
		if (asprintf(&entry, "HOME=%s", home) < 0 || env_push(&envp, &n, entry))
			goto fail;
	}
	return envp;
fail:
	launch_env_free(envp);
	return NULL;
}

void launch_env_free(char **envp)
{
	for (size_t i = 0; envp && envp[i]; i++)
		free(envp[i]);
	free(envp);
}

/* The child's side.  Returns only on failure, with *step set. */
static int child_setup(const struct launch_spec *s, int go_fd, int *step)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = { 0 };
	struct rlimit zero = { 0, 0 };

	/*
	 * The namespaces are empty copies of the controller's until the
	 * controller's helper has mounted the run's own trees: wait for it.
	 */
	*step = LAUNCH_STEP_WAIT;
	if (go_fd >= 0) {
		char go = 0;
		ssize_t n;

		while ((n = read(go_fd, &go, 1)) < 0 && errno == EINTR)
			;
		if (n != 1 || go != 1) {
			errno = n < 0 ? errno : ECANCELED;
			return -1;
		}
		close(go_fd);
	}
	*step = LAUNCH_STEP_SIGNALS;
	/* SIG_IGN survives exec: give the command the default dispositions it expects */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	if (sigprocmask(SIG_SETMASK, s->mask, NULL) < 0)
		return -1;
	/*
	 * A new session: no controlling terminal, so the run cannot reach the
	 * invoking shell's tty (bubblewrap's --new-session, for the TIOCSTI
	 * class of escapes), and its process groups are its own.
	 */
	*step = LAUNCH_STEP_SETSID;
	if (setsid() < 0)
		return -1;
	*step = LAUNCH_STEP_STDIO;
	if ((s->stdin_fd >= 0 && dup2(s->stdin_fd, STDIN_FILENO) < 0) ||
	    (s->stdout_fd >= 0 && dup2(s->stdout_fd, STDOUT_FILENO) < 0) ||
	    (s->stderr_fd >= 0 && dup2(s->stderr_fd, STDERR_FILENO) < 0))
		return -1;
	/*
	 * Descriptors the caller left open beyond stdio (a file opened for
	 * writing outside the workspace, a socket, the controller's own maps
	 * and rings) would carry authority the envelope does not grant.  The
	 * error pipe is close-on-exec already and stays usable until exec.
	 */
	*step = LAUNCH_STEP_CLOSE_FDS;
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return -1;
	/*
	 * Root gains no capabilities at exec (NOROOT), a uid change always
	 * clears them (NO_SETUID_FIXUP locked off, KEEP_CAPS locked off), and
	 * none can be made ambient: all locked, for every descendant.
	 */
	*step = LAUNCH_STEP_SECUREBITS;
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
		  SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
		  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
		return -1;
	*step = LAUNCH_STEP_BOUNDING;
	for (int cap = 0; cap <= s->last_cap; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	*step = LAUNCH_STEP_RLIMITS;
	if (s->nofile) {
		struct rlimit nofile = { s->nofile, s->nofile };

		if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
			return -1;
	}
	/* no core files: a dump would write the run's memory, secrets included */
	if (setrlimit(RLIMIT_CORE, &zero) < 0)
		return -1;
	*step = LAUNCH_STEP_GROUPS;
	if (setgroups(0, NULL) < 0)
		return -1;
	*step = LAUNCH_STEP_GID;
	if (setresgid(s->gid, s->gid, s->gid) < 0)
		return -1;
	*step = LAUNCH_STEP_UID;
	if (setresuid(s->uid, s->uid, s->uid) < 0)
		return -1;
	*step = LAUNCH_STEP_AMBIENT;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	/* a uid-0 run keeps its sets through setresuid(0): clear them all */
	*step = LAUNCH_STEP_CAPS;
	if (syscall(SYS_capset, &hdr, caps) < 0)
		return -1;
	/*
	 * A fresh, anonymous session keyring: the controller's (and with it
	 * whatever root keeps in it) is no longer reachable, and BPF-LSM
	 * key_permission lets the run reach only keys allocated inside it.
	 */
	*step = LAUNCH_STEP_KEYRING;
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
		return -1;
	/*
	 * In the run's namespace the inherited working directory may lie in a
	 * tree its own mounts now cover (the host's /tmp): look the path up
	 * again, so the command starts where its mount namespace says.
	 */
	*step = LAUNCH_STEP_CWD;
	if (s->private_ns && (!s->cwd || chdir(s->cwd) < 0) &&
	    (!s->fallback_cwd || chdir(s->fallback_cwd) < 0) && chdir("/") < 0)
		return -1;
	/* setuid and file-capability binaries gain nothing from here on */
	*step = LAUNCH_STEP_NO_NEW_PRIVS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	*step = LAUNCH_STEP_SECCOMP;
	if (seccomp_install_run_filter() < 0)
		return -1;
	*step = LAUNCH_STEP_EXEC;
	execvpe(s->argv[0], s->argv, s->envp);
	return -1;
}

int launch_spawn(const struct launch_spec *spec, pid_t *pid_out, int *pidfd_out,
		 int *errpipe_out, int *gopipe_out)
{
	struct clone_args args = { 0 };
	int pidfd = -1, pipefd[2], gofd[2] = { -1, -1 };
	long pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	if (spec->private_ns && pipe2(gofd, O_CLOEXEC) < 0) {
		int r = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD |
		     (spec->private_ns ? CLONE_NEWNS | CLONE_NEWIPC : 0);
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)spec->cgroup_fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int r = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		if (gofd[0] >= 0) {
			close(gofd[0]);
			close(gofd[1]);
		}
		return r;
	}
	if (pid == 0) {
		int report[2] = { 0, 0 };

		close(pipefd[0]);
		if (gofd[1] >= 0)
			close(gofd[1]);
		child_setup(spec, gofd[0], &report[0]);
		report[1] = errno;
		if (write(pipefd[1], report, sizeof(report)) < 0) {
			/* nothing left to tell it to */
		}
		_exit(report[0] == LAUNCH_STEP_EXEC && report[1] == ENOENT ? 127 : 126);
	}
	close(pipefd[1]);
	if (gofd[0] >= 0)
		close(gofd[0]);
	*pid_out = (pid_t)pid;
	*pidfd_out = pidfd;
	*errpipe_out = pipefd[0];
	*gopipe_out = gofd[1];
	return 0;
}

void launch_go(int gopipe, bool go)
{
	char c = 1;

	if (gopipe < 0)
		return;
	if (go && write(gopipe, &c, 1) != 1) {
		/* the child reads EOF and fails its first step */
	}
	close(gopipe);
}
