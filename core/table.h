/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tables with schemas, and frames: the rows one source produced for one tick. */
#ifndef LATOP_TABLE_H
#define LATOP_TABLE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "hist.h"

enum ftype {
	FT_U64,		/* a plain number (count, pid, errno...) */
	FT_DUR,		/* nanoseconds, u64 */
	FT_SIZE,	/* bytes, u64 */
	FT_STR,		/* text (comm, syscall name, device...) */
	FT_IP,		/* IPv4/IPv6 address, stored as 16 bytes (v4-mapped) + prefix */
	FT_HIST,	/* a per-event histogram of durations (ns) or sizes */
};

enum fflag {
	FF_KEY = 1 << 0,	/* identifies the row (pid, comm, syscall): groupable */
	FF_SUM = 1 << 1,	/* additive over events (count, time, errors): default agg sum */
	FF_PUSH = 1 << 2,	/* the probe can filter on it in the kernel */
	FF_HIDDEN = 1 << 3,	/* not in the default column layout */
	FF_PART = 1 << 4,	/* a duration component: the parts add up to the FF_TOTAL field */
	FF_TOTAL = 1 << 5,	/* what the FF_PART fields split (at most one per schema) */
};

/*
 * The values an FT_STR field can take, when they are a known set (syscall
 * names, block operations, devices...): queries refuse other values with a
 * suggestion and completion offers the names.
 */
struct field_domain {
	/* Return the i-th valid name, NULL past the end. */
	const char *(*name)(size_t i);
	/* Return whether s is a valid value; NULL: s is one of the names. */
	bool (*valid)(const char *s);
	/* Return the kernel's value of valid s for a pushdown filter, or -1 when
	 * the kernel cannot test it; NULL: the kernel tests the text itself. */
	int64_t (*value)(const char *s);
};

/* The text key fields of a table's overflow row hold: the row of what
 * was counted when no key had room (numeric key fields hold 0). */
#define TABLE_OTHER "(other)"

/* Return whether s is a valid value of domain d (TABLE_OTHER always is:
 * the kernel cannot test it, queries can). */
bool domain_valid(const struct field_domain *d, const char *s);

struct field {
	const char *name;	/* lower case, [a-z0-9_] */
	enum ftype type;
	unsigned flags;		/* enum fflag */
	const char *unit;	/* "ns", "B", "" */
	const char *help;	/* one line, for completion and the man page */
	unsigned pushdown;	/* with FF_PUSH: the filter term testing it in the
				 * kernel (enum filter_term, probes/filter.h); 0 none */
	const struct field_domain *domain;	/* its valid values, or NULL: any */
};

/* A schema is owned by whoever made it (a probe's static table, or a snapshot). */
struct schema {
	const char *table;	/* "syscalls" */
	const char *help;
	size_t nfields;
	const struct field *fields;
};

/* Return the index of field name in s, or -1. */
int schema_field(const struct schema *s, const char *name);

/*
 * A schema read back from a recording carries no pointers: its fields have
 * no pushdown term or domain.  schema_known returns field idx of s as the
 * compiled-in schema of the same table among known[] has it (same name and
 * type), or NULL.  schema_attach gives every field of s without a term or
 * domain those of its known twin; s's fields must be writable (a copy the
 * caller made).  Both are for any schema, compiled-in ones included.
 */
const struct field *schema_known(const struct schema *s, size_t idx,
				 const struct schema *const *known, size_t nknown);
void schema_attach(struct schema *s, struct field *fields,
		   const struct schema *const *known, size_t nknown);

struct ipaddr {
	uint8_t a[16];		/* IPv4 as ::ffff:a.b.c.d */
	uint8_t prefix;		/* 128 (or 32 for v4) for a host */
	uint8_t v4;
};

union cell {
	uint64_t u;		/* FT_U64, FT_DUR, FT_SIZE */
	char *s;		/* FT_STR: owned by the frame (strdup'd) */
	struct shist *h;	/* FT_HIST: owned by the frame (sparse, hist.h) */
	struct ipaddr *ip;	/* FT_IP: owned by the frame */
};

