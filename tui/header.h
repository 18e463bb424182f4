/* Header meters: mode, host, time, event rates, losses, latop's own cost, tabs, query. */
#ifndef LATOP_TUI_HEADER_H
#define LATOP_TUI_HEADER_H

#include <stdint.h>

struct screen;

struct header {
	uint64_t last_wall_ns, last_cpu_ns;
	double cpu_pct;		/* latop's own CPU over the last sample */
};

/* Lines the header takes. */
#define HEADER_LINES 4

void header_init(struct header *h);
/* Measure latop's own CPU use since the last sample. */
void header_sample(struct header *h);
/* Draw the meters, the tabs and the query in HEADER_LINES lines, w wide. */
void header_draw(const struct screen *s, int w);

#endif
