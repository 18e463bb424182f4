/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * How big a POSIX extended regex grows in regcomp, measured without
 * compiling it, so the parser can refuse a pattern that would take the
 * memory or the stack (queries/parser.c).
 *
 * glibc's regcomp writes a bounded repetition out as copies of what it
 * repeats (a{2,5} becomes aa and three optional a's), and its memory grows
 * with the square of the optional copies: a{1,10000} takes 790 MB,
 * (a{1,1000}){1,1000} 8 GB.  Its parser also recurses once per group:
 * 30,000 nested groups overflow the stack.
 *
 * A piece is an atom (a character, '.', an anchor, a bracket expression, an
 * escape) or a group (one, plus its pieces).  A repetition multiplies the
 * piece it follows by its copies: {m,n} n, {m,} m + 1, {m} m, '+' 2, '*'
 * and '?' 1, never fewer than 1; stacked repetitions multiply again.
 * Whatever regcomp would reject counts as plain characters: regcomp then
 * says what is wrong with it.
 *
 * A repetition of a piece that can match nothing (an anchor, a group with an
 * empty or nullable branch, a piece already under *, ? or {0,n}) is refused
 * whatever its size: glibc computes epsilon closures over it in time that
 * grows with a high power of the nesting, ((((($())+)+)+)+)+ alone (19
 * characters) runs for minutes.  Such a repetition adds nothing the
 * pattern without it does not match.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

/* Counts stop growing here, far past any limit. */
#define REGEX_CAP 1000000000000ULL

/* Return a + b, at most REGEX_CAP (a, b <= REGEX_CAP). */
static uint64_t regex_add(uint64_t a, uint64_t b)
{
	return a + b > REGEX_CAP ? REGEX_CAP : a + b;
}

/* Return a * b, at most REGEX_CAP. */
static uint64_t regex_mul(uint64_t a, uint64_t b)
{
	return b && a > REGEX_CAP / b ? REGEX_CAP : a * b;
}

/* Read a decimal count at s[*i] (capped), moving *i past it; false if none. */
static bool regex_count(const char *s, size_t *i, uint64_t *v)
{
	size_t start = *i;

	*v = 0;
	for (; isdigit((unsigned char)s[*i]); (*i)++)
		*v = regex_add(regex_mul(*v, 10), (uint64_t)(s[*i] - '0'));
	return *i > start;
}

/* Return the length of the interval at s ("{m}", "{m,}", "{m,n}", "{,n}")
 * and set *copies, or 0 if s does not start one. */
static size_t regex_interval(const char *s, uint64_t *copies)
{
	size_t i = 1;
	uint64_t m, n = 0;
	bool has_m, has_n = false, comma;

	has_m = regex_count(s, &i, &m);
	comma = s[i] == ',';
	if (comma) {
		i++;
		has_n = regex_count(s, &i, &n);
	}
	if (s[i] != '}' || (!has_m && !has_n))
		return 0;
	*copies = has_n ? n : comma ? regex_add(m, 1) : m;
	if (!*copies)
		*copies = 1;
	return i + 1;
}

/* Return the length of the bracket expression at s ('[' ... ']'); one left
 * open runs to the end of s. */
static size_t regex_bracket(const char *s)
{
	size_t i = 1;
	const char *e;
	char end[3] = {0, ']', 0};

	if (s[i] == '^')
		i++;
	if (s[i] == ']')
		i++;
	for (; s[i] && s[i] != ']'; i++) {
		if (s[i] != '[' || (s[i + 1] != ':' && s[i + 1] != '.' && s[i + 1] != '='))
			continue;
		end[0] = s[i + 1];
		e = strstr(s + i + 2, end);
		if (!e)
			return strlen(s);
		i = (size_t)(e - s) + 1;
	}
	return s[i] ? i + 1 : i;
}

void regex_measure(const char *re, uint64_t *pieces, int *depth, size_t nullrep[2])
{
	struct {
		uint64_t done, branch, last;
		bool done_null, last_null;	/* can match nothing */
		size_t nonnull;		/* pieces of the branch that cannot */
		size_t last_at, open_at;	/* where the last piece and the group start */
	} st[QUERY_MAX_DEPTH + 1];
	uint64_t copies, piece;
	size_t i = 0, n, at;
	int d = 0;
	bool null;

	memset(st, 0, sizeof(st));
	*depth = 0;
	nullrep[0] = nullrep[1] = 0;
	while (re[i]) {
		char c = re[i];

		if (c == '(') {
			if (d == QUERY_MAX_DEPTH) {
				*depth = d + 1;
				break;
			}
			memset(&st[++d], 0, sizeof(st[0]));
			st[d].open_at = i;
			*depth = d > *depth ? d : *depth;
			i++;
		} else if (c == '|') {
			st[d].done = regex_add(st[d].done, st[d].branch);
			st[d].done_null |= !st[d].nonnull;
			st[d].branch = st[d].last = 0;
			st[d].nonnull = 0;
			i++;
		} else if (c == ')' && d) {
			piece = regex_add(1, regex_add(st[d].done, st[d].branch));
			null = st[d].done_null || !st[d].nonnull;
			at = st[d].open_at;
			d--;
			st[d].branch = regex_add(st[d].branch, piece);
			st[d].nonnull += !null;
			st[d].last = piece;
			st[d].last_null = null;
			st[d].last_at = at;
			i++;
		} else if (c == '*' || c == '?' || c == '+' ||
			   (c == '{' && (n = regex_interval(re + i, &copies)))) {
			if (c != '{') {
				copies = c == '+' ? 2 : 1;
				n = 1;
			}
			if (st[d].last && st[d].last_null && !nullrep[0]) {
				nullrep[0] = st[d].last_at + 1;
				nullrep[1] = i + 1;
			}
			null = c == '*' || c == '?' || (c == '{' && !strtoull(re + i + 1, NULL, 10)) ||
			       st[d].last_null;
			if (st[d].last)
				st[d].nonnull += (size_t)!null - !st[d].last_null;
			piece = regex_mul(st[d].last, copies);
			st[d].branch = regex_add(st[d].branch - st[d].last, piece);
			st[d].last = piece;
			st[d].last_null = null;
			i += n;
		} else {
			/* Anchors and back-references can match nothing. */
			null = c == '^' || c == '$' || (c == '\\' && isdigit((unsigned char)re[i + 1]));
			st[d].branch = regex_add(st[d].branch, 1);
			st[d].nonnull += !null;
			st[d].last = 1;
			st[d].last_null = null;
			st[d].last_at = i;
			i += c == '[' ? regex_bracket(re + i) : c == '\\' && re[i + 1] ? 2 : 1;
		}
	}
	for (; d; d--)
		st[d - 1].branch = regex_add(st[d - 1].branch,
					     regex_add(1, regex_add(st[d].done, st[d].branch)));
	*pieces = regex_add(st[0].done, st[0].branch);
}
