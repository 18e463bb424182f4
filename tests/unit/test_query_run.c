/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Incremental execution: query_run fed one tick at a time (each freed right
 * after it is added) gives exactly query_exec's result over a window holding
 * the same ticks, and its memory follows the groups, not the rows added.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "queries/query.h"
#include "fixture.h"
#include "tap.h"

/* A second table, so ticks hold frames the query must skip. */
static const struct field other_fields[] = {
	{"count", FT_U64, FF_SUM, "", "events"},
	{"name", FT_STR, FF_KEY, "", "a name"},
};
static const struct schema other_schema = {"other", "a second table", 2, other_fields};

#define NTICKS (FIXTURE_TICKS + 2)

/* Build tick k: the fixture's ticks, then one with only the other table,
 * then one with no frame at all. */
static void make_tick(struct tick *t, unsigned k)
{
	uint64_t t_ns = FIXTURE_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f;
	union cell *r;

	if (k < FIXTURE_TICKS) {
		fixture_tick(t, k);
		return;
	}
	tick_init(t, t_ns);
	if (k > FIXTURE_TICKS)
		return;
	f = frame_new(&other_schema, t_ns, FIXTURE_DT);
	f->stats.events = 7;
	r = frame_add_row(f);
	r[0].u = 3;
	cell_set_str(&r[1], "x");
	tick_add(t, f);
}

/* Parse and bind text against its FROM table; NULL (and a failed check) on error. */
static struct query *bound(const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	const char *table;

	if (q) {
		table = query_table(q);
		if (!query_bind(q, table && !strcmp(table, "other") ? &other_schema :
				&syscalls_schema, &err))
			return q;
		query_free(q);
	}
	ok(0, "%s: parses and binds (%s)", text, err.msg);
	return NULL;
}

/* Return whether two values of a column are identical. */
static bool same_val(const struct result_val *a, const struct result_val *b)
{
	if (a->null != b->null || a->u != b->u)
		return false;
	if (a->d != b->d && !(isnan(a->d) && isnan(b->d)))
		return false;
	if (!a->s != !b->s || (a->s && strcmp(a->s, b->s)))
		return false;
	return !a->h == !b->h && (!a->h || !memcmp(a->h, b->h, sizeof(*a->h)));
}

/* Return whether two results are identical, column by column and row by row. */
static bool same_result(const struct result *a, const struct result *b)
{
	size_t i;

	if (!a || !b || strcmp(a->table, b->table) || a->t_ns != b->t_ns ||
	    a->span_ns != b->span_ns || memcmp(&a->stats, &b->stats, sizeof(a->stats)) ||
	    a->ncols != b->ncols || a->nrows != b->nrows)
		return false;
	for (i = 0; i < a->ncols; i++)
		if (strcmp(a->cols[i].name, b->cols[i].name) || a->cols[i].type != b->cols[i].type ||
		    a->cols[i].key != b->cols[i].key || a->cols[i].real != b->cols[i].real)
			return false;
	for (i = 0; i < a->nrows * a->ncols; i++)
		if (!same_val(&a->vals[i], &b->vals[i]))
			return false;
	return true;
}

/* Run text both ways and check the results match. */
static void check_same(const struct window *w, const char *text)
{
	struct query *q = bound(text);
	struct query_error err;
	struct query_run *run;
	struct result *want, *got, *again;
	struct tick t;
	unsigned k;

	if (!q)
		return;
	want = query_exec(q, w, &err);
	run = query_run_new(q, &err);
	for (k = 0; run && k < NTICKS; k++) {
		make_tick(&t, k);
		query_run_add(run, &t);
		tick_done(&t);
	}
	got = run ? query_run_result(run) : NULL;
	again = run ? query_run_result(run) : NULL;
	ok(want && got && want->nrows == got->nrows && same_result(want, got),
	   "%s: ticks one at a time give query_exec's result (%zu rows)", text,
	   want ? want->nrows : 0);
	ok(same_result(got, again), "%s: asking for the result twice gives it twice", text);
	result_free(want);
	result_free(got);
	result_free(again);
	query_run_free(run);
	query_free(q);
}

