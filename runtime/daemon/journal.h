/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run journal: one directory per run under <state_dir>/runs/<run id>/,
 * holding journal.jsonl, the run's transitions, one JSON object per line:
 *
 *   created   the run's record: who asked, for what, under which policy
 *   starting  the command is about to be started
 *   running   it started: its pid, cgroup and run slot
 *   cancel    an end was asked for (the API, a lease), before it is acted on
 *   adopted   a daemon took the run over from one that stopped
 *   ended     its terminal reason, exit status, cleanup evidence, counters
 *
 * Each line is written with one write(2) and fsync'd before the transition
 * it records is acted on or reported, so a crash leaves either the whole
 * line or a torn last line without its newline; a torn line was never
 * acted on, and journal_read() ignores it (journal_open_append() cuts it
 * off).  A run's directory is never removed by the daemon, so a run id,
 * once used, is never used again.
 */
#ifndef TETHER_RUNTIME_DAEMON_JOURNAL_H
#define TETHER_RUNTIME_DAEMON_JOURNAL_H

#include <jansson.h>
#include <stdbool.h>

#define JOURNAL_FILE "journal.jsonl"
#define JOURNAL_POLICY_FILE "policy.tpol"
#define JOURNAL_RECORDS_FILE "records.jsonl"

/*
 * Makes <runs_dir>/<run_id>/ and its empty journal, both fsync'd (and the
 * directory entry too).  -EEXIST when the id was ever used.  *dir_fd and
 * *journal_fd are the run directory (O_DIRECTORY) and the journal
 * (O_APPEND), close-on-exec.
 */
int journal_create(int runs_dir_fd, const char *run_id, int *dir_fd, int *journal_fd);

/* Opens an existing run's journal for appending, cutting off a torn last line. */
int journal_open_append(int dir_fd, int *journal_fd);

/*
 * Appends `event` (its "event" and "time" members are added here: `name`
 * and now, RFC 3339 UTC with ms) as one line, then fsyncs.  0 or a
 * negative errno: the transition must not be acted on then.
 */
int journal_append(int journal_fd, const char *name, json_t *event);

/* The journal's complete lines, in order, as a JSON array (a new reference). */
int journal_read(int dir_fd, json_t **events);

/* The API's Run object of the run in `dir_fd`, rebuilt from its journal (runtime/daemon/druns.c). */
int journal_run_record(int dir_fd, json_t **rec);

/* Writes `len` bytes as <dir>/<name> atomically (temp file, fsync, rename, fsync dir). */
int journal_write_file(int dir_fd, const char *name, const void *data, size_t len);

/* "2026-12-02T07:36:06.123Z" of CLOCK_REALTIME now. */
void journal_now(char buf[32]);

/*
 * Test hook (tests/vm/suite/daemon*.sh): TETHER_DAEMON_FAILPOINT=EVENT:WHEN
 * kills the daemon with SIGKILL when journal_append() writes EVENT: WHEN is
 * "before" (nothing written), "torn" (half the line written, no fsync) or
 * "after" (the line fsync'd, the transition not yet acted on).  Read once.
 */
void journal_failpoint(const char *event, const char *when);

#endif
