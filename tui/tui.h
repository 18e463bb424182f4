/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The full-screen interface over any source (live or replay). */
#ifndef LATOP_TUI_H
#define LATOP_TUI_H

#include <stdbool.h>
#include "../core/source.h"

struct tui_opts {
	const char *query;	/* initial query text, or NULL: the first view */
	const char *theme;	/* theme name or path, or NULL: rc file / default */
	const char *record_dir;	/* where 's' saves snapshots (default: cwd) */
	bool replay;		/* the source is a recording: time-travel keys */
	bool no_color;
};

/* The latoprc keys the TUI reads, NULL-terminated. */
extern const char *const tui_config_keys[];

/* Run until the user quits.  0 on a clean quit, -1 with *cause. */
int tui_run(struct source *src, const struct tui_opts *o, char **cause);

#endif
