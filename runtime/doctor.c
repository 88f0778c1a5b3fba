// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "loader/loader.h"
#include "runtime/cgroup.h"
#include "runtime/doctor.h"
#include "runtime/json.h"

#define BPF_FS_MAGIC 0xcafe4a11
#define PROC_CGROUP_INIT_INO 0xEFFFFFFBu	/* include/linux/proc_ns.h */

static const char *const check_names[DOCTOR_NCHECKS] = {
	[DOCTOR_ROOT] = "root directory",
	[DOCTOR_LSM] = "BPF LSM active",
	[DOCTOR_BTF] = "kernel BTF",
	[DOCTOR_CGROUP2] = "cgroup2 hierarchy",
	[DOCTOR_BPFFS] = "BPF filesystem",
	[DOCTOR_LSM_LOAD] = "BPF-LSM programs load and attach",
};

static void set(struct doctor_check *c, bool ok, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct doctor_check *c, bool ok, const char *fix, const char *fmt, ...)
{
	va_list ap;

	c->ok = ok;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
}

/* What --json calls each check: stable identifiers, documented in docs/envelope.md. */
static const char *const check_ids[DOCTOR_NCHECKS] = {
	[DOCTOR_ROOT] = "root",
	[DOCTOR_LSM] = "bpf_lsm",
	[DOCTOR_BTF] = "btf",
	[DOCTOR_CGROUP2] = "cgroup2",
	[DOCTOR_BPFFS] = "bpffs",
	[DOCTOR_LSM_LOAD] = "bpf_lsm_load",
};

