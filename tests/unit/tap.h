/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A tiny TAP producer for unit tests: tests/run.sh counts the lines. */
#ifndef LATOP_TAP_H
#define LATOP_TAP_H

#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

/* Report one check; cond is evaluated once. */
#define ok(cond, ...) do { \
	int tap_pass_ = !!(cond); \
	tap_n++; \
	if (tap_pass_) { printf("ok %d - ", tap_n); } \
	else { tap_failed++; printf("not ok %d - ", tap_n); } \
	printf(__VA_ARGS__); printf("\n"); \
	if (!tap_pass_) printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	fflush(stdout); \
} while (0)

#define skip(...) do { tap_n++; printf("ok %d # SKIP ", tap_n); printf(__VA_ARGS__); \
	printf("\n"); fflush(stdout); } while (0)

#define tap_done() do { printf("1..%d\n", tap_n); return tap_failed ? 1 : 0; } while (0)

#endif
