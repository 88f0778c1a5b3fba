// SPDX-License-Identifier: GPL-2.0
/*
 * canaryprobe: nothing a run leaves behind reaches a later run (issue 17,
 * "Nothing carries over"; tests/vm/suite/canary.sh).
 *
 *   canaryprobe plant TAG [WORKSPACE]
 *	writes a canary carrying TAG through every channel a run has: files in
 *	the workspace, TMPDIR, /tmp, /var/tmp, /dev/shm and HOME; POSIX shared
 *	memory, semaphores and message queues (also as a file in /dev/mqueue);
 *	SysV shared memory, semaphores and message queues under the fixed key
 *	CANARY_KEY; keys in the session, user, user-session and persistent
 *	keyrings (the persistent one's key also counts in the uid's key
 *	quota: channel key-quota); user.* extended attributes; the host's
 *	/run, /run/user/UID, /run/lock, /srv, /dev, /sys/fs/bpf and the
 *	working directory; the host name; its own cgroup directory; and a daemon (double fork,
 *	setsid, SIGHUP and SIGTERM ignored) that tries to outlive the run
 *	holding abstract (stream and datagram) and pathname unix sockets, TCP
 *	and UDP sockets on loopback, a memfd, a flock and a POSIX lock on host
 *	files and a pty.  Prints "plant CHANNEL: ok" or "plant CHANNEL: ERRNO"
 *	per channel (a refusal is reported, never fatal), then "hint KEY=VALUE"
 *	lines that a later look may be given (key serials, the cgroup); exits 0.
 *
 *   canaryprobe look TAG [WORKSPACE] [KEY=VALUE...]
 *	looks for each canary of plant TAG, and for anything at all in the
 *	trees that must start empty, and prints "look CHANNEL: absent [(why)]"
 *	or "look CHANNEL: FOUND what".  Exits 0 only when every channel is
 *	absent, 1 otherwise, 2 on a usage error.
 *
 * A channel is the same name in both.  Built statically and run inside the
 * test VM, in runs and on the host.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CANARY_KEY	0x7e7e0017	/* SysV IPC key of every SysV canary */
#define CANARY_TCP	47017		/* loopback TCP port the daemon listens on */
#define CANARY_UDP	47018		/* loopback UDP port the daemon binds */
#define LOCK_FLOCK	"/etc/passwd"	/* host file the daemon holds a flock on */
#define LOCK_POSIX	"/etc/group"	/* host file the daemon holds a read lock on */
#define MAX_TAG		10		/* "cnry-" + TAG fits a comm (15 bytes) */

static const char *tag, *ws;
static char text[64];		/* the canary's contents: "canary TAG\n" */
static bool found_any;

/* "ok" or the errno's name (ENOENT, ...). */
static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "errno?";
}

static void planted(const char *ch, int e)
{
	printf("plant %s: %s\n", ch, ename(e));
}

static int err(long r)
{
	return r < 0 ? errno : 0;
}

/* look CHANNEL: FOUND ... */
static void found(const char *ch, const char *fmt, ...)
{
	va_list ap;

	printf("look %s: FOUND ", ch);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	found_any = true;
}

static void absent(const char *ch, const char *why)
{
	if (why && *why)
		printf("look %s: absent (%s)\n", ch, why);
	else
		printf("look %s: absent\n", ch);
}

static const char *tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

static const char *home(void)
{
	const char *h = getenv("HOME");

	return h && *h ? h : "/nonexistent";
}

static int write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		e = errno ? errno : EIO;
	close(fd);
	return e;
}

/* --- files ------------------------------------------------------------------------ */

struct file_channel {
	const char *name;
	char path[256];
	char dir[256];		/* a tree that must start empty, or "" */
};

static struct file_channel files[16];
static int nfiles;

static void add_file(const char *name, const char *dir, const char *fmt, ...)
{
	struct file_channel *f = &files[nfiles++];
	va_list ap;

	f->name = name;
	va_start(ap, fmt);
	vsnprintf(f->path, sizeof(f->path), fmt, ap);
	va_end(ap);
	snprintf(f->dir, sizeof(f->dir), "%s", dir ? dir : "");
}