int doctor_mount_point(FILE *mountinfo, uint64_t mnt_id, char *point, size_t size)
{
	char *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;

	while (r == -ENOENT && getline(&line, &cap, mountinfo) > 0) {
		/* id parent major:minor root mount_point options [optional...] - fstype ... */
		char *fields[5], *save = NULL, *tok, *end;
		unsigned long long id;
		int n = 0;

		for (tok = strtok_r(line, " \n", &save); tok && n < 5;
		     tok = strtok_r(NULL, " \n", &save))
			fields[n++] = tok;
		if (n < 5)
			continue;
		errno = 0;
		id = strtoull(fields[0], &end, 10);
		if (errno || *end || (mnt_id ? id != mnt_id : strcmp(fields[4], "/") != 0))
			continue;
		/* Shown in messages: the kernel escapes blanks and '\\' only. */
		for (char *c = fields[4]; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
				*c = '?';
		snprintf(point, size, "%s", fields[4]);
		r = 0;
	}
	free(line);
	return r;
}

/*
 * /proc/self/mountinfo, read once for the root and the cgroup2 checks: the
 * kernel writes the text anew for every reader, and every run pays for the
 * checks at its start.  NULL when it cannot be read (errno says why).
 */
static char *read_mountinfo(size_t *len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (n == cap) {
			char *grown = realloc(buf, cap ? 2 * cap : 16384);

			if (!grown) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
			cap = cap ? 2 * cap : 16384;
		}
		got = fread(buf + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	if (ferror(f) || n == 0) {
		free(buf);
		fclose(f);
		errno = n ? EIO : ENODATA;
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* The mount id of `path` (statx, Linux 5.8+); 0 when the kernel does not say. */
static uint64_t mount_id_of(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx) < 0)
		return 0;
	return (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0;
}

/*
 * The BPF path walk (bpf/lib/path.h) names a file from the root of the
 * caller's mount namespace, and the controller resolves the policy's paths
 * from its own root directory.  In a chroot the two differ: every name the
 * kernel builds has the chroot's own path in front, no rule matches, and
 * the run could not even execute its command.  So "/" must be the
 * namespace's "/", which /proc/PID/mountinfo tells, since it shows mount
 * points as seen from PID's root, and lists only the mounts whose root is
 * reachable from there:
 *   - our own: the mount statx() names for "/" must be listed, at "/".  In
 *     a chroot into a directory, the usual kind, it is not listed at all;
 *   - pid 1's, where it lists that mount (mount ids are unique across
 *     namespaces, so then pid 1 shares our namespace, and its root is the
 *     namespace's): it must be at "/" there too.  A chroot onto a mount
 *     point (schroot binds the tree on one) shows there where it is.
 * A container is not a chroot: pivot_root(2) makes its root the root of
 * its own namespace, and a root mounted over "/" (switch_root) is "/" to
 * the walk as well; both checks pass there.
 */
static void check_root(struct doctor_check *c, const char *mountinfo, size_t len, int why)
{
	static const char fix[] =
		"run tether outside the chroot; to give runs a tree of their own, make it the "
		"root of a mount namespace (unshare -m, then pivot_root, as container runtimes "
		"do) instead of chroot";
	uint64_t mnt_id = mount_id_of("/");
	char point[512];
	FILE *f = mountinfo ? fmemopen((void *)mountinfo, len, "r") : NULL;
	int r;

	if (!mountinfo)
		errno = why;
	if (!f) {
		set(c, false, "mount procfs at /proc (mount -t proc proc /proc); in a chroot, run "
			      "tether outside it",
		    "cannot read /proc/self/mountinfo to tell whether / is the root of the mount "
		    "namespace or a chroot: %s", strerror(errno));
		return;
	}
	r = doctor_mount_point(f, mnt_id, point, sizeof(point));
	fclose(f);
	if (r < 0 || strcmp(point, "/") != 0) {
		set(c, false, fix,
		    "/ is not the root of this process's mount namespace (/proc/self/mountinfo does "
		    "not list its mount as /): tether is in a chroot, and the kernel names files "
		    "from the namespace's root, so no path rule would match and a run could not "
		    "even execute its command");
		return;
	}
	f = mnt_id ? fopen("/proc/1/mountinfo", "re") : NULL;
	r = f ? doctor_mount_point(f, mnt_id, point, sizeof(point)) : -ENOENT;
	if (f)
		fclose(f);
	if (r == 0 && strcmp(point, "/") != 0) {
		set(c, false, fix,
		    "/ is not the root of this process's mount namespace (its mount is at %s in "
		    "/proc/1/mountinfo): tether is in a chroot, and the kernel names files from "
		    "the namespace's root, so no path rule would match and a run could not even "
		    "execute its command", point);
		return;
	}
	set(c, true, NULL, "/ is the root of the mount namespace%s",
	    r == 0 ? " (as pid 1 sees it too)" : "");
}

static void check_lsm(struct doctor_check *c)
{
	char buf[512] = "", *tok, *save = NULL, copy[512];
	FILE *f = fopen("/sys/kernel/security/lsm", "re");
	size_t n;

	if (!f) {
		set(c, false,
		    "mount securityfs (mount -t securityfs securityfs /sys/kernel/security); "
		    "the kernel needs CONFIG_BPF_LSM=y and \"bpf\" in its lsm= list",
		    "cannot read /sys/kernel/security/lsm: %s", strerror(errno));
		return;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(copy, sizeof(copy), "%s", buf);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "bpf") == 0) {
			set(c, true, NULL, "active LSMs: %s", buf);
			return;
		}
	}
	set(c, false,
	    "add bpf to the kernel command line's lsm= list, keeping the LSMs already "
	    "there (for example lsm=lockdown,capability,bpf), and reboot",
	    "\"bpf\" is not among the active LSMs: %s", buf);
}

static void check_btf(struct doctor_check *c)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		set(c, true, NULL, "/sys/kernel/btf/vmlinux");
	else
		set(c, false, "use a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		    "cannot read /sys/kernel/btf/vmlinux: %s", strerror(errno));
}

static void check_cgroup2(struct doctor_check *c, char *mount_point, size_t size,
			  const char *mountinfo, size_t len, int why)
{
	FILE *f = mountinfo ? fmemopen((void *)mountinfo, len, "r") : NULL;
	char *controllers;
	struct stat st;
	int r;

	if (!mountinfo)
		errno = why;
	if (!f) {
		set(c, false, "mount /proc", "cannot read /proc/self/mountinfo: %s",
		    strerror(errno));
		return;
	}
	r = cg_find_mount(f, mount_point, size);
	fclose(f);
	if (r) {
		set(c, false, "mount the cgroup2 hierarchy, e.g. mount -t cgroup2 none /sys/fs/cgroup",
		    "no cgroup2 hierarchy mounted at its root in /proc/self/mountinfo");
		return;
	}
	/*
	 * BPF sees absolute cgroup levels, paths here are relative to our cgroup
	 * namespace: inside a non-initial one the run level would be wrong and
	 * every hook would miss the run.  Refuse rather than confine nothing.
	 */
	if (stat("/proc/self/ns/cgroup", &st) == 0 && st.st_ino != PROC_CGROUP_INIT_INO) {
		set(c, false,
		    "run tether in the host's initial cgroup namespace (for a container: "
		    "--cgroupns=host)",
		    "tether is in a cgroup namespace (/proc/self/ns/cgroup is not the initial one)");
		return;
	}
	controllers = cg_controllers(mount_point);
	set(c, true, NULL, "mounted at %s; controllers: %s", mount_point,
	    controllers && *controllers ? controllers : "(none)");
	free(controllers);
}

static void check_bpffs(struct doctor_check *c)
{
	struct statfs sfs;

	if (statfs(TETHER_BPFFS, &sfs) == 0 && (unsigned long)sfs.f_type == BPF_FS_MAGIC)
		set(c, true, NULL, "mounted at %s", TETHER_BPFFS);
	else
		set(c, false, "mount -t bpf bpf " TETHER_BPFFS, "no BPF filesystem at %s",
		    TETHER_BPFFS);
}

static void check_load(struct doctor_check *c)
{
	struct tl_error err = { "" };
	char path[256];
	int r;

	snprintf(path, sizeof(path), "%s/runs", tl_pin_dir());
	if (access(path, F_OK) == 0) {
		set(c, true, NULL, "already loaded and pinned under %s", tl_pin_dir());
		return;
	}
	r = tl_probe_lsm(&err);
	if (r == 0)
		set(c, true, NULL, "loaded, attached and detached again");
	else
		set(c, false,
		    r == -EPERM ? "this kernel refuses BPF-LSM programs even for root (a "
				  "lockdown or a platform policy); use a kernel that allows them"
				: "run as root on a kernel with BPF-LSM enabled; tether -v shows "
				  "the verifier's log",
		    "%s", err.msg);
}

void doctor_run(struct doctor_report *rep, bool try_load)
{
	size_t len = 0;
	char *mountinfo = read_mountinfo(&len);
	int why = mountinfo ? 0 : errno;

	memset(rep, 0, sizeof(*rep));
	check_root(&rep->checks[DOCTOR_ROOT], mountinfo, len, why);
	check_lsm(&rep->checks[DOCTOR_LSM]);
	check_btf(&rep->checks[DOCTOR_BTF]);
	check_cgroup2(&rep->checks[DOCTOR_CGROUP2], rep->cgroup2_mount, sizeof(rep->cgroup2_mount),
		      mountinfo, len, why);
	free(mountinfo);
	check_bpffs(&rep->checks[DOCTOR_BPFFS]);
	if (try_load) {
		check_load(&rep->checks[DOCTOR_LSM_LOAD]);
	} else {
		rep->checks[DOCTOR_LSM_LOAD].skipped = true;
		rep->checks[DOCTOR_LSM_LOAD].ok = true;
	}
}

bool doctor_ok(const struct doctor_report *rep)
{
	for (int i = 0; i < DOCTOR_NCHECKS; i++)
		if (!rep->checks[i].ok)
			return false;
	return true;
}

void doctor_print(const struct doctor_report *rep, FILE *out)
{
	for (int i = 0; i < DOCTOR_NCHECKS; i++) {
		const struct doctor_check *c = &rep->checks[i];

		if (c->skipped)
			continue;
		fprintf(out, "%-5s %s: %s\n", c->ok ? "ok" : "FAIL", check_names[i], c->detail);
		if (!c->ok && c->fix[0])
			fprintf(out, "      fix: %s\n", c->fix);
	}
	fprintf(out, "%s\n", doctor_ok(rep) ? "tether can confine runs on this host"
					     : "tether cannot confine runs on this host");
}

int doctor_json(const struct doctor_report *rep, struct strbuf *sb)
{
	size_t n = 0;
	int r = sb_printf(sb, "{\"ok\":%s,\"checks\":[", doctor_ok(rep) ? "true" : "false");

	for (int i = 0; i < DOCTOR_NCHECKS && !r; i++) {
		const struct doctor_check *c = &rep->checks[i];

		if (c->skipped)
			continue;
		r |= sb_printf(sb, "%s{\"name\":\"%s\",\"ok\":%s,\"detail\":", n++ ? "," : "",
			       check_ids[i], c->ok ? "true" : "false");
		r |= sb_json_string(sb, c->detail, sizeof(c->detail));
		r |= sb_printf(sb, ",\"fix\":");
		r |= !c->ok && c->fix[0] ? sb_json_string(sb, c->fix, sizeof(c->fix))
					 : sb_printf(sb, "null");
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "]}");
	return r ? -ENOMEM : 0;
}
