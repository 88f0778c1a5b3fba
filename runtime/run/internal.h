/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of runtime/run/ share; nothing outside runtime/run/ includes it. */
#ifndef TETHER_RUNTIME_RUN_INTERNAL_H
#define TETHER_RUNTIME_RUN_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/clock.h"
#include "loader/loader.h"
#include "policyc/policy.h"
#include "runtime/audit.h"
#include "runtime/cgroup.h"
#include "runtime/plan/net.h"
#include "runtime/run/run.h"

/* Time the leftovers of a run get to die after cgroup.kill before we give up. */
#define CLEANUP_TIMEOUT_MS 10000

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* One captured stream (resources.output_bytes): runtime/run/output.c. */
struct out_stream {
	int fd;			/* read end of the run's pipe; -1: not captured, or closed */
	int target;		/* where its bytes go (run_config.out_fd) */
	bool watching_target;	/* the loop waits for room in the target */
	bool stalled;		/* at the end, the target had no room: drop the rest */
	size_t len, off;	/* bytes in buf, and how many of them went */
	char *buf;		/* OUTPUT_CHUNK bytes */
};

/* The run's private trees (runtime/run/scratch.c). */
#define RUN_HOME "/run/tether/home"	/* where each run's HOME is mounted, in its namespace */
#define SCRATCH_MAX 5
#define SCRATCH_BINDS_MAX 64

enum scratch_kind { SCRATCH_TMPFS, SCRATCH_MQUEUE, SCRATCH_HOME };

struct scratch_mount {
	char target[PATH_MAX];		/* resolved on the host: where it is mounted */
	enum scratch_kind kind;
	const char *sub;		/* its directory on the run's file system; NULL: a tmpfs of its own */
	uint32_t access;		/* the rule the run gets there */
	uint32_t dev;			/* its root, once mounted (kernel encoding) */
	uint64_t ino;
};

/*
 * A host object the envelope names beneath a private tree, mounted at its
 * path; or an input's verified copy (runtime/run/inputs.c), mounted over it.
 */
struct scratch_bind {
	char path[PATH_MAX];
	bool is_dir;
	int input;			/* 1 + the index of the input whose copy it is; 0: the host's */
};

