/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Points in time as people write them (since/until, the TUI's jump prompt)
 * and as results print them (group by time(...)'s time column).
 */
#ifndef LATOP_QUERY_QTIME_H
#define LATOP_QUERY_QTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qtime_kind {
	QT_ABS,		/* ns: ns since the epoch */
	QT_REL,		/* ns: an offset from a reference time (-5m: -300e9) */
	QT_DAY,		/* ns: a local time of day, ns after midnight */
};

struct qtime {
	enum qtime_kind kind;
	int64_t ns;
};

/*
 * Parse s into t: "YYYY-MM-DD HH:MM[:SS[.frac]]" (local time, TZ), RFC 3339
 * "YYYY-MM-DDTHH:MM:SS[.frac]" with "Z" or "+HH:MM"/"-HH:MM" (a 'T' or a
 * space between date and time), "HH:MM[:SS]" (a local time of day), or
 * "-DUR"/"+DUR" (relative: a number with a unit ns us ms s m h, e.g. -5m,
 * +1.5s).  0, or -1 with why (a sentence) filled.
 */
int qtime_parse(const char *s, struct qtime *t, char *why, size_t n);
/* The time t names, given reference ref_ns (ns since the epoch): QT_REL
 * counts from ref_ns, QT_DAY is that time on ref_ns's local day; never
 * below 0. */
uint64_t qtime_resolve(const struct qtime *t, uint64_t ref_ns);
/* ns since the epoch as local time: "2026-11-25 10:00:10" (rfc3339 false)
 * or "2026-11-25T10:00:10+01:00" (RFC 3339 with the local offset); the
 * fraction of a second is dropped.  Returns buf. */
char *qtime_format(uint64_t ns, bool rfc3339, char *buf, size_t n);
#define QTIME_BUF 40

#endif