static void file_channels(void)
{
	char run_user[64];

	snprintf(run_user, sizeof(run_user), "/run/user/%u", (unsigned)getuid());
	if (ws)
		add_file("workspace", ws, "%s/canary-%s", ws, tag);
	add_file("tmpdir", tmpdir(), "%s/canary-%s-tmpdir", tmpdir(), tag);
	add_file("tmp", "/tmp", "/tmp/canary-%s", tag);
	add_file("var-tmp", "/var/tmp", "/var/tmp/canary-%s", tag);
	add_file("dev-shm", "/dev/shm", "/dev/shm/canary-%s", tag);
	add_file("home", home(), "%s/canary-%s", home(), tag);
	add_file("run", NULL, "/run/canary-%s", tag);
	add_file("run-user", NULL, "%s/canary-%s", run_user, tag);
	add_file("run-lock", NULL, "/run/lock/canary-%s", tag);
	add_file("var-lock", NULL, "/var/lock/canary-%s", tag);
	add_file("srv", NULL, "/srv/canary-%s", tag);
	add_file("dev", NULL, "/dev/canary-%s", tag);
	add_file("bpffs", NULL, "/sys/fs/bpf/canary-%s", tag);
	add_file("cwd", NULL, "canary-%s-cwd", tag);
}

static void plant_files(void)
{
	for (int i = 0; i < nfiles; i++)
		planted(files[i].name, write_file(files[i].path));
}

/* Whether DIR holds anything; the first entry's name in `name`. */
static bool dir_has_entry(const char *dir, char *name, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(name, size, "%s", e->d_name);
		any = true;
		break;
	}
	closedir(d);
	return any;
}

static void look_files(void)
{
	char name[256], why[64];
	struct stat st;

	for (int i = 0; i < nfiles; i++) {
		struct file_channel *f = &files[i];

		if (lstat(f->path, &st) == 0) {
			found(f->name, "%s", f->path);
			continue;
		}
		snprintf(why, sizeof(why), "%s", ename(errno));
		if (f->dir[0] && dir_has_entry(f->dir, name, sizeof(name)))
			found(f->name, "%s/%s in a tree that must start empty", f->dir, name);
		else
			absent(f->name, why);
	}
}

/* --- POSIX IPC --------------------------------------------------------------------- */

static void plant_posix(void)
{
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 64 };
	char name[64], path[128];
	sem_t *sem;
	mqd_t mq;
	int fd, e;

	snprintf(name, sizeof(name), "/canary-%s-shm", tag);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
	e = fd < 0 ? errno : 0;
	if (fd >= 0) {
		e = err(write(fd, text, strlen(text)));
		close(fd);
	}
	planted("shm-open", e);

	snprintf(name, sizeof(name), "/canary-%s", tag);
	sem = sem_open(name, O_CREAT | O_EXCL, 0666, 17);
	planted("posix-sem", sem == SEM_FAILED ? errno : 0);

	mq = mq_open(name, O_WRONLY | O_CREAT | O_EXCL, 0666, &attr);
	e = mq == (mqd_t)-1 ? errno : 0;
	if (!e) {
		e = err(mq_send(mq, text, strlen(text), 0));
		mq_close(mq);
	}
	planted("posix-mq", e);

	/* a queue made as a file of the run's mqueue file system */
	snprintf(path, sizeof(path), "/dev/mqueue/canary-%s-file", tag);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0666);
	planted("dev-mqueue", fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
}

static void look_posix(void)
{
	char name[64], entry[256];
	sem_t *sem;
	mqd_t mq;
	int fd;

	snprintf(name, sizeof(name), "/canary-%s-shm", tag);
	fd = shm_open(name, O_RDONLY, 0);
	if (fd >= 0) {
		char buf[64] = "";

		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = 0;
		found("shm-open", "%s: %s", name, strtok(buf, "\n") ?: "");
		close(fd);
	} else {
		absent("shm-open", ename(errno));
	}

	snprintf(name, sizeof(name), "/canary-%s", tag);
	sem = sem_open(name, 0);
	if (sem != SEM_FAILED) {
		int v = -1;

		sem_getvalue(sem, &v);
		found("posix-sem", "%s, value %d", name, v);
		sem_close(sem);
	} else {
		absent("posix-sem", ename(errno));
	}

	mq = mq_open(name, O_RDONLY | O_NONBLOCK);
	if (mq != (mqd_t)-1) {
		char buf[64] = "";

		if (mq_receive(mq, buf, sizeof(buf), NULL) < 0)
			snprintf(buf, sizeof(buf), "(no message: %s)", ename(errno));
		found("posix-mq", "%s: %s", name, strtok(buf, "\n") ?: "");
		mq_close(mq);
	} else {
		absent("posix-mq", ename(errno));
	}

	snprintf(name, sizeof(name), "/canary-%s-file", tag);
	mq = mq_open(name, O_RDONLY | O_NONBLOCK);
	if (mq != (mqd_t)-1) {
		found("dev-mqueue", "queue %s", name);
		mq_close(mq);
	} else if (dir_has_entry("/dev/mqueue", entry, sizeof(entry))) {
		found("dev-mqueue", "/dev/mqueue/%s", entry);
	} else {
		absent("dev-mqueue", ename(errno));
	}
}

