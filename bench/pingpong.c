/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pingpong: a 1-byte TCP request/response loop over loopback, the cheapest
 * request a flows tracer can see.  A server thread answers each byte with
 * one byte; the client sends, waits for the answer, and times batches of
 * round trips.  Both ends are pinned to one CPU.
 *
 *   pingpong CPU SECONDS [PORT]
 *
 * Prints "ns_median_batch N ns_per_rt N round_trips N cpu_median_batch N
 * cpu_per_rt N": the median over batches of 256 round trips of wall ns per
 * round trip, the plain mean, how many round trips ran, and the same two
 * for the process's CPU time.  Both ends and the kernel's loopback work
 * (softirqs run in their context, BPF programs on the hooks too) are
 * charged to the process; time another tenant takes from the vCPU is not,
 * which makes the CPU figures steadier than the wall ones on a shared
 * machine.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define BATCH 256
#define MAX_BATCHES 200000

static int cpu;

/* Exit with a message naming what failed. */
static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Return CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Return this process's CPU time in ns. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Pin the calling thread to cpu. */
static void pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* Answer every byte on fd with one byte until EOF. */
static void *server(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char c;

	pin();
	while (recv(fd, &c, 1, 0) == 1)
		if (send(fd, &c, 1, 0) != 1)
			break;
	close(fd);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	uint64_t *batches, *cpus, t0, c0, t_end, total = 0, start, cstart;
	int lfd, cfd, sfd, one = 1;
	size_t nb = 0;
	pthread_t th;
	double secs;
	char c = 'x';

	if (argc < 3) {
		fprintf(stderr, "usage: pingpong CPU SECONDS [PORT]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	secs = atof(argv[2]);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(argc > 3 ? atoi(argv[3]) : 0);
	batches = calloc(MAX_BATCHES, sizeof(*batches));
	cpus = calloc(MAX_BATCHES, sizeof(*cpus));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!batches || !cpus || lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		die("bind/listen");
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	sfd = accept(lfd, NULL, NULL);
	if (sfd < 0)
		die("accept");
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pin();
	if (pthread_create(&th, NULL, server, (void *)(intptr_t)sfd))
		die("pthread_create");
	start = now_ns();
	cstart = cpu_ns();
	t_end = start + (uint64_t)(secs * 1e9);
	do {
		int i;

		t0 = now_ns();
		c0 = cpu_ns();
		for (i = 0; i < BATCH; i++)
			if (send(cfd, &c, 1, 0) != 1 || recv(cfd, &c, 1, 0) != 1)
				die("round trip");
		cpus[nb] = cpu_ns() - c0;
		batches[nb++] = now_ns() - t0;
		total += BATCH;
	} while (now_ns() < t_end && nb < MAX_BATCHES);
	secs = (now_ns() - start) / 1e9;
	cstart = cpu_ns() - cstart;
	shutdown(cfd, SHUT_WR);
	pthread_join(th, NULL);
	close(cfd);
	close(lfd);
	qsort(batches, nb, sizeof(*batches), cmp_u64);
	qsort(cpus, nb, sizeof(*cpus), cmp_u64);
	printf("ns_median_batch %.0f ns_per_rt %.0f round_trips %llu cpu_median_batch %.0f "
	       "cpu_per_rt %.0f\n", (double)batches[nb / 2] / BATCH, secs * 1e9 / total,
	       (unsigned long long)total, (double)cpus[nb / 2] / BATCH, (double)cstart / total);
	return 0;
}
