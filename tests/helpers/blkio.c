/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Known block I/O for the live block tests: COUNT direct I/Os of SIZE bytes
 * on a block device (or a file on one), from DEPTH threads at once, each at
 * its own aligned offset.  Like workload, it writes one byte ("ready") and waits for one
 * byte on stdin ("go") before the I/O, unless the mode ends in "-now".
 *
 *   blkio read DEV SIZE COUNT DEPTH     COUNT preads  (O_DIRECT)
 *   blkio write DEV SIZE COUNT DEPTH    COUNT pwrites (O_DIRECT)
 *   blkio fsync DEV 0 COUNT 1           COUNT fsyncs: one flush each
 *   blkio randread DEV SIZE SECONDS DEPTH   random reads for SECONDS, prints IOPS
 *   blkio randwrite DEV SIZE SECONDS DEPTH  random writes for SECONDS, prints IOPS
 *   blkio read-rename DEV SIZE COUNT DEPTH  COUNT preads, then the process renames
 *                                           itself blkio-renamed and makes COUNT more
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include "helper.h"

static int fd;
static size_t size;
static long count, depth;
static int mode;		/* 0 read, 1 write, 2 randread, 3 fsync, 4 randwrite */
static double seconds;
static unsigned long long dev_bytes;
static long done_total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* Return CLOCK_MONOTONIC in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Do thread t's share of the I/O. */
static void *worker(void *arg)
{
	long t = (long)arg, i, n = 0;
	unsigned seed = (unsigned)t * 7919u + 1;
	void *buf;
	double end = now_s() + seconds;
	bool timed = mode == 2 || mode == 4, wr = mode == 1 || mode == 4;

	if (posix_memalign(&buf, 4096, size))
		die("posix_memalign");
	memset(buf, 0x5a, size);
	for (i = t; timed || i < count; i += depth) {
		off_t off = (off_t)(i * size) % (off_t)(dev_bytes - dev_bytes % size);
		ssize_t r;

		if (timed) {
			if ((n & 63) == 0 && now_s() >= end)
				break;
			off = (off_t)(rand_r(&seed) % (dev_bytes / size)) * size;
		}
		r = wr ? pwrite(fd, buf, size, off) : pread(fd, buf, size, off);
		if (r != (ssize_t)size)
			die(wr ? "pwrite" : "pread");
		n++;
	}
	pthread_mutex_lock(&mu);
	done_total += n;
	pthread_mutex_unlock(&mu);
	free(buf);
	return NULL;
}

/* Run depth workers and wait for them. */
static void run_workers(void)
{
	pthread_t th[256];
	long t;

	for (t = 0; t < depth; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			die("pthread_create");
	for (t = 0; t < depth; t++)
		pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
	const char *m;
	bool hs = true;
	char c = 'r';
	long t;
	double t0;
	struct stat st;

	if (argc != 6) {
		fprintf(stderr, "usage: blkio read|write|fsync|randread|randwrite|read-rename[-now] "
			"DEV SIZE COUNT DEPTH\n");
		return 2;
	}
	m = argv[1];
	if (strstr(m, "-now"))
		hs = false;
	mode = !strncmp(m, "write", 5) ? 1 : !strncmp(m, "randread", 8) ? 2 :
	       !strncmp(m, "fsync", 5) ? 3 : !strncmp(m, "randwrite", 9) ? 4 : 0;
	size = strtoul(argv[3], NULL, 0);
	count = strtol(argv[4], NULL, 0);
	depth = strtol(argv[5], NULL, 0);
	seconds = (double)count;
	if (depth < 1 || depth > 256 || (mode != 3 && (size < 512 || size % 512)))
		return 2;
	fd = open(argv[2], (mode == 1 || mode >= 3 ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0)
		die(argv[2]);
	if (fstat(fd, &st))
		die("fstat");
	if (S_ISREG(st.st_mode))
		dev_bytes = st.st_size;
	else if (ioctl(fd, BLKGETSIZE64, &dev_bytes))
		die("BLKGETSIZE64");
	if (hs) {
		if (write(1, &c, 1) != 1)
			die("writing ready");
		if (read(0, &c, 1) != 1)
			die("reading go");
	}
	if (mode == 3) {
		for (t = 0; t < count; t++)
			if (fsync(fd))
				die("fsync");
		return 0;
	}
	t0 = now_s();
	run_workers();
	if (strstr(m, "-rename")) {
		if (prctl(PR_SET_NAME, "blkio-renamed", 0, 0, 0))
			die("prctl PR_SET_NAME");
		run_workers();
	}
	if (mode == 2 || mode == 4)
		printf("%.0f\n", done_total / (now_s() - t0));
	return 0;
}