/* --- SysV IPC ---------------------------------------------------------------------- */

static void plant_sysv(void)
{
	struct {
		long type;
		char text[64];
	} msg = { 1, "" };
	int id, e;
	char *mem;

	id = shmget(CANARY_KEY, 4096, IPC_CREAT | IPC_EXCL | 0666);
	e = id < 0 ? errno : 0;
	if (!e) {
		mem = shmat(id, NULL, 0);
		if (mem == (void *)-1) {
			e = errno;
		} else {
			strcpy(mem, text);
			shmdt(mem);
		}
	}
	planted("sysv-shm", e);

	id = semget(CANARY_KEY, 1, IPC_CREAT | IPC_EXCL | 0666);
	e = id < 0 ? errno : 0;
	if (!e)
		e = err(semctl(id, 0, SETVAL, 17));
	planted("sysv-sem", e);

	id = msgget(CANARY_KEY, IPC_CREAT | IPC_EXCL | 0666);
	e = id < 0 ? errno : 0;
	snprintf(msg.text, sizeof(msg.text), "%s", text);
	if (!e)
		e = err(msgsnd(id, &msg, strlen(msg.text) + 1, IPC_NOWAIT));
	planted("sysv-msg", e);
}

/* The first object listed in /proc/sysvipc/WHAT (the IPC namespace's), or false. */
static bool sysvipc_listed(const char *what, char *line, size_t size)
{
	char path[64];
	FILE *f;
	bool any = false;

	snprintf(path, sizeof(path), "/proc/sysvipc/%s", what);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, (int)size, f) && fgets(line, (int)size, f)) {
		line[strcspn(line, "\n")] = 0;
		any = true;
	}
	fclose(f);
	return any;
}

static void look_sysv(void)
{
	static const char *const names[] = { "sysv-shm", "sysv-sem", "sysv-msg" };
	static const char *const procs[] = { "shm", "sem", "msg" };
	char line[256];

	for (int i = 0; i < 3; i++) {
		int id = i == 0 ? shmget(CANARY_KEY, 0, 0) :
			 i == 1 ? semget(CANARY_KEY, 0, 0) : msgget(CANARY_KEY, 0);

		if (id >= 0)
			found(names[i], "key 0x%x, id %d", CANARY_KEY, id);
		else if (errno != ENOENT)
			found(names[i], "key 0x%x: %s, not ENOENT", CANARY_KEY, ename(errno));
		else if (sysvipc_listed(procs[i], line, sizeof(line)))
			found(names[i], "/proc/sysvipc/%s lists: %s", procs[i], line);
		else
			absent(names[i], "ENOENT");
	}
}

/* --- keys -------------------------------------------------------------------------- */

static long keyctl(int cmd, unsigned long a, unsigned long b, unsigned long c)
{
	return syscall(SYS_keyctl, cmd, a, b, c, 0);
}

static const struct {
	const char *name;
	long ring;		/* 0: the persistent keyring */
} rings[] = {
	{ "keyring-session", KEY_SPEC_SESSION_KEYRING },
	{ "keyring-user", KEY_SPEC_USER_KEYRING },
	{ "keyring-user-session", KEY_SPEC_USER_SESSION_KEYRING },
	{ "keyring-persistent", 0 },
};

/* The keyring's serial: the persistent one linked into the session keyring first. */
static long ring_id(long ring)
{
	if (ring)
		return ring;
	return keyctl(KEYCTL_GET_PERSISTENT, (unsigned long)-1, KEY_SPEC_SESSION_KEYRING, 0);
}

static void plant_keys(void)
{
	char desc[64];
	long ids[4];
	int n = 0;

	for (size_t i = 0; i < sizeof(rings) / sizeof(rings[0]); i++) {
		long ring = ring_id(rings[i].ring), id = -1;

		snprintf(desc, sizeof(desc), "tether-canary-%s-%zu", tag, i);
		if (ring >= 0 || rings[i].ring)
			id = syscall(SYS_add_key, "user", desc, text, strlen(text), ring);
		planted(rings[i].name, id < 0 ? errno : 0);
		if (!rings[i].ring)	/* the one key that outlives the run */
			planted("key-quota", id < 0 ? errno : 0);
		if (id < 0)
			continue;
		/* anyone may use it as far as permissions go: only the LSM stands in the way */
		if (keyctl(KEYCTL_SETPERM, id, 0x3f3f3f3f, 0) < 0)
			printf("plant %s-setperm: %s\n", rings[i].name, ename(errno));
		ids[n++] = id;
	}
	planted("key-serial", n ? 0 : ENOKEY);
	for (int i = 0; i < n; i++)
		printf("hint key=%ld\n", ids[i]);
}