struct run {
	struct run_config cfg;
	uint64_t trace_ns;	/* when run_trace last logged; 0: cfg.started_ns */
	const struct tp_policy *policy;
	char run_id[80];
	char digest[TP_DIGEST_TEXT_MAX];
	char envelope_digest[TP_DIGEST_TEXT_MAX];	/* cfg->envelope_digest, else digest */
	/* every record's envelope: audit.names.ctx points here */
	struct record_context ctx;
	struct strbuf ctx_json;		/* ctx.encoded's bytes */
	char host[65], boot_id[40], trace_id[33], span_id[17];
	const char *audit_path;		/* cfg's, else the policy's audit.sink; NULL: stderr */
	bool audit_allowed;
	char tmpdir[PATH_MAX];		/* TMPDIR: the run's private /tmp; "" when the host has none */
	struct scratch_mount scratch[SCRATCH_MAX];
	size_t scratch_count;
	struct scratch_bind *binds;	/* SCRATCH_BINDS_MAX */
	size_t bind_count;
	/* the run's own file system (runtime/run/storage.c) */
	int fs_fd;			/* its detached mount (fsmount); -1: none */
	bool fs_workspace;		/* a fresh workspace: its "ws" directory */
	/* fresh_overlay: "ws" is the upper layer, "lower" the source's copy, "work" overlay's */
	bool fs_overlay;
	char source_digest[TP_DIGEST_TEXT_MAX];	/* the copy's tree digest; "": no source */
	/* a git source (workspace.ref): the git that lays it out, the commit and tree it has */
	char git_path[PATH_MAX];
	char source_commit[72], source_tree[72];
	uint32_t fs_dev;		/* the file system's device (kernel encoding); 0: none */
	uint64_t upper_ino, work_ino;	/* "ws" and "work" on it: identity rules (scratch.c) */
	bool fs_scratch;		/* the private trees are on it too (disk_bytes, disk_inodes) */
	bool ws_mountpoint_made;	/* tether made the workspace's mount point: rmdir at the end */
	uint64_t fs_bytes, fs_inodes;	/* its size= and what nr_inodes= leaves the run; 0: unset */
	const char *fs_budget;		/* what a full one spent: "disk_bytes", ...; NULL: none */
	uint32_t ws_dev;		/* the fresh workspace's root in the run (kernel encoding) */
	uint64_t ws_ino;
	int disk_fd;			/* the timer that looks whether it is full; -1: none */
	const char *fs_spent;		/* the budget the timer saw spent, a tick ago; NULL: none */
	int in_fd;			/* the verified inputs' copies, a read-only detached mount; -1 */
	char cwd[PATH_MAX];		/* the controller's: the command starts there if it can */
	struct tl_path_rule *rules;
	size_t rule_count;
	const char **rule_paths;	/* views into rules[], for audit records */
	struct cg_run cg;
	struct tl_node node;
	struct tl_run run;
	struct ring_buffer *ring;
	struct audit_stream audit;
	/* when the audit stream's next coalesced record is due (timerfd); -1: none */
	int coalesce_fd;
	uint64_t coalesce_armed_ns;	/* its deadline, CLOCK_MONOTONIC; 0: disarmed */
	struct sink *sink;
	bool cg_created, node_open, run_installed;
	/* network: address rules in kernel form, the DNS proxy, names for records */
	struct net_plan net;
	struct dns_proxy *dns;
	char **net_rule_names;
	const char **host_rule_names;
	unsigned int batch;		/* records handled in this pass over the ring */
	/* identity, limits and the run's lifecycle */
	uid_t uid;
	gid_t gid;
	struct cg_limits limits;
	char **envp;
	char pidfile[PATH_MAX];		/* /run/tether/runs/<run id>: for tether kill */
	char owner_mark[PATH_MAX];	/* TETHER_DAEMON_RUNS_DIR/<run id>; "": none */
	char cg_mount[PATH_MAX];	/* the cgroup2 mount (preflight); "": not known */
	int ep;				/* the run's own epoll set: run_fd() */
	int pidfd;			/* the command; -1 before run_start */
	pid_t child_pid;		/* its pid; 0 before run_start */
	int launch_report[2];		/* the failed step of the child's launch and its errno; 0: exec'd */
	/* where launch_report comes from (launch_spawn's errpipe), polled; -1: read */
	int launch_fd;
	bool started, exited, torn_down;
	int status;			/* the command's, once exited; -1: never ran */
	enum run_reason reason;		/* the first cause that ended the run */
	const char *budget;		/* reason BUDGET: which one ("output_bytes", ...) */
	int timer_fd;			/* resources.wall_clock; -1: none */
	uint64_t deadline_ns;		/* its deadline, CLOCK_MONOTONIC; 0: none (yet) */
	int lease_fd;			/* cleanup.lease; -1: none */
	uint64_t lease_end_ns;		/* from the run's creation, CLOCK_MONOTONIC; 0: none */
	bool adopted;			/* run_adopt: taken over from a supervisor that stopped */
	int events_fd;			/* inotify on memory.events and pids.events; -1: none */
	struct out_stream out[2];	/* the run's stdout and stderr */
	unsigned int killed;		/* processes run_end() found alive and killed */
	uint64_t out_bytes;		/* captured bytes forwarded (both streams) */
	bool out_truncated;
	/*
	 * Once the run's entries are gone (or it is being torn down), its
	 * sequence goes on here: seq_last is the last number handed out.
	 */
	bool seq_local;
	uint64_t seq_last;
	struct run_result result;	/* once torn down */
	int teardown_ret;
};

/* run.c: the run object with nothing set up yet; the audit stream over an installed run */
int run_init(const struct run_config *cfg, struct run **out, struct run_error *err);
int run_open_stream(struct run *run, struct run_error *err);
/* adopt.c: an adopted run's command ended; its status from the kernel */
void run_adopted_exit(struct run *run);

