/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The TUI's side of the views: finding them in a source (the list: probes/views.c). */
#include <string.h>

#include "views.h"

int views_find(const char *table)
{
	const struct view *v = views_by_table(table);

	return v ? (int)(v - views) : -1;
}

const struct schema *views_schema(const struct source_info *info, size_t v)
{
	return source_schema(info, views[v].table->table);
}

int views_first(const struct source_info *info)
{
	size_t i;

	for (i = 0; i < views_len; i++)
		if (views_schema(info, i))
			return (int)i;
	return -1;
}