/* Whether /proc/keys lists a key whose description carries the tag. */
static bool proc_keys_lists(char *line, size_t size)
{
	char needle[64];
	FILE *f = fopen("/proc/keys", "r");
	bool any = false;

	if (!f)
		return false;
	snprintf(needle, sizeof(needle), "tether-canary-%s-", tag);
	while (fgets(line, (int)size, f)) {
		if (strstr(line, needle)) {
			line[strcspn(line, "\n")] = 0;
			any = true;
			break;
		}
	}
	fclose(f);
	return any;
}

static void look_keys(char **hints, int nhints)
{
	char desc[64], buf[128], line[256];
	int serials = 0;

	for (size_t i = 0; i < sizeof(rings) / sizeof(rings[0]); i++) {
		long ring = ring_id(rings[i].ring), id = -1;

		snprintf(desc, sizeof(desc), "tether-canary-%s-%zu", tag, i);
		if (ring >= 0 || rings[i].ring)
			id = keyctl(KEYCTL_SEARCH, ring, (unsigned long)"user", (unsigned long)desc);
		if (id < 0) {
			absent(rings[i].name, ename(errno));
			continue;
		}
		memset(buf, 0, sizeof(buf));
		if (keyctl(KEYCTL_READ, id, (unsigned long)buf, sizeof(buf) - 1) < 0)
			snprintf(buf, sizeof(buf), "(unreadable: %s)", ename(errno));
		found(rings[i].name, "key %ld %s: %s", id, desc, strtok(buf, "\n") ?: "");
	}

	/* by serial: the keys plant made, read directly */
	for (int i = 0; i < nhints; i++) {
		long id;

		if (strncmp(hints[i], "key=", 4))
			continue;
		serials++;
		id = strtol(hints[i] + 4, NULL, 10);
		memset(buf, 0, sizeof(buf));
		if (keyctl(KEYCTL_READ, id, (unsigned long)buf, sizeof(buf) - 1) >= 0) {
			found("key-serial", "key %ld reads '%s'", id, strtok(buf, "\n") ?: "");
			return;
		}
		if (errno != ENOKEY && errno != EACCES) {
			found("key-serial", "key %ld: %s (neither ENOKEY nor EACCES)", id,
			      ename(errno));
			return;
		}
	}
	if (proc_keys_lists(line, sizeof(line)))
		found("key-serial", "/proc/keys lists: %s", line);
	else {
		snprintf(buf, sizeof(buf), "%d serials unreadable, not in /proc/keys", serials);
		absent("key-serial", buf);
	}
}

/*
 * The uid's key quota (/proc/key-users, readable by anyone) counts every
 * key of the uid, the ones this run may not see included: more keys than
 * /proc/keys shows us are another run's, a count a run can leave behind.
 */
static void look_key_quota(void)
{
	unsigned int uid, keyuid, id;
	int usage, nkeys = -1, visible = 0;
	char line[512], users[256] = "";
	FILE *f = fopen("/proc/key-users", "r");

	if (!f) {
		snprintf(line, sizeof(line), "/proc/key-users cannot be read: %s", ename(errno));
		absent("key-quota", line);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %u: %d %d", &uid, &usage, &nkeys) == 3 && uid == getuid()) {
			line[strcspn(line, "\n")] = 0;
			snprintf(users, sizeof(users), "%s", line + strspn(line, " "));
			break;
		}
		nkeys = -1;
	}
	fclose(f);
	f = fopen("/proc/keys", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%x %*s %*d %*s %*x %u", &id, &keyuid) == 2 && keyuid == getuid())
			visible++;
	if (f)
		fclose(f);
	if (nkeys > visible)
		found("key-quota", "%d keys of uid %u, %d of them visible (/proc/key-users: %s)",
		      nkeys, (unsigned)getuid(), visible, users);
	else {
		snprintf(line, sizeof(line), "%d keys of uid %u, all visible", nkeys < 0 ? 0 : nkeys,
			 (unsigned)getuid());
		absent("key-quota", line);
	}
}

/* --- the daemon and what it holds --------------------------------------------------- */

static int abstract_addr(struct sockaddr_un *sun, const char *suffix)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "tether-canary-%s%s", tag, suffix);
	return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sun->sun_path + 1));
}

static void sock_path(struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path, sizeof(sun->sun_path), "/tmp/canary-%s.sock", tag);
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return in;
}

/* The daemon's lines go to the planting process through `out`. */
static void report(int out, const char *ch, int e)
{
	dprintf(out, "plant %s: %s\n", ch, ename(e));
}

static int bound(int fd, const struct sockaddr *a, socklen_t len, bool listening)
{
	if (fd < 0)
		return errno;
	if (bind(fd, a, len) < 0)
		return errno;
	return listening ? err(listen(fd, 4)) : 0;
}

