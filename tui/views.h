/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The TUI's side of the views (the list itself: probes/views.h). */
#ifndef LATOP_TUI_VIEWS_H
#define LATOP_TUI_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include "../core/source.h"
#include "../probes/views.h"

/* The view showing table, or -1. */
int views_find(const char *table);
/* The schema info gives for view v's table, or NULL. */
const struct schema *views_schema(const struct source_info *info, size_t v);
/* The first view whose table the source provides, or -1. */
int views_first(const struct source_info *info);

#endif
