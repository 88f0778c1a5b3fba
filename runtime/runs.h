/* SPDX-License-Identifier: GPL-2.0 */
/* Which controller owns a live run: the files `tether kill` reads. */
#ifndef TETHER_RUNTIME_RUNS_H
#define TETHER_RUNTIME_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Run ids name a cgroup directory and a run file, and appear in audit records:
 * 1 to 64 of [A-Za-z0-9._-], not "." or "..". */
bool run_id_valid(const char *id);

/* A fresh run id, "run-" and 12 random hex digits, into buf.  0 or a negative errno. */
int run_id_generate(char *buf, size_t size);

/* One file per live run, named by run id: "PID STARTTIME\n" of its controller. */
#define TETHER_RUNS_DIR "/run/tether/runs"
/*
 * /run/tether/daemon-runs/<run id>: the run is a node agent's.  A `tether
 * run` that sweeps the node for runs whose controller died leaves these to
 * the agent, which takes them over (or ends them) when it starts again.
 */
#define TETHER_DAEMON_RUNS_DIR "/run/tether/daemon-runs"

/*
 * The start time of process `pid` (field 22 of /proc/PID/stat, clock ticks
 * since boot): with the pid it names one process, never a later one that
 * reuses the pid.  Returns 0 or a negative errno.
 */
int proc_start_time(pid_t pid, unsigned long long *start);

/* Field 22 of a /proc/PID/stat line (the command name may hold spaces and ")"). */
int proc_stat_start_time(const char *stat, unsigned long long *start);

/* Parses a run file's "PID STARTTIME\n".  Returns 0 or -EINVAL. */
int runs_file_parse(const char *text, pid_t *pid, unsigned long long *start);

#endif