static const char *const queries[] = {
	"from syscalls",
	"group by comm show count, sum(time), avg(lat), p50(lat), p99(lat), max(lat)",
	"from syscalls group by syscall show count, errors, min(lat), max(lat) order by syscall",
	"from syscalls group by pid, tid show count order by count asc",
	"from syscalls group by comm show p9999(lat), p999(lat), p90(lat), p75(lat), stddev(lat)",
	"from syscalls group by comm show rate(count), rate(lat), rate(time) order by comm",
	"from syscalls show count, sum(time), avg(time), min(time), max(time), p50(time), stddev(time)",
	"from syscalls show count(), count(lat), count(time), count(comm), dist(lat)",
	"from syscalls where pid == 999 show count, max(lat), avg(lat), sum(time), p90(count)",
	"from syscalls where pid == 999 group by comm show count",
	"from syscalls where comm ~ '/^(post|ngi)/' group by comm, syscall show count, p90(count)",
	"from syscalls where comm ~ 'mem*' and syscall != 'futex' group by tid show avg(errors)",
	"from syscalls where syscall in (read, 'write', fsync) and errors > 0 group by syscall "
	"show avg(errors), stddev(count), p75(time), min(faults) order by syscall",
	"from syscalls where lat > 4us and lat < 1ms group by syscall show count, sum(time), "
	"p50(lat), dist(lat), avg(time)",
	"from syscalls where lat >= 2ms or comm == 'nginx' group by comm show count, rate(time)",
	"from syscalls group by subsystem show count, sum(time), sum(errors), sum(oncpu) "
	"order by subsystem",
	"from syscalls where subsystem in (net, block) group by comm, subsystem "
	"show sum(time), p99(lat) order by comm",
	"from syscalls where not subsystem == other or pid == 300 group by comm, subsystem "
	"show sum(time), p50(oncpu) order by comm",
	"from syscalls where lat > 1ms group by subsystem show count, sum(time)",
	"from syscalls show subsystem, sum(time) order by subsystem desc limit 2",
	"from syscalls group by comm show count as calls, p99(lat) as tail order by tail desc limit 2",
	"from syscalls group by syscall show count order by p99(lat) desc limit 3",
	"from syscalls group by syscall show count limit 0",
	"from other group by name show count, rate(count)",
	"from other where name == 'y' show count, max(count)",
	"from syscalls group by time(2s), comm show count, rate(count), p99(lat) limit 2",
	"from syscalls group by time(1s) show count since '2023-11-14T22:13:21Z'",
};

/*
 * SINCE/UNTIL over a run fed as `latop report A B` does when the files are
 * given newest first: -DUR counts from query_run_end's end, not from the
 * newest tick so far, and a stretch with no tick says what was seen.
 */
static void check_stretch(void)
{
	static const struct {
		const char *text, *want;	/* want: "count" of the one row, or the error */
	} cases[] = {
		{"from syscalls show count since -10s", "505+100"},
		{"from syscalls show count until -50s", "15+50"},
		{"from syscalls group by time(30s) show count since -40s", "2 rows"},
		{"from syscalls show count since -24s until -16s",
		 "no ticks between 2026-11-25 10:00:31 and 2026-11-25 10:00:39; the recording "
		 "covers 2026-11-25 10:00:00 to 2026-11-25 10:00:55"},
	};
	static const unsigned order[] = {40, 55, 0, 30};	/* [40, 55) then [0, 30) */
	struct query_error err;
	struct tick t;
	size_t i, j;
	unsigned k;

	setenv("TZ", "UTC", 1);
	tzset();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct query *q = bound(cases[i].text);
		struct query_run *run = q ? query_run_new(q, &err) : NULL;
		struct result *r = NULL;
		char got[512] = "";

		if (!run) {
			query_free(q);
			continue;
		}
		query_run_end(run, SERIES_T0 + SERIES_TICKS * FIXTURE_DT);
		for (j = 0; j < sizeof(order) / sizeof(order[0]); j += 2)
			for (k = order[j]; k < order[j + 1]; k++) {
				if (!series_has(k))
					continue;
				series_tick(&t, k);
				query_run_add(run, &t);
				tick_done(&t);
			}
		if (query_run_check(run, &err)) {
			snprintf(got, sizeof(got), "%s", err.msg);
		} else {
			r = query_run_result(run);
			if (r->nrows == 1)
				snprintf(got, sizeof(got), "%llu", (unsigned long long)result_row(r, 0)[0].u);
			else
				snprintf(got, sizeof(got), "%zu rows", r->nrows);
		}
		if (strchr(cases[i].want, '+')) {
			unsigned a, b;
			char sum[32];

			sscanf(cases[i].want, "%u+%u", &a, &b);
			snprintf(sum, sizeof(sum), "%u", a + b);
			ok(!strcmp(got, sum), "%s: %s (got %s)", cases[i].text, sum, got);
		} else {
			ok(!strcmp(got, cases[i].want), "%s: %s (got %s)", cases[i].text,
			   cases[i].want, got);
		}
		result_free(r);
		query_run_free(run);
		query_free(q);
	}
}

