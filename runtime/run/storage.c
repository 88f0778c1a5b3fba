// SPDX-License-Identifier: GPL-2.0
/*
 * The run's own file system (docs/envelope.md, "The run's file system"): one
 * tmpfs per run that holds a fresh workspace and, when resources.disk_bytes
 * or disk_inodes is set, the run's private /tmp, /var/tmp, /dev/shm and HOME
 * too, so that one size= and one nr_inodes= bound everything the run can
 * write.  The kernel enforces both: a write past size= and a create past
 * nr_inodes= fail with ENOSPC, on any host file system, since nothing of it
 * is on the host's disk.  Its pages are charged to the writer's memory
 * cgroup, the run's: they count against memory_bytes as well.
 *
 * The controller makes it with the new mount API (fsopen, fsconfig,
 * fsmount) before the command exists, as a detached mount that no path on
 * the host reaches, and lays out its directories through that descriptor.
 * The scratch helper, in the run's mount namespace, attaches it at a
 * staging point, bind-mounts each directory where the run sees it and
 * detaches the staging point (runtime/run/scratch.c).  The controller keeps
 * the descriptor: it tells when the run filled its file system (fstatfs),
 * and the file system lives until the descriptor is closed at teardown and
 * the run's namespace is gone, whichever is last.  Nothing of it is left
 * on the host but the workspace's empty mount point, removed at the end
 * when tether made it.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "runtime/inputdigest.h"
#include "runtime/run/internal.h"

/* How often the controller looks whether the run filled its file system. */
#define STORAGE_CHECK_MS 200

/*
 * The directories tether makes on the run's file system: these count
 * against nr_inodes, which gets them on top so that the run may create
 * exactly disk_inodes entries of its own.
 */
#define STORAGE_OWN_INODES 6	/* the root, ws, tmp, var_tmp, shm, home; + work, lower */

void run_storage_plan(struct run *run)
{
	const struct tp_policy *pol = run->policy;
	const uint64_t *lim = pol->limits;

	run->fs_workspace = pol->workspace_mode != TP_WORKSPACE_EXISTING;
	run->fs_overlay = pol->workspace_mode == TP_WORKSPACE_FRESH_OVERLAY;
	run->fs_scratch = lim[TP_LIMIT_DISK_BYTES] || lim[TP_LIMIT_DISK_INODES];
	run->fs_bytes = 0;
	run->fs_budget = NULL;
	/* max_bytes <= disk_bytes (the compiler checks): both hold with the smaller */
	if (lim[TP_LIMIT_WORKSPACE_BYTES]) {
		run->fs_bytes = lim[TP_LIMIT_WORKSPACE_BYTES];
		run->fs_budget = "workspace_bytes";
	} else if (lim[TP_LIMIT_DISK_BYTES]) {
		run->fs_bytes = lim[TP_LIMIT_DISK_BYTES];
		run->fs_budget = "disk_bytes";
	}
	run->fs_inodes = lim[TP_LIMIT_DISK_INODES];
	/* without a byte limit, no larger than the memory the run may use anyway */
	if (!run->fs_bytes && lim[TP_LIMIT_MEMORY_BYTES])
		run->fs_bytes = lim[TP_LIMIT_MEMORY_BYTES];
}

bool run_storage_wanted(const struct run *run)
{
	return run->fs_workspace || run->fs_scratch;
}

/* A directory of the run's file system, with its exact mode and owner (no umask). */
static int make_dir(int root, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdirat(root, name, 0700) < 0)
		return -errno;
	if (fchownat(root, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(root, name, mode, 0) < 0)
		return -errno;
	return 0;
}

int run_tmpfs_detached(const char *const *opts, const char **failed)
{
	int fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC), fd = -1, r = 0;

	if (fsfd < 0) {
		*failed = "fsopen";
		return -errno;
	}
	for (; !r && opts[0]; opts += 2)
		if (fsconfig(fsfd, FSCONFIG_SET_STRING, opts[0], opts[1], 0) < 0) {
			*failed = opts[0];
			r = -errno;
		}
	if (!r && fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		*failed = "create";
		r = -errno;
	}
	if (!r && (fd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0) {
		*failed = "fsmount";
		r = -errno;
	}
	close(fsfd);
	return r ? r : fd;
}

/* What a copy of the source takes on tmpfs, at most: pages of data, inodes. */
static _Thread_local struct { uint64_t bytes, inodes, page; } source_size;

static int add_source_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path, (void)type, (void)ftw;
	source_size.inodes++;
	if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
		source_size.bytes += ((uint64_t)st->st_size + source_size.page) /
				     source_size.page * source_size.page;
	return 0;
}

/* The inodes tether or overlayfs make after the limits are set (the run's do not count). */
static uint64_t later_own_inodes(const struct run *run)
{
	/* HOME/.gitconfig; overlayfs's work/work and work/index */
	return (run_home_gitconfig_wanted(run->policy) ? 1 : 0) + (run->fs_overlay ? 2 : 0);
}

