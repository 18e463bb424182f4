/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The limits of one query (queries/query.h): past each one the query is
 * refused with an error that names the limit and points at where it was
 * passed; a query at each limit parses, binds, pushes down, runs over the
 * fixture, prints back and parses again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queries/query.h"
#include "fixture.h"
#include "tap.h"

/* Return n copies of s, between head and tail. */
static char *rep(const char *head, const char *s, size_t n, const char *tail)
{
	size_t hl = strlen(head), sl = strlen(s), tl = strlen(tail), i;
	char *out = malloc(hl + sl * n + tl + 1);

	memcpy(out, head, hl);
	for (i = 0; i < n; i++)
		memcpy(out + hl + i * sl, s, sl);
	memcpy(out + hl + n * sl, tail, tl + 1);
	return out;
}

/* Return the list "item(0), item(1), ..." of n items, each formatted from fmt with its index. */
static char *list(const char *head, const char *fmt, size_t n, const char *tail)
{
	char *buf = NULL, *out;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	fputs(head, m);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", m);
		fprintf(m, fmt, i);
	}
	fputs(tail, m);
	fclose(m);
	out = strdup(buf);
	free(buf);
	return out;
}

/*
 * Run text as `latop report` would over the fixture's syscalls ticks, and
 * return "rows N" (its canonical text parsed again to the same text), or the
 * first line of its error.
 */
static char *run(const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err), *again;
	struct query_run *r = NULL;
	struct result *res;
	struct filter_prog f;
	char buf[1024], *canon, *canon2, *out;
	struct tick t;
	unsigned k;

	if (!q || query_bind(q, &syscalls_schema, &err) || !(r = query_run_new(q, &err))) {
		query_error_format(text, &err, buf, sizeof(buf));
		*strchr(buf, '\n') = 0;
		query_free(q);
		return strdup(buf);
	}
	query_pushdown(q, &f);
	for (k = 0; k < FIXTURE_TICKS; k++) {
		fixture_tick(&t, k);
		query_run_add(r, &t);
		tick_done(&t);
	}
	res = query_run_result(r);
	canon = query_text(q);
	again = query_parse(canon, &err);
	canon2 = again ? query_text(again) : strdup(err.msg);
	if (strcmp(canon, canon2))
		snprintf(buf, sizeof(buf), "canonical text changed: %.900s", canon2);
	else
		snprintf(buf, sizeof(buf), "rows %zu", res->nrows);
	out = strdup(buf);
	free(canon);
	free(canon2);
	query_free(again);
	result_free(res);
	query_run_free(r);
	query_free(q);
	return out;
}

/* Check that text runs to want; take text. */
static void check(char *text, const char *want, const char *what)
{
	char *got = run(text);

	ok(!strcmp(got, want), "%s: %s", what, want);
	if (strcmp(got, want))
		printf("#   got '%s'\n", got);
	free(got);
	free(text);
}

