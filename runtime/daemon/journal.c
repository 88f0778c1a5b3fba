// SPDX-License-Identifier: GPL-2.0
/* The run journal (runtime/daemon/journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/daemon/journal.h"
#include "runtime/fsutil.h"
#include "runtime/runs.h"

void journal_now(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	char day[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 32, "%.19s.%03dZ", day, (int)(ts.tv_nsec / 1000000));
}

static const char *failpoint_spec(void)
{
	static const char *spec;
	static bool read_once;

	if (!read_once) {
		spec = getenv("TETHER_DAEMON_FAILPOINT");
		read_once = true;
	}
	return spec;
}

static bool failpoint_is(const char *event, const char *when)
{
	const char *spec = failpoint_spec();
	size_t n = strlen(event);

	return spec && strncmp(spec, event, n) == 0 && spec[n] == ':' &&
	       strcmp(spec + n + 1, when) == 0;
}

void journal_failpoint(const char *event, const char *when)
{
	if (failpoint_is(event, when))
		kill(getpid(), SIGKILL);
}

int journal_create(int runs_dir_fd, const char *run_id, int *dir_fd, int *journal_fd)
{
	int dfd, jfd;

	if (!run_id_valid(run_id))
		return -EINVAL;
	if (mkdirat(runs_dir_fd, run_id, 0700) < 0)
		return -errno;
	dfd = openat(runs_dir_fd, run_id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return -errno;
	jfd = openat(dfd, JOURNAL_FILE, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (jfd < 0 || fsync(jfd) < 0 || fsync(dfd) < 0 || fsync(runs_dir_fd) < 0) {
		int r = -errno;

		if (jfd >= 0)
			close(jfd);
		close(dfd);
		return r;
	}
	*dir_fd = dfd;
	*journal_fd = jfd;
	return 0;
}

int journal_open_append(int dir_fd, int *journal_fd)
{
	int fd = openat(dir_fd, JOURNAL_FILE, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	off_t end;
	char c;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		goto fail;
	/* a torn last line (no newline) was never acted on: cut it off */
	for (end = st.st_size; end > 0; end--) {
		if (pread(fd, &c, 1, end - 1) != 1)
			goto fail;
		if (c == '\n')
			break;
	}
	if (end != st.st_size && (ftruncate(fd, end) < 0 || fsync(fd) < 0))
		goto fail;
	*journal_fd = fd;
	return 0;
fail:
	{
		int r = -errno;

		close(fd);
		return r;
	}
}

int journal_append(int journal_fd, const char *name, json_t *event)
{
	char now[32], *line;
	size_t len;
	int r;

	journal_failpoint(name, "before");
	journal_now(now);
	if (json_object_set_new(event, "event", json_string(name)) ||
	    json_object_set_new(event, "time", json_string(now)))
		return -ENOMEM;
	line = json_dumps(event, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!line)
		return -ENOMEM;
	len = strlen(line);
	line[len++] = '\n';	/* json_dumps' NUL becomes the newline */
	if (failpoint_is(name, "torn")) {
		write_all(journal_fd, line, len / 2);
		kill(getpid(), SIGKILL);
	}
	r = write_all(journal_fd, line, len);
	free(line);
	if (!r && fdatasync(journal_fd) < 0)
		r = -errno;
	if (!r)
		journal_failpoint(name, "after");
	return r;
}

int journal_read(int dir_fd, json_t **events)
{
	int fd = openat(dir_fd, JOURNAL_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	json_t *arr;
	char *buf = NULL, *p, *nl;
	size_t cap = 0, len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536 * 2);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		free(buf);
		return -EIO;
	}
	arr = json_array();
	for (p = buf; arr && p < buf + len; p = nl + 1) {
		json_t *ev;

		nl = memchr(p, '\n', (size_t)(buf + len - p));
		if (!nl)
			break;	/* torn: never acted on */
		ev = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES, NULL);
		if (json_is_object(ev))
			json_array_append(arr, ev);
		json_decref(ev);
	}
	free(buf);
	if (!arr)
		return -ENOMEM;
	*events = arr;
	return 0;
}

int journal_write_file(int dir_fd, const char *name, const void *data, size_t len)
{
	char tmp[128];
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (!r && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (!r && fsync(dir_fd) < 0)
		r = -errno;
	if (r)
		unlinkat(dir_fd, tmp, 0);
	return r;
}
