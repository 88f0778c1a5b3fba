// SPDX-License-Identifier: GPL-2.0
/*
 * capbound CAP[,CAP...] PROGRAM [ARGS...]: runs PROGRAM as systemd's
 * CapabilityBoundingSet= would run a root service: every capability not
 * listed is dropped from the bounding and the inheritable sets, then
 * PROGRAM is executed.  Root without file capabilities gets the bounding
 * set as its permitted and effective sets at execve(), so PROGRAM holds
 * exactly the listed capabilities (and its children no more).
 *
 * Names as systemd writes them (CAP_SYS_ADMIN) or bare (sys_admin), any case;
 * commas or spaces between them.  For tests/deploy/vm-capset.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* capability(7) numbering, 0 to CAP_CHECKPOINT_RESTORE (40) */
static const char *const cap_names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
	"setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
	"net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
	"sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
	"audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
	"block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
};

int main(int argc, char **argv)
{
	const int count = (int)(sizeof(cap_names) / sizeof(cap_names[0]));
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uint64_t keep = 0;
	char *save = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: capbound CAP[,CAP...] PROGRAM [ARGS...]\n");
		return 2;
	}
	for (char *tok = strtok_r(argv[1], ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int i = 0;

		if (strncasecmp(tok, "cap_", 4) == 0)
			tok += 4;
		while (i < count && strcasecmp(tok, cap_names[i]) != 0)
			i++;
		if (i == count) {
			fprintf(stderr, "capbound: unknown capability %s\n", tok);
			return 2;
		}
		keep |= 1ULL << i;
	}
	if (syscall(SYS_capget, &hdr, data) < 0) {
		perror("capbound: capget");
		return 1;
	}
	/* bits the kernel does not have fail with EINVAL: nothing to drop there */
	for (int cap = 0; cap < 64; cap++)
		if (!(keep & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL) {
			perror("capbound: PR_CAPBSET_DROP");
			return 1;
		}
	data[0].inheritable &= (uint32_t)keep;
	data[1].inheritable &= (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data) < 0) {
		perror("capbound: capset");
		return 1;
	}
	execv(argv[2], argv + 2);
	fprintf(stderr, "capbound: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
