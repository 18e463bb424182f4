/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Parse and print points in time (see qtime.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "qtime.h"

#define NS 1000000000LL

/* Read exactly n digits at *s into *v; advance *s.  false if they are not there. */
static bool qtime_digits(const char **s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		*v = *v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	return true;
}

/* Read ".digits" at *s as ns (rounded down past 9 digits); advance *s. */
static int64_t qtime_frac(const char **s)
{
	int64_t v = 0, mult = NS / 10;

	if (**s != '.' || !isdigit((unsigned char)(*s)[1]))
		return 0;
	for ((*s)++; isdigit((unsigned char)**s); (*s)++, mult /= 10)
		v += (**s - '0') * mult;
	return v;
}

/* Parse "HH:MM[:SS[.frac]]" at *s into seconds and ns; advance *s. */
static bool qtime_clock(const char **s, int *h, int *m, int *sec, int64_t *frac)
{
	*sec = 0;
	*frac = 0;
	if (!qtime_digits(s, 2, h) || **s != ':' || (++*s, !qtime_digits(s, 2, m)))
		return false;
	if (**s == ':') {
		(*s)++;
		if (!qtime_digits(s, 2, sec))
			return false;
		*frac = qtime_frac(s);
	}
	return *h <= 23 && *m <= 59 && *sec <= 59;
}

/* Parse a relative time: [+-]number[.digits]unit. */
static int qtime_rel(const char *s, struct qtime *t, char *why, size_t n)
{
	static const struct { const char *name; int64_t mult; } units[] = {
		{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", NS}, {"m", 60 * NS},
		{"h", 3600 * NS},
	};
	const char *p = s + 1, *u;
	long double v = 0, f = 0.1L;
	size_t i;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++)
		v = v * 10 + (*p - '0');
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++, f /= 10)
			v += (*p - '0') * f;
	u = p;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].name))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		goto bad;
	v *= units[i].mult;
	if (v > 9.2e18L)
		goto bad;
	t->kind = QT_REL;
	t->ns = (int64_t)(v + 0.5L) * (*s == '-' ? -1 : 1);
	return 0;
bad:
	snprintf(why, n, "'%.60s' is not a relative time: a sign and a duration with a unit "
		 "(ns us ms s m h), e.g. -5m", s);
	return -1;
}

int qtime_parse(const char *s, struct qtime *t, char *why, size_t n)
{
	const char *p = s;
	int y, mo, d, h, mi, sec, oh, om;
	int64_t frac;
	struct tm tm = {0};
	time_t secs;

	if (*s == '-' || *s == '+')
		return qtime_rel(s, t, why, n);
	if (strlen(s) >= 3 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
	    s[2] == ':') {
		if (!qtime_clock(&p, &h, &mi, &sec, &frac) || *p)
			goto bad;
		t->kind = QT_DAY;
		t->ns = ((int64_t)h * 3600 + mi * 60 + sec) * NS + frac;
		return 0;
	}
	if (!qtime_digits(&p, 4, &y) || *p++ != '-' || !qtime_digits(&p, 2, &mo) ||
	    *p++ != '-' || !qtime_digits(&p, 2, &d) || (*p != ' ' && *p != 'T' && *p != 't'))
		goto bad;
	p++;
	if (!qtime_clock(&p, &h, &mi, &sec, &frac) || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    y < 1970)
		goto bad;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	if (!*p) {
		tm.tm_isdst = -1;
		secs = mktime(&tm);
		if (secs == (time_t)-1 || tm.tm_mday != d || tm.tm_hour != h || tm.tm_min != mi) {
			snprintf(why, n, "'%.60s' is not a time that exists in the local time zone", s);
			return -1;
		}
	} else {
		secs = timegm(&tm);
		if (tm.tm_mday != d)
			goto bad;
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int sign = *p++ == '-' ? -1 : 1;

			if (!qtime_digits(&p, 2, &oh) || *p++ != ':' || !qtime_digits(&p, 2, &om) ||
			    oh > 23 || om > 59)
				goto bad;
			secs -= sign * (oh * 3600 + om * 60);
		} else {
			goto bad;
		}
		if (*p)
			goto bad;
	}
	if (secs < 0)
		goto bad;
	t->kind = QT_ABS;
	t->ns = (int64_t)secs * NS + frac;
	return 0;
bad:
	snprintf(why, n, "'%.60s' is not a time: write 'YYYY-MM-DD HH:MM[:SS]' (local time), "
		 "RFC 3339 ('2026-11-25T10:00:00Z', '...+01:00'), 'HH:MM[:SS]' or -DURATION "
		 "(e.g. -5m)", s);
	return -1;
}

uint64_t qtime_resolve(const struct qtime *t, uint64_t ref_ns)
{
	time_t secs = (time_t)(ref_ns / NS);
	struct tm tm;
	int64_t v;

	switch (t->kind) {
	case QT_ABS:
		return (uint64_t)t->ns;
	case QT_REL:
		v = (int64_t)ref_ns + t->ns;
		return v < 0 ? 0 : (uint64_t)v;
	default:
		if (!localtime_r(&secs, &tm))
			return 0;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		secs = mktime(&tm);
		v = (int64_t)secs * NS + t->ns;
		return secs == (time_t)-1 || v < 0 ? 0 : (uint64_t)v;
	}
}

char *qtime_format(uint64_t ns, bool rfc3339, char *buf, size_t n)
{
	time_t secs = (time_t)(ns / NS);
	struct tm tm;
	char z[40];
	long off;

	if (!localtime_r(&secs, &tm)) {
		snprintf(buf, n, "?");
		return buf;
	}
	if (!rfc3339) {
		strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
		return buf;
	}
	off = tm.tm_gmtoff / 60;
	snprintf(z, sizeof(z), "%c%02ld:%02ld", off < 0 ? '-' : '+', (off < 0 ? -off : off) / 60,
		 (off < 0 ? -off : off) % 60);
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d%s", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, z);
	return buf;
}
