// SPDX-License-Identifier: GPL-2.0
/*
 * ipcprobe: the IPC a toolchain uses inside a run, as Python's
 * multiprocessing and test harnesses do.  Exits 0 when every step works,
 * else prints the failing step with its errno and exits 1.
 *
 *   ipcprobe posix NAME    sem_open, a child posts, the parent waits;
 *                          shm_open, mmap, a child writes, the parent reads;
 *                          mq_open, send, receive; then unlinks them
 *   ipcprobe sysv          shmget/shmat, semget/semop, msgget/msgsnd/msgrcv
 *   ipcprobe seen NAME     exit 0 when /dev/shm/NAME exists (another run's)
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("ipcprobe: %s: %s\n", what, strerror(errno));
	return 1;
}

static int posix(const char *name)
{
	char path[256], buf[16] = "";
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 16 };
	sem_t *sem;
	char *mem;
	mqd_t mq;
	pid_t pid;
	int fd;

	snprintf(path, sizeof(path), "/%s", name);
	sem = sem_open(path, O_CREAT | O_EXCL, 0600, 0);
	if (sem == SEM_FAILED)
		return fail("sem_open");
	fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		return fail("shm_open");
	if (ftruncate(fd, 4096) < 0)
		return fail("ftruncate");
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return fail("mmap");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		strcpy(mem, "from-child");
		_exit(sem_post(sem) == 0 ? 0 : 1);
	}
	if (sem_wait(sem) < 0)
		return fail("sem_wait");
	waitpid(pid, NULL, 0);
	if (strcmp(mem, "from-child") != 0) {
		errno = EPROTO;
		return fail("shared memory");
	}
	mq = mq_open(path, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
	if (mq == (mqd_t)-1)
		return fail("mq_open");
	if (mq_send(mq, "hello", 6, 0) < 0)
		return fail("mq_send");
	if (mq_receive(mq, buf, sizeof(buf), NULL) != 6 || strcmp(buf, "hello") != 0)
		return fail("mq_receive");
	if (sem_unlink(path) < 0)
		return fail("sem_unlink");
	if (shm_unlink(path) < 0)
		return fail("shm_unlink");
	if (mq_unlink(path) < 0)
		return fail("mq_unlink");
	return 0;
}

static int sysv(void)
{
	struct sembuf up = { 0, 1, 0 }, down = { 0, -1, 0 };
	struct { long type; char text[8]; } msg = { 1, "hi" }, got;
	int shm, sem, q;
	char *mem;

	shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (shm < 0)
		return fail("shmget");
	mem = shmat(shm, NULL, 0);
	if (mem == (void *)-1)
		return fail("shmat");
	strcpy(mem, "sysv");
	shmdt(mem);
	shmctl(shm, IPC_RMID, NULL);
	sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (sem < 0)
		return fail("semget");
	if (semop(sem, &up, 1) < 0 || semop(sem, &down, 1) < 0)
		return fail("semop");
	semctl(sem, 0, IPC_RMID);
	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (q < 0)
		return fail("msgget");
	if (msgsnd(q, &msg, sizeof(msg.text), 0) < 0)
		return fail("msgsnd");
	if (msgrcv(q, &got, sizeof(got.text), 1, 0) < 0 || strcmp(got.text, "hi") != 0)
		return fail("msgrcv");
	msgctl(q, IPC_RMID, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	char path[256];
	struct stat st;

	if (argc == 3 && strcmp(argv[1], "posix") == 0)
		return posix(argv[2]);
	if (argc == 2 && strcmp(argv[1], "sysv") == 0)
		return sysv();
	if (argc == 3 && strcmp(argv[1], "seen") == 0) {
		snprintf(path, sizeof(path), "/dev/shm/%s", argv[2]);
		return stat(path, &st) == 0 ? 0 : 1;
	}
	fprintf(stderr, "usage: ipcprobe posix NAME | sysv | seen NAME\n");
	return 2;
}
