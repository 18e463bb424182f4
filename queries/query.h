/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The query language (latop-query(7)): parse, bind to a schema, split a
 * kernel pushdown from a residual, and execute over a window of ticks.
 */
#ifndef LATOP_QUERY_H
#define LATOP_QUERY_H

#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>
#include "../core/table.h"
#include "../probes/filter.h"

struct query;

/* Where and what went wrong; pos/len are 0-based byte offsets into the text. */
struct query_error {
	int pos;
	int len;
	char msg[256];		/* "unknown field 'dprot' (did you mean 'dport'?)" */
};

struct query_opts {
	uint64_t window_ns;	/* WINDOW, default 5 s */
	uint64_t every_ns;	/* EVERY, default 1 s */
	uint64_t threshold_ns;	/* THRESHOLD, 0 = off */
	uint32_t sample_n;	/* SAMPLE 1/N, 1 = all */
	uint64_t buffer;	/* BUFFER n, 0 = default */
	char *baseline;		/* BASELINE 'file', or NULL: see baseline.c */
};

/*
 * What one query may hold (man/latop-query.7, LIMITS).  A query past one is
 * refused with an error naming it, so no query can exhaust the stack (the
 * WHERE tree is walked recursively) or the memory (a regex's bounded
 * repetitions are written out by regcomp).  The canonical text
 * (query_text) of a query within them is within them too, so it parses again.
 */
#define QUERY_MAX_TEXT 65536		/* bytes, as written and in canonical form */
#define QUERY_MAX_DEPTH 64		/* nested parentheses and NOTs; groups in a regex */
#define QUERY_MAX_PREDS 256		/* comparisons in WHERE */
#define QUERY_MAX_VALUES 1024		/* values in one IN list */
#define QUERY_MAX_SHOW 256		/* SHOW items */
#define QUERY_MAX_GROUP 32		/* GROUP BY fields */
#define QUERY_MAX_REGEX 1000		/* pieces of all regexes, repetitions written out */
#define QUERY_MIN_EVERY_NS 10000000ULL	/* EVERY: 10ms, the shortest tick (as -i) */

struct query *query_parse(const char *text, struct query_error *err);
void query_free(struct query *q);
/* Refine base with text typed in the TUI: a full query (with FROM) replaces
 * base; a fragment ("where lat > 1ms", "order by max(lat)", "limit 5") is
 * merged in (WHERE is ANDed with base's, every other clause or option present
 * replaces base's).  Returns a new query, re-parsed from its canonical text,
 * so positions in later bind errors refer to query_text() of it. */
struct query *query_refine(const struct query *base, const char *text,
			   struct query_error *err);
/* The query printed back in canonical form: lower-case keywords, single
 * spaces (caller frees). */
char *query_text(const struct query *q);
const char *query_table(const struct query *q);	/* FROM, or NULL */
const struct query_opts *query_options(const struct query *q);
/* Whether the query wrote option name ("window", "every", ...), rather than
 * leaving its default: a report without WINDOW covers the whole file, a
 * query without EVERY keeps the interval given on the command line. */
bool query_option_given(const struct query *q, const char *name);
/* Options by where they act, for query_options_written. */
enum query_opt_kind {
	QOK_KERNEL = 1 << 0,	/* SAMPLE, THRESHOLD, BUFFER: what live probes send */
	QOK_TICK = 1 << 1,	/* EVERY: how often live probes tick */
	QOK_VIEW = 1 << 2,	/* WINDOW, BASELINE, SINCE, UNTIL: what a view of the
				 * rows (a report, a replay, the TUI) shows */
};
/* The options of the kinds in mask (query_opt_kind bits) that q writes,
 * as written and in the grammar's order ("sample 1/2, threshold 8ms",
 * "baseline 'idle.snap'"), malloc'd; NULL if it writes none. */
char *query_options_written(const struct query *q, unsigned mask);

/* Bind q to the table's schema s: resolve field names, check types, derive
 * the plan. */
int query_bind(struct query *q, const struct schema *s, struct query_error *err);
/* Fill f with the part of WHERE (+ SAMPLE/THRESHOLD/BUFFER) the kernel can
 * evaluate (the rest stays for query_exec), and, for a query with GROUP BY,
 * with the fields it reads anywhere (fields_used), so a probe may key
 * coarser.  Call after query_bind. */
void query_pushdown(const struct query *q, struct filter_prog *f);