static void daemon_holds(int out)
{
	int one = 1, fd, e;
	struct sockaddr_un sun;
	struct sockaddr_in in;
	char name[64];
	socklen_t len;

	len = (socklen_t)abstract_addr(&sun, "");
	report(out, "abstract-stream",
	       bound(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&sun, len, true));
	len = (socklen_t)abstract_addr(&sun, "-d");
	report(out, "abstract-dgram",
	       bound(socket(AF_UNIX, SOCK_DGRAM, 0), (struct sockaddr *)&sun, len, false));
	sock_path(&sun);
	report(out, "unix-path",
	       bound(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&sun, sizeof(sun), true));

	in = loopback(CANARY_TCP);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	report(out, "tcp-listener", bound(fd, (struct sockaddr *)&in, sizeof(in), true));
	in = loopback(CANARY_UDP);
	report(out, "udp-socket",
	       bound(socket(AF_INET, SOCK_DGRAM, 0), (struct sockaddr *)&in, sizeof(in), false));

	snprintf(name, sizeof(name), "canary-%s", tag);
	fd = (int)syscall(SYS_memfd_create, name, 0);
	e = fd < 0 ? errno : err(write(fd, text, strlen(text)));
	report(out, "memfd", e);

	fd = open(LOCK_FLOCK, O_RDONLY | O_CLOEXEC);
	report(out, "flock", fd < 0 ? errno : err(flock(fd, LOCK_EX | LOCK_NB)));
	fd = open(LOCK_POSIX, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
	} else {
		struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET };

		e = err(fcntl(fd, F_SETLK, &l));
	}
	report(out, "posix-lock", e);

	fd = posix_openpt(O_RDWR | O_NOCTTY);
	e = fd < 0 ? errno : err(grantpt(fd));
	if (!e)
		e = err(unlockpt(fd));
	report(out, "pty", e);
	report(out, "process", 0);
}

/*
 * The daemon: forked twice, in a session of its own, deaf to SIGHUP and
 * SIGTERM, named after the tag; it reports what it holds and sleeps for
 * good.  plant waits for its report (the pipe's end of file), not for time.
 */
static void plant_daemon(void)
{
	char comm[16], buf[512];
	int p[2], null;
	pid_t pid;
	ssize_t n;

	fflush(stdout);
	if (pipe(p) < 0) {
		planted("process", errno);
		return;
	}
	pid = fork();
	if (pid < 0) {
		planted("process", errno);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		pid = fork();
		if (pid < 0)
			report(p[1], "process", errno);
		if (pid != 0)
			_exit(0);
		signal(SIGHUP, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		snprintf(comm, sizeof(comm), "cnry-%s", tag);
		prctl(PR_SET_NAME, comm);
		daemon_holds(p[1]);
		close(p[1]);
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		for (;;)
			pause();
	}
	close(p[1]);
	waitpid(pid, NULL, 0);
	while ((n = read(p[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stdout);
	close(p[0]);
}

/* connect(2) to it: "absent" is ECONNREFUSED (nobody bound it), anything else is a find */
static void look_connect(const char *ch, int type, const struct sockaddr *a, socklen_t len,
			 int absent_errno)
{
	int fd = socket(a->sa_family, type | SOCK_CLOEXEC, 0), r, e;

	if (fd < 0) {
		found(ch, "socket: %s", ename(errno));
		return;
	}
	if (type == SOCK_DGRAM)
		r = (int)sendto(fd, "x", 1, MSG_DONTWAIT, a, len);
	else
		r = connect(fd, a, len);
	e = r < 0 ? errno : 0;
	close(fd);
	if (e == absent_errno)
		absent(ch, ename(e));
	else
		found(ch, "%s (%s, not %s)", e ? "a peer refused us" : "a peer answered", ename(e),
		      ename(absent_errno));
}

/* Whether /proc/net/unix lists the name (@ for an abstract one) as a whole word. */
static bool unix_listed(const char *name)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];
	bool any = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *last = strrchr(line, ' ');

		line[strcspn(line, "\n")] = 0;
		if (last && !strcmp(last + 1, name)) {
			any = true;
			break;
		}
	}
	fclose(f);
	return any;
}

/* Whether /proc/net/FILE has a socket on local port PORT in STATE (0A listen, 07 bound UDP). */
static bool inet_listed(const char *file, int port, unsigned int state)
{
	char path[64], line[512];
	unsigned int lport, rport, st;
	FILE *f;
	bool any = false;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*u: %*x:%x %*x:%x %x", &lport, &rport, &st) == 3 &&
		    lport == (unsigned int)port && st == state) {
			any = true;
			break;
		}
	fclose(f);
	return any;
}

