/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A query without FROM over recordings, as `latop report FILE` runs it
 * (an empty query included): its table is NULL, so every joiner of
 * core/merge.h runs, here the paths joiner over a recording whose requests
 * made no downstream call.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/merge.h"
#include "probes/views.h"
#include "core/snapshot.h"
#include "probes/paths/paths_schema.h"
#include "queries/query.h"
#include "tap.h"

#define MS 1000000ULL

/* Write a recording of one tick: one request, and a span that is not a call. */
static int write_rec(const char *path)
{
	const struct schema *schemas[] = {&path_events_schema, &path_spans_schema};
	struct source_info info = {.nschemas = 2, .schemas = schemas};
	struct frame *ev = frame_new(&path_events_schema, 5000 * MS, 1000 * MS);
	struct frame *sp = frame_new(&path_spans_schema, 5000 * MS, 1000 * MS);
	union cell *r = frame_add_row(ev);
	struct snap_writer *w;
	char *cause = NULL;
	struct tick t;
	int rc;

	snprintf(info.host, sizeof(info.host), "front");
	r[PE_TS].u = ev->t_ns;
	r[PE_ID].u = 1;
	cell_set_str(&r[PE_PATH], ":8080");
	r[PE_LPORT].u = 8080;
	r[PE_LAT].u = 3 * MS;
	r[PE_SELF].u = 3 * MS;
	r = frame_add_row(sp);
	r[PS_ID].u = 1;
	cell_set_str(&r[PS_KIND], "disk");
	w = snap_create(path, &info, &cause);
	if (!w)
		return -1;
	tick_init(&t, ev->t_ns);
	tick_add(&t, ev);
	tick_add(&t, sp);
	rc = snap_write_tick(w, &t, &cause);
	tick_done(&t);
	return rc || snap_close(w, &cause);
}

/* Open path through merge_open for query text; return the rows of
 * path_joins it derives, or -1. */
static long joined_rows(const char *path, const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct source *src, *m = NULL;
	const struct frame *f;
	char *cause = NULL;
	struct tick t;
	size_t nj;
	const struct joiner *const *joiners = views_joiners(&nj);
	long rows = -1;

	src = q ? replay_open(path, &cause) : NULL;
	if (src)
		m = merge_open(&src, 1, joiners, nj, query_table(q), &cause);
	while (m && source_read(m, &t, 0, &cause) == 1) {
		if ((f = tick_frame(&t, "path_joins")))
			rows = (long)f->nrows;
		tick_done(&t);
	}
	source_close(m);
	query_free(q);
	free(cause);
	return rows;
}

int main(void)
{
	char path[] = "/tmp/latop-nofrom-XXXXXX";
	long n;

	close(mkstemp(path));
	ok(write_rec(path) == 0, "a recording of one request that called nothing");
	n = joined_rows(path, "");
	ok(n == 1, "the empty query: the request is a root of path_joins (%ld)", n);
	n = joined_rows(path, "where lat > 1ms show count");
	ok(n == 1, "a query without FROM: the same (%ld)", n);
	n = joined_rows(path, "from path_joins show count");
	ok(n == 1, "FROM path_joins: the same (%ld)", n);
	unlink(path);
	tap_done();
}
