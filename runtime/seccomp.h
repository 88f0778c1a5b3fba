/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TETHER_RUNTIME_SECCOMP_H
#define TETHER_RUNTIME_SECCOMP_H

/*
 * Installs, in the calling process, a seccomp filter that fails the new
 * mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick),
 * mount_setattr and setns with EPERM.  mount_setattr and fsconfig
 * reconfiguration reach no LSM hook the BPF programs could use, and would let
 * a privileged run clear nosuid/noexec or remount host filesystems; setns into
 * another mount namespace would let the run's path rules name another tree
 * (a namespace where the workspace path is a bind mount of a protected one).
 * Classic mount(2) stays governed (and denied) by the sb_mount hook, with an
 * audit record.
 * Async-signal-safe: called in the child between clone3 and exec.
 * Returns 0 or a negative errno.
 */
int seccomp_deny_mount_api(void);

#endif
