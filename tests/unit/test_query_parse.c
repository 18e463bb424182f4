/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The query language's syntax: examples, canonical text, errors, refine, completion. */
#include <stdlib.h>
#include <string.h>
#include "probes/syscalls/syscalls_schema.h"
#include "queries/query.h"
#include "tap.h"
#include "complete.h"

static const char *const examples[] = {
	"from flows where dport == 11211 and lat > 100us group by flow show count, p50(lat), "
	"p99(lat), max(lat) order by p99(lat) desc limit 20 window 5s",
	"from nvme where op == read and size == 4K group by session show avg(stage) "
	"sample 1/1000 buffer 10000",
	"from locks where comm ~ 'memcached*' show p9999(wait), max(hold) order by p9999(wait) desc",
	"from syscalls where pid == 1234 group by syscall, subsystem show sum(time), p99(lat)",
	"where lat > 1ms",
	"FROM Syscalls WHERE Pid = 1 Group By comm SHOW Count ORDER BY count ASC LIMIT 3",
	"where daddr == 10.0.0.0/8 or daddr in (::1, fe80::/10, 192.168.1.7)",
	"where comm ~ '/^mem.*d$/' and comm ~ '[abc]?x*'",
	"where not (a == 1 or b == 2) and c != 'it\\'s'",
	"where size >= 1.5KiB and lat < 2.5ms threshold 10ms every 2s baseline 'base.latop'",
	"show p95(lat), p75(lat) as q3, p5(lat), count()",
	"from syscalls group by comm, time(10s) show rate(count) since '2026-11-25 10:00:00' "
	"until -5m",
	"GROUP BY TIME(1m) SINCE -1h UNTIL '2026-11-25T10:00:00+01:00'",
	"",
};

/* Durations read exactly: leading zeros, any number of decimals rounded to
 * the nanosecond (halves up), hours. */
static const struct {
	const char *text;
	uint64_t ns;
} durations[] = {
	{"threshold 1.9999999999999999999999s", 2000000000ULL},
	{"threshold 00000000000000000000000001s", 1000000000ULL},
	{"threshold 0.4999999999999999999999999999999ns", 0},
	{"threshold 0.5ns", 1},
	{"threshold 1.0000000004999999999999999999s", 1000000000ULL},
	{"threshold 1.0000000005s", 1000000001ULL},
	{"threshold 1.5h", 5400000000000ULL},
	{"threshold 0.000000000000277777777777777777777777778h", 1},
	{"threshold 5124095h", 18446742000000000000ULL},
	{"threshold 18446744073709551615ns", UINT64_MAX},
	{"threshold 18446744073.709551615s", UINT64_MAX},
};

/* Parse text, returning its canonical form (or the error line). */
static char *canon(const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	char buf[1024], *t;

	if (!q) {
		query_error_format(text, &err, buf, sizeof(buf));
		*strchr(buf, '\n') = 0;
		return strdup(buf);
	}
	t = query_text(q);
	query_free(q);
	return t;
}

/* Check that text's canonical form is want. */
static void check_canon(const char *text, const char *want)
{
	char *got = canon(text);

	ok(!strcmp(got, want), "'%s' reads as '%s'", text, want);
	if (strcmp(got, want))
		printf("#   got '%s'\n", got);
	free(got);
}