static void look_sockets(void)
{
	struct sockaddr_un sun;
	struct sockaddr_in in;
	char name[128];
	socklen_t len;
	struct stat st;

	len = (socklen_t)abstract_addr(&sun, "");
	snprintf(name, sizeof(name), "@%s", sun.sun_path + 1);
	if (unix_listed(name))
		found("abstract-stream", "/proc/net/unix lists %s", name);
	else
		look_connect("abstract-stream", SOCK_STREAM, (struct sockaddr *)&sun, len,
			     ECONNREFUSED);
	len = (socklen_t)abstract_addr(&sun, "-d");
	snprintf(name, sizeof(name), "@%s", sun.sun_path + 1);
	if (unix_listed(name))
		found("abstract-dgram", "/proc/net/unix lists %s", name);
	else
		look_connect("abstract-dgram", SOCK_DGRAM, (struct sockaddr *)&sun, len,
			     ECONNREFUSED);
	sock_path(&sun);
	if (lstat(sun.sun_path, &st) == 0 || unix_listed(sun.sun_path))
		found("unix-path", "%s", sun.sun_path);
	else
		look_connect("unix-path", SOCK_STREAM, (struct sockaddr *)&sun, sizeof(sun),
			     ENOENT);

	in = loopback(CANARY_TCP);
	if (inet_listed("tcp", CANARY_TCP, 0x0a))
		found("tcp-listener", "/proc/net/tcp lists port %d", CANARY_TCP);
	else
		look_connect("tcp-listener", SOCK_STREAM, (struct sockaddr *)&in, sizeof(in),
			     ECONNREFUSED);
	if (inet_listed("udp", CANARY_UDP, 0x07))
		found("udp-socket", "/proc/net/udp lists port %d", CANARY_UDP);
	else
		absent("udp-socket", "not in /proc/net/udp");
}

/* Whether the process's cmdline is "... plant TAG ..." (the daemon's, inherited). */
static bool planter_cmdline(const char *pid)
{
	char path[300], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (p = buf; p < buf + n; p += strlen(p) + 1)
		if (!strcmp(p, "plant") && p + strlen(p) + 1 < buf + n && !strcmp(p + 6, tag))
			return true;
	return false;
}

/* A memfd named after the tag among the process's descriptors. */
static bool holds_memfd(const char *pid)
{
	char path[600], link[256], want[64];
	struct dirent *e;
	bool any = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	snprintf(want, sizeof(want), "/memfd:canary-%s", tag);
	d = opendir(path);
	if (!d)
		return false;
	while (!any && (e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		any = !strncmp(link, want, strlen(want));
	}
	closedir(d);
	return any;
}

/*
 * Every process but this one: the daemon by its cmdline or comm; a process
 * of our uid whose /proc entry we may not read is another run's (nothing
 * else runs as the run's uid in the VM) and is a find as well.
 */
static void look_processes(void)
{
	static const char *const hits[] = { NULL, "of our uid, its /proc entry refused",
					    "with cmdline plant TAG", "named cnry-TAG" };
	char self[16], path[300], comm[32], memfd_pid[256] = "";
	int seen = 0, unreadable = 0, hit = 0;
	char hit_pid[256] = "", why[64];
	struct dirent *e;
	struct stat st;
	DIR *d;

	snprintf(self, sizeof(self), "%d", getpid());
	d = opendir("/proc");
	if (!d) {
		found("process", "/proc: %s", ename(errno));
		return;
	}
	while ((e = readdir(d))) {
		int fd;
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !strcmp(e->d_name, self))
			continue;
		seen++;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(path, sizeof(path), "/proc/%s", e->d_name);
			if (stat(path, &st) == 0 && st.st_uid == getuid() && hit < 1) {
				hit = 1;
				snprintf(hit_pid, sizeof(hit_pid), "%s", e->d_name);
			}
			unreadable++;
			continue;
		}
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[n > 0 ? n : 0] = 0;
		comm[strcspn(comm, "\n")] = 0;
		if (!strncmp(comm, "cnry-", 5) && !strcmp(comm + 5, tag) && hit < 3) {
			hit = 3;
			snprintf(hit_pid, sizeof(hit_pid), "%s", e->d_name);
		} else if (planter_cmdline(e->d_name) && hit < 2) {
			hit = 2;
			snprintf(hit_pid, sizeof(hit_pid), "%s", e->d_name);
		}
		if (!memfd_pid[0] && holds_memfd(e->d_name))
			snprintf(memfd_pid, sizeof(memfd_pid), "%s", e->d_name);
	}
	closedir(d);
	snprintf(why, sizeof(why), "%d processes, %d unreadable", seen, unreadable);
	if (hit)
		found("process", "pid %s %s", hit_pid, hits[hit]);
	else
		absent("process", why);
	if (memfd_pid[0])
		found("memfd", "pid %s holds memfd:canary-%s", memfd_pid, tag);
	else
		absent("memfd", why);
}

