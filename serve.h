/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * latop serve: a headless daemon that runs the probes and serves what they
 * count over HTTP (libmicrohttpd): GET /metrics, every metric query's
 * result as Prometheus text (OpenMetrics when the Accept header asks for
 * application/openmetrics-text), counters and histograms cumulative since
 * serve started; GET /snapshot?last=DUR, a recording of the ticks kept in
 * memory (the last --history).  latop(1) SERVE says what users get.
 *
 * The collector (the calling thread) reads the live source; the HTTP server
 * runs in a thread of its own.  They share only the newest results and the
 * ring of recent ticks, each behind a lock held for pointer copies and
 * reference counts: the collector never waits on a client.
 */
#ifndef LATOP_SERVE_H
#define LATOP_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVE_DEFAULT_PORT 9617		/* in the range Prometheus exporters use */
#define SERVE_HISTORY_MAX_BYTES (256ULL << 20)	/* the ring's memory bound, whatever --history */
#define SERVE_CONN_LIMIT 256		/* concurrent connections; more are refused */
#define SERVE_CONN_TIMEOUT_S 10		/* an idle connection is closed after this */
#define SERVE_CONN_MEMORY (32 << 10)	/* a request's headers: more get 431 */

struct serve_metric_arg {
	const char *name;	/* [a-z0-9_]: latop_NAME_... */
	const char *query;
};

struct serve_opts {
	const char *listen;		/* "ADDR:PORT", "ADDR", ":PORT"; NULL: 127.0.0.1:9617 */
	uint64_t interval_ns;		/* tick interval */
	uint64_t history_ns;		/* the ring: ticks of the last history_ns */
	size_t max_series;		/* per metric; 0: EXPOSE_MAX_SERIES */
	bool no_defaults;		/* without the default metrics */
	size_t nmetrics;		/* --metric NAME=QUERY, in order */
	const struct serve_metric_arg *metrics;
	/* Parse a duration ("60s", "5m") for /snapshot?last=; -1 with *cause. */
	int (*parse_duration)(const char *s, uint64_t *ns, char **cause);
};

/*
 * Run serve until SIGINT or SIGTERM: check the metrics (every default
 * unless o->no_defaults, the latoprc's serve_metrics, then o->metrics; a bad one is an error naming
 * it), bind the address, open the probes, collect.  Return the exit status:
 * 0 stopped cleanly, 1 a failure at run time (said on stderr), 2 a bad
 * option or metric.
 */
int serve_run(const struct serve_opts *o);
/* The latoprc keys serve reads, NULL-terminated. */
extern const char *const serve_config_keys[];

#endif
