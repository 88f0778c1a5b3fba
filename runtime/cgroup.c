// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "loader/loader.h"
#include "runtime/cgroup.h"
#include "runtime/fsutil.h"

#define CG_LOCK_TIMEOUT_MS 10000

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = 0;
}

int cg_find_mount(FILE *mountinfo, char *mount_point, size_t size)
{
	char *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;

	while (getline(&line, &cap, mountinfo) > 0) {
		/* id parent major:minor root mount_point options [optional...] - fstype source super */
		char *fields[5], *save = NULL, *sep, *fstype, *tok;
		int n = 0;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		fstype = sep + 3;
		*sep = 0;
		for (tok = strtok_r(line, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		if (n < 5 || strncmp(fstype, "cgroup2 ", 8) != 0)
			continue;
		/* A mount of a sub-tree (root other than "/") cannot tell absolute levels. */
		if (strcmp(fields[3], "/") != 0)
			continue;
		unescape_octal(fields[4]);
		if (strlen(fields[4]) + 1 > size) {
			r = -ENAMETOOLONG;
			break;
		}
		strcpy(mount_point, fields[4]);
		r = 0;
		break;
	}
	free(line);
	return r;
}

int cg_parent_lock(const char *mount_point)
{
	char *parent = NULL;
	int fd, r;

	if (asprintf(&parent, "%s/%s", mount_point, TETHER_CGROUP_PARENT) < 0)
		return -ENOMEM;
	if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		free(parent);
		return r;
	}
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	free(parent);
	if (r)
		return r;
	/*
	 * Any process that can open the directory can flock it, a run included:
	 * wait a bounded time rather than let one hang every later run.
	 */
	for (int waited_ms = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited_ms += 10) {
		if (errno != EWOULDBLOCK || waited_ms >= CG_LOCK_TIMEOUT_MS) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return r;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return fd;
}

int cg_run_open(const char *path, struct cg_run *cg)
{
	int r;

	*cg = (struct cg_run){ .dir_fd = -1, .lock_fd = -1 };
	cg->path = strdup(path);
	if (!cg->path)
		return -ENOMEM;
	cg->dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (cg->dir_fd < 0) {
		r = -errno;
		cg_run_free(cg);
		return r;
	}
	r = tl_cgroup_id(cg->dir_fd, &cg->id);
	if (r) {
		cg_run_free(cg);
		return r;
	}
	cg->level = TETHER_RUN_CGROUP_LEVEL;
	return 0;
}

/* Takes the run directory's lock without waiting: -EWOULDBLOCK if a controller holds it. */
static int lock_run_dir(struct cg_run *cg)
{
	int fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), r;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	cg->lock_fd = fd;
	return 0;
}

int cg_run_adopt(const char *path, struct cg_run *cg)
{
	int r = cg_run_open(path, cg);

	if (r)
		return r;
	r = lock_run_dir(cg);
	if (r)
		cg_run_free(cg);
	return r;
}

int cg_find_orphans(const char *mount_point, struct cg_run **orphans, size_t *orphan_count,
		    uint64_t **all_ids, size_t *all_count)
{
	struct cg_run *list = NULL, cg;
	uint64_t *ids = NULL;
	size_t n = 0, nids = 0;
	struct dirent *de;
	char *parent = NULL, *path = NULL;
	DIR *dir;
	int r = 0;

	if (asprintf(&parent, "%s/%s", mount_point, TETHER_CGROUP_PARENT) < 0)
		return -ENOMEM;
	dir = opendir(parent);
	if (!dir) {
		r = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	while ((de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		free(path);
		if (asprintf(&path, "%s/%s", parent, de->d_name) < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		if (cg_run_open(path, &cg))
			continue;
		{
			uint64_t *grown = realloc(ids, (nids + 1) * sizeof(*ids));

			if (!grown) {
				cg_run_free(&cg);
				r = -ENOMEM;
				break;
			}
			ids = grown;
			ids[nids++] = cg.id;
		}
		if (lock_run_dir(&cg)) {
			cg_run_free(&cg);	/* live: its controller holds the lock */
			continue;
		}
		{
			struct cg_run *grown = realloc(list, (n + 1) * sizeof(*list));

			if (!grown) {
				cg_run_free(&cg);
				r = -ENOMEM;
				break;
			}
			list = grown;
			list[n++] = cg;
		}
	}
	closedir(dir);
out:
	free(path);
	free(parent);
	if (r) {
		for (size_t i = 0; i < n; i++)
			cg_run_free(&list[i]);
		free(list);
		free(ids);
		return r;
	}
	*orphans = list;
	*orphan_count = n;
	*all_ids = ids;
	*all_count = nids;
	return 0;
}

int cg_run_create(const char *mount_point, const char *run_id, struct cg_run *cg)
{
	int r;

	*cg = (struct cg_run){ .dir_fd = -1, .lock_fd = -1 };
	/* the parent exists: cg_parent_lock() made it, and we run under its lock */
	if (asprintf(&cg->path, "%s/%s/%s", mount_point, TETHER_CGROUP_PARENT, run_id) < 0) {
		cg->path = NULL;
		return -ENOMEM;
	}
	if (mkdir(cg->path, 0755) < 0) {
		r = -errno;
		goto fail;
	}
	cg->dir_fd = open(cg->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0) {
		r = -errno;
		rmdir(cg->path);
		goto fail;
	}
	r = tl_cgroup_id(cg->dir_fd, &cg->id);
	if (r) {
		close(cg->dir_fd);
		rmdir(cg->path);
		goto fail;
	}
	cg->level = TETHER_RUN_CGROUP_LEVEL;
	r = lock_run_dir(cg);
	if (r) {
		close(cg->dir_fd);
		rmdir(cg->path);
		goto fail;
	}
	return 0;
fail:
	free(cg->path);
	*cg = (struct cg_run){ .dir_fd = -1, .lock_fd = -1 };
	return r;
}

char *cg_controllers(const char *mount_point)
{
	char path[4096], buf[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mount_point);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return strdup(buf);
}

static int read_file_at(int dir_fd, const char *name, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

static bool cgroup_populated(struct cg_run *cg)
{
	char buf[256];
	const char *p;
	int fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool populated = true;

	if (fd < 0)
		return errno != ENOENT;
	if (read_file_at(fd, "cgroup.events", buf, sizeof(buf)) > 0) {
		p = strstr(buf, "populated ");
		populated = !p || p[10] != '0';
	}
	close(fd);
	return populated;
}

/*
 * Sends `sig` to every process listed in cgroup.procs and returns how many
 * it reached; signal 0 only counts them.
 */
static unsigned int signal_members(struct cg_run *cg, int sig)
{
	char path[4096], *line = NULL;
	unsigned int n = 0;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		pid_t pid = (pid_t)strtol(line, NULL, 10);

		if (pid > 0 && kill(pid, sig) == 0)
			n++;
	}
	free(line);
	fclose(f);
	return n;
}

void cg_format_cpu_max(uint64_t cpu_milli, char *buf, size_t size)
{
	/* period 100 ms: one CPU (1000) gets 100 ms each period, 0.5 CPU 50 ms */
	const uint64_t period_us = 100000, min_quota_us = 1000;
	uint64_t quota_us = cpu_milli > UINT64_MAX / 100 ? UINT64_MAX : cpu_milli * 100;

	if (quota_us < min_quota_us)
		quota_us = min_quota_us;
	snprintf(buf, size, "%llu %llu", (unsigned long long)quota_us,
		 (unsigned long long)period_us);
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* The controllers a set of limits needs, in the order cgroup.controllers lists them. */
static size_t needed_controllers(const struct cg_limits *l, const char *out[3])
{
	size_t n = 0;

	if (l->cpu_milli)
		out[n++] = "cpu";
	if (l->memory_bytes)
		out[n++] = "memory";
	if (l->pids)
		out[n++] = "pids";
	return n;
}

void cg_missing_controllers(const char *available, const struct cg_limits *limits, char *out,
			    size_t size)
{
	const char *need[3];
	size_t n = needed_controllers(limits, need), len = 0;

	if (size)
		out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (available && has_word(available, need[i]))
			continue;
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%s",
					len ? " " : "", need[i]);
	}
}

static int write_file_at(int dir_fd, const char *name, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd, r = 0;

	fd = openat(dir_fd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

int cg_enable_controllers(const char *mount_point, const struct cg_limits *limits, char *why,
			  size_t why_len)
{
	const char *need[3], *dirs[2] = { "", "/" TETHER_CGROUP_PARENT };
	size_t n = needed_controllers(limits, need);
	char path[4096], value[64] = "";
	int r = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		snprintf(value + strlen(value), sizeof(value) - strlen(value), "%s+%s",
			 i ? " " : "", need[i]);
	for (size_t i = 0; i < 2 && !r; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s%s", mount_point, dirs[i]);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
		} else {
			r = write_file_at(fd, "cgroup.subtree_control", value);
			close(fd);
		}
		if (r)
			snprintf(why, why_len, "writing '%s' to %s/cgroup.subtree_control: %s", value,
				 path, strerror(-r));
	}
	return r;
}

int cg_run_set_limits(struct cg_run *cg, const struct cg_limits *limits, char *why,
		      size_t why_len)
{
	char value[64];
	int fd, r = 0;

	fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(why, why_len, "opening %s: %s", cg->path, strerror(errno));
		return -errno;
	}
#define SET(file, ...)                                                                    \
	do {                                                                              \
		snprintf(value, sizeof(value), __VA_ARGS__);                               \
		if (!r && (r = write_file_at(fd, file, value)))                            \
			snprintf(why, why_len, "writing '%s' to %s/%s: %s", value, cg->path, \
				 file, strerror(-r));                                       \
	} while (0)
	if (limits->cpu_milli) {
		char cpu[48];

		cg_format_cpu_max(limits->cpu_milli, cpu, sizeof(cpu));
		SET("cpu.max", "%s", cpu);
	}
	if (limits->memory_bytes) {
		SET("memory.max", "%llu", (unsigned long long)limits->memory_bytes);
		/* no swap: memory_bytes is all the run gets, not a share of RAM plus disk */
		if (faccessat(fd, "memory.swap.max", F_OK, 0) == 0)
			SET("memory.swap.max", "0");
		/* an OOM kills the whole run, not one process it would then restart */
		SET("memory.oom.group", "1");
	}
	if (limits->pids)
		SET("pids.max", "%llu", (unsigned long long)limits->pids);
#undef SET
	close(fd);
	return r;
}

int cg_run_read_counter(struct cg_run *cg, const char *file, const char *key, uint64_t *value)
{
	char buf[1024], *line, *save = NULL;
	size_t klen = strlen(key);
	int fd, n;

	fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read_file_at(fd, file, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			*value = strtoull(line + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Whether the cgroup still holds a process, from cgroup.events held open in
 * *fd (read from its start, which also arms poll() for the next change).
 * A file that cannot be read is closed (*fd = -1) and the cgroup asked by
 * path; one that is gone went with its cgroup: nothing is left in it.
 */
static bool events_populated(struct cg_run *cg, int *fd)
{
	char buf[256];
	const char *p;
	ssize_t n = -1;

	if (*fd >= 0 && lseek(*fd, 0, SEEK_SET) == 0)
		n = read(*fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		if (*fd >= 0 && (errno == ENODEV || errno == ENOENT))
			return false;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return cgroup_populated(cg);
	}
	buf[n] = 0;
	p = strstr(buf, "populated ");
	return !p || p[10] != '0';
}

int cg_run_kill_and_wait(struct cg_run *cg, int timeout_ms, unsigned int *killed)
{
	const uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000;
	struct pollfd pfd = { .fd = -1, .events = POLLPRI };
	char path[4096];
	int fd, r = 0;

	*killed = signal_members(cg, 0);
	if (!cgroup_populated(cg))
		return 0;
	/*
	 * cgroup.events, held open: after each read poll() wakes when the
	 * kernel changes it, so "populated 0" is seen as soon as the last
	 * process is gone rather than at the next tick.
	 */
	snprintf(path, sizeof(path), "%s/cgroup.events", cg->path);
	pfd.fd = open(path, O_RDONLY | O_CLOEXEC);
	/* cgroup.kill (5.14+) kills the whole subtree atomically, forks in flight too. */
	snprintf(path, sizeof(path), "%s/cgroup.kill", cg->path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			signal_members(cg, SIGKILL);
		close(fd);
	}
	while (events_populated(cg, &pfd.fd)) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int wait_ms;

		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		wait_ms = (int)((deadline - now + 999999) / 1000000);
		/* Without cgroup.kill, repeat: a fork may have raced the previous sweep. */
		if (fd < 0)
			signal_members(cg, SIGKILL);
		if (fd < 0 || pfd.fd < 0)
			wait_ms = wait_ms < 5 ? wait_ms : 5;
		/* a missed wake-up costs at most this much */
		else if (wait_ms > 100)
			wait_ms = 100;
		if (pfd.fd >= 0)
			poll(&pfd, 1, wait_ms);
		else
			nanosleep(&(struct timespec){ .tv_nsec = wait_ms * 1000000L }, NULL);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return r;
}

int cg_run_destroy(struct cg_run *cg)
{
	int r = 0;

	/*
	 * rmdir of a cgroup fails while it has children, and a run may have
	 * created nested cgroups: remove them depth first.  Their files are the
	 * kernel's and go with each directory.
	 */
	if (cg->path)
		r = remove_tree(cg->path, REMOVE_TREE_DIRS_ONLY, NULL, NULL);
	cg_run_free(cg);
	return r;
}

void cg_run_free(struct cg_run *cg)
{
	if (!cg)
		return;
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	if (cg->lock_fd >= 0)
		close(cg->lock_fd);
	free(cg->path);
	*cg = (struct cg_run){ .dir_fd = -1, .lock_fd = -1 };
}
