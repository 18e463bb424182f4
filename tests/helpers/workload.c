/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Known syscall workloads for the live probe tests.  Every mode first writes
 * one byte to stdout ("ready") and blocks reading one byte from stdin ("go"),
 * so the test can install a filter before the work starts; after go it makes
 * exactly the syscalls its mode names, and exits.
 *
 *   workload sysload N        N getppid, N write(/dev/null, 64 B), N read(/dev/zero, 64 B)
 *   workload pipewait MS      read() on a pipe a thread writes to MS ms after the
 *                             read blocked (however late it began)
 *   workload sockwait MS      read() then recv() on a TCP loopback socket, each
 *                             answered by a thread after MS ms
 *   workload lockwait MS      a thread holds a mutex for MS ms; main blocks on it (futex)
 *   workload fileio N DIR     N times: write 64 KiB to a file in DIR and fsync it
 *   workload spin N           no handshake: N getppid in a tight loop, prints ns per call
 *   workload threads N RATE   N short-lived threads, RATE a second, one after another;
 *                             each makes 16 different cheap syscalls once (one getppid)
 *   workload crowd N CALLS [named]
 *                             no handshake: named crowd, N threads alive at once, each making
 *                             getppid, getpid, gettid, getuid, geteuid, getgid,
 *                             getegid and getpgrp CALLS times; named: thread i first
 *                             renames itself crowd-i (a name of its own)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "helper.h"

static long delay_ms;
static int wfd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;

/* Make N of each of three cheap syscalls. */
static void sysload(long n)
{
	char buf[64] = {0};
	int null_fd = open("/dev/null", O_WRONLY), zero_fd = open("/dev/zero", O_RDONLY);
	long i;

	if (null_fd < 0 || zero_fd < 0)
		die("opening /dev/null and /dev/zero");
	handshake();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	for (i = 0; i < n; i++)
		if (write(null_fd, buf, sizeof(buf)) != sizeof(buf))
			die("write /dev/null");
	for (i = 0; i < n; i++)
		if (read(zero_fd, buf, sizeof(buf)) != sizeof(buf))
			die("read /dev/zero");
}

static pid_t waiter_tid;	/* the thread the late writer answers */

/*
 * Wait (up to 5 s) until waiter_tid sleeps inside a system call: its
 * /proc syscall file names one and its state is S.  Its wait then lasts
 * delay_ms from its start however late the scheduler let it begin.
 */
static void wait_until_blocked(void)
{
	char path[64], buf[64];
	int i;

	for (i = 0; i < 5000; i++) {
		FILE *f;
		int n = 0;

		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)waiter_tid);
		if ((f = fopen(path, "r"))) {
			n = fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)waiter_tid);
		if (n && (f = fopen(path, "r"))) {
			char st = 0;

			n = fscanf(f, "%*d %*s %c", &st) == 1 && st == 'S';
			fclose(f);
			if (n)
				return;
		}
		sleep_ms(1);
	}
}

/* Write one byte to wfd delay_ms after the waiter blocked. */
static void *late_writer(void *arg __attribute__((unused)))
{
	char c = 'x';

	wait_until_blocked();
	sleep_ms(delay_ms);
	if (write(wfd, &c, 1) != 1)
		die("late write");
	return NULL;
}

/* Start late_writer on fd. */
static pthread_t start_writer(int fd)
{
	pthread_t t;

	wfd = fd;
	waiter_tid = (pid_t)syscall(SYS_gettid);
	if (pthread_create(&t, NULL, late_writer, NULL))
		die("pthread_create");
	return t;
}

/* Block in read() on a pipe for delay_ms. */
static void pipewait(void)
{
	int p[2];
	char c;
	pthread_t t;

	if (pipe(p))
		die("pipe");
	handshake();
	t = start_writer(p[1]);
	if (read(p[0], &c, 1) != 1)
		die("read pipe");
	pthread_join(t, NULL);
}

/* Connect a TCP loopback pair: *a and *b. */
static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len))
		die("listening on loopback");
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
		die("connecting on loopback");
	*b = accept(l, NULL, NULL);
	if (*b < 0)
		die("accept");
	close(l);
}

/* Block in read() and then recv() on a TCP socket, delay_ms each. */
static void sockwait(void)
{
	int a, b;
	char c;
	pthread_t t;

	tcp_pair(&a, &b);
	handshake();
	t = start_writer(b);
	if (read(a, &c, 1) != 1)
		die("read socket");
	pthread_join(t, NULL);
	t = start_writer(b);
	if (recv(a, &c, 1, 0) != 1)
		die("recv socket");
	pthread_join(t, NULL);
}

