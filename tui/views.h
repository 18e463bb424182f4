/* The views: one line each, a key, a name, a table and a default query. */
#ifndef LATOP_TUI_VIEWS_H
#define LATOP_TUI_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include "../core/source.h"

struct view {
	int key;		/* '1'.. */
	const char *name;	/* tab label */
	const char *table;	/* the FROM table */
	const char *query;	/* default query text */
};

extern const struct view views[];
extern const size_t views_len;

/* The view showing table, or -1. */
int views_find(const char *table);
/* The schema info gives for view v's table, or NULL. */
const struct schema *views_schema(const struct source_info *info, size_t v);
/* The first view whose table the source provides, or -1. */
int views_first(const struct source_info *info);

#endif