/* One result column. */
struct result_col {
	char *name;		/* as written: "p99(lat)", or the AS name */
	enum ftype type;	/* FT_U64/FT_DUR/FT_SIZE/FT_STR/FT_IP/FT_HIST */
	bool key;		/* a GROUP BY field */
	bool real;		/* value is in .d (avg, stddev, rate, ratios) */
	bool ratio;		/* BASELINE's "C/base": C's value / the baseline's (real) */
	bool part;		/* aggregates a part of the time breakdown (a stage), or is its
				 * ratio; on a key column: the part key (one row per stage) */
	bool time;		/* GROUP BY time(...)'s column (the first): the window's
				 * start, ns since the epoch in .u */
	bool cumulative;	/* count or sum(): grows with every tick added (a counter) */
};

struct result_val {
	uint64_t u;
	double d;
	char *s;
	struct hist *h;		/* dist(...) columns */
	bool null;		/* no value (e.g. max of nothing) */
};

struct result {
	char *table;
	uint64_t t_ns;		/* newest tick in the window */
	uint64_t span_ns;	/* time covered by the window */
	size_t ncols, nrows;
	struct result_col *cols;
	struct result_val *vals;	/* nrows * ncols */
	struct frame_stats stats;	/* summed over the window */
};

/* Run a bound query over the window.  NULL with *err on a runtime error
 * (SINCE/UNTIL selecting no tick of the window: see query_run_check).
 * SINCE/UNTIL -DUR count back from the window's newest tick. */
struct result *query_exec(const struct query *q, const struct window *w,
			  struct query_error *err);

/*
 * The same execution, one tick at a time (query_exec is a loop over these):
 * memory grows with the result's groups, not with the rows added.  The run
 * copies what it keeps, so a tick can be freed right after query_run_add.
 * q must outlive the run.
 */
struct query_run;
/* Start a run of bound query q; NULL with *err if q is not bound or its
 * BASELINE recording cannot be read (loaded here the first time, then kept
 * in q). */
struct query_run *query_run_new(const struct query *q, struct query_error *err);
/* Set the end SINCE/UNTIL -DUR (and 'HH:MM' times of day) are read from:
 * the recording's newest tick, ns since the epoch.  Call it before the
 * first tick; until then they count from 0. */
void query_run_end(struct query_run *r, uint64_t end_ns);
/* Fold in tick t's frame of the FROM table (WHERE, grouping, aggregates);
 * t is the newest tick so far: the result's t_ns.  A tick whose start
 * (t_ns less its frame's dt) is outside [SINCE, UNTIL) is skipped.  With
 * GROUP BY time(D), the tick goes to the window floor(start / D) * D (D
 * aligned on the epoch), whose covered time its dt adds to. */
void query_run_add(struct query_run *r, const struct tick *t);
/* Whether query_run_add takes tick t: its start is inside [SINCE, UNTIL)
 * (always without them). */
bool query_run_covers(const struct query_run *r, const struct tick *t);
/* The result over every tick added so far (order, limit); the run goes on.
 * With time(...): a row per window and group, the time column first, rows
 * in window order then the query's, LIMIT per window, rate() over the
 * window's covered time; a window no tick fell in has no row, and a window
 * without events has one (of zeros) only when there is no other key. */
struct result *query_run_result(struct query_run *r);
/* -1 with *err when SINCE/UNTIL selected nothing among the ticks added
 * ("no ticks between A and B; the recording covers C to D"), or when
 * UNTIL resolved to no later than SINCE; else 0. */
int query_run_check(const struct query_run *r, struct query_error *err);
/* Bytes the run holds for its groups (keys, accumulators, hash). */
size_t query_run_bytes(const struct query_run *r);
void query_run_free(struct query_run *r);
void result_free(struct result *r);
static inline struct result_val *result_row(const struct result *r, size_t i)
{
	return r->vals + i * r->ncols;
}

enum result_format { RF_TEXT, RF_JSON, RF_CSV };
/* Print a result as text, JSON or CSV.  JSON: one object per line per row
 * (JSON Lines), keyed by column name; durations in ns.  JSON and CSV are
 * valid UTF-8 whatever the strings hold; text gives every string whole,
 * made safe for a terminal (utf8_clean), in columns as wide as a terminal
 * shows their widest cell. */
void result_print(FILE *out, const struct result *r, enum result_format fmt);
/* A value as the TUI shows it ("1.84ms", "12.3K", "read"; "-" for no value). */
void result_format_val(const struct result *r, size_t col, const struct result_val *v,
		       char *buf, size_t n);

/* "column 23: unknown field 'dprot' (did you mean 'dport'?)\n  <text>\n  ^^^^^" */
void query_error_format(const char *text, const struct query_error *err,
			char *buf, size_t n);

/* Completion for the query line: up to max candidates (malloc'd) into out
 * for the word ending at pos (keywords, table names, fields of the FROM
 * table, functions; for a value compared with a field that has a domain, the
 * domain's names). */
size_t query_complete(const char *text, size_t pos, const struct schema *const *schemas,
		      size_t nschemas, char **out, size_t max);

#endif
