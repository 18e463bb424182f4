/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The source interface: where ticks come from.  Live (probes/live.c) and
 * replay (core/replay.c) produce identical ticks; nothing above probes/ knows
 * which one it reads.
 */
#ifndef LATOP_SOURCE_H
#define LATOP_SOURCE_H

#include <stdint.h>
#include "table.h"

struct source_info {
	char host[64];
	char kernel[128];
	uint64_t boot_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	uint64_t start_ns;		/* replay: when the recording started (CLOCK_REALTIME); live: 0 */
	uint64_t t_first_ns, t_last_ns;	/* replay: recorded range; live: 0 */
	size_t nticks;			/* replay: ticks in the file; live: 0 */
	size_t nschemas;
	const struct schema *const *schemas;	/* every table this source can give */
	const char *status;		/* free text: which hooks are live, what failed */
	uint64_t interval_ns;		/* the tick interval asked for (live; replay: the
					 * recording's, if it says); 0 unknown */
	const char *warning;		/* replay: damage found in the file and what was kept, or NULL */
	const char *path;		/* replay: the file read; otherwise NULL */
};

struct source;

struct source_ops {
	const char *name;		/* "live", "replay" */
	/* Wait up to timeout_ms for the next tick.  1: *out filled (caller owns it,
	 * tick_done), 0: nothing yet, -1: error (*cause set), 2: end of data.
	 * Replay's -1 is a tick the file holds but that cannot be read: it is
	 * skipped, and reading on returns the ticks after it. */
	int (*read)(struct source *s, struct tick *out, int timeout_ms, char **cause);
	/* Live only (NULL for replay, whose ticks are all whole): collect now,
	 * without waiting for the interval, a tick of what was counted since the
	 * last one, and start the next interval from here.  1: *out filled,
	 * 0: nothing counted yet, -1: error (*cause set). */
	int (*flush)(struct source *s, struct tick *out, char **cause);
	/* Replay only (NULL live): position so the next read returns tick idx. */
	int (*seek)(struct source *s, size_t idx, char **cause);
	/* Replay only: the index of the tick the next read returns. */
	size_t (*tell)(struct source *s);
	/* Live only (NULL for replay): install a pushdown filter for a table.
	 * blob is probes/filter.h's struct filter_prog, opaque here. */
	int (*set_filter)(struct source *s, const char *table, const void *blob,
			  size_t len, char **cause);
	/* Live only: change the tick interval. */
	int (*set_interval)(struct source *s, uint64_t interval_ns, char **cause);
	const struct source_info *(*info)(struct source *s);
	void (*close)(struct source *s);
};

struct source {
	const struct source_ops *ops;
	void *priv;
};

static inline int source_read(struct source *s, struct tick *t, int ms, char **cause)
{
	return s->ops->read(s, t, ms, cause);
}

/* Take the partial tick now (0 when the source has none: replay). */
static inline int source_flush(struct source *s, struct tick *t, char **cause)
{
	return s->ops->flush ? s->ops->flush(s, t, cause) : 0;
}

static inline void source_close(struct source *s)
{
	if (s)
		s->ops->close(s);
}

/* The schema info has for table, or NULL, also for a NULL table (core/source.c). */
const struct schema *source_schema(const struct source_info *info, const char *table);

/* Open a recording as a source (core/replay.c); a damaged file's warning goes
 * into its status.  NULL and *cause on error. */
struct source *replay_open(const char *path, char **cause);

#endif
