/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The parsed query (AST) and the plan query_bind derives from it against a
 * schema.  Internal to queries/: the rest of latop sees struct query opaquely.
 */
#ifndef LATOP_QUERY_AST_H
#define LATOP_QUERY_AST_H

#include <regex.h>
#include "../core/fmt.h"
#include "qtime.h"
#include "query.h"

enum vkind { V_NUM, V_STR, V_IP };
enum ukind { U_NONE, U_DUR, U_SIZE };

/* A literal: 100us (u = 100000, unit U_DUR), 'text', 10.0.0.0/8. */
struct value {
	enum vkind kind;
	enum ukind unit;
	uint64_t u;		/* V_NUM: in ns (durations) or bytes (sizes) */
	char *s;		/* V_STR: the text */
	struct ipaddr ip;	/* V_IP */
	char *raw;		/* as written, for the canonical text (not V_STR) */
	int pos, len;
};

/* A field name where it was written, and its schema index once bound. */
struct fref {
	char *name;		/* lower case */
	int pos, len;
	int idx;		/* -1 until bound */
};

enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };
enum pred_kind { P_AND, P_OR, P_NOT, P_CMP, P_IN, P_MATCH };

struct pred {
	enum pred_kind kind;
	struct pred *l, *r;	/* AND/OR: both; NOT: l */
	struct fref f;		/* leaves */
	enum cmp op;		/* P_CMP */
	int oppos, oplen;
	size_t nvals;		/* P_CMP, P_MATCH: 1; P_IN: the list */
	struct value *vals;
	bool regex;		/* P_MATCH: '/re/' (bound: re compiled) */
	bool re_ok;
	regex_t re;
};

enum agg {
	AGG_NONE, AGG_COUNT, AGG_RATE, AGG_SUM, AGG_MIN, AGG_MAX, AGG_AVG,
	AGG_STDDEV, AGG_PCT, AGG_DIST,
};

/* A SHOW or ORDER BY item: a bare field, or agg(field) [AS name]. */
struct item {
	enum agg agg;		/* AGG_NONE: bare field */
	double pct;		/* AGG_PCT: 99.9 for p999 */
	char *func;		/* lower-case function name, NULL when bare */
	struct fref f;		/* f.name NULL for count() */
	char *as;
	bool base;		/* ORDER BY only: "ITEM/base", the item's BASELINE ratio */
	int pos, len;		/* the whole item */
};

enum order_dir { DIR_DEFAULT, DIR_ASC, DIR_DESC };

enum opt_bit {
	OPT_WINDOW = 1 << 0, OPT_EVERY = 1 << 1, OPT_SAMPLE = 1 << 2,
	OPT_THRESHOLD = 1 << 3, OPT_BUFFER = 1 << 4, OPT_BASELINE = 1 << 5,
	OPT_SINCE = 1 << 6, OPT_UNTIL = 1 << 7,
};
#define OPT_COUNT 8

/* One output (or hidden ordering) column of the plan. */
struct pcol {
	char *name;		/* the output name (AS name if given) */
	char *text;		/* the item as written without AS, for ORDER BY matching */
	enum ftype type;
	bool key;		/* a group key: value from the key tuple */
	bool real;
	int keyslot;		/* key: index into plan.keys */
	int field;		/* schema index, -1 for count of events */
	enum agg agg;		/* effective aggregate (never AGG_NONE unless key or ratio) */
	double pct;
	int ratio_of;		/* BASELINE: this column is cols[ratio_of] / the baseline's; else -1 */
	bool part;		/* of an FF_PART field (a stage), its ratio, or the part key */
};

/* The pseudo-key that unpivots a schema's FF_PART fields into one row per part. */
#define PART_KEY "subsystem"
/* Another name for it, for tables whose parts are stages (block, nvme). */
#define PART_KEY_ALIAS "stage"
/* The pseudo-field a table with a key size and no field of this name gets:
 * the bytes a row's events moved (size times events), summable. */
#define BYTES_FIELD "bytes"

/* What query_bind derives: grouping keys, columns, order. */
struct plan {
	size_t nkeys;
	int *keys;		/* schema indexes to group by */
	size_t ncols, nvisible;	/* cols[nvisible..] are hidden (ORDER BY only) */
	struct pcol *cols;
	int order_col;
	bool order_desc;
	int count_field;	/* the FF_SUM field named "count", or -1 */
	int hist_field;		/* the histogram field WHERE tests, or -1 */
	int part_key;		/* schema index of the PART_KEY pseudo-field, or -1 */
	int bytes_field;	/* schema index of the BYTES_FIELD pseudo-field, or -1 */
	int size_field;		/* the key size it is computed from (when bytes_field >= 0) */
	bool expand;		/* the query names it: each row unpivots into its parts */
	size_t nparts;
	int *parts;		/* schema indexes of the FF_PART fields, in schema order */
	struct schema xs;	/* the table's schema plus its pseudo-fields (when any) */
	struct field *xfields;
};

