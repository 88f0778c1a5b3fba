/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's first process: created inside the run cgroup by
 * clone3(CLONE_INTO_CGROUP), stripped of the controller's authority
 * (identity, groups, capabilities, keyrings, descriptors, environment,
 * limits), then exec'd.
 */
#ifndef TETHER_RUNTIME_LAUNCH_H
#define TETHER_RUNTIME_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct launch_spec {
	char **argv;
	char **envp;		/* launch_env_build() */
	uid_t uid;
	gid_t gid;
	uint64_t nofile;	/* RLIMIT_NOFILE, soft and hard; 0: left as inherited */
	int cgroup_fd;		/* O_PATH fd of the run cgroup */
	int stdin_fd;		/* becomes fd 0 (-1: inherited) */
	int stdout_fd;		/* becomes fd 1 (-1: inherited) */
	int stderr_fd;		/* becomes fd 2 (-1: inherited) */
	const sigset_t *mask;	/* the child's signal mask */
	int last_cap;		/* launch_last_cap() */
	/*
	 * Private namespaces: the child is created in a new mount and IPC
	 * namespace and waits, before its first step, until the caller says
	 * go (launch_go) once it has set them up.  Then it changes to `cwd`,
	 * else to `fallback_cwd`, else to "/" (as the run's uid, so it enters
	 * nothing that uid could not).
	 */
	bool private_ns;
	const char *cwd;
	const char *fallback_cwd;
};

/* Steps of the child's setup, named when one fails (launch_step_name). */
enum launch_step {
	LAUNCH_STEP_WAIT = 1,
	LAUNCH_STEP_SIGNALS,
	LAUNCH_STEP_SETSID,
	LAUNCH_STEP_STDIO,
	LAUNCH_STEP_CLOSE_FDS,
	LAUNCH_STEP_SECUREBITS,
	LAUNCH_STEP_BOUNDING,
	LAUNCH_STEP_RLIMITS,
	LAUNCH_STEP_GROUPS,
	LAUNCH_STEP_GID,
	LAUNCH_STEP_UID,
	LAUNCH_STEP_AMBIENT,
	LAUNCH_STEP_CAPS,
	LAUNCH_STEP_KEYRING,
	LAUNCH_STEP_CWD,
	LAUNCH_STEP_NO_NEW_PRIVS,
	LAUNCH_STEP_SECCOMP,
	LAUNCH_STEP_EXEC,
};

const char *launch_step_name(int step);

/* The highest capability number this kernel knows (/proc/sys/kernel/cap_last_cap). */
int launch_last_cap(void);

/*
 * Starts spec->argv in the run cgroup.  The child reports a failed step
 * through a close-on-exec pipe: *errpipe_out yields, once the child has
 * exec'd or failed, either nothing (EOF: exec'd) or two ints, the step and
 * its errno.  With spec->private_ns, *gopipe_out is the descriptor
 * launch_go() takes (else -1).
 */
int launch_spawn(const struct launch_spec *spec, pid_t *pid_out, int *pidfd_out,
		 int *errpipe_out, int *gopipe_out);

/*
 * Lets a private_ns child go on (go) or makes it fail its first step (not
 * go), and closes gopipe.
 */
void launch_go(int gopipe, bool go);

/*
 * The run's environment, from `environ`: the names below and those the
 * envelope lists (sandbox.environment) when set, nothing else; then TMPDIR
 * and HOME as given (the envelope can list HOME to keep the caller's).
 * Passed by default: tp_env_default_names (PATH, LANG, LANGUAGE, LC_*, TERM,
 * TZ); PATH gets a fixed default when the caller has none.  Returns a malloc'd NULL-terminated array whose strings
 * are malloc'd too (launch_env_free), or NULL on ENOMEM.
 */
char **launch_env_build(char *const *environ, const char *const *names, size_t name_count,
			const char *tmpdir, const char *home);
void launch_env_free(char **envp);

#endif