/* Feed the fixture's ticks rounds times; return the run's bytes after the first round. */
static size_t feed_rounds(struct query_run *run, unsigned rounds)
{
	struct tick t[FIXTURE_TICKS];
	size_t first = 0;
	unsigned i, k;

	for (k = 0; k < FIXTURE_TICKS; k++)
		fixture_tick(&t[k], k);
	for (i = 0; i < rounds; i++) {
		for (k = 0; k < FIXTURE_TICKS; k++)
			query_run_add(run, &t[k]);
		if (!i)
			first = query_run_bytes(run);
	}
	for (k = 0; k < FIXTURE_TICKS; k++)
		tick_done(&t[k]);
	return first;
}

/* Repeated ticks of the same keys add no groups and no bytes. */
static void check_bounded(void)
{
	struct query *q = bound("from syscalls group by comm, syscall, subsystem show count, "
				"sum(time), p99(lat), max(lat), rate(count), dist(lat) "
				"order by count desc");
	struct query_error err;
	struct query_run *one, *many;
	struct result *r1, *rn;
	size_t b1, bn;

	if (!q)
		return;
	one = query_run_new(q, &err);
	many = query_run_new(q, &err);
	b1 = feed_rounds(one, 1);
	bn = feed_rounds(many, 1000);
	r1 = query_run_result(one);
	rn = query_run_result(many);
	ok(b1 > 0 && query_run_bytes(one) == b1, "one round holds %zu bytes", b1);
	ok(bn == b1 && query_run_bytes(many) == b1,
	   "1000 rounds of the same ticks hold the same bytes (%zu)", query_run_bytes(many));
	ok(r1->nrows > 1 && rn->nrows == r1->nrows, "1000 rounds keep the same %zu groups",
	   r1->nrows);
	ok(rn->nrows && rn->vals[3].u == 1000 * r1->vals[3].u &&
	   rn->vals[4].u == 1000 * r1->vals[4].u && rn->span_ns == 1000 * r1->span_ns &&
	   rn->stats.events == 1000 * r1->stats.events,
	   "1000 rounds count every tick: count, time, span and stats x1000");
	ok(rn->vals[8].h && r1->vals[8].h && rn->vals[8].h->count == 1000 * r1->vals[8].h->count,
	   "the merged histogram holds every round's events");
	result_free(r1);
	result_free(rn);
	query_run_free(one);
	query_run_free(many);
	query_free(q);
}

/* A scalar percentile keeps one value per row: 8 bytes, not a histogram. */
static void check_scalar_pct(void)
{
	struct query *q = bound("from syscalls group by comm show p50(time)");
	struct query_error err;
	struct query_run *run;
	size_t rows = 0, b1, k;
	struct tick t;

	if (!q)
		return;
	for (k = 0; k < FIXTURE_TICKS; k++) {
		fixture_tick(&t, (unsigned)k);
		rows += tick_frame(&t, "syscalls")->nrows;
		tick_done(&t);
	}
	run = query_run_new(q, &err);
	b1 = feed_rounds(run, 1000);
	ok(query_run_bytes(run) - b1 <= 2 * sizeof(uint64_t) * rows * 1000,
	   "p50 over %zu rows holds %zu bytes beyond the first round (<= 16 per row)",
	   rows * 1000, query_run_bytes(run) - b1);
	query_run_free(run);
	query_free(q);
}

/* An unbound query cannot run. */
static void check_unbound(void)
{
	struct query_error err;
	struct query *q = query_parse("from syscalls show count", &err);

	ok(q && !query_run_new(q, &err) && strstr(err.msg, "not bound"),
	   "an unbound query does not start a run: %s", err.msg);
	query_free(q);
}

int main(void)
{
	struct window w;
	struct tick t;
	unsigned k;
	size_t i;

	window_init(&w, 60 * FIXTURE_DT);
	for (k = 0; k < NTICKS; k++) {
		make_tick(&t, k);
		window_push(&w, &t);
	}
	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		check_same(&w, queries[i]);
	window_done(&w);
	check_bounded();
	check_scalar_pct();
	check_unbound();
	check_stretch();
	tap_done();
}
