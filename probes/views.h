/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The views latop has, each in its own folder probes/VIEW/.  This is the one
 * list of what each view brings that the layers above use without libbpf:
 * adding a view is its folder and one line in probes/views.c.
 */
#ifndef LATOP_VIEWS_H
#define LATOP_VIEWS_H

#include <stddef.h>
#include "../core/merge.h"
#include "../core/table.h"

/* One view: what latop shows of one probe's tables.  Only data. */
struct view {
	const char *name;		/* "syscalls": its tab, key help and --help label */
	char key;			/* '6': the TUI key that shows it */
	/* Its phrase in --help ("per syscall and kernel subsystem"); NULL: it
	 * shares the previous view's phrase ("per NVMe/TCP and block I/O stage"). */
	const char *help;
	const char *query;		/* the TUI's default query, on table */
	const struct schema *table;	/* its main table: the tab shows it */
	const struct schema *events;	/* its single events (the detail pane's list), or NULL */
	const struct schema *spans;	/* its events' timelines (the detail pane's), or NULL */
	const struct joiner *joiner;	/* joins its recordings (latop report), or NULL */
	const char *man;		/* its table's section in latop-query(7) TABLES */
};

/* Every view, in tab order (keys '1'..): one line each in probes/views.c. */
extern const struct view views[];
extern const size_t views_len;

/*
 * Every view's joiner (the views without one skipped), for merge_open(); *n
 * gets how many.  The array is built once from views[] and stays valid.
 */
const struct joiner *const *views_joiners(size_t *n);

/*
 * Table i of view v: i = 0 the main table, 1 events, 2 spans, then the
 * joiner's derived tables; NULL for a table it lacks (events, spans) or past
 * its last (i >= views_ntables(v)).
 */
const struct schema *views_table(const struct view *v, size_t i);
/* How many tables views_table(v, i) walks: 3 plus the joiner's. */
size_t views_ntables(const struct view *v);

/* The view whose main table is named table, or NULL. */
const struct view *views_by_table(const char *table);

/*
 * Every view's tables (views_table), for schema_known()/schema_attach()
 * (core/table.h): a schema read from a recording gets its fields' pushdown
 * terms and domains from these.  *n gets how many; built once from views[].
 */
const struct schema *const *views_schemas(size_t *n);

#endif
