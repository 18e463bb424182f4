/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Points in time as since/until and the TUI's jump prompt take them (queries/qtime.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "queries/qtime.h"
#include "tap.h"

#define S 1000000000LL
/* 2026-11-25 10:00:00 UTC */
#define T 1795600800LL

/* Parse s; check kind and ns. */
static void want(const char *s, enum qtime_kind kind, int64_t ns)
{
	struct qtime t = {0};
	char why[256] = "";
	int rc = qtime_parse(s, &t, why, sizeof(why));

	ok(!rc && t.kind == kind && t.ns == ns, "'%s' -> kind %d, %lld (got rc %d, kind %d, %lld%s%s)",
	   s, kind, (long long)ns, rc, t.kind, (long long)t.ns, *why ? ": " : "", why);
}

/* Check that s is refused with a reason. */
static void bad(const char *s)
{
	struct qtime t;
	char why[256] = "";

	ok(qtime_parse(s, &t, why, sizeof(why)) == -1 && *why, "'%s' is refused (%s)", s, why);
}

/* Check qtime_format of ns in both forms. */
static void fmt(uint64_t ns, const char *text, const char *rfc)
{
	char a[QTIME_BUF], b[QTIME_BUF];

	qtime_format(ns, false, a, sizeof(a));
	qtime_format(ns, true, b, sizeof(b));
	ok(!strcmp(a, text) && !strcmp(b, rfc), "%llu prints '%s' and '%s' (got '%s', '%s')",
	   (unsigned long long)ns, text, rfc, a, b);
}

int main(void)
{
	struct qtime t;
	char why[256];

	setenv("TZ", "UTC", 1);
	tzset();
	want("2026-11-25 10:00:00", QT_ABS, T * S);
	want("2026-11-25 10:00", QT_ABS, T * S);
	want("2026-11-25 10:00:07.25", QT_ABS, (T + 7) * S + S / 4);
	want("2026-11-25T10:00:00Z", QT_ABS, T * S);
	want("2026-11-25t10:00:00z", QT_ABS, T * S);
	want("2026-11-25T11:30:00+01:30", QT_ABS, T * S);
	want("2026-11-25T05:00:00-05:00", QT_ABS, T * S);
	want("2026-11-25 10:00:00.5Z", QT_ABS, T * S + S / 2);
	want("10:05", QT_DAY, 10 * 3600 * S + 5 * 60 * S);
	want("10:05:30", QT_DAY, (10 * 3600 + 5 * 60 + 30) * S);
	want("-5m", QT_REL, -300 * S);
	want("+30s", QT_REL, 30 * S);
	want("-1.5s", QT_REL, -1500000000LL);
	want("-2h", QT_REL, -7200 * S);
	want("+250ms", QT_REL, 250000000LL);
	bad("");
	bad("yesterday");
	bad("2026-11-25");
	bad("2026-11-25 25:00:00");
	bad("2026-11-25 10:60:00");
	bad("2026-13-01 10:00:00");
	bad("2026-02-30 10:00:00");
	bad("2026-11-25 10:00:00 ");
	bad("2026-11-25T10:00:00+1:00");
	bad("2026-11-25T10:00:00+24:00");
	bad("1969-12-31 23:59:59");
	bad("-5");
	bad("-5x");
	bad("-m");
	bad("5m");
	bad("10:5");
	bad("99:00");

	/* resolving */
	ok(qtime_parse("-5m", &t, why, sizeof(why)) == 0 &&
	   qtime_resolve(&t, (uint64_t)T * S) == (uint64_t)(T - 300) * S, "-5m counts back from the end");
	ok(qtime_resolve(&t, 60 * S) == 0, "-5m before a time under 5 minutes is 0");
	ok(qtime_parse("09:30", &t, why, sizeof(why)) == 0 &&
	   qtime_resolve(&t, (uint64_t)(T + 3600) * S) == (uint64_t)(T - 1800) * S,
	   "a time of day is on the reference's day");
	fmt((uint64_t)T * S + 999, "2026-11-25 10:00:00", "2026-11-25T10:00:00+00:00");

	/* another zone: UTC+2 (POSIX TZ, no zone files needed) */
	setenv("TZ", "XYZ-2", 1);
	tzset();
	want("2026-11-25 12:00:00", QT_ABS, T * S);
	want("2026-11-25T10:00:00Z", QT_ABS, T * S);
	want("2026-11-25T12:00:00+02:00", QT_ABS, T * S);
	fmt((uint64_t)T * S, "2026-11-25 12:00:00", "2026-11-25T12:00:00+02:00");
	ok(qtime_parse("00:30", &t, why, sizeof(why)) == 0 &&
	   qtime_resolve(&t, (uint64_t)(T - 11 * 3600) * S) == (uint64_t)(T - 11 * 3600 - 1800) * S,
	   "a time of day is on the reference's local day (01:00 local: 00:30 the same day)");
	setenv("TZ", "ABC+5", 1);
	tzset();
	fmt((uint64_t)T * S, "2026-11-25 05:00:00", "2026-11-25T05:00:00-05:00");
	tap_done();
}