static const struct {
	const char *text, *msg;
} bad[] = {
	{"where lat > 100xs", "column 13: unknown unit 'xs' in '100xs'"},
	{"where lat >", "column 12: expected a value after '>'"},
	{"where lat > and", "column 13: expected a value after '>'"},
	{"where comm == 'abc", "column 15: unterminated string"},
	{"show count foo", "column 12: unexpected 'foo' after the query"},
	{"foo", "column 1: unexpected 'foo': a query starts with from, where, group by, show, "
		"order by, limit or an option"},
	{"show p99x(lat)", "column 6: unknown function 'p99x' (did you mean 'p99'?)"},
	{"show avg(lat", "column 13: expected ')' after 'lat'"},
	{"group comm", "column 7: expected 'by' after 'group'"},
	{"where ip == 300.1.1.1", "column 13: bad address '300.1.1.1'"},
	{"where ip == 10.0.0.0/33", "column 13: bad prefix length in '10.0.0.0/33' (0 to 32)"},
	{"where ip == ::1/129", "column 13: bad prefix length in '::1/129' (0 to 128)"},
	{"where pid in 1", "column 14: expected '(' after 'in'"},
	{"where pid 1", "column 11: expected an operator after 'pid' (==, !=, <, <=, >, >=, ~ or in)"},
	{"where pid ! 1", "column 11: unexpected '!' (use '!=' or 'not')"},
	{"where (pid == 1", "column 16: expected ')' after '1'"},
	{"where and", "column 7: expected a field name after 'where'"},
	{"window 5 ", "column 8: 'window' needs a duration with a unit (ns us ms s m h), not '5'"},
	{"window 5s window 6s", "column 11: 'window' given twice"},
	{"sample 10", "column 8: expected 1/N (e.g. sample 1/100) after 'sample'"},
	{"buffer 4K", "column 8: 'buffer' takes a plain number, not '4K'"},
	{"limit x", "column 7: expected a number after 'limit'"},
	{"baseline x", "column 10: expected a quoted file name after 'baseline'"},
	{"where lat > 99999999999999999999999s", "column 13: number '99999999999999999999999s' is too "
		"large: at most 18446744073709551615ns (about 584 years)"},
	{"where lat > 18446744073.7095516155s", "column 13: number '18446744073.7095516155s' is too "
		"large: at most 18446744073709551615ns (about 584 years)"},
	{"limit 18446744073709551616", "column 7: number '18446744073709551616' is too large: at "
		"most 18446744073709551615"},
	{"where size > 17179869183.9999999999G", "column 14: number '17179869183.9999999999G' is too "
		"large: at most 18446744073709551615 bytes (16 EiB)"},
	{"every 9ms", "column 7: 'every' must be at least 10ms, the shortest tick"},
	{"every 0.0099999994s", "column 7: 'every' must be at least 10ms, the shortest tick"},
	{"show count as", "column 14: expected a column name after 'as'"},
	{"order by count up", "column 16: unexpected 'up' after the query"},
	{"where comm == \"x\"", "column 15: strings use single quotes: 'text'"},
};

/* Format an error for text and return it. */
static char *error_text(const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	char buf[1024];

	if (q) {
		query_free(q);
		return strdup("(parsed)");
	}
	query_error_format(text, &err, buf, sizeof(buf));
	return strdup(buf);
}

/* Refine base with frag and return the canonical result. */
static char *refine(const char *base, const char *frag)
{
	struct query_error err;
	struct query *b = query_parse(base, &err), *r;
	char *t;

	r = query_refine(b, frag, &err);
	query_free(b);
	if (!r)
		return strdup(err.msg);
	t = query_text(r);
	query_free(r);
	return t;
}

