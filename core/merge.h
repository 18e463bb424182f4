/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Joining recordings from several hosts (`latop report A B ...`).
 *
 * Clocks of different hosts are not synchronised, so a join never compares
 * times across recordings: it matches records by what both sides saw (a
 * connection's 4-tuple seen from either end, a queue and command id) and by
 * order, and derives durations within one recording only.
 *
 * A joiner reads every tick of every recording, keeps what it joins (single
 * events, usually), and at the end gives the frames of the tables it derives.
 * merge_open() wraps the recordings as one source: their ticks one file
 * after the other (as a plain multi-file report reads them), then one more
 * tick holding the derived frames, whose dt_ns spans everything read.  A
 * query FROM a derived table therefore sees exactly the joined rows.
 */
#ifndef LATOP_MERGE_H
#define LATOP_MERGE_H

#include <stddef.h>
#include "source.h"
#include "table.h"

struct joiner {
	const char *name;		/* "paths" */
	const char *help;		/* one line for `latop report --help` and the man page */
	size_t ntables;
	const struct schema *const *tables;	/* the tables it derives */
	/* A join over nsrc recordings; NULL if they hold nothing it joins. */
	void *(*begin)(const struct source_info *const *infos, size_t nsrc);
	/* Every tick of recording src, in file order; copy what is kept. */
	void (*add)(void *st, size_t src, const struct tick *t);
	/* Append one frame per derived table to out (stamped out->t_ns). */
	void (*finish)(void *st, struct tick *out);
	void (*free)(void *st);
	/* Optional: why these recordings cannot be joined exactly (the caller
	 * frees it), or NULL when they can. */
	char *(*refuse)(const struct source_info *const *infos, size_t nsrc);
};

/*
 * One source over recordings srcs[0..n) (taken over: closing it closes
 * them): their ticks in order, then the joined tick, when some joiner found
 * something to join.  The joiners are list[0..nlist) (latop passes every
 * view's: views_joiners() in probes/views.h).  Only the joiner deriving table
 * runs (NULL: every joiner), so a report on a recorded table pays nothing
 * for joins.  A joiner that refuses the recordings fails the open when table
 * is one of its own (*cause its reason), and is skipped otherwise.  Its info
 * lists every recording's tables (the first recording's schema of a table
 * that several hold) and the derived ones.  NULL and *cause on error.
 */
struct source *merge_open(struct source **srcs, size_t n, const struct joiner *const *list,
			  size_t nlist, const char *table, char **cause);

#endif
