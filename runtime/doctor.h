/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host support checks, probed in order (the root directory -> LSM list ->
 * BTF -> cgroup2 -> bpffs -> a real load and attach of the BPF-LSM
 * programs).  `tether doctor` prints them; `tether run` refuses, with the
 * same text, when any fails.
 */
#ifndef TETHER_RUNTIME_DOCTOR_H
#define TETHER_RUNTIME_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strbuf;

enum doctor_check_id {
	DOCTOR_ROOT,		/* "/" is the root of the mount namespace: not a chroot */
	DOCTOR_LSM,		/* "bpf" in /sys/kernel/security/lsm */
	DOCTOR_BTF,		/* /sys/kernel/btf/vmlinux */
	DOCTOR_CGROUP2,		/* a cgroup2 hierarchy mounted at its root */
	DOCTOR_BPFFS,		/* bpffs at /sys/fs/bpf */
	DOCTOR_LSM_LOAD,	/* the programs load and attach (or are pinned already) */
	DOCTOR_NCHECKS,
};

struct doctor_check {
	bool ok;
	bool skipped;
	char detail[512];
	char fix[512];
};

struct doctor_report {
	struct doctor_check checks[DOCTOR_NCHECKS];
	char cgroup2_mount[4096];
};

/* Runs every check; `try_load` includes the trial load (needs root). */
void doctor_run(struct doctor_report *rep, bool try_load);
bool doctor_ok(const struct doctor_report *rep);
void doctor_print(const struct doctor_report *rep, FILE *out);
/*
 * {"ok":BOOL,"checks":[{"name":..,"ok":..,"detail":..,"fix":..|null},...]}
 * (docs/envelope.md): `name` is a stable identifier (root, bpf_lsm, btf,
 * cgroup2, bpffs, bpf_lsm_load), skipped checks are left out.  0 or -ENOMEM.
 */
int doctor_json(const struct doctor_report *rep, struct strbuf *sb);

/*
 * The mount point of the mount `mnt_id` in `mountinfo` (the text of
 * /proc/PID/mountinfo), or with `mnt_id` 0 "/" if any mount is there;
 * control characters become '?'.  0, or -ENOENT when it is not listed.
 * The kernel lists a mount only when its root is reachable from PID's
 * root, and shows where it is as seen from there: in a chroot into a
 * directory, the mount holding the chroot's root is not listed at all.
 */
int doctor_mount_point(FILE *mountinfo, uint64_t mnt_id, char *point, size_t size);

#endif
