/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * crowd: a bounded CPU crowd, to see whether a recorder keeps time when
 * every CPU is busy.  N threads, each until SECS seconds have passed, loop
 * on either:
 *
 *   crowd N SECS sys     8 getppid calls, then a 1 ms sleep (runnable most
 *                        of the time once N threads share the CPUs)
 *   crowd N SECS spin    8 getppid calls, no sleep (always runnable)
 *
 * No handshake: it starts at once, and every thread stops by itself at the
 * deadline, so the crowd ends even if whoever started it does not.  At the
 * end it prints the loops all threads made (its throughput) on stdout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include "helper.h"

#define MAX_THREADS 512

static uint64_t deadline_ns;
static bool sleepy;
static _Atomic uint64_t total_loops;

/* Loop until the deadline; add this thread's loops to the total. */
static void *crowd_thread(void *arg)
{
	uint64_t loops = 0;
	int i;

	(void)arg;
	while (now_ns() < deadline_ns) {
		for (i = 0; i < 8; i++)
			syscall(SYS_getppid);
		if (sleepy) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
		loops++;
	}
	atomic_fetch_add(&total_loops, loops);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t tids[MAX_THREADS];
	long n, secs, i;

	if (argc != 4 || (strcmp(argv[3], "sys") && strcmp(argv[3], "spin"))) {
		fprintf(stderr, "usage: crowd N SECS sys|spin (N up to %d, SECS up to 60)\n",
			MAX_THREADS);
		return 2;
	}
	n = atol(argv[1]);
	secs = atol(argv[2]);
	if (n < 1 || n > MAX_THREADS || secs < 1 || secs > 60) {
		fprintf(stderr, "crowd: N must be 1 to %d and SECS 1 to 60\n", MAX_THREADS);
		return 2;
	}
	sleepy = !strcmp(argv[3], "sys");
	deadline_ns = now_ns() + (uint64_t)secs * 1000000000ULL;
	for (i = 0; i < n; i++) {
		errno = pthread_create(&tids[i], NULL, crowd_thread, NULL);
		if (errno)
			die("pthread_create");
	}
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	printf("%llu\n", (unsigned long long)atomic_load(&total_loops));
	return 0;
}