struct query {
	char *table;
	int tpos, tlen;
	struct pred *where;
	bool has_group;
	size_t ngroup;
	struct fref *group;
	uint64_t bucket_ns;		/* GROUP BY time(DUR): DUR, or 0 */
	char *bucket_raw;		/* DUR as written */
	int bucket_pos, bucket_len;	/* the whole time(...) */
	bool has_show;
	size_t nshow;
	struct item *show;
	bool has_order;
	struct item order;
	enum order_dir dir;
	bool has_limit;
	uint64_t limit;
	unsigned optset;		/* enum opt_bit: options written */
	char *optraw[OPT_COUNT];	/* their values as written */
	struct query_opts opts;
	int bpos, blen;			/* BASELINE's value as written */
	struct qtime since, until;	/* SINCE, UNTIL (when in optset) */
	int spos, slen, upos, ulen;	/* their values as written */
	struct baseline *base;		/* BASELINE's rows, loaded on first use (NULL without it) */
	const struct schema *schema;	/* bound (plan.xs when the table has parts) */
	struct plan plan;
};

/* ast.c */
/* Make an empty query with default options. */
struct query *ast_query_new(void);
void ast_pred_free(struct pred *p);
struct pred *ast_pred_dup(const struct pred *p);
void ast_item_done(struct item *it);
void ast_item_copy(struct item *dst, const struct item *src);
void ast_plan_done(struct plan *pl);
/* The item as written without AS: "p99(lat)", "count()", "comm". */
char *ast_item_text(const struct item *it);
/* Map a function name to its aggregate (pNN sets *pct); AGG_NONE if unknown.
 * pNN reads as a percentile whose first two digits are the integer part:
 * p50 = 50, p999 = 99.9, p9999 = 99.99, p5 = 5, p100 = 100. */
enum agg ast_func(const char *name, double *pct);
/* The function names, NULL-terminated (completion and suggestions). */
extern const char *const ast_funcs[];
extern const char *const ast_cmp_text[];

/*
 * BASELINE's recording run through the query (minus BASELINE, ORDER BY and
 * LIMIT) once, the first time a run of the bound query starts.  Loading
 * fails at most once: the error is kept, so the TUI does not retry it every
 * tick.  Binding again drops what was loaded.
 */
struct baseline {
	struct query_error err;	/* msg[0] != 0: loading failed */
	struct result *res;	/* the baseline's rows, NULL until loaded */
	int *bcol;		/* plan column -> res column of the same name, or -1 */
	size_t nkeys;		/* plan key columns, in plan order */
	size_t *kcols;
	size_t nidx;
	struct base_row *idx;	/* res rows sorted by key tuple */
};

/* baseline.c */
/* Load q's baseline if it is not yet (q bound); -1 with *err naming the BASELINE value. */
int baseline_load(const struct query *q, struct query_error *err);
/* Fill the ratio columns of nrows rows laid out as q's plan columns, each
 * row's from the baseline row with the same keys. */
void baseline_ratios(const struct query *q, struct result_val *vals, size_t nrows);
/* Forget what was loaded (or why it failed). */
void baseline_reset(struct baseline *b);

/* bind.c */
/* Return PART_KEY if schema s has FF_PART fields and no field of that name, else NULL. */
const char *bind_part_key(const struct schema *s);
/* Return whether schema s gets the BYTES_FIELD pseudo-field: it has a key
 * size and no field of that name. */
bool bind_has_bytes(const struct schema *s);

/* regex.c */
/* Measure regex re (the text between the slashes): its pieces once its
 * repetitions are written out, how deep its groups nest (counting stops at
 * QUERY_MAX_DEPTH + 1), and in nullrep the first repetition of a piece that
 * can match nothing (queries/regex.c says why it is refused): the offsets of
 * the piece and of the repetition operator, plus one ({0, 0}: none). */
void regex_measure(const char *re, uint64_t *pieces, int *depth, size_t nullrep[2]);

/* error.c */
/* Fill err with a position, a length and a message. */
void error_set(struct query_error *err, int pos, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
