/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Human formatting of durations, sizes, counts and times. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "fmt.h"

/* Print v with three significant digits and a unit: 1.84us, 12.3ms, 512K. */
static void fmt_sig3(double v, const char *unit, char *buf, size_t n)
{
	if (v < 9.995)
		snprintf(buf, n, "%.2f%s", v, unit);
	else if (v < 99.95)
		snprintf(buf, n, "%.1f%s", v, unit);
	else
		snprintf(buf, n, "%.0f%s", v, unit);
}

char *fmt_dur(uint64_t ns, char *buf, size_t n)
{
	/* The largest unit that keeps three digits. */
	uint64_t s, m, h;

	if (ns < 1000)
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
	else if (ns < 999500ULL)
		fmt_sig3((double)ns / 1e3, "us", buf, n);
	else if (ns < 999500000ULL)
		fmt_sig3((double)ns / 1e6, "ms", buf, n);
	else if (ns < 59950000000ULL)
		fmt_sig3((double)ns / 1e9, "s", buf, n);
	else {
		s = ns / 1000000000ULL + (ns % 1000000000ULL >= 500000000ULL);
		m = s / 60;
		h = m / 60;
		if (h == 0)
			snprintf(buf, n, "%llum%02llus", (unsigned long long)m,
				 (unsigned long long)(s % 60));
		else if (h < 24)
			snprintf(buf, n, "%lluh%02llum", (unsigned long long)h,
				 (unsigned long long)(m % 60));
		else
			snprintf(buf, n, "%llud%02lluh", (unsigned long long)(h / 24),
				 (unsigned long long)(h % 24));
	}
	return buf;
}

/* Format v scaled by powers of base with suffixes K, M, G, T, P, E. */
static void fmt_scaled(uint64_t v, double base, int sig3, char *buf, size_t n)
{
	static const char *units[] = {"K", "M", "G", "T", "P", "E"};
	double d = (double)v;
	size_t u;

	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		d /= base;
		if (d < 999.5 || u + 1 == sizeof(units) / sizeof(units[0]))
			break;
	}
	if (sig3)
		fmt_sig3(d, units[u], buf, n);
	else if (d < 99.95)
		snprintf(buf, n, "%.1f%s", d, units[u]);
	else
		snprintf(buf, n, "%.0f%s", d, units[u]);
}

char *fmt_size(uint64_t bytes, char *buf, size_t n)
{
	if (bytes < 1024)
		snprintf(buf, n, "%lluB", (unsigned long long)bytes);
	else
		fmt_scaled(bytes, 1024.0, 0, buf, n);
	return buf;
}

char *fmt_count(uint64_t v, char *buf, size_t n)
{
	if (v < 1000)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else
		fmt_scaled(v, 1000.0, 1, buf, n);
	return buf;
}

char *fmt_time(uint64_t t_ns, char *buf, size_t n)
{
	time_t s = (time_t)(t_ns / 1000000000ULL);
	struct tm tm;

	if (!localtime_r(&s, &tm)) {
		snprintf(buf, n, "??:??:??.???");
		return buf;
	}
	snprintf(buf, n, "%02d:%02d:%02d.%03u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(t_ns / 1000000ULL % 1000));
	return buf;
}

/* Return the edit distance (insert, delete, substitute, transpose) of a and b. */
static size_t text_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t *d, r;

	if (la > 64 || lb > 64)
		return 64;
	d = calloc((la + 1) * (lb + 1), sizeof(*d));
	if (!d)
		return 64;
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t c = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);

			if (D(i - 1, j) + 1 < c)
				c = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < c)
				c = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < c)
				c = D(i - 2, j - 2) + 1;
			D(i, j) = c;
		}
	}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *text_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t i, best = SIZE_MAX, len = strlen(word);
	size_t limit = len <= 4 ? 1 : 2;
	const char *pick = NULL;

	for (i = 0; i < n && cands[i]; i++) {
		size_t dist;

		if (!strcmp(cands[i], word))
			continue;
		dist = text_distance(word, cands[i]);
		if (dist <= limit && dist < len && dist < best) {
			best = dist;
			pick = cands[i];
		}
	}
	return pick;
}
