/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Bind a parsed query to a table's schema: resolve field names, check types
 * and units, compile patterns, and derive the plan (group keys, columns,
 * order) that query_exec runs.
 *
 * Column rules:
 *  - GROUP BY fields are key columns; those not written in SHOW come first.
 *  - Without GROUP BY, bare key fields in SHOW are the group keys; with no
 *    key field at all there is one row for the whole window.
 *  - Without GROUP BY and SHOW, the layout is: every non-hidden key field as
 *    a key, then every non-hidden other field with its default aggregate.
 *  - A bare non-key field gets its default aggregate: sum for FF_SUM fields,
 *    avg for histograms and other numbers.  A bare "count" on a table
 *    without a count field counts events.
 *  - A table whose schema has FF_PART fields gets the hidden key PART_KEY
 *    ("subsystem"), appended after its fields; a query that names it anywhere
 *    has its rows unpivoted by query_exec (one row per part, see exec.c).
 *  - A key field is no quantity: of it only count, min and max are
 *    accepted (sum(pid), rate(size) are refused, saying so).
 *  - A table with a key size and no bytes field gets the hidden pseudo-field
 *    BYTES_FIELD after its fields (size times the row's events, computed by
 *    query_exec), so rate(bytes) is a throughput in every recording.
 *  - With BASELINE, every visible number that is not a key (not dist(),
 *    not text) is followed by its ratio column "C/base" (baseline.c).
 *  - ORDER BY matches a column by its name or text ("p99(lat)", or
 *    "p99(lat)/base" for a ratio, which must exist); otherwise it
 *    is computed as a hidden column.  Default direction: ascending for key
 *    columns, descending for aggregates.  Without ORDER BY: the first
 *    aggregate column descending, else the first column ascending.
 */
#include <stdlib.h>
#include <string.h>
#include "../probes/views.h"
#include "../core/xalloc.h"
#include "ast.h"

/* Describe a field type for messages ("text", "a duration"...). */
static const char *bind_kind(const struct field *f)
{
	switch (f->type) {
	case FT_U64: return "a plain number";
	case FT_DUR: return "a duration";
	case FT_SIZE: return "a size";
	case FT_STR: return "text";
	case FT_IP: return "an address";
	default: return "a histogram";
	}
}

/* The unit kind a field's values take: durations, sizes or none. */
static enum ukind bind_unit(const struct field *f)
{
	if (f->type == FT_DUR || (f->type == FT_HIST && !strcmp(f->unit, "ns")))
		return U_DUR;
	if (f->type == FT_SIZE || (f->type == FT_HIST && !strcmp(f->unit, "B")))
		return U_SIZE;
	return U_NONE;
}

/* Return whether f holds numbers (aggregatable). */
static bool bind_numeric(const struct field *f)
{
	return f->type != FT_STR && f->type != FT_IP;
}

static const char part_key_help[] =
	"the part of the time breakdown a row's time went to (one row per part)";
static const char bytes_help[] = "bytes moved: size times the row's events (count)";

/* Return whether name is PART_KEY or its alias. */
static bool bind_part_name(const char *name)
{
	return name && (!strcmp(name, PART_KEY) || !strcmp(name, PART_KEY_ALIAS));
}

/* Resolve a field name, suggesting a close one when unknown.  Both names
 * of the pseudo-key find it, whichever one it carries. */