/* Per-tick health counters the source attaches to a frame (header meters). */
struct frame_stats {
	uint64_t events;	/* events counted in the kernel this tick */
	uint64_t lost;		/* ring-buffer records lost */
	uint64_t dropped;	/* events dropped by the pushdown filter / sampling */
	uint64_t evicted;	/* map entries evicted or map-full misses */
	uint64_t overflow;	/* events counted in a table's overflow row (key fields
				 * empty or "(other)"): in every total, not in the detail */
	uint64_t bpf_ns;	/* time spent in BPF programs (run_time_ns delta) */
	uint64_t bpf_runs;	/* program runs (run_cnt delta) */
};

struct frame {
	uint64_t t_ns;		/* end of the tick, CLOCK_REALTIME ns */
	uint64_t dt_ns;		/* length of the tick */
	const struct schema *schema;
	struct frame_stats stats;
	size_t nrows, cap;
	union cell *cells;	/* nrows * schema->nfields */
};

struct frame *frame_new(const struct schema *s, uint64_t t_ns, uint64_t dt_ns);
void frame_free(struct frame *f);
/* Append a zeroed row (strings NULL, hist NULL) and return its cells. */
union cell *frame_add_row(struct frame *f);
static inline union cell *frame_row(const struct frame *f, size_t i)
{
	return f->cells + i * f->schema->nfields;
}
/* Set a string / histogram / ip cell; the frame takes a copy (a NULL string
 * or histogram clears the cell; a histogram is kept sparse). */
void cell_set_str(union cell *c, const char *s);
void cell_set_hist(union cell *c, const struct hist *h);
/* Set a histogram cell to s, which the frame then owns (NULL clears it). */
void cell_take_shist(union cell *c, struct shist *s);
void cell_set_ip(union cell *c, const struct ipaddr *ip);
struct frame *frame_dup(const struct frame *f);
/* Return the heap memory f holds: its cells and what they own, with the
 * allocator's per-block overhead. */
size_t frame_bytes(const struct frame *f);

/* A tick: every frame one source produced at one time (one per table). */
struct tick {
	uint64_t t_ns;
	size_t nframes;
	struct frame **frames;
	uint64_t bytes;		/* tick_bytes when a bounded window took it */
};

void tick_init(struct tick *t, uint64_t t_ns);
void tick_add(struct tick *t, struct frame *f);	/* takes ownership */
void tick_done(struct tick *t);			/* frees the frames */
/* Return the heap memory t's frames hold (frame_bytes of each). */
uint64_t tick_bytes(const struct tick *t);

/*
 * Ticks that came late: how long ticks lasted, to say which strayed.  A
 * tick is late when it lasted over 1.5 times the interval (given, or the
 * median length of the ticks seen); its counts are whole, but spread over
 * a longer span than the interval the reader expects.
 */
struct tick_lengths {
	uint64_t *dt_ns;
	size_t n, cap;
};
/* Add t's length: its frame of table, or (table NULL) its longest frame;
 * a tick without that frame adds nothing. */
void tick_lengths_add(struct tick_lengths *tl, const struct tick *t, const char *table);
/* Count the late ticks; *interval_ns 0 is set to the median; *longest_ns
 * gets the longest tick (0 with no tick). */
size_t tick_lengths_late(const struct tick_lengths *tl, uint64_t *interval_ns,
			 uint64_t *longest_ns);
void tick_lengths_free(struct tick_lengths *tl);
/* Return the frame for table name, or NULL. */
struct frame *tick_frame(const struct tick *t, const char *table);

/*
 * A rolling window: the ticks of the last window_ns, oldest first.  Pushing a
 * tick evicts ticks older than newest.t_ns - window_ns, and with max_bytes
 * set, the oldest while the ticks hold more memory than that (tick_bytes;
 * the newest always stays), and a pushed tick's frames give back the rows
 * they grew room for and did not fill.
 */
struct window {
	uint64_t window_ns;
	size_t nticks, cap;
	struct tick *ticks;
	uint64_t max_bytes;	/* 0: no bound (see window_set_bytes) */
	uint64_t bytes;		/* with max_bytes: what the ticks hold */
	uint64_t dropped;	/* with max_bytes: bytes of every tick evicted so far */
};

void window_init(struct window *w, uint64_t window_ns);
void window_done(struct window *w);
void window_push(struct window *w, struct tick *t);	/* takes the tick's frames */
void window_set(struct window *w, uint64_t window_ns);	/* resize, evicting if shorter */
/* Bound the memory the ticks hold (0: none), evicting the oldest beyond it. */
void window_set_bytes(struct window *w, uint64_t max_bytes);
void window_clear(struct window *w);

#endif
