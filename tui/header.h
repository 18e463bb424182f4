/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Header meters: mode, host, time, event rates, losses, latop's own cost, tabs, query. */
#ifndef LATOP_TUI_HEADER_H
#define LATOP_TUI_HEADER_H

#include <stdint.h>

struct screen;

struct header {
	uint64_t last_wall_ns, last_cpu_ns;
	double cpu_pct;		/* latop's own CPU over the last sample */
	uint64_t rss;		/* latop's own resident memory at the last sample, bytes */
	uint64_t maps;		/* and the BPF maps mapped into it (kernel memory) */
};


void header_init(struct header *h);
/* Measure latop's own CPU use since the last sample, and its memory now. */
void header_sample(struct header *h);
/* Lines the header takes at width w (the query wraps onto up to three). */
int header_height(const struct screen *s, int w);
/* Draw the meters, a damaged recording's warning, the tabs and the query in
 * header_height lines, w wide. */
void header_draw(const struct screen *s, int w);

#endif
