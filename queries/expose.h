/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Query results as metrics: the Prometheus text format 0.0.4 and
 * OpenMetrics 1.0, what `latop report --format` and `latop serve` write.
 *
 * One metric family per result column that is not a key; the key columns
 * are the labels of each row's series.  count and sum() columns are
 * counters (cumulative: OpenMetrics' samples end in _total), dist()
 * columns histograms, every other column (p99(), avg(), max(), rate()...) a
 * gauge.  Durations are in seconds (suffix _seconds), sizes in bytes
 * (_bytes).  A family is named latop_NAME_BASE[_UNIT]: NAME is the caller's,
 * BASE "events" for count, the field for sum(FIELD) and dist(FIELD), the
 * column's name otherwise (an AS name as written); both are sanitized to
 * [a-zA-Z0-9_].  Label values are escaped (\\, \", \n) and valid UTF-8:
 * a byte that starts no well-formed sequence becomes U+FFFD.
 *
 * Histogram buckets: their le bounds are latop's own bucket bounds (log
 * linear, core/lhist.h), EXPOSE_PER_OCTAVE of them per power of two from
 * 2^EXPOSE_LOW_EXP ns up, each bucket's largest value (values are whole
 * nanoseconds, so a le holds exactly the values below the next bound),
 * cumulative, then +Inf, which equals _count.
 *
 * Rows past max_series share one overflow series whose text labels are
 * TABLE_OTHER and numeric ones 0: its counters and histograms hold the
 * rest, so every total stays exact; gauges have no overflow sample (a p99
 * of several rows is not theirs to add up).
 */
#ifndef LATOP_EXPOSE_H
#define LATOP_EXPOSE_H

#include <stdio.h>
#include <stdbool.h>
#include "query.h"

#define EXPOSE_MAX_SERIES 1000	/* default rows with series of their own, per query */
#define EXPOSE_PER_OCTAVE 2	/* histogram buckets per power of two (divides LH_SUB) */
#define EXPOSE_LOW_EXP 7	/* the first bucket holds 0 to 127 ns */

struct expose_opts {
	const char *name;	/* the NAME in latop_NAME_...; NULL: the result's table */
	const char *help;	/* HELP text after the column (the query), or NULL */
	size_t max_series;	/* rows with series of their own; 0: EXPOSE_MAX_SERIES */
	bool openmetrics;	/* OpenMetrics 1.0, else Prometheus text 0.0.4 */
};

/* Which rows have series of their own, kept from one exposition of a
 * query to the next so a series never moves into the overflow one and
 * back (a counter must not go down). */
struct expose_keys;

struct expose_keys *expose_keys_new(void);
void expose_keys_free(struct expose_keys *k);

/*
 * Write r's metric families to out.  keys: the rows admitted so far, to
 * which the first rows (in r's order) not yet in it are added up to
 * max_series; NULL: the first max_series rows of r.  Return how many
 * rows went to the overflow series.
 */
size_t expose_result(FILE *out, const struct result *r, const struct expose_opts *o,
		     struct expose_keys *keys);

/* End an exposition: OpenMetrics' "# EOF" line (nothing for Prometheus). */
void expose_end(FILE *out, bool openmetrics);

/* The Content-Type of an exposition. */
const char *expose_content_type(bool openmetrics);

#endif