/* Fills err and returns -errnum (EIO when errnum is 0). */
int run_fail(struct run_error *err, enum run_error_kind kind, enum run_step step, int errnum,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void run_log(const struct run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* With cfg.trace_steps: logs how long `step` took, since the last call (or the run's start). */
void run_trace(struct run *run, const char *step);

/* Everything left in the run's ring. */
void run_drain(struct run *run);

/*
 * runtime/run/cleanup.c: tears the run down; with `ran`, writes the cleanup
 * and end records.  Fills run->result and run->teardown_ret.
 */
void run_cleanup(struct run *run, int status_for_record, bool ran);

/* runtime/run/files.c: workspace, rules, run file, orphans' leftovers */
int run_prepare_workspace(struct run *run, struct run_error *err);
int run_check_root_dir(const char *path);
int run_write_pidfile(struct run *run, struct run_error *err);
void run_remove_pidfile(struct run *run);
/* The daemon's mark on its run (cfg.daemon_owned), and whether a run id has one. */
int run_write_owner_mark(struct run *run, struct run_error *err);
void run_set_owner_mark(struct run *run);
void run_remove_owner_mark(struct run *run);
bool run_is_daemons(const char *run_id);
const char *run_audit_path_unsafe(const struct run *run, char where[PATH_MAX]);
void run_remove_orphan_files(const struct run *run, const char *run_id);

/*
 * runtime/run/scratch.c: the run's mount and IPC namespaces.  _plan decides
 * the private trees and the binds (before the rules are resolved), _enter
 * makes them in the namespaces of the run's waiting first process.
 */
int run_scratch_plan(struct run *run, struct run_error *err);
int run_scratch_prepare_home(struct run *run, struct run_error *err);
int run_scratch_enter(struct run *run, int pidfd, struct run_error *err);

/*
 * runtime/run/storage.c: the run's own tmpfs.  _plan decides it from the
 * policy, _create makes it (before the command exists), _watch and _event
 * end a run that filled it, _full says which limit a full one spent, _free
 * closes it and removes the workspace's mount point tether made.
 */
/*
 * A tmpfs made with the new mount API, attached nowhere (nosuid, nodev):
 * opts are key, value pairs for fsconfig, NULL-terminated.  The mount's
 * descriptor, or a negative errno with *failed naming the step: "fsopen",
 * the key, "create" or "fsmount".
 */
int run_tmpfs_detached(const char *const *opts, const char **failed);
void run_storage_plan(struct run *run);
bool run_storage_wanted(const struct run *run);
int run_storage_create(struct run *run, struct run_error *err);
/* Sets size= and nr_inodes= to what the source's copy took plus the limits. */
int run_storage_settle(struct run *run, struct run_error *err);
int run_storage_watch(struct run *run);
void run_storage_event(struct run *run);
const char *run_storage_full(const struct run *run);
void run_storage_free(struct run *run);
/* Where the run's file system is attached in its namespace while the helper binds from it. */
#define RUN_FS_STAGE "/run/tether/fs"
/* A git source's git configuration, on the run's file system while git lays the source out */
#define RUN_GIT_CONFIG "gitconfig"

/*
 * runtime/run/gitsource.c: a fresh_overlay source that is a git repository
 * at a pinned commit (workspace.ref).  run_git_resolve, in the controller
 * before the run exists: finds git and the commit and tree of ref in the
 * source (run->git_path, source_commit, source_tree), or refuses the run.
 * run_git_config_write: RUN_GIT_CONFIG on the run's file system.
 * run_git_layout, in the scratch helper: clones the source into
 * RUN_FS_STAGE/lower and checks the commit out; the commit and tree HEAD
 * then has, or -1 with git's output in `why`.
 */
int run_git_resolve(struct run *run, struct run_error *err);
int run_git_config_write(int fs_root);
int run_git_layout(const struct run *run, char *commit, size_t commit_len, char *tree,
		   size_t tree_len, char *why, size_t why_len);

/*
 * runtime/run/inputs.c: inputs with a digest are copied, as they are hashed,
 * onto a tmpfs of the run's (RUN_INPUTS_STAGE/N for input N), which the
 * helper binds over each input's path; a digest that differs refuses the run.
 */
int run_inputs_verify(struct run *run, struct run_error *err);
/* HOME/.gitconfig lists the inputs without a digest under safe.directory (scratch.c) */
bool run_home_gitconfig_wanted(const struct tp_policy *pol);
void run_inputs_free(struct run *run);
#define RUN_INPUTS_STAGE "/run/tether/inputs"

/* runtime/run/network.c */
int run_setup_network(struct run *run, struct run_error *err);
/* The address plan and the names records give rules, without a DNS proxy (run_adopt). */
int run_network_names(struct run *run, struct run_error *err);
void run_network_free(struct run *run);

/* runtime/run/output.c */
int run_output_capture(struct run *run, int write_fd[2]);
void run_output_event(struct run *run, int fd);
void run_output_drain(struct run *run, int wait_ms);
void run_output_free(struct run *run);
/* How long the last bytes may wait for their target at the end of a run. */
#define OUTPUT_FINAL_WAIT_MS 1000

/* runtime/run/limits.c: resources.wall_clock, cleanup.lease, memory_bytes, process_count */
int run_watch_limits(struct run *run);
int run_start_timer(struct run *run);
void run_limits_event(struct run *run, int fd);
bool run_oom_killed(struct run *run);
void run_limits_free(struct run *run);

/* runtime/run/records.c: the run's own records */
void run_context_init(struct run *run);
void run_record_start(struct run *run, uint64_t setup_us);
void run_record_truncated(struct run *run, int stream, uint64_t max);
void run_record_cleanup(struct run *run, const struct record_run_cleanup *c);
void run_record_artifact(struct run *run, const struct record_run_artifact *a);

/*
 * runtime/run/artifacts.c: _check refuses an export directory the run could
 * write; _export, once the tree is empty, sends the declared files there.
 */
int run_artifacts_check(struct run *run, struct run_error *err);
void run_artifacts_export(struct run *run);
void run_record_end(struct run *run, const struct record_run_end *e);

/* The run's epoll set (one per run; the caller polls it as run_fd). */
void run_epoll_add(struct run *run, int fd, uint32_t events);
void run_epoll_mod(struct run *run, int fd, uint32_t events);
void run_epoll_del(struct run *run, int fd);

#endif
