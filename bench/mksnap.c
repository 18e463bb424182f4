/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * mksnap: write a large syscalls recording through core/snapshot.h, the way
 * `latop record` does, for timing replay and report (bench/replay.sh).
 *
 *   mksnap -o FILE [-t TICKS] [-r ROWS] [-p PROCESSES] [-s SEED]
 *
 * Each tick is one second and holds one syscalls frame of ROWS rows: threads
 * of PROCESSES processes, each row one (pid, tid, syscall) with a count, a
 * latency histogram of several distinct values and a state split that sums
 * to the row's time, as the live probe fills it.  The data is deterministic
 * for a given seed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hist.h"
#include "core/snapshot.h"
#include "core/source.h"
#include "core/table.h"
#include "probes/syscalls/syscalls_schema.h"

#define TICK_NS 1000000000ull
#define LAT_VALUES 8	/* distinct latencies per row's histogram */

static const char *const syscall_names[] = {
	"read", "write", "openat", "close", "fstat", "lseek", "mmap", "munmap",
	"futex", "epoll_wait", "recvfrom", "sendto", "poll", "ioctl", "pread64",
	"pwrite64", "getppid", "clock_nanosleep", "newfstatat", "brk", "accept4",
	"connect", "writev", "readv", "fsync", "nanosleep", "getrandom", "statx",
	"rt_sigaction", "select", "recvmsg", "sendmsg",
};
#define NSYSCALLS (sizeof(syscall_names) / sizeof(syscall_names[0]))

static const char *const comms[] = {
	"nginx", "postgres", "redis-server", "java", "python3", "node", "envoy",
	"sshd", "systemd-journal", "containerd",
};
#define NCOMMS (sizeof(comms) / sizeof(comms[0]))

struct opts {
	const char *out;
	unsigned long ticks;
	unsigned long rows;
	unsigned long procs;
	uint64_t seed;
};

/* Return the next pseudo-random number (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Print the usage to out. */
static void usage(FILE *out)
{
	fprintf(out, "usage: mksnap -o FILE [-t TICKS] [-r ROWS] [-p PROCESSES] [-s SEED]\n"
		     "Write a syscalls recording of TICKS one-second ticks x ROWS rows "
		     "(default 600 x 1000, 100 processes).\n");
}

/* Parse the command line into o; return 0, or -1 after printing the usage. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	char *end;
	int c;

	*o = (struct opts){.ticks = 600, .rows = 1000, .procs = 100, .seed = 1};
	while ((c = getopt(argc, argv, "o:t:r:p:s:h")) != -1) {
		unsigned long v = 0;

		if (c != 'o' && c != 'h' && c != '?') {
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0) {
				fprintf(stderr, "mksnap: bad value '%s' for -%c\n", optarg, c);
				return -1;
			}
		}
		switch (c) {
		case 'o': o->out = optarg; break;
		case 't': o->ticks = v; break;
		case 'r': o->rows = v; break;
		case 'p': o->procs = v; break;
		case 's': o->seed = v; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (!o->out || optind < argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Fill one row: key i of the tick, with latencies drawn from seed *s. */
static void fill_row(union cell *c, unsigned long i, const struct opts *o, uint64_t *s,
		     struct hist *h)
{
	unsigned long pid = 1000 + i % o->procs;
	unsigned long tid = pid + (i / o->procs) * 100000;
	unsigned nr = (unsigned)((i * 7 + pid) % NSYSCALLS);
	uint64_t base = 200 + (rnd(s) % 5000) * (nr % 4 == 0 ? 100 : 1);
	uint64_t count = 0, time_ns, offcpu, share[SC_OTHER - SC_RUNQ + 1], left;

	hist_init(h);
	for (int k = 0; k < LAT_VALUES; k++) {
		uint64_t n = 1 + rnd(s) % 200;

		hist_add_n(h, base + rnd(s) % (base * (uint64_t)(k + 1)), n);
		count += n;
	}
	time_ns = h->sum;
	offcpu = nr % 4 == 0 ? time_ns / 2 : time_ns / 20;
	left = time_ns;
	for (int k = 0; k < SC_OTHER - SC_RUNQ; k++) {
		share[k] = left / (4 + rnd(s) % 8);
		left -= share[k];
	}
	share[SC_OTHER - SC_RUNQ] = left;

	c[SC_PID].u = pid;
	c[SC_TID].u = tid;
	cell_set_str(&c[SC_COMM], comms[pid % NCOMMS]);
	cell_set_str(&c[SC_SYSCALL], syscall_names[nr]);
	c[SC_COUNT].u = count;
	c[SC_ERRORS].u = rnd(s) % 16 == 0 ? count / 10 : 0;
	cell_set_hist(&c[SC_LAT], h);
	c[SC_TIME].u = time_ns;
	c[SC_ONCPU].u = time_ns - offcpu;
	c[SC_OFFCPU].u = offcpu;
	for (int k = SC_RUNQ; k <= SC_OTHER; k++)
		c[k].u = share[k - SC_RUNQ];
	c[SC_FAULTS].u = rnd(s) % 4;
	c[SC_CSWITCH].u = offcpu ? count / 4 : 0;
	c[SC_TASKCLOCK].u = time_ns - offcpu;
}

/* Write the recording; return 0 or -1 after printing why. */
static int write_snap(const struct opts *o)
{
	const struct schema *schemas[] = {&syscalls_schema};
	struct source_info info = {
		.host = "mksnap", .kernel = "synthetic", .nschemas = 1, .schemas = schemas,
		.status = "",
	};
	uint64_t seed = o->seed, t0 = 1700000000ull * TICK_NS;
	struct hist *h = hist_new();
	struct snap_writer *w;
	char *cause = NULL;

	w = snap_create(o->out, &info, &cause);
	if (!w)
		goto fail;
	for (unsigned long t = 0; t < o->ticks; t++) {
		uint64_t t_ns = t0 + (t + 1) * TICK_NS;
		struct frame *f = frame_new(&syscalls_schema, t_ns, TICK_NS);
		struct tick tk;

		for (unsigned long i = 0; i < o->rows; i++)
			fill_row(frame_add_row(f), i, o, &seed, h);
		tick_init(&tk, t_ns);
		tick_add(&tk, f);
		if (snap_write_tick(w, &tk, &cause) < 0) {
			tick_done(&tk);
			snap_abandon(w);
			goto fail;
		}
		tick_done(&tk);
	}
	if (snap_close(w, &cause) < 0)
		goto fail;
	hist_free(h);
	return 0;
fail:
	fprintf(stderr, "mksnap: %s\n", cause ? cause : "failed");
	free(cause);
	hist_free(h);
	return -1;
}

/* Parse the options and write the recording. */
int main(int argc, char **argv)
{
	struct opts o;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	return write_snap(&o) < 0 ? 1 : 0;
}