static int bind_field(const struct schema *s, struct fref *f, struct query_error *err)
{
	const char **names;
	const char *sug;
	double pct;
	size_t i;

	f->idx = schema_field(s, f->name);
	if (f->idx >= 0)
		return 0;
	if (bind_part_name(f->name) && s->nfields &&
	    s->fields[s->nfields - 1].help == part_key_help) {
		f->idx = (int)s->nfields - 1;
		return 0;
	}
	if (ast_func(f->name, &pct) != AGG_NONE) {
		error_set(err, f->pos, f->len, "'%s' is a function: write %s(FIELD)", f->name,
			  f->name);
		return -1;
	}
	names = xcalloc(s->nfields + 1, sizeof(*names));
	for (i = 0; i < s->nfields; i++)
		names[i] = s->fields[i].name;
	sug = text_suggest(f->name, names, s->nfields);
	error_set(err, f->pos, f->len, "unknown field '%.60s'%s%s%s", f->name,
		  sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	free(names);
	return -1;
}

/* Check that a value is in field f's domain, suggesting a close name. */
static int bind_domain(const struct field *f, const struct value *v, struct query_error *err)
{
	const char **names = NULL;
	const char *sug, *n;
	size_t i;

	if (domain_valid(f->domain, v->s))
		return 0;
	for (i = 0; (n = f->domain->name(i)); i++) {
		names = xreallocarray(names, i + 1, sizeof(*names));
		names[i] = n;
	}
	sug = i ? text_suggest(v->s, names, i) : NULL;
	error_set(err, v->pos, v->len, "unknown %s '%.60s'%s%s%s", f->name, v->s,
		  sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	free(names);
	return -1;
}

/* Check that a value names one of the schema's parts, suggesting a close one. */
static int bind_part(const struct query *q, const struct schema *s, const struct value *v,
		     struct query_error *err)
{
	const struct plan *pl = &q->plan;
	const char **names;
	const char *sug;
	size_t i;

	for (i = 0; i < pl->nparts; i++)
		if (!strcmp(s->fields[pl->parts[i]].name, v->s))
			return 0;
	names = xcalloc(pl->nparts + 1, sizeof(*names));
	for (i = 0; i < pl->nparts; i++)
		names[i] = s->fields[pl->parts[i]].name;
	sug = text_suggest(v->s, names, pl->nparts);
	error_set(err, v->pos, v->len, "unknown %s '%.60s'%s%s%s", s->fields[pl->part_key].name,
		  v->s, sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	free(names);
	return -1;
}

/* Check one literal against field idx, which it is compared with. */
static int bind_value(const struct query *q, const struct schema *s, int idx,
		      const struct value *v, struct query_error *err)
{
	const struct field *f = &s->fields[idx];
	static const char *const ukinds[] = {"a plain number", "a duration", "a size"};
	enum ukind want = bind_unit(f);

	if (f->type == FT_STR) {
		if (v->kind != V_STR) {
			error_set(err, v->pos, v->len, "'%s' is text; quote the value: '%s'",
				  f->name, v->raw);
			return -1;
		}
		if (idx == q->plan.part_key)
			return bind_part(q, s, v, err);
		return f->domain ? bind_domain(f, v, err) : 0;
	}
	if (f->type == FT_IP) {
		if (v->kind != V_IP) {
			error_set(err, v->pos, v->len,
				  "'%s' is an address; compare it with an address like 10.0.0.1 or 10.0.0.0/8",
				  f->name);
			return -1;
		}
		return 0;
	}
	if (v->kind != V_NUM) {
		error_set(err, v->pos, v->len, "'%s' is %s, not %s", f->name, bind_kind(f),
			  v->kind == V_STR ? "text" : "an address");
		return -1;
	}
	if (v->unit != U_NONE && v->unit != want) {
		error_set(err, v->pos, v->len, "'%s' is %s but '%s' is %s", v->raw,
			  ukinds[v->unit], f->name, f->type == FT_HIST ? ukinds[want] : bind_kind(f));
		return -1;
	}
	return 0;
}

/* Compile the pattern of a ~ leaf: '/re/' is an extended regex, else a glob. */
static int bind_pattern(struct pred *p, struct query_error *err)
{
	const struct value *v = &p->vals[0];
	size_t n = strlen(v->s);
	char *body, msg[128];
	int rc;

	if (p->re_ok) {
		regfree(&p->re);
		p->re_ok = false;
	}
	if (!p->regex)
		return 0;
	if (n < 2 || v->s[n - 1] != '/') {
		error_set(err, v->pos, v->len, "regex '%.60s' needs a closing '/'", v->s);
		return -1;
	}
	body = xstrndup(v->s + 1, n - 2);
	rc = regcomp(&p->re, body, REG_EXTENDED | REG_NOSUB);
	free(body);
	if (rc) {
		regerror(rc, &p->re, msg, sizeof(msg));
		regfree(&p->re);
		error_set(err, v->pos, v->len, "bad regex '%.60s': %s", v->s, msg);
		return -1;
	}
	p->re_ok = true;
	return 0;
}

/* Resolve and type-check a predicate tree. */
static int bind_pred(struct query *q, const struct schema *s, struct pred *p,
		     struct query_error *err)
{
	const struct field *f;
	size_t i;

	if (!p)
		return 0;
	if (p->kind == P_AND || p->kind == P_OR || p->kind == P_NOT)
		return bind_pred(q, s, p->l, err) || bind_pred(q, s, p->r, err) ? -1 : 0;
	if (bind_field(s, &p->f, err))
		return -1;
	f = &s->fields[p->f.idx];
	if (p->kind == P_MATCH) {
		if (f->type != FT_STR) {
			error_set(err, p->oppos, p->oplen, "'~' needs a text field; '%s' is %s",
				  f->name, bind_kind(f));
			return -1;
		}
		return bind_pattern(p, err);
	}
	if (p->kind == P_CMP && p->op > CMP_NE && (f->type == FT_STR || f->type == FT_IP)) {
		error_set(err, p->oppos, p->oplen,
			  "'%s' does not apply to %s field '%s' (use ==, !=, %sin)",
			  ast_cmp_text[p->op], f->type == FT_STR ? "text" : "address", f->name,
			  f->type == FT_STR ? "~ or " : "or ");
		return -1;
	}
	for (i = 0; i < p->nvals; i++)
		if (bind_value(q, s, p->f.idx, &p->vals[i], err))
			return -1;
	if (f->type == FT_HIST) {
		if (q->plan.hist_field >= 0 && q->plan.hist_field != p->f.idx) {
			error_set(err, p->f.pos, p->f.len,
				  "WHERE can test one histogram field; '%s' and '%s' are both histograms",
				  s->fields[q->plan.hist_field].name, f->name);
			return -1;
		}
		q->plan.hist_field = p->f.idx;
	}
	return 0;
}

/* The result type of aggregate a over field f (NULL: count of events). */
static enum ftype bind_type(const struct field *f, enum agg a, bool *real)
{
	enum ukind u;

	*real = a == AGG_AVG || a == AGG_STDDEV || a == AGG_RATE;
	if (!f || a == AGG_COUNT)
		return FT_U64;
	if (a == AGG_DIST)
		return FT_HIST;
	if (f->type != FT_HIST)
		return f->type;
	if (a == AGG_RATE)
		return FT_U64;
	u = bind_unit(f);
	return u == U_DUR ? FT_DUR : u == U_SIZE ? FT_SIZE : FT_U64;
}

/* Append a column to the plan and return it. */
static struct pcol *bind_col(struct plan *pl, const char *name, const char *text)
{
	struct pcol *c;

	pl->cols = xreallocarray(pl->cols, pl->ncols + 1, sizeof(*pl->cols));
	c = &pl->cols[pl->ncols++];
	memset(c, 0, sizeof(*c));
	c->name = xstrdup(name);
	c->text = xstrdup(text);
	c->field = -1;
	c->keyslot = -1;
	c->ratio_of = -1;
	return c;
}

/* Return the key slot of schema field idx, or -1 if it is not a group key. */
static int bind_keyslot(const struct plan *pl, int idx)
{
	size_t i;

	for (i = 0; i < pl->nkeys; i++)
		if (pl->keys[i] == idx)
			return (int)i;
	return -1;
}

/* Add a key column for group key slot k. */
static void bind_keycol(const struct schema *s, struct plan *pl, int k)
{
	const struct field *f = &s->fields[pl->keys[k]];
	struct pcol *c = bind_col(pl, f->name, f->name);

	c->key = true;
	c->keyslot = k;
	c->field = pl->keys[k];
	c->type = f->type;
	c->part = pl->keys[k] == pl->part_key;
}

/* The default aggregate of a bare non-key field. */
static enum agg bind_default(const struct field *f)
{
	return f->flags & FF_SUM ? AGG_SUM : AGG_AVG;
}

/* Fail if a visible column is already called name. */
static int bind_unique(const struct plan *pl, const struct item *it, const char *name,
		       struct query_error *err)
{
	size_t i;

	for (i = 0; i < pl->ncols; i++) {
		if (!strcmp(pl->cols[i].name, name)) {
			error_set(err, it->pos, it->len,
				  "column '%s' appears twice (rename one with AS)", name);
			return -1;
		}
	}
	return 0;
}

/* The hint after a refused aggregate of key f: where s has a bytes field,
 * the aggregate a size key was likely meant for. */
static const char *bind_bytes_hint(const struct schema *s, const struct field *f)
{
	if (strcmp(f->name, "size") || schema_field(s, "bytes") < 0)
		return "";
	return "; sum(bytes) and rate(bytes) are the bytes moved";
}

/* Add the column an item asks for (resolving its field first); a hidden
 * column (ORDER BY only) may repeat a visible name. */
static int bind_item(const struct schema *s, struct query *q, struct item *it,
		     bool hidden, struct query_error *err)
{
	struct plan *pl = &q->plan;
	const struct field *f = NULL;
	enum agg a = it->agg;
	bool part = false;
	struct pcol *c;
	char *text;
	int k;

	if (it->f.name && !(a == AGG_NONE && !strcmp(it->f.name, "count") &&
			    schema_field(s, "count") < 0)) {
		if (bind_field(s, &it->f, err))
			return -1;
		f = &s->fields[it->f.idx];
	}
	if (a == AGG_NONE && f && (f->flags & FF_KEY)) {
		k = bind_keyslot(pl, it->f.idx);
		if (k < 0) {
			error_set(err, it->f.pos, it->f.len,
				  "'%s' is not in GROUP BY: add it there, or drop it here", f->name);
			return -1;
		}
		if (!hidden && bind_unique(pl, it, it->as ? it->as : f->name, err))
			return -1;
		c = bind_col(pl, it->as ? it->as : f->name, f->name);
		c->key = true;
		c->keyslot = k;
		c->field = it->f.idx;
		c->type = f->type;
		c->part = it->f.idx == pl->part_key;
		return 0;
	}
	if (a == AGG_NONE)
		a = f ? bind_default(f) : AGG_COUNT;
	part = f && (f->flags & FF_PART);
	if (part && a != AGG_SUM && a != AGG_RATE && a != AGG_COUNT) {
		/* A part with a per-event histogram <part>_lat: min, max, avg,
		 * stddev, pNN and dist are those of each event's time in it. */
		char *hname = xasprintf("%s_lat", f->name);
		int hi = schema_field(s, hname);

		free(hname);
		if (hi >= 0 && s->fields[hi].type == FT_HIST) {
			it->f.idx = hi;
			f = &s->fields[hi];
		}
	}
	if (f && a != AGG_COUNT && !bind_numeric(f)) {
		error_set(err, it->f.pos, it->f.len, "%s() needs a numeric field; '%s' is %s",
			  it->func ? it->func : "sum", f->name, bind_kind(f));
		return -1;
	}
	if (f && (f->flags & FF_KEY) && a != AGG_COUNT && a != AGG_MIN && a != AGG_MAX &&
	    a != AGG_DIST) {
		error_set(err, it->f.pos, it->f.len,
			  "%s(%s): '%s' is a key (it identifies a row), not a quantity; count, min or max of it make sense%s",
			  it->func ? it->func : "sum", f->name, f->name,
			  bind_bytes_hint(s, f));
		return -1;
	}
	if (f && a == AGG_DIST && f->type != FT_HIST) {
		error_set(err, it->f.pos, it->f.len, "dist() needs a histogram field; '%s' is %s",
			  f->name, bind_kind(f));
		return -1;
	}
	text = ast_item_text(it);
	if (!hidden && bind_unique(pl, it, it->as ? it->as : text, err)) {
		free(text);
		return -1;
	}
	c = bind_col(pl, it->as ? it->as : text, text);
	free(text);
	c->field = f ? it->f.idx : -1;
	c->part = part;
	c->agg = a;
	c->pct = it->pct;
	c->type = bind_type(f, a, &c->real);
	return 0;
}

/* Pick the group keys. */
static int bind_keys(const struct schema *s, struct query *q, struct query_error *err)
{
	struct plan *pl = &q->plan;
	size_t i, j;
	int idx;

	pl->keys = xcalloc(s->nfields + q->ngroup + 1, sizeof(*pl->keys));
	if (q->has_group) {
		for (i = 0; i < q->ngroup; i++) {
			if (bind_field(s, &q->group[i], err))
				return -1;
			idx = q->group[i].idx;
			if (s->fields[idx].type == FT_HIST) {
				error_set(err, q->group[i].pos, q->group[i].len,
					  "cannot group by '%s': it is a histogram (try dist(%s))",
					  s->fields[idx].name, s->fields[idx].name);
				return -1;
			}
			if (bind_keyslot(pl, idx) >= 0) {
				error_set(err, q->group[i].pos, q->group[i].len,
					  "'%s' is already in GROUP BY", s->fields[idx].name);
				return -1;
			}
			pl->keys[pl->nkeys++] = idx;
		}
		return 0;
	}
	if (!q->has_show) {
		for (i = 0; i < s->nfields; i++)
			if ((s->fields[i].flags & FF_KEY) && !(s->fields[i].flags & FF_HIDDEN) &&
			    s->fields[i].type != FT_HIST)
				pl->keys[pl->nkeys++] = (int)i;
		return 0;
	}
	for (j = 0; j < q->nshow; j++) {
		const struct item *it = &q->show[j];

		if (it->agg != AGG_NONE || (idx = schema_field(s, it->f.name)) < 0)
			continue;
		if ((s->fields[idx].flags & FF_KEY) && s->fields[idx].type != FT_HIST &&
		    bind_keyslot(pl, idx) < 0)
			pl->keys[pl->nkeys++] = idx;
	}
	return 0;
}

/* Return whether item it is the bare field name (written as such). */
static bool bind_bare_is(const struct item *it, int idx)
{
	return it->agg == AGG_NONE && it->f.idx == idx;
}

/* Build the columns: keys, SHOW items or the default layout. */
static int bind_columns(const struct schema *s, struct query *q, struct query_error *err)
{
	struct plan *pl = &q->plan;
	size_t i, j;

	for (j = 0; j < q->nshow; j++)
		if (q->show[j].agg == AGG_NONE && q->show[j].f.name)
			q->show[j].f.idx = schema_field(s, q->show[j].f.name);
	for (i = 0; i < pl->nkeys; i++) {
		for (j = 0; j < q->nshow; j++)
			if (bind_bare_is(&q->show[j], pl->keys[i]))
				break;
		if (j == q->nshow)
			bind_keycol(s, pl, (int)i);
	}
	if (q->has_show) {
		for (j = 0; j < q->nshow; j++)
			if (bind_item(s, q, &q->show[j], false, err))
				return -1;
	} else {
		for (i = 0; i < s->nfields; i++) {
			const struct field *f = &s->fields[i];
			struct pcol *c;

			if ((f->flags & (FF_KEY | FF_HIDDEN)) || !bind_numeric(f))
				continue;
			c = bind_col(pl, f->name, f->name);
			c->field = (int)i;
			c->agg = bind_default(f);
			c->type = bind_type(f, c->agg, &c->real);
		}
	}
	pl->nvisible = pl->ncols;
	return 0;
}

/* Return whether column c gets a BASELINE ratio: a number that is not a key. */
static bool bind_has_ratio(const struct pcol *c)
{
	return !c->key && c->type != FT_HIST && c->type != FT_STR && c->type != FT_IP;
}

/* With BASELINE, put a column "C/base" (C / the baseline's C) right after
 * every visible number C. */
static void bind_ratios(struct plan *pl)
{
	struct pcol *old = pl->cols, *c;
	size_t i, n = 0;

	for (i = 0; i < pl->ncols; i++)
		n += bind_has_ratio(&old[i]);
	pl->cols = xcalloc(pl->ncols + n + 1, sizeof(*pl->cols));
	for (i = 0, n = 0; i < pl->ncols; i++) {
		pl->cols[n++] = old[i];
		if (!bind_has_ratio(&old[i]))
			continue;
		c = &pl->cols[n++];
		c->name = xasprintf("%s/base", old[i].name);
		c->text = xasprintf("%s/base", old[i].text);
		c->type = FT_U64;
		c->real = true;
		c->field = -1;
		c->keyslot = -1;
		c->ratio_of = (int)n - 2;
		c->part = old[i].part;
	}
	free(old);
	pl->ncols = pl->nvisible = n;
}

/* Find or add the ORDER BY column and pick the direction. */
static int bind_order(const struct schema *s, struct query *q, struct query_error *err)
{
	struct plan *pl = &q->plan;
	char *text;
	size_t i;

	if (!q->has_order) {
		for (i = 0; i < pl->nvisible; i++)
			if (!pl->cols[i].key && pl->cols[i].type != FT_HIST)
				break;
		pl->order_col = i < pl->nvisible ? (int)i : 0;
		pl->order_desc = i < pl->nvisible;
		return 0;
	}
	text = ast_item_text(&q->order);
	if (q->order.base) {
		char *t = xasprintf("%s/base", text);

		free(text);
		text = t;
	}
	for (i = 0; i < pl->nvisible; i++)
		if (!strcmp(pl->cols[i].text, text) ||
		    (!q->order.func && !strcmp(pl->cols[i].name, text)))
			break;
	if (i == pl->nvisible && q->order.base) {
		if (q->opts.baseline)
			error_set(err, q->order.pos, q->order.len,
				  "no column '%.60s': ORDER BY can name the ratio of a number in SHOW",
				  text);
		else
			error_set(err, q->order.pos, q->order.len,
				  "'%.60s' needs a recording to compare with: add BASELINE 'file'", text);
		free(text);
		return -1;
	}
	free(text);
	if (i == pl->nvisible) {
		if (bind_item(s, q, &q->order, true, err))
			return -1;
		i = pl->ncols - 1;
	}
	if (pl->cols[i].type == FT_HIST) {
		error_set(err, q->order.pos, q->order.len,
			  "cannot order by a histogram; order by a number such as p99(%s)",
			  q->order.f.name);
		return -1;
	}
	pl->order_col = (int)i;
	pl->order_desc = q->dir == DIR_DESC || (q->dir == DIR_DEFAULT && !pl->cols[i].key);
	return 0;
}

/* Check the FROM table against the schema's: a table of some view
 * (probes/views.h) this source lacks, or one latop does not know. */
static int bind_table(const struct query *q, const struct schema *s, struct query_error *err)
{
	const char *cands[64];
	const char *sug;
	const struct schema *t;
	bool known = false;
	size_t v, i, n = 0;

	if (!q->table || !strcmp(q->table, s->table))
		return 0;
	cands[n++] = s->table;
	for (v = 0; v < views_len; v++)
		for (i = 0; i < views_ntables(&views[v]); i++) {
			if (!(t = views_table(&views[v], i)))
				continue;
			known = known || !strcmp(t->table, q->table);
			if (n < sizeof(cands) / sizeof(cands[0]))
				cands[n++] = t->table;
		}
	sug = text_suggest(q->table, cands, n);
	if (known)
		error_set(err, q->tpos, q->tlen, "this source has no table '%s' (it has '%s')",
			  q->table, s->table);
	else
		error_set(err, q->tpos, q->tlen, "unknown table '%.60s'%s%s%s", q->table,
			  sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	return -1;
}

const char *bind_part_key(const struct schema *s)
{
	size_t i;

	if (schema_field(s, PART_KEY) >= 0)
		return NULL;
	for (i = 0; i < s->nfields; i++)
		if ((s->fields[i].flags & FF_PART) && s->fields[i].type == FT_DUR)
			return PART_KEY;
	return NULL;
}

/* Return whether a predicate names field name. */
static bool bind_pred_names(const struct pred *p, const char *name)
{
	if (!p)
		return false;
	if (p->kind == P_AND || p->kind == P_OR || p->kind == P_NOT)
		return bind_pred_names(p->l, name) || bind_pred_names(p->r, name);
	return p->f.name && !strcmp(p->f.name, name);
}

/* Return whether q names field name anywhere. */
static bool bind_names(const struct query *q, const char *name)
{
	size_t i;

	for (i = 0; i < q->ngroup; i++)
		if (!strcmp(q->group[i].name, name))
			return true;
	for (i = 0; i < q->nshow; i++)
		if (q->show[i].f.name && !strcmp(q->show[i].f.name, name))
			return true;
	if (q->has_order && q->order.f.name && !strcmp(q->order.f.name, name))
		return true;
	return bind_pred_names(q->where, name);
}

bool bind_has_bytes(const struct schema *s)
{
	int i = schema_field(s, "size");

	return i >= 0 && (s->fields[i].flags & FF_KEY) && s->fields[i].type == FT_SIZE &&
	       schema_field(s, BYTES_FIELD) < 0;
}

/* Return whether some field of s lacks the pushdown term or domain its
 * compiled-in twin has (s was read from a recording). */
static bool bind_needs_attach(const struct schema *s)
{
	const struct field *k;
	size_t i, nknown;
	const struct schema *const *known = views_schemas(&nknown);

	for (i = 0; i < s->nfields; i++)
		if (!s->fields[i].pushdown && !s->fields[i].domain &&
		    (k = schema_known(s, i, known, nknown)) &&
		    (k->pushdown || k->domain))
			return true;
	return false;
}

/* The fields naming an event's cgroup, as every table with a process has them. */
static const char *const cgroup_fields[] = {"cgroup", "unit", "container"};
#define NCGROUP_FIELDS (sizeof(cgroup_fields) / sizeof(cgroup_fields[0]))

/* Return the compiled-in schema of s's table when it has the cgroup fields
 * and s (a recording made before them) has none, else NULL. */
static const struct schema *bind_cgroup_twin(const struct schema *s)
{
	size_t i, j, nknown;
	const struct schema *const *known = views_schemas(&nknown);

	for (j = 0; j < NCGROUP_FIELDS; j++)
		if (schema_field(s, cgroup_fields[j]) >= 0)
			return NULL;
	for (i = 0; i < nknown; i++) {
		if (known[i] == s || strcmp(known[i]->table, s->table))
			continue;
		for (j = 0; j < NCGROUP_FIELDS; j++)
			if (schema_field(known[i], cgroup_fields[j]) < 0)
				return NULL;
		return known[i];
	}
	return NULL;
}

/* Return the schema q binds against: s, or a copy of s whose fields have
 * the pushdown terms and domains of the compiled-in schema (for a schema
 * read from a recording), plus the cgroup fields a recording made before
 * them lacks (empty in its rows), and the pseudo-fields it lacks: BYTES_FIELD
 * (size times the row's events, see exec.c), then PART_KEY, named as q
 * names it (PART_KEY or PART_KEY_ALIAS). */
static const struct schema *bind_extend(struct query *q, const struct schema *s)
{
	struct plan *pl = &q->plan;
	bool bytes = bind_has_bytes(s), part = bind_part_key(s) != NULL;
	bool attach = bind_needs_attach(s);
	const struct schema *cg = bind_cgroup_twin(s);
	struct field *pk;
	size_t i, n = s->nfields;

	if (!bytes && !part && !attach && !cg)
		return s;
	pl->xfields = xcalloc(s->nfields + 2 + NCGROUP_FIELDS, sizeof(*pl->xfields));
	memcpy(pl->xfields, s->fields, s->nfields * sizeof(*pl->xfields));
	pl->xs = *s;
	pl->xs.fields = pl->xfields;
	if (attach) {
		size_t nknown;
		const struct schema *const *known = views_schemas(&nknown);

		schema_attach(&pl->xs, pl->xfields, known, nknown);
	}
	for (i = 0; cg && i < NCGROUP_FIELDS; i++)
		pl->xfields[n++] = cg->fields[schema_field(cg, cgroup_fields[i])];
	if (bytes) {
		pl->xfields[n] = (struct field){BYTES_FIELD, FT_SIZE, FF_SUM | FF_HIDDEN, "B",
						bytes_help};
		pl->size_field = schema_field(s, "size");
		pl->bytes_field = (int)n++;
	}
	if (part) {
		pl->parts = xcalloc(s->nfields, sizeof(*pl->parts));
		for (i = 0; i < s->nfields; i++)
			if ((s->fields[i].flags & FF_PART) && s->fields[i].type == FT_DUR)
				pl->parts[pl->nparts++] = (int)i;
		pk = &pl->xfields[n];
		pk->name = schema_field(s, PART_KEY_ALIAS) < 0 && bind_names(q, PART_KEY_ALIAS) ?
			   PART_KEY_ALIAS : PART_KEY;
		pk->type = FT_STR;
		pk->flags = FF_KEY | FF_HIDDEN;
		pk->unit = "";
		pk->help = part_key_help;
		pl->part_key = (int)n++;
	}
	pl->xs.nfields = n;
	return &pl->xs;
}

/* Return whether a predicate tests schema field idx. */
static bool bind_pred_uses(const struct pred *p, int idx)
{
	if (!p)
		return false;
	if (p->kind == P_AND || p->kind == P_OR || p->kind == P_NOT)
		return bind_pred_uses(p->l, idx) || bind_pred_uses(p->r, idx);
	return p->f.idx == idx;
}

/* Decide whether rows unpivot: the query groups by, filters on or shows PART_KEY. */
static bool bind_expand(const struct query *q)
{
	const struct plan *pl = &q->plan;
	size_t i;

	if (pl->part_key < 0)
		return false;
	if (bind_keyslot(pl, pl->part_key) >= 0 || bind_pred_uses(q->where, pl->part_key))
		return true;
	for (i = 0; i < pl->ncols; i++)
		if (pl->cols[i].field == pl->part_key)
			return true;
	return false;
}

int query_bind(struct query *q, const struct schema *s, struct query_error *err)
{
	memset(err, 0, sizeof(*err));
	q->schema = NULL;
	ast_plan_done(&q->plan);
	if (q->base)
		baseline_reset(q->base);
	if (bind_table(q, s, err))
		return -1;
	if (q->bucket_ns && q->opts.baseline) {
		error_set(err, q->bucket_pos, q->bucket_len,
			  "BASELINE compares a whole recording; it does not go with time(...)");
		return -1;
	}
	s = bind_extend(q, s);
	q->plan.count_field = schema_field(s, "count");
	if (q->plan.count_field >= 0 && (s->fields[q->plan.count_field].type == FT_HIST ||
					 !(s->fields[q->plan.count_field].flags & FF_SUM)))
		q->plan.count_field = -1;
	if (bind_pred(q, s, q->where, err) || bind_keys(s, q, err) ||
	    bind_columns(s, q, err)) {
		ast_plan_done(&q->plan);
		return -1;
	}
	if (q->opts.baseline)
		bind_ratios(&q->plan);
	if (bind_order(s, q, err)) {
		ast_plan_done(&q->plan);
		return -1;
	}
	q->plan.expand = bind_expand(q);
	q->schema = s;
	return 0;
}