/* Hold the mutex for delay_ms. */
static void *holder(void *arg __attribute__((unused)))
{
	pthread_mutex_lock(&mu);
	pthread_barrier_wait(&held);
	sleep_ms(delay_ms);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Block on a mutex another thread holds for delay_ms. */
static void lockwait(void)
{
	pthread_t t;

	pthread_barrier_init(&held, NULL, 2);
	handshake();
	if (pthread_create(&t, NULL, holder, NULL))
		die("pthread_create");
	pthread_barrier_wait(&held);
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
}

/* Write and fsync a file n times. */
static void fileio(long n, const char *dir)
{
	static char buf[65536];
	char path[4096];
	long i;
	int fd;

	snprintf(path, sizeof(path), "%s/latop-fileio.%d", dir, getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	memset(buf, 'x', sizeof(buf));
	handshake();
	for (i = 0; i < n; i++) {
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			die("write file");
		if (fsync(fd))
			die("fsync");
	}
	close(fd);
	unlink(path);
}

/* Eight cheap syscalls that take no argument, once each. */
static void eight_calls(void)
{
	syscall(SYS_getppid);
	syscall(SYS_getpid);
	syscall(SYS_gettid);
	syscall(SYS_getuid);
	syscall(SYS_geteuid);
	syscall(SYS_getgid);
	syscall(SYS_getegid);
	syscall(SYS_getpgrp);
}

/* One short-lived thread: 16 different cheap syscalls, once each. */
static void *one_of_many(void *arg)
{
	struct { long v[16]; } buf;

	(void)arg;
	eight_calls();
	syscall(SYS_getpgid, 0);
	syscall(SYS_getsid, 0);
	syscall(SYS_sched_yield);
	syscall(SYS_getpriority, 0, 0);
	syscall(SYS_times, &buf);
	syscall(SYS_getrlimit, 0, &buf);
	syscall(SYS_getresuid, &buf.v[0], &buf.v[1], &buf.v[2]);
	syscall(SYS_getresgid, &buf.v[0], &buf.v[1], &buf.v[2]);
	return NULL;
}

/* n threads, one after another, rate a second. */
static void threads(long n, long rate)
{
	uint64_t start;
	pthread_t th;
	long i;

	handshake();
	start = now_ns();
	for (i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, one_of_many, NULL) || pthread_join(th, NULL))
			die("pthread_create");
		while (now_ns() - start < (uint64_t)(i + 1) * 1000000000ull / (uint64_t)rate)
			sleep_ms(1);
	}
}

static pthread_barrier_t crowd_start, crowd_end;
static long crowd_calls;
static int crowd_named;

/* One thread of a crowd: 8 cheap syscalls crowd_calls times each, all the
 * crowd alive together from the first call to the last. */
static void *crowd_member(void *arg)
{
	char name[16];
	long i;

	if (crowd_named) {
		snprintf(name, sizeof(name), "crowd-%ld", (long)(intptr_t)arg);
		prctl(PR_SET_NAME, name);
	}
	pthread_barrier_wait(&crowd_start);
	for (i = 0; i < crowd_calls; i++)
		eight_calls();
	pthread_barrier_wait(&crowd_end);
	return NULL;
}

/* n threads at once, each making each of 8 syscalls calls times (no
 * handshake: run it under a recording). */
static void crowd(long n, long calls)
{
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	pthread_attr_t attr;
	long i;

	if (!th || n < 1)
		die("crowd");
	prctl(PR_SET_NAME, "crowd");	/* its threads' name: apart from other tests' */
	crowd_calls = calls;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&crowd_start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&crowd_end, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], &attr, crowd_member, (void *)(intptr_t)i))
			die("pthread_create");
	pthread_barrier_wait(&crowd_start);
	pthread_barrier_wait(&crowd_end);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
}

/* Time n getppid calls and print the mean ns per call. */
static void spin(long n)
{
	struct timespec a, b;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: workload sysload|pipewait|sockwait|lockwait|fileio|spin|threads|crowd ARG [DIR|RATE|CALLS] [named]\n");
		return 2;
	}
	delay_ms = atol(argv[2]);
	if (!strcmp(argv[1], "sysload"))
		sysload(atol(argv[2]));
	else if (!strcmp(argv[1], "pipewait"))
		pipewait();
	else if (!strcmp(argv[1], "sockwait"))
		sockwait();
	else if (!strcmp(argv[1], "lockwait"))
		lockwait();
	else if (!strcmp(argv[1], "spin"))
		spin(atol(argv[2]));
	else if (!strcmp(argv[1], "threads") && argc == 4 && atol(argv[3]) > 0)
		threads(atol(argv[2]), atol(argv[3]));
	else if (!strcmp(argv[1], "crowd") && (argc == 4 || (argc == 5 && !strcmp(argv[4], "named"))) &&
		 atol(argv[3]) > 0) {
		crowd_named = argc == 5;
		crowd(atol(argv[2]), atol(argv[3]));
	}
	else if (!strcmp(argv[1], "fileio") && argc == 4)
		fileio(atol(argv[2]), argv[3]);
	else {
		fprintf(stderr, "workload: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
