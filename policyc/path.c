// SPDX-License-Identifier: GPL-2.0
/*
 * Lexical path normalisation.
 *
 * Rules are matched against paths the kernel builds (d_path), which never
 * contain "//", "." or "..": a rule written as "/work//ws/" or "/work/x/../ws"
 * would match nothing, so every rule path is normalised before it is checked
 * against limits and compiled.  This is purely lexical: symlinks are not
 * followed (policyc reads nothing but the envelope), so "/a/link/.." becomes
 * "/a" even if the kernel would resolve it elsewhere.  Whoever creates the
 * workspace must check that its path has no symlink components.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/policyc_internal.h"

char *tp_path_normalize(const char *path)
{
	char *out;
	size_t out_len = 0;
	const char *p;

	if (!path || path[0] != '/') {
		errno = EINVAL;
		return NULL;
	}

	/* The result is never longer than the input ("/" for "/" is the floor). */
	out = malloc(strlen(path) + 1);
	if (!out)
		return NULL;	/* errno = ENOMEM from malloc */

	/* Invariant: out[0..out_len) is "" or "/c1/c2/..." without a trailing '/'. */
	p = path;
	while (*p) {
		const char *component;
		size_t len;

		while (*p == '/')
			p++;
		component = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - component);

		if (len == 0 || (len == 1 && component[0] == '.'))
			continue;
		if (len == 2 && component[0] == '.' && component[1] == '.') {
			/* Back up one component; at the root ".." stays at the root. */
			while (out_len > 0 && out[out_len - 1] != '/')
				out_len--;
			if (out_len > 0)
				out_len--;
			continue;
		}
		out[out_len++] = '/';
		memcpy(out + out_len, component, len);
		out_len += len;
	}

	if (out_len == 0)
		out[out_len++] = '/';
	out[out_len] = '\0';
	return out;
}

char *tp_entry_absolute(const char *workspace, const struct tp_path_entry *entry)
{
	char *out = NULL;

	if (!entry->relative)
		return strdup(entry->path);
	if (asprintf(&out, "%s%s%s", workspace, entry->path[0] ? "/" : "", entry->path) < 0)
		return NULL;
	return out;
}

const char *const tp_system_software_trees[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", NULL,
};

const char *const tp_protected_paths[] = {
	/* credentials and who may become root, with the copies tools leave */
	"/etc/shadow", "/etc/shadow-", "/etc/shadow+", "/etc/gshadow", "/etc/gshadow-",
	"/etc/gshadow+", "/var/backups", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
	"/etc/krb5.keytab", "/etc/wireguard", "/etc/ssl/private",
	/* people's files, mounted secrets, other workloads' state and shared memory */
	"/root", "/home", "/run/secrets", "/var/run/secrets",
	"/var/lib/kubelet", "/var/lib/docker", "/var/lib/containerd", "/run/containerd",
	"/var/lib/containers", "/run/containers", "/var/lib/rancher", "/etc/kubernetes",
	"/var/lib/etcd", "/etc/pki/tls/private", "/dev/shm", "/dev/mqueue",
	/* the kernel's own state: BPF objects (tether's pins), LSM and debug interfaces */
	"/sys/fs/bpf", "/sys/kernel/security", "/sys/kernel/debug", "/sys/kernel/tracing",
	"/proc/kcore", "/proc/kmsg",
	/* every uid's key count and bytes: a later run would read what an earlier one left */
	"/proc/key-users",
	/* the node agent's state and audit directories */
	"/var/lib/tether", "/run/tether", "/var/log/tether",
	NULL,
};

bool tp_path_protected_between(const char *parent, const char *path)
{
	for (size_t i = 0; tp_protected_paths[i]; i++) {
		const char *p = tp_protected_paths[i];

		if (tp_path_within(path, p) &&
		    (!parent || (tp_path_within(p, parent) && strcmp(p, parent) != 0)))
			return true;
	}
	return false;
}

const char *tp_path_protected_tree(const char *path, bool *kernel)
{
	/* Kernel interfaces: sysctls, sysrq, cgroup files, device nodes. */
	static const char *const kernel_trees[] = { "/proc", "/sys", "/dev" };
	/* Where the host's system software and its configuration live. */
	static const char *const system_trees[] = {
		"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	};

	for (size_t i = 0; i < sizeof(kernel_trees) / sizeof(*kernel_trees); i++) {
		if (tp_path_within(path, kernel_trees[i])) {
			if (kernel)
				*kernel = true;
			return kernel_trees[i];
		}
	}
	for (size_t i = 0; i < sizeof(system_trees) / sizeof(*system_trees); i++) {
		if (tp_path_within(path, system_trees[i])) {
			if (kernel)
				*kernel = false;
			return system_trees[i];
		}
	}
	return NULL;
}

bool tp_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

size_t tp_path_parent_len(const char *path, size_t len)
{
	while (len > 0 && path[len - 1] != '/')
		len--;
	if (len > 1)
		len--;
	return len;
}

bool tp_path_parent(char *path, size_t *len)
{
	if (*len <= 1)
		return false;
	*len = tp_path_parent_len(path, *len);
	path[*len] = '\0';
	return true;
}
