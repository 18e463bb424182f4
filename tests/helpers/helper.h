/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What every test helper program needs: dying with a message, the
 * monotonic clock, sleeping, and the ready/go handshake with its test.
 * Built with -D_GNU_SOURCE (program_invocation_short_name).
 */
#ifndef LATOP_TEST_HELPER_H
#define LATOP_TEST_HELPER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Exit with a message naming the program and what failed. */
static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(1);
}

/* Return CLOCK_MONOTONIC in ns. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleep ms milliseconds. */
static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Tell the test we are ready (one byte on stdout), then wait for its go. */
static inline void handshake(void)
{
	char c = 'r';

	if (write(1, &c, 1) != 1)
		die("writing ready");
	if (read(0, &c, 1) != 1)
		die("reading go");
}

#endif