/*
 * fresh_overlay: the source, read once and hashed as it is copied into
 * "lower" (runtime/inputdigest.c), owned by the run's uid and writable (the
 * run changes it through the overlay, whose upper layer is "ws": the copy
 * itself is never written).  size= and nr_inodes= were set with room for
 * it; they are set again to what the copy took plus the limits, so that the
 * limits bound what the run writes, as in a fresh workspace.
 */
static int source_copy(struct run *run, struct run_error *err)
{
	const char *src = run->policy->workspace_source;
	struct input_copy copy = { run->fs_fd, "lower", run->uid, run->gid, true };
	char why[PATH_MAX + 256];
	uint8_t d[32];
	int r;

	r = input_digest(src, &copy, d, why, sizeof(why));
	if (r)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, -r,
				"refusing to run: the workspace's source cannot be copied: %s%s; "
				"the command was not started", why,
				r == -ENOSPC ? " (it grew while it was copied: try again)" : "");
	tp_digest_text(d, run->source_digest);
	return run_storage_settle(run, err);
}

int run_storage_settle(struct run *run, struct run_error *err)
{
	char num[32];
	struct statfs st;
	int r, fd;

	if (!run->fs_bytes && !run->fs_inodes)
		return 0;
	fd = fstatfs(run->fs_fd, &st) < 0 ? -1 : fspick(run->fs_fd, "", FSPICK_EMPTY_PATH |
							 FSPICK_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	if (!r && run->fs_bytes) {
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)((st.f_blocks - st.f_bfree) * (uint64_t)st.f_bsize +
					      run->fs_bytes));
		r = fsconfig(fd, FSCONFIG_SET_STRING, "size", num, 0) < 0 ? -errno : 0;
	}
	if (!r && run->fs_inodes) {
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)(st.f_files - st.f_ffree + run->fs_inodes +
					      later_own_inodes(run)));
		r = fsconfig(fd, FSCONFIG_SET_STRING, "nr_inodes", num, 0) < 0 ? -errno : 0;
	}
	if (!r && fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"setting the run's file system's limits after copying the "
				"workspace's source: %s", strerror(-r));
	return 0;
}

int run_storage_create(struct run *run, struct run_error *err)
{
	char bytes[32], inodes[32], step[32];
	const char *opts[10] = { "source", "tether-run" }, *failed = "", *what;
	uint64_t extra_bytes = 0, extra_inodes = 0;
	struct stat st;
	size_t n = 2;
	int r;

	if (!run_storage_wanted(run))
		return 0;
	/* a git source: its commit and tree, or the reason it has none, before anything else */
	if (run->fs_overlay && run->policy->workspace_ref) {
		r = run_git_resolve(run, err);
		if (r)
			return r;
	}
	/*
	 * Room for the source's copy, over the limits (run_storage_settle()
	 * takes it back): what a walk of the tree counts, or for a git source,
	 * whose checkout's size only git knows, what tmpfs allows by default
	 * (half the RAM), since a limit cannot be set later on a tmpfs made
	 * without one.
	 */
	if (run->fs_overlay && run->policy->workspace_ref && (run->fs_bytes || run->fs_inodes)) {
		struct sysinfo si;

		if (sysinfo(&si) < 0)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
					"reading the node's memory size: %s", strerror(errno));
		extra_bytes = (uint64_t)si.totalram * si.mem_unit / 2;
		extra_inodes = extra_bytes / (uint64_t)sysconf(_SC_PAGESIZE);
	} else if (run->fs_overlay && (run->fs_bytes || run->fs_inodes)) {
		char src[PATH_MAX];

		source_size.bytes = source_size.inodes = 0;
		source_size.page = (uint64_t)sysconf(_SC_PAGESIZE);
		/* the source's own path is followed when it is a link, as the copy does */
		if (!realpath(run->policy->workspace_source, src) ||
		    nftw(src, add_source_entry, 16, FTW_PHYS) < 0)
			return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, errno,
					"refusing to run: the workspace's source %s cannot be "
					"read: %s; the command was not started",
					run->policy->workspace_source, strerror(errno));
		extra_bytes = source_size.bytes;
		extra_inodes = source_size.inodes;
	}
	if (run->fs_bytes) {
		snprintf(bytes, sizeof(bytes), "%llu",
			 (unsigned long long)(run->fs_bytes + extra_bytes));
		opts[n++] = "size";
		opts[n++] = bytes;
	}
	if (run->fs_inodes) {
		snprintf(inodes, sizeof(inodes), "%llu",
			 (unsigned long long)(run->fs_inodes + STORAGE_OWN_INODES + extra_inodes +
					      (run->fs_overlay ? 2 : 0) + later_own_inodes(run)));
		opts[n++] = "nr_inodes";
		opts[n++] = inodes;
	}
	opts[n++] = "mode";
	/*
	 * 0700; 0711 for a git source, which git lays out as the run's uid
	 * through the staging point (the root is never bound where the run is)
	 */
	opts[n++] = run->fs_overlay && run->policy->workspace_ref ? "0711" : "0700";
	r = run_tmpfs_detached(opts, &failed);
	if (r >= 0) {
		run->fs_fd = r;
	} else if (strcmp(failed, "fsopen") == 0) {
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_WORKSPACE, -r,
				"refusing to run: the run's own file system (a tmpfs, for its "
				"workspace and disk limits) cannot be made: fsopen: %s; the "
				"command was not started.", strerror(-r));
	} else {
		if (strcmp(failed, "fsmount") == 0)
			snprintf(step, sizeof(step), "mounting");
		else if (strcmp(failed, "create") == 0 || strcmp(failed, "source") == 0)
			snprintf(step, sizeof(step), "creating");
		else
			snprintf(step, sizeof(step), "setting %s= on", failed);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"%s the run's own file system (tmpfs): %s", step, strerror(-r));
	}
	/* the workspace and HOME are the run's; the temporary trees everybody's, sticky */
	what = "ws";
	r = run->fs_workspace ? make_dir(run->fs_fd, "ws", 0755, run->uid, run->gid) : 0;
	if (!r && run->fs_scratch) {
		static const char *const sticky[] = { "tmp", "var_tmp", "shm" };

		for (size_t i = 0; i < 3 && !r; i++) {
			what = sticky[i];
			r = make_dir(run->fs_fd, sticky[i], 01777, 0, 0);
		}
		if (!r) {
			what = "home";
			r = make_dir(run->fs_fd, "home", 0700, run->uid, run->gid);
		}
	}
	if (!r && run->fs_overlay) {
		what = "work";
		r = make_dir(run->fs_fd, "work", 0700, 0, 0);
	}
	if (!r && fstat(run->fs_fd, &st) < 0)
		r = -errno;
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"laying out the run's own file system (%s): %s", what, strerror(-r));
	run->fs_dev = (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev));
	if (run->fs_overlay) {
		if (fstatat(run->fs_fd, "ws", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(run->upper_ino = st.st_ino) ||
		    fstatat(run->fs_fd, "work", &st, AT_SYMLINK_NOFOLLOW) < 0)
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, errno,
					"laying out the run's own file system: %s",
					strerror(errno));
		run->work_ino = st.st_ino;
		/* a git source is laid out by git, in the run's namespace (scratch.c) */
		if (run->policy->workspace_ref) {
			r = make_dir(run->fs_fd, "lower", 0755, run->uid, run->gid);
			what = "lower";
			if (!r) {
				what = RUN_GIT_CONFIG;
				r = run_git_config_write(run->fs_fd);
			}
			return r ? run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
					    "laying out the run's own file system (%s): %s", what,
					    strerror(-r))
				 : 0;
		}
		return source_copy(run, err);
	}
	return 0;
}

