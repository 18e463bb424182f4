/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sysloop: a tight loop of cheap syscalls, to measure what a tracer adds to
 * each one.  Pins itself to a CPU, warms up, then times batches of calls for
 * a fixed duration (or count) and prints nanoseconds per syscall.
 *
 *   sysloop [-c CPU] [-d SECONDS] [-n CALLS] [-m getppid|pipe] [-w WARMUP_MS]
 *           [-g GO_FILE] [-j]
 *
 * getppid: syscall(SYS_getppid), nothing else (the cheapest real syscall).
 * pipe:    write(1 byte) then read(1 byte) on a pipe: two syscalls per
 *          iteration that touch a file, the number printed is per syscall.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCH_CALLS 1024u
#define MAX_SLICES 100000u

enum mode { MODE_GETPPID, MODE_PIPE };

struct opts {
	int cpu;		/* -1: do not pin */
	double duration_s;
	uint64_t calls;		/* 0: run for duration_s */
	unsigned warmup_ms;
	enum mode mode;
	const char *go_file;	/* wait for this file to exist before starting */
	int json;
};

struct result {
	uint64_t syscalls;
	uint64_t elapsed_ns;
	double ns_per_call;	/* total time / total syscalls */
	double ns_min_slice;	/* the fastest batch, per syscall */
	double ns_median_slice;	/* the median batch, per syscall */
};

/* Return CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Print the usage to out. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: sysloop [-c CPU] [-d SECONDS] [-n CALLS] [-m getppid|pipe] [-w WARMUP_MS]\n"
		"               [-g GO_FILE] [-j]\n"
		"  -c CPU      pin to this CPU (default 1; -1 to not pin)\n"
		"  -d SECONDS  measure for this long (default 1)\n"
		"  -n CALLS    measure this many syscalls instead of a duration\n"
		"  -m MODE     getppid (default) or pipe (1-byte write+read)\n"
		"  -w MS       warm-up before measuring (default 50)\n"
		"  -g FILE     wait (up to 120s) for FILE to exist before the warm-up\n"
		"  -j          print JSON instead of one number (ns per syscall)\n");
}

/* Parse the command line into o; return 0, or -1 after printing why. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	char *end;
	int c;

	*o = (struct opts){.cpu = 1, .duration_s = 1.0, .warmup_ms = 50, .mode = MODE_GETPPID};
	while ((c = getopt(argc, argv, "c:d:n:m:w:g:jh")) != -1) {
		errno = 0;
		switch (c) {
		case 'c': o->cpu = (int)strtol(optarg, &end, 10); break;
		case 'd': o->duration_s = strtod(optarg, &end); break;
		case 'n': o->calls = strtoull(optarg, &end, 10); break;
		case 'w': o->warmup_ms = (unsigned)strtoul(optarg, &end, 10); break;
		case 'm':
			end = optarg + strlen(optarg);
			if (strcmp(optarg, "getppid") == 0)
				o->mode = MODE_GETPPID;
			else if (strcmp(optarg, "pipe") == 0)
				o->mode = MODE_PIPE;
			else
				end = optarg;
			break;
		case 'g': o->go_file = optarg; continue;
		case 'j': o->json = 1; continue;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
		if (errno || end == optarg || *end) {
			fprintf(stderr, "sysloop: bad value '%s' for -%c\n", optarg, c);
			return -1;
		}
	}
	if (optind < argc || o->duration_s <= 0 || o->duration_s > 3600) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Pin the calling thread to cpu. */
static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		fprintf(stderr, "sysloop: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* Wait up to 120 s for path to exist; return 0 once it does. */
static int wait_for_file(const char *path)
{
	for (unsigned i = 0; i < 120000; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "sysloop: %s did not appear within 120s\n", path);
	return -1;
}

/* Make one batch of BATCH_CALLS iterations; return the syscalls made. */
static unsigned run_batch(enum mode mode, const int *pfd)
{
	char byte = 'x';

	if (mode == MODE_GETPPID) {
		for (unsigned i = 0; i < BATCH_CALLS; i++)
			syscall(SYS_getppid);
		return BATCH_CALLS;
	}
	for (unsigned i = 0; i < BATCH_CALLS; i++) {
		if (write(pfd[1], &byte, 1) != 1 || read(pfd[0], &byte, 1) != 1) {
			perror("sysloop: pipe");
			exit(1);
		}
	}
	return 2 * BATCH_CALLS;
}

/* Order two doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Time batches until the duration or the call count is reached. */
static int measure(const struct opts *o, const int *pfd, struct result *r)
{
	uint64_t deadline, start, t0, t1, warm_end;
	double *slice;
	size_t nslice = 0;

	slice = calloc(MAX_SLICES, sizeof(*slice));
	if (!slice) {
		perror("sysloop");
		return -1;
	}
	warm_end = now_ns() + (uint64_t)o->warmup_ms * 1000000ull;
	while (now_ns() < warm_end)
		run_batch(o->mode, pfd);
	*r = (struct result){0};
	start = t0 = now_ns();
	deadline = start + (uint64_t)(o->duration_s * 1e9);
	for (;;) {
		unsigned n = run_batch(o->mode, pfd);

		t1 = now_ns();
		r->syscalls += n;
		if (nslice < MAX_SLICES)
			slice[nslice++] = (double)(t1 - t0) / n;
		t0 = t1;
		if (o->calls ? r->syscalls >= o->calls : t1 >= deadline)
			break;
	}
	r->elapsed_ns = t1 - start;
	r->ns_per_call = (double)r->elapsed_ns / (double)r->syscalls;
	qsort(slice, nslice, sizeof(*slice), cmp_double);
	r->ns_min_slice = slice[0];
	r->ns_median_slice = slice[nslice / 2];
	free(slice);
	return 0;
}

/* Pin, wait for the go file, time the loop and print ns per syscall. */
int main(int argc, char **argv)
{
	struct opts o;
	struct result r;
	int pfd[2] = {-1, -1};

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.cpu >= 0 && pin_to_cpu(o.cpu) < 0)
		return 1;
	if (o.go_file && wait_for_file(o.go_file) < 0)
		return 1;
	if (o.mode == MODE_PIPE && pipe(pfd) < 0) {
		perror("sysloop: pipe");
		return 1;
	}
	if (measure(&o, pfd, &r) < 0)
		return 1;
	if (o.json)
		printf("{\"mode\":\"%s\",\"cpu\":%d,\"syscalls\":%llu,\"elapsed_ns\":%llu,"
		       "\"ns_per_call\":%.2f,\"ns_min_batch\":%.2f,\"ns_median_batch\":%.2f}\n",
		       o.mode == MODE_PIPE ? "pipe" : "getppid", o.cpu,
		       (unsigned long long)r.syscalls, (unsigned long long)r.elapsed_ns,
		       r.ns_per_call, r.ns_min_slice, r.ns_median_slice);
	else
		printf("%.2f\n", r.ns_per_call);
	return 0;
}
