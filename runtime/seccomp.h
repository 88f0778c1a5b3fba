/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TETHER_RUNTIME_SECCOMP_H
#define TETHER_RUNTIME_SECCOMP_H

/*
 * Installs, in the calling process, a seccomp filter that fails the new
 * mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick) and
 * mount_setattr with EPERM.  mount_setattr and fsconfig reconfiguration reach
 * no LSM hook the BPF programs could use.  The run has no capabilities, so
 * the kernel refuses these anyway; the filter keeps them refused should a
 * capability check ever succeed.  Classic mount(2) stays governed (and
 * denied) by the sb_mount hook, with an audit record.  setns is left to the
 * capability checks (a run holds none, and BPF-LSM capable refuses any that
 * succeeds), which record it; a filter here would hide the attempt.
 * Async-signal-safe: called in the child between clone3 and exec.
 * Returns 0 or a negative errno.
 */
int seccomp_deny_mount_api(void);

#endif
