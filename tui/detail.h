/* The detail pane: histogram, time breakdown and slow calls of one row. */
#ifndef LATOP_TUI_DETAIL_H
#define LATOP_TUI_DETAIL_H

#include <stdbool.h>
#include "../core/source.h"
#include "../queries/query.h"

struct detail {
	bool open;
	char *where;		/* the row's key predicate */
	struct result *res;	/* the detail query's result (one row) */
	int *fields;		/* schema field of each result column */
	const struct schema *schema;
	char *error;		/* why the detail query failed */
	size_t nevents;
	char **events;		/* recent single events of the row, newest first */
};

void detail_init(struct detail *d);
void detail_done(struct detail *d);
/* Run the detail query for row i of r over w (table schema s; the single
 * events come from info's "<table minus s>_events" table). */
void detail_update(struct detail *d, const struct source_info *info, const struct schema *s,
		   const struct window *w, const struct result *r, size_t i);
/* Forget the row (no selection). */
void detail_clear(struct detail *d);
/* Draw the pane in h lines from y, w columns wide. */
void detail_draw(const struct detail *d, int y, int h, int w);

#endif