/* Return whether the space-separated list holds word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

int main(void)
{
	struct query_error err;
	struct query *q;
	char *t, *t2, *s;
	size_t i;

	for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		q = query_parse(examples[i], &err);
		ok(q != NULL, "parses: %s%s%s", examples[i], q ? "" : " -- ", q ? "" : err.msg);
		if (!q)
			continue;
		t = query_text(q);
		query_free(q);
		t2 = canon(t);
		ok(!strcmp(t, t2), "canonical text is stable: %s", t);
		free(t);
		free(t2);
	}
	check_canon("FROM Syscalls WHERE Pid = 1 Group By comm SHOW Count ORDER BY count ASC LIMIT 3",
		    "from syscalls where pid == 1 group by comm show count order by count asc limit 3");
	check_canon("from nvme where op == read and size == 4K", "from nvme where op == 'read' and size == 4K");
	check_canon("where a = 1 or b = 2 and c = 3", "where a == 1 or b == 2 and c == 3");
	check_canon("where (a = 1 or b = 2) and c = 3", "where (a == 1 or b == 2) and c == 3");
	check_canon("where not a = 1 and b = 2", "where not a == 1 and b == 2");
	check_canon("where not (a = 1 and b = 2)", "where not (a == 1 and b == 2)");
	check_canon("where a = 1 or (b = 2 or c = 3)", "where a == 1 or (b == 2 or c == 3)");
	check_canon("where ((a = 1))", "where a == 1");
	check_canon("where c == 'it''s'", "column 16: unexpected 's' after the query");
	check_canon("where c == 'it\\'s'", "where c == 'it\\'s'");
	check_canon("where ip in (10.0.0.0/8,::1, fe80::/10)", "where ip in (10.0.0.0/8, ::1, fe80::/10)");
	check_canon("show P999(lat), p9999(lat) As tail", "show p999(lat), p9999(lat) as tail");
	check_canon("sample 1/8 threshold 0ns buffer 5 every 500ms",
		    "every 500ms sample 1/8 threshold 0ns buffer 5");

	q = query_parse("where lat > 1ms window 10s every 2s sample 1/100 threshold 5ms buffer 64 "
			"baseline 'b.latop'", &err);
	ok(q && query_options(q)->window_ns == 10000000000ULL &&
	   query_options(q)->every_ns == 2000000000ULL && query_options(q)->sample_n == 100 &&
	   query_options(q)->threshold_ns == 5000000ULL && query_options(q)->buffer == 64 &&
	   !strcmp(query_options(q)->baseline, "b.latop"), "options are read with their units");
	ok(q && !query_table(q), "a fragment has no table");
	query_free(q);
	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		q = query_parse(durations[i].text, &err);
		ok(q && query_options(q)->threshold_ns == durations[i].ns, "'%s' is %llu ns%s%s",
		   durations[i].text, (unsigned long long)durations[i].ns, q ? "" : ": ",
		   q ? "" : err.msg);
		query_free(q);
	}
	q = query_parse("every 10ms", &err);
	ok(q && query_options(q)->every_ns == QUERY_MIN_EVERY_NS, "every 10ms, the shortest tick, is fine");
	query_free(q);
	check_canon("limit 00000000000000000000000001 buffer 000000000000000000000000064 sample 001/8",
		    "limit 1 sample 1/8 buffer 64");
	q = query_parse("from syscalls", &err);
	ok(q && query_options(q)->window_ns == 5000000000ULL && query_options(q)->every_ns ==
	   1000000000ULL && query_options(q)->sample_n == 1 && !query_options(q)->baseline,
	   "default options: window 5s, every 1s, no sampling");
	ok(q && !strcmp(query_table(q), "syscalls"), "FROM names the table");
	query_free(q);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = canon(bad[i].text);
		ok(!strcmp(s, bad[i].msg), "error for '%s': %s", bad[i].text, bad[i].msg);
		if (strcmp(s, bad[i].msg))
			printf("#   got '%s'\n", s);
		free(s);
	}
	s = error_text("from syscalls where dprot == 1");
	ok(!strcmp(s, "(parsed)"), "unknown fields are found when binding, not parsing");
	free(s);
	q = query_parse("from syscalls where dprot == 1", &err);
	ok(q && query_bind(q, &syscalls_schema, &err) == -1 && err.pos == 20 && err.len == 5,
	   "bind error points at the field (pos %d len %d)", err.pos, err.len);
	{
		char buf[512];

		query_error_format("from syscalls where dprot == 1", &err, buf, sizeof(buf));
		ok(!strcmp(buf, "column 21: unknown field 'dprot'\n"
			   "  from syscalls where dprot == 1\n"
			   "                      ^^^^^"), "error text has the query and a caret line");
		query_free(q);
		err = (struct query_error){.pos = 6, .len = 3, .msg = "bad"};
		query_error_format("where\nfoo == 1", &err, buf, sizeof(buf));
		ok(!strcmp(buf, "line 2, column 1: bad\n  foo == 1\n  ^^^"),
		   "multi-line queries name the line");
		err = (struct query_error){.pos = 40, .len = 0, .msg = "end"};
		query_error_format("show", &err, buf, sizeof(buf));
		ok(!strcmp(buf, "column 5: end\n  show\n      ^"), "a caret past the end");
		query_error_format("show", &err, buf, 8);
		ok(strlen(buf) == 7, "a small buffer is truncated, not overrun");
	}
	q = query_parse("from syscalls where comm ~ '/^mem.*d$/' and syscall in (read, raed)", &err);
	ok(q && query_bind(q, &syscalls_schema, &err) == -1 &&
	   !strcmp(err.msg, "unknown syscall 'raed' (did you mean 'read'?)") && err.pos == 62,
	   "syscall names are checked: %s", err.msg);
	query_free(q);
	q = query_parse("from syscalls where comm ~ '/^mem.*d$/' and comm ~ 'x[ab]?*'", &err);
	ok(q && !query_bind(q, &syscalls_schema, &err), "globs and regexes bind");
	ok(q && !query_bind(q, &syscalls_schema, &err), "binding twice is fine");
	query_free(q);

	s = refine("from syscalls where pid == 1 or pid == 2 group by comm show count", "where lat > 1ms");
	ok(!strcmp(s, "from syscalls where (pid == 1 or pid == 2) and lat > 1ms group by comm show count"),
	   "refine ANDs WHERE: %s", s);
	free(s);
	s = refine("from syscalls where pid == 1 show count order by count limit 5 window 5s",
		   "order by max(lat) desc limit 3 window 10s");
	ok(!strcmp(s, "from syscalls where pid == 1 show count order by max(lat) desc limit 3 window 10s"),
	   "refine replaces ORDER, LIMIT and options: %s", s);
	free(s);
	s = refine("from syscalls group by comm show count sample 1/10", "group by syscall");
	ok(!strcmp(s, "from syscalls group by syscall show count sample 1/10"),
	   "refine replaces GROUP BY and keeps the rest: %s", s);
	free(s);
	s = refine("from syscalls where pid == 1", "from syscalls show max(lat)");
	ok(!strcmp(s, "from syscalls show max(lat)"), "a query with FROM replaces the base: %s", s);
	free(s);
	s = refine("from syscalls where pid == 1", "where lat >");
	ok(!strcmp(s, "expected a value after '>'"), "refine reports the fragment's error: %s", s);
	free(s);
	s = refine("from syscalls where pid == 1", "");
	ok(!strcmp(s, "from syscalls where pid == 1"), "an empty fragment changes nothing");
	free(s);

	s = complete("from sys");
	ok(!strcmp(s, "syscalls syscall_events"), "after FROM: tables (%s)", s);
	free(s);
	s = complete("from syscalls where co");
	ok(!strcmp(s, "comm count container count("), "fields of the FROM table, then functions (%s)", s);
	free(s);
	s = complete("from syscalls show p9");
	ok(!strcmp(s, "p90( p99( p999( p9999("), "functions with '(' (%s)", s);
	free(s);
	s = complete("from syscalls gr");
	ok(!strcmp(s, "group"), "keywords (%s)", s);
	free(s);
	s = complete("where t");
	ok(has_word(s, "tid") && has_word(s, "ts") && has_word(s, "time") && has_word(s, "threshold"),
	   "without FROM: fields of every table (%s)", s);
	free(s);
	s = complete("SHOW MA");
	ok(!strcmp(s, "max("), "case-insensitive prefixes (%s)", s);
	free(s);

	/* time series: time(...) sits first in GROUP BY's canonical text; since
	 * and until keep their time as written */
	check_canon("group by comm, time(10s) since '10:00' until -5m",
		    "group by time(10s), comm since '10:00' until -5m");
	check_canon("Group By Time(1.5s)", "group by time(1.5s)");
	s = refine("from syscalls group by time(10s), comm since -5m", "limit 3");
	ok(!strcmp(s, "from syscalls group by time(10s), comm limit 3 since -5m"),
	   "refine keeps time(...) and since (%s)", s);
	free(s);
	s = refine("from syscalls group by time(10s), comm", "group by comm until -1m");
	ok(!strcmp(s, "from syscalls group by comm until -1m"),
	   "a fragment's GROUP BY replaces time(...) too (%s)", s);
	free(s);
	s = complete("from syscalls group by ti");
	ok(!strcmp(s, "tid time time("), "time( in GROUP BY (%s)", s);
	free(s);
	s = complete("from syscalls show ti");
	ok(!has_word(s, "time("), "no time( in SHOW (%s)", s);
	free(s);
	s = complete("from syscalls group by comm sin");
	ok(!strcmp(s, "since"), "since is a keyword (%s)", s);
	free(s);
	tap_done();
}
