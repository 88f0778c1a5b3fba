/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TETHER_RUNTIME_SECCOMP_H
#define TETHER_RUNTIME_SECCOMP_H

/*
 * Installs, in the calling process, a seccomp filter that fails the new
 * mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick) and
 * mount_setattr with EPERM.  mount_setattr and fsconfig reconfiguration
 * reach no LSM hook the BPF programs could use, and would let a privileged
 * run clear nosuid/noexec or remount host filesystems; classic mount(2) stays
 * governed (and denied) by the sb_mount hook, with an audit record.
 * Async-signal-safe: called in the child between clone3 and exec.
 * Returns 0 or a negative errno.
 */
int seccomp_deny_mount_api(void);

#endif
