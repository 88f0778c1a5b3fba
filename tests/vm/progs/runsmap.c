// SPDX-License-Identifier: GPL-2.0
/*
 * runsmap [CGROUP_ID]: prints the number of entries in tether's pinned
 * `runs` maps (every /sys/fs/bpf/tether/<hash>/runs; one per program set
 * the node has loaded); each key (a run cgroup id) goes to stderr.  Exits 0
 * when the map is empty, or with CGROUP_ID when that id is not among them;
 * 1 otherwise; 2 when no pinned map could be read (a probe that cannot look
 * must never read as "nothing left").
 *
 * Raw bpf(2) (BPF_OBJ_GET, BPF_MAP_GET_NEXT_KEY): the VM programs link no
 * libbpf.  Outside every run, as root: inside one, bpf() is refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <glob.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	unsigned long long want = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
	unsigned long count = 0;
	bool found = false;
	glob_t g;

	if (glob("/sys/fs/bpf/tether/*/runs", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
		fprintf(stderr, "runsmap: no pinned runs map under /sys/fs/bpf/tether\n");
		return 2;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		union bpf_attr attr;
		uint64_t key, next;
		void *prev = NULL;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.pathname = (uint64_t)(uintptr_t)g.gl_pathv[i];
		attr.file_flags = BPF_F_RDONLY;
		fd = (int)sys_bpf(BPF_OBJ_GET, &attr);
		if (fd < 0) {
			fprintf(stderr, "runsmap: opening %s: %s\n", g.gl_pathv[i], strerror(errno));
			return 2;
		}
		for (;;) {
			memset(&attr, 0, sizeof(attr));
			attr.map_fd = (uint32_t)fd;
			attr.key = (uint64_t)(uintptr_t)prev;
			attr.next_key = (uint64_t)(uintptr_t)&next;
			if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &attr) < 0) {
				if (errno == ENOENT)
					break;
				fprintf(stderr, "runsmap: walking %s: %s\n", g.gl_pathv[i],
					strerror(errno));
				return 2;
			}
			count++;
			found |= next == want;
			fprintf(stderr, "runsmap: %s holds cgroup %llu\n", g.gl_pathv[i],
				(unsigned long long)next);
			key = next;
			prev = &key;
		}
		close(fd);
	}
	globfree(&g);
	printf("%lu\n", count);
	if (argc > 1)
		return found ? 1 : 0;
	return count ? 1 : 0;
}
