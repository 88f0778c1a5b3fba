// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runs.h"

bool run_id_valid(const char *id)
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

int run_id_generate(char *buf, size_t size)
{
	unsigned char rnd[6];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -errno;
	snprintf(buf, size, "run-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3],
		 rnd[4], rnd[5]);
	return 0;
}

int proc_stat_start_time(const char *stat, unsigned long long *start)
{
	/* "PID (COMM) STATE PPID ...": fields counted from the last ')' on */
	const char *p = strrchr(stat, ')');
	char *end;

	if (!p)
		return -EINVAL;
	p++;
	for (int field = 2; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end != 0))
		return -EINVAL;
	return 0;
}

int proc_start_time(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = 0;
	return proc_stat_start_time(buf, start);
}

int runs_file_parse(const char *text, pid_t *pid, unsigned long long *start)
{
	char *end;
	long p;

	errno = 0;
	p = strtol(text, &end, 10);
	if (errno || end == text || *end != ' ' || p <= 0 || p > 0x3fffffff)
		return -EINVAL;
	text = end + 1;
	*start = strtoull(text, &end, 10);
	if (errno || end == text || (*end != '\n' && *end != 0))
		return -EINVAL;
	*pid = (pid_t)p;
	return 0;
}