static void look_locks(void)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char name[300];
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *e;
	bool pty = false;

	fd = open(LOCK_FLOCK, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		found("flock", "%s: %s", LOCK_FLOCK, ename(errno));
	} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		found("flock", "%s is locked (%s)", LOCK_FLOCK, ename(errno));
		close(fd);
	} else {
		absent("flock", "LOCK_EX taken");
		close(fd);
	}

	fd = open(LOCK_POSIX, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		found("posix-lock", "%s: %s", LOCK_POSIX, ename(errno));
	else if (fcntl(fd, F_GETLK, &l) < 0)
		found("posix-lock", "F_GETLK: %s", ename(errno));
	else if (l.l_type != F_UNLCK)
		found("posix-lock", "%s is locked by pid %d", LOCK_POSIX, (int)l.l_pid);
	else
		absent("posix-lock", "F_GETLK: unlocked");
	if (fd >= 0)
		close(fd);

	/* a pty of our uid: the daemon's master end keeps /dev/pts/N */
	d = opendir("/dev/pts");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(name, sizeof(name), "/dev/pts/%s", e->d_name);
		if (stat(name, &st) == 0 && st.st_uid == getuid()) {
			found("pty", "%s owned by uid %u", name, (unsigned)st.st_uid);
			pty = true;
			break;
		}
	}
	if (d)
		closedir(d);
	if (!pty)
		absent("pty", "no /dev/pts entry of our uid");
}

/* --- the cgroup --------------------------------------------------------------------- */

/* The cgroup2 mount point and our cgroup's directory below it. */
static bool own_cgroup(char *dir, size_t size)
{
	char line[1024], mnt[512] = "", rel[512] = "";
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - cgroup2 "), *fld = line;

		if (!dash)
			continue;
		for (int i = 0; i < 4 && fld; i++)	/* id parent dev root mountpoint */
			fld = strchr(fld + 1, ' ');
		if (fld && sscanf(fld + 1, "%511s", mnt) == 1)
			break;
	}
	if (f)
		fclose(f);
	if (!mnt[0])
		snprintf(mnt, sizeof(mnt), "/sys/fs/cgroup");
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3) && sscanf(line + 3, "%511s", rel) == 1)
			break;
	if (f)
		fclose(f);
	if (!rel[0])
		return false;
	snprintf(dir, size, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
	return true;
}

static void plant_cgroup(void)
{
	char dir[1024], path[1100];
	struct stat st;

	if (!own_cgroup(dir, sizeof(dir))) {
		planted("cgroup-file", ENOENT);
		planted("cgroup-mkdir", ENOENT);
		planted("cgroup-dir", ENOENT);
		return;
	}
	snprintf(path, sizeof(path), "%s/canary-%s", dir, tag);
	planted("cgroup-file", write_file(path));
	snprintf(path, sizeof(path), "%s/canary-%s-d", dir, tag);
	planted("cgroup-mkdir", err(mkdir(path, 0755)));
	if (stat(dir, &st) < 0) {
		planted("cgroup-dir", errno);
		return;
	}
	planted("cgroup-dir", 0);
	printf("hint cgroup=%llu:%s\n", (unsigned long long)st.st_ino, dir);
}