/*
 * Which limit the run spent: its file system is full (no block or no inode
 * left), or the timer saw it full before.  NULL when it is not full, or
 * when no limit of the envelope set its size (a full tmpfs then is the
 * memory limit's, or the host's).
 */
const char *run_storage_full(const struct run *run)
{
	struct statfs st;

	if (run->fs_spent)
		return run->fs_spent;
	if (run->fs_fd < 0 || fstatfs(run->fs_fd, &st) < 0)
		return NULL;
	if (run->fs_budget && st.f_bfree == 0)
		return run->fs_budget;
	if (run->fs_inodes && st.f_ffree == 0)
		return "disk_inodes";
	return NULL;
}

int run_storage_watch(struct run *run)
{
	struct itimerspec every = {
		.it_interval = { 0, STORAGE_CHECK_MS * 1000000L },
		.it_value = { 0, STORAGE_CHECK_MS * 1000000L },
	};

	if (run->fs_fd < 0 || (!run->fs_budget && !run->fs_inodes))
		return 0;
	run->disk_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (run->disk_fd < 0)
		return -errno;
	if (timerfd_settime(run->disk_fd, 0, &every, NULL) < 0)
		return -errno;
	run_epoll_add(run, run->disk_fd, EPOLLIN);
	return 0;
}

/*
 * The kernel refused the write already (ENOSPC); the controller ends the
 * run, as it does at process_count's and network_egress.max_bytes' limits,
 * at the tick after the one that saw the file system full: the program that
 * got ENOSPC has that long to say so (200 to 400 ms).  Spent stays spent,
 * even when the run deletes files in between.
 */
void run_storage_event(struct run *run)
{
	uint64_t n;
	const char *budget = run->fs_spent;

	if (read(run->disk_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (!budget) {
		run->fs_spent = run_storage_full(run);
		return;
	}
	run_end(run, RUN_REASON_BUDGET, budget,
		strcmp(budget, "disk_inodes") == 0
			? "it created as many files as resources.disk_inodes allows"
			: "it filled its file system");
}

void run_storage_free(struct run *run)
{
	if (run->disk_fd >= 0) {
		run_epoll_del(run, run->disk_fd);
		close(run->disk_fd);
		run->disk_fd = -1;
	}
	if (run->fs_fd >= 0)
		close(run->fs_fd);
	run->fs_fd = -1;
	if (run->ws_mountpoint_made && rmdir(run->policy->workspace) < 0 && errno != ENOENT)
		run_log(run, "removing the workspace's mount point %s: %s", run->policy->workspace,
			strerror(errno));
	run->ws_mountpoint_made = false;
}
