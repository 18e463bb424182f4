/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Processes and threads that change their names, exec and exit, for the
 * live tests of which name (comm) and how many calls the syscalls table
 * shows.  No handshake: the test starts a recorder first.  Every mode makes
 * exactly the getppid calls it names (a loader or libc makes none).
 *
 *   renamer getppid N            N getppid
 *   renamer exec K N             exec itself K times, then N getppid
 *   renamer threadexec N         a second thread execs it as "renamer exec 0 N"
 *                                (the kernel gives it the process's id)
 *   renamer prctl B NAME A       B getppid, prctl(PR_SET_NAME, NAME), A getppid
 *   renamer thread B A           a thread names itself wk-a (prctl) and makes
 *                                B getppid; main renames it wk-b (through
 *                                /proc/self/task/TID/comm); it makes A more
 *   renamer forkexit N           prints its pid; N children each _exit(0)
 *                                (exit_group); reaps them
 *   renamer threadexit N         N threads, one after another, each ending
 *                                with the exit system call
 *   renamer signals N            N SIGUSR1 to itself, each handler returning
 *                                through rt_sigreturn
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helper.h"

static pthread_barrier_t named, renamed;
static long before_n, after_n;

/* Make n getppid calls. */
static void getppids(long n)
{
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* Exec this program again with k - 1, or make n getppid when k is 0. */
static void reexec(long k, long n)
{
	char kbuf[24], nbuf[24], self[4096];
	ssize_t len;

	if (k <= 0) {
		getppids(n);
		return;
	}
	/* By its own path: an exec names the thread after the file it runs. */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		die("readlink /proc/self/exe");
	self[len] = 0;
	snprintf(kbuf, sizeof(kbuf), "%ld", k - 1);
	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	execl(self, "renamer", "exec", kbuf, nbuf, (char *)NULL);
	die(self);
}

/* The exec of threadexec: from a thread that is not the process's first. */
static void *exec_from_thread(void *arg)
{
	reexec(1, (long)arg);
	return NULL;
}

/* Exec from a second thread while the first waits for it. */
static void threadexec(long n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, exec_from_thread, (void *)n))
		die("pthread_create");
	pthread_join(t, NULL);
}

/* Make b getppid, rename the process's only thread to name, make a more. */
static void prctl_rename(long b, const char *name, long a)
{
	getppids(b);
	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		die("prctl PR_SET_NAME");
	getppids(a);
}

/* The renamed thread: before_n calls as wk-a, after_n as wk-b. */
static void *renamed_thread(void *arg __attribute__((unused)))
{
	if (pthread_setname_np(pthread_self(), "wk-a"))
		die("pthread_setname_np self");
	getppids(before_n);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&renamed);
	getppids(after_n);
	return NULL;
}

/* Run renamed_thread, renaming it from here between its two batches. */
static void thread_rename(void)
{
	pthread_t t;

	pthread_barrier_init(&named, NULL, 2);
	pthread_barrier_init(&renamed, NULL, 2);
	if (pthread_create(&t, NULL, renamed_thread, NULL))
		die("pthread_create");
	pthread_barrier_wait(&named);
	if (pthread_setname_np(t, "wk-b"))
		die("pthread_setname_np other");
	pthread_barrier_wait(&renamed);
	pthread_join(t, NULL);
}

/* Fork n children that end in exit_group at once; reap them. */
static void forkexit(long n)
{
	long i;

	printf("%d\n", getpid());
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid)
			die("waitpid");
	}
}

/* A thread that only ends. */
static void *ending(void *arg)
{
	return arg;
}

/* Start and join n threads, one after another. */
static void threadexit(long n)
{
	pthread_t t;
	long i;

	for (i = 0; i < n; i++)
		if (pthread_create(&t, NULL, ending, NULL) || pthread_join(t, NULL))
			die("pthread_create");
}

static void on_usr1(int sig __attribute__((unused)))
{
}

/* Send SIGUSR1 to this thread n times; each handler returns. */
static void signals(long n)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	long i;

	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	for (i = 0; i < n; i++)
		if (raise(SIGUSR1))
			die("raise");
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "getppid") && argc == 3)
		getppids(atol(argv[2]));
	else if (!strcmp(m, "exec") && argc == 4)
		reexec(atol(argv[2]), atol(argv[3]));
	else if (!strcmp(m, "threadexec") && argc == 3)
		threadexec(atol(argv[2]));
	else if (!strcmp(m, "prctl") && argc == 5)
		prctl_rename(atol(argv[2]), argv[3], atol(argv[4]));
	else if (!strcmp(m, "thread") && argc == 4) {
		before_n = atol(argv[2]);
		after_n = atol(argv[3]);
		thread_rename();
	} else if (!strcmp(m, "forkexit") && argc == 3)
		forkexit(atol(argv[2]));
	else if (!strcmp(m, "threadexit") && argc == 3)
		threadexit(atol(argv[2]));
	else if (!strcmp(m, "signals") && argc == 3)
		signals(atol(argv[2]));
	else {
		fprintf(stderr, "usage: renamer getppid N | exec K N | threadexec N | prctl B NAME A | "
			"thread B A | "
			"forkexit N | threadexit N | signals N\n");
		return 2;
	}
	return 0;
}
