/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * queries/expose.h with kept keys, as latop serve scrapes: a row that had a
 * series of its own keeps it when the result's order changes, and a row
 * that came past max_series stays in the overflow series (no counter goes
 * down from one exposition to the next).  The formats themselves are in
 * tests/golden/expose.test.
 */
#include <stdlib.h>
#include <string.h>
#include "core/xalloc.h"
#include "queries/expose.h"
#include "tap.h"

/* A result "comm, count" with rows comms[i] = counts[i]. */
static struct result *make(const char *const *comms, const uint64_t *counts, size_t n)
{
	struct result *r = xcalloc(1, sizeof(*r));

	r->table = xstrdup("t");
	r->ncols = 2;
	r->nrows = n;
	r->cols = xcalloc(2, sizeof(*r->cols));
	r->cols[0] = (struct result_col){.name = xstrdup("comm"), .type = FT_STR, .key = true};
	r->cols[1] = (struct result_col){.name = xstrdup("count"), .type = FT_U64,
					 .cumulative = true};
	r->vals = xcalloc(2 * n, sizeof(*r->vals));
	for (size_t i = 0; i < n; i++) {
		r->vals[2 * i].s = xstrdup(comms[i]);
		r->vals[2 * i + 1].u = counts[i];
	}
	return r;
}

/* Expose r with keys k and max 1; the text (caller frees). */
static char *expose(struct result *r, struct expose_keys *k, size_t *nother)
{
	struct expose_opts o = {.max_series = 1};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	*nother = expose_result(m, r, &o, k);
	fclose(m);
	result_free(r);
	return buf;
}

int main(void)
{
	struct expose_keys *k = expose_keys_new();
	const char *ab[] = {"a", "b"}, *ba[] = {"b", "a"};
	uint64_t c1[] = {5, 3}, c2[] = {9, 6};
	size_t nother;
	char *t;

	t = expose(make(ab, c1, 2), k, &nother);
	ok(strstr(t, "latop_t_events_total{comm=\"a\"} 5\n") &&
	   strstr(t, "latop_t_events_total{comm=\"(other)\"} 3\n") && nother == 1,
	   "max_series 1: a has its series, b goes to the overflow one");
	free(t);
	/* b now comes first (more events): a keeps its series, b stays in (other). */
	t = expose(make(ba, c2, 2), k, &nother);
	ok(strstr(t, "latop_t_events_total{comm=\"a\"} 6\n") &&
	   strstr(t, "latop_t_events_total{comm=\"(other)\"} 9\n") &&
	   !strstr(t, "comm=\"b\"") && nother == 1,
	   "in another order the same rows keep the same series");
	free(t);
	t = expose(make(ba, c2, 2), NULL, &nother);
	ok(strstr(t, "latop_t_events_total{comm=\"b\"} 9\n") && nother == 1,
	   "without kept keys, the first rows of the result have series");
	free(t);
	expose_keys_free(k);
	tap_done();
}