int main(void)
{
	char *s;

	/* Nesting: each '(' and NOT is a level. */
	check(rep("where ", "(", 40000, "pid == 100"), "column 71: more than 64 levels of "
	      "parentheses and NOT", "40,000 '(' stop at the 65th");
	check(rep("where ", "not ", 16000, "pid == 100"), "column 263: more than 64 levels of "
	      "parentheses and NOT", "16,000 NOTs stop at the 65th");
	check(rep("where ", "(not ", 10000, "pid == 100"), "column 167: more than 64 levels of "
	      "parentheses and NOT", "10,000 '(not' stop at the 65th level");
	s = rep("where ", "(", 64, "pid == 100");
	check(rep(s, ")", 64, " group by pid"), "rows 1", "64 levels of parentheses run");
	free(s);
	s = rep("where ", "not ", 63, "(pid == 100)");
	check(rep(s, "", 0, " group by pid"), "rows 2", "63 NOTs around a parenthesis run");
	free(s);

	/* Comparisons: an AND chain is a tree as deep as it is long. */
	check(rep("where pid == 100", " and pid == 100", 4000, ""), "column 3847: more than 256 "
	      "comparisons in WHERE", "4,000 ANDed comparisons stop at the 257th");
	check(rep("where pid == 100", " and pid == 100", 255, " group by pid"), "rows 1",
	      "256 ANDed comparisons run");
	check(rep("where pid == 1", " or pid == 100", 255, " group by pid"), "rows 1",
	      "256 ORed comparisons run");
	{
		struct query_error err;
		struct query *b, *r = NULL;

		s = rep("where pid == 100", " and pid == 100", 255, "");
		b = query_parse(s, &err);
		free(s);
		ok(b && !(r = query_refine(b, "where lat > 1ms", &err)) &&
		   !strcmp(err.msg, "more than 256 comparisons in WHERE"),
		   "refining 256 comparisons with one more is refused: %s", err.msg);
		query_free(r);
		query_free(b);
	}

	/* Lists. */
	check(list("where pid in (", "%zu", 5000, ")"), "column 5049: more than 1024 values in "
	      "one IN list", "5,000 IN values stop at the 1025th");
	check(list("where pid in (", "%zu", 1024, ") group by pid"), "rows 3", "1024 IN values run");
	check(list("show ", "count as c%zu", 5000, ""), "column 65537: query too long: 78893 "
	      "bytes (at most 65536)", "5,000 SHOW items are too long a query");
	check(list("show ", "count as c%zu", 257, ""), "column 3736: more than 256 columns in SHOW",
	      "257 SHOW items stop at the 257th");
	check(list("show ", "count as c%zu", 256, ""), "rows 1", "256 SHOW items run");
	check(rep("group by pid", ", pid", 32, ""), "column 170: more than 32 fields in GROUP BY",
	      "33 GROUP BY fields stop at the 33rd");

	/* Length, as written and as printed back. */
	check(rep("where comm == '", "x", 65536 - 16, "'"), "rows 0", "a query of 65536 bytes runs");
	check(rep("where comm == '", "x", 65536 - 15, "'"), "column 65537: query too long: 65537 "
	      "bytes (at most 65536)", "a query of 65537 bytes does not");
	check(rep("where comm == '", "\\a", 30000, "'"), "column 1: query too long: 90016 bytes "
	      "written out in canonical form (at most 65536)",
	      "a query whose canonical text would not parse again is refused");

	/* Regexes: pieces once repetitions are written out, and group nesting. */
	check(strdup("where comm ~ '/a{1000}/' group by comm"), "rows 0", "a regex of 1000 pieces runs");
	check(strdup("where comm ~ '/a{1001}/'"), "column 14: regex '/a{1001}/' is too big: its "
	      "repetitions written out make 1001 pieces (at most 1000)", "1001 pieces are refused");
	s = rep("where comm ~ '/", "(", 64, "nginx");
	check(rep(s, ")", 64, "/' group by comm"), "rows 1", "a regex nesting 64 groups runs");
	free(s);
	s = rep("column 14: regex '/", "(", 59, "' nests groups more than 64 deep");
	check(rep("where comm ~ '/", "(", 30000, "a/'"), s, "a regex nesting 30,000 groups is refused");
	free(s);

	/* Repeating what can match nothing: glibc's regcomp took over 20 s on the
	 * first, 19 characters, and minutes on the fuzzer's. */
	check(strdup("where comm ~ '/((((($())+)+)+)+)+/'"), "column 14: regex "
	      "'/((((($())+)+)+)+)+/': '+' repeats '($())', which can match nothing; write it "
	      "without that repetition", "nested repetitions of an empty group are refused");
	check(strdup("where comm ~ '/($()******************************\x85***************+)))\\))))))/'"),
	      "column 14: regex '/($()******************************\x85***************+)))\\))))'"
	      ": '*' repeats '()', which can match nothing; write it without that repetition",
	      "the fuzzer's stacked stars are refused");
	check(strdup("where comm ~ '/a**/'"), "column 14: regex '/a**/': '*' repeats 'a*', which "
	      "can match nothing; write it without that repetition", "a star of a star is refused");
	check(strdup("where comm ~ '/(x|)+/'"), "column 14: regex '/(x|)+/': '+' repeats '(x|)', "
	      "which can match nothing; write it without that repetition",
	      "a repetition of a group with an empty branch is refused");
	check(strdup("where comm ~ '/x{0,3}{2}/'"), "column 14: regex '/x{0,3}{2}/': '{' repeats "
	      "'x{0,3}', which can match nothing; write it without that repetition",
	      "an interval of an optional piece is refused");
	check(strdup("where comm ~ '/^(n|x)[a-z]*(-[0-9]+)*(\\.d)?$/' group by comm"), "rows 1",
	      "repetitions of what always matches something run");
	check(strdup("where comm ~ '/(a*b)+x{1,3}/' group by comm"), "rows 0",
	      "a repetition of a group with a nullable part but not nullable itself runs");
	tap_done();
}