static void look_cgroup(char **hints, int nhints)
{
	char dir[1024], path[1100], other[1024] = "";
	unsigned long long ino = 0;
	struct stat st;
	bool hit = false;

	for (int i = 0; i < nhints; i++)
		if (!strncmp(hints[i], "cgroup=", 7))
			sscanf(hints[i] + 7, "%llu:%1023s", &ino, other);
	if (!own_cgroup(dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "/nonexistent");

	for (int pass = 0; pass < 2 && !hit; pass++) {
		const char *base = pass ? other : dir;

		if (!base[0])
			continue;
		snprintf(path, sizeof(path), "%s/canary-%s", base, tag);
		if (lstat(path, &st) == 0) {
			found("cgroup-file", "%s", path);
			hit = true;
		}
	}
	if (!hit)
		absent("cgroup-file", "");
	hit = false;
	for (int pass = 0; pass < 2 && !hit; pass++) {
		const char *base = pass ? other : dir;

		if (!base[0])
			continue;
		snprintf(path, sizeof(path), "%s/canary-%s-d", base, tag);
		if (lstat(path, &st) == 0) {
			found("cgroup-mkdir", "%s", path);
			hit = true;
		}
	}
	if (!hit)
		absent("cgroup-mkdir", "");

	if (!other[0])
		absent("cgroup-dir", "no hint");
	else if (stat(other, &st) < 0)
		absent("cgroup-dir", ename(errno));
	else if (st.st_ino == ino)
		found("cgroup-dir", "%s is still there (inode %llu)", other, ino);
	else
		absent("cgroup-dir", "the path names a new cgroup");
}

/* --- extended attributes, the host name ---------------------------------------------- */

static const struct {
	const char *name;
	const char *dir;	/* NULL: the workspace */
} xattrs[] = {
	{ "xattr-workspace", NULL },
	{ "xattr-tmp", "/tmp" },
	{ "xattr-dev-shm", "/dev/shm" },
	{ "xattr-home", "" },	/* "": HOME */
	{ "xattr-host", "/srv" },
};

static const char *xattr_dir(size_t i)
{
	if (!xattrs[i].dir)
		return ws;
	if (!xattrs[i].dir[0])
		return home();
	return xattrs[i].dir;
}

static void plant_xattrs(void)
{
	char name[64];

	snprintf(name, sizeof(name), "user.canary-%s", tag);
	for (size_t i = 0; i < sizeof(xattrs) / sizeof(xattrs[0]); i++) {
		const char *dir = xattr_dir(i);

		if (dir)
			planted(xattrs[i].name, err(setxattr(dir, name, text, strlen(text), 0)));
	}
}

static void look_xattrs(void)
{
	char name[64], buf[1024];

	snprintf(name, sizeof(name), "user.canary-%s", tag);
	for (size_t i = 0; i < sizeof(xattrs) / sizeof(xattrs[0]); i++) {
		const char *dir = xattr_dir(i);
		ssize_t n;

		if (!dir)
			continue;
		n = getxattr(dir, name, buf, sizeof(buf) - 1);
		if (n >= 0) {
			buf[n] = 0;
			found(xattrs[i].name, "%s %s: %s", dir, name, strtok(buf, "\n") ?: "");
			continue;
		}
		snprintf(buf, sizeof(buf), "%s", ename(errno));
		n = listxattr(dir, buf + 64, sizeof(buf) - 64);
		for (ssize_t off = 0; n > 0 && off < n; off += (ssize_t)strlen(buf + 64 + off) + 1) {
			if (!strncmp(buf + 64 + off, "user.canary-", 12)) {
				found(xattrs[i].name, "%s has %s", dir, buf + 64 + off);
				n = -2;
			}
		}
		if (n != -2)
			absent(xattrs[i].name, buf);
	}
}

static void plant_uts(void)
{
	char name[64];
	int e;

	snprintf(name, sizeof(name), "canary-%s", tag);
	e = err(sethostname(name, strlen(name)));
	if (!e)
		e = err(setdomainname(name, strlen(name)));
	planted("uts", e);
}

static void look_uts(void)
{
	struct utsname u;

	if (uname(&u) < 0)
		found("uts", "uname: %s", ename(errno));
	else if (strstr(u.nodename, tag) || strstr(u.domainname, tag))
		found("uts", "%s %s", u.nodename, u.domainname);
	else
		absent("uts", u.nodename);
}

int main(int argc, char **argv)
{
	char *hints[16];
	int nhints = 0;
	bool plant;

	if (argc < 3 || (strcmp(argv[1], "plant") && strcmp(argv[1], "look")) ||
	    !argv[2][0] || strlen(argv[2]) > MAX_TAG || strchr(argv[2], '/'))
		goto usage;
	plant = !strcmp(argv[1], "plant");
	tag = argv[2];
	for (int i = 3; i < argc; i++) {
		if (argv[i][0] == '/' && !ws)
			ws = argv[i];
		else if (!plant && strchr(argv[i], '=') && nhints < 16)
			hints[nhints++] = argv[i];
		else
			goto usage;
	}
	snprintf(text, sizeof(text), "canary %s\n", tag);
	setvbuf(stdout, NULL, _IOLBF, 0);
	file_channels();

	if (plant) {
		umask(0);
		plant_files();
		plant_posix();
		plant_sysv();
		plant_keys();
		plant_cgroup();
		plant_xattrs();
		plant_uts();
		plant_daemon();
		return 0;
	}
	look_files();
	look_posix();
	look_sysv();
	look_keys(hints, nhints);
	look_key_quota();
	look_cgroup(hints, nhints);
	look_xattrs();
	look_uts();
	look_sockets();
	look_processes();
	look_locks();
	return found_any ? 1 : 0;
usage:
	fprintf(stderr, "usage: canaryprobe plant TAG [WORKSPACE] | "
			"look TAG [WORKSPACE] [key=SERIAL | cgroup=INO:PATH]...\n"
			"(TAG: 1 to %d bytes, no /)\n", MAX_TAG);
	return 2;
}
