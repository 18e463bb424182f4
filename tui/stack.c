/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The query stack: installing a query, refining it, drilling into a row,
 * going back, switching views and sorting.  Every change of query goes
 * through query_install; the texts to go back to are kept on s->stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "screen_priv.h"
#include "views.h"

/* Push q's kernel filter and tick interval into a live source. */
static void source_configure(struct screen *s, const struct query *q)
{
	struct filter_prog f;
	char *cause = NULL;

	if (s->src->ops->set_filter) {
		memset(&f, 0, sizeof(f));
		query_pushdown(q, &f);
		if (s->src->ops->set_filter(s->src, query_table(q), &f, sizeof(f), &cause) < 0) {
			screen_status(s, ROLE_ERROR, "kernel filter not installed: %s", cause);
			free(cause);
			cause = NULL;
		}
	}
	if (s->src->ops->set_interval && query_option_given(q, "every") &&
	    s->src->ops->set_interval(s->src, query_options(q)->every_ns, &cause) < 0) {
		screen_status(s, ROLE_ERROR, "tick interval not changed: %s", cause);
		free(cause);
	}
}

/* Bind q to its table and make it current (taking it); -1 with *err. */
static int query_install(struct screen *s, struct query *q, struct query_error *err)
{
	const char *table = query_table(q);
	const struct schema *sch = source_schema(s->info, table);
	int v;

	if (!sch) {
		memset(err, 0, sizeof(*err));
		if (table)
			snprintf(err->msg, sizeof(err->msg),
				 "%s: no probe in this build/recording provides table '%s'", table, table);
		else
			snprintf(err->msg, sizeof(err->msg), "the query needs a table: from TABLE ...");
		return -1;
	}
	if (query_bind(q, sch, err) < 0)
		return -1;
	query_free(s->query);
	free(s->query_text);
	s->query = q;
	s->query_text = query_text(q);
	s->schema = sch;
	s->win.window_ns = query_options(q)->window_ns;
	source_configure(s, q);
	v = views_find(table);
	if (v >= 0) {
		s->view = (size_t)v;
		free(s->view_query[v]);
		s->view_query[v] = xstrdup(s->query_text);
	}
	return 0;
}

/* Remember a query text (taking it) for Backspace. */
static void stack_push(struct screen *s, char *text)
{
	if (s->depth == SCREEN_STACK_MAX) {
		free(s->stack[0]);
		memmove(s->stack, s->stack + 1, (SCREEN_STACK_MAX - 1) * sizeof(s->stack[0]));
		s->depth--;
	}
	s->stack[s->depth++] = text;
}

void stack_clear(struct screen *s)
{
	while (s->depth)
		free(s->stack[--s->depth]);
}

int screen_refine(struct screen *s, const char *text, struct query_error *err,
		  char **err_text)
{
	struct query *q = s->query ? query_refine(s->query, text, err) : query_parse(text, err);
	char *old = s->query_text ? xstrdup(s->query_text) : NULL;
	unsigned live_only = QOK_KERNEL | QOK_TICK;
	char *steer_was = s->query ? query_options_written(s->query, live_only) : NULL, *steer;

	if (!q) {
		*err_text = xstrdup(text);
		free(old);
		free(steer_was);
		return -1;
	}
	if (query_install(s, q, err) < 0) {
		*err_text = query_text(q);
		query_free(q);
		free(old);
		free(steer_was);
		return -1;
	}
	/* Over a recording the options only live probes act on do nothing.
	 * A view's own query carries its THRESHOLD: only options the user
	 * changed are worth a word. */
	steer = query_options_written(s->query, live_only);
	if (!s->src->ops->set_filter && steer && (!steer_was || strcmp(steer, steer_was)))
		screen_status(s, ROLE_STATUS, "%s: steers the live probes; over a recording, "
			      "nothing (select single events with where lat >= DUR)", steer);
	free(steer);
	free(steer_was);
	if (old && strcmp(old, s->query_text))
		stack_push(s, old);
	else
		free(old);
	return 0;
}

/* Apply text as a refinement, saying any error in the status line. */
static int refine_or_say(struct screen *s, const char *text)
{
	struct query_error err;
	char *err_text = NULL, buf[1024], *nl;

	if (screen_refine(s, text, &err, &err_text) == 0)
		return 0;
	query_error_format(err_text, &err, buf, sizeof(buf));
	if ((nl = strchr(buf, '\n')))
		*nl = '\0';
	screen_status(s, ROLE_ERROR, "%s", buf);
	free(err_text);
	return -1;
}

int screen_drill(struct screen *s)
{
	char *where, *group = NULL, *g, *text;
	bool added = false;
	size_t f, c;

	if (!s->res || !s->res->nrows || !(where = table_view_where(s->res, s->tv.sel))) {
		screen_status(s, ROLE_STATUS, "no row to drill into");
		return -1;
	}
	for (f = 0; f < s->schema->nfields; f++) {
		const struct field *fd = &s->schema->fields[f];
		bool keyed = false;

		for (c = 0; c < s->res->ncols; c++)
			keyed |= s->res->cols[c].key && !s->res->cols[c].time &&
				 !strcmp(s->res->cols[c].name, fd->name);
		if (!keyed && (added || (fd->flags & (FF_KEY | FF_HIDDEN)) != (FF_KEY | FF_HIDDEN)))
			continue;
		added |= !keyed;
		g = group ? xasprintf("%s, %s", group, fd->name) : xstrdup(fd->name);
		free(group);
		group = g;
	}
	text = added ? xasprintf("where %s group by %s", where, group) : xasprintf("where %s", where);
	free(where);
	free(group);
	if (refine_or_say(s, text) < 0) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

bool screen_back(struct screen *s)
{
	struct query_error err;
	struct query *q;
	char *text;

	if (!s->depth)
		return false;
	text = s->stack[--s->depth];
	q = query_parse(text, &err);
	if (!q || query_install(s, q, &err) < 0) {
		screen_status(s, ROLE_ERROR, "cannot go back to '%s': %s", text, err.msg);
		query_free(q);
	}
	free(text);
	return true;
}

int screen_view(struct screen *s, size_t v)
{
	const char *text = s->view_query[v] ? s->view_query[v] : views[v].query;
	struct query_error err;
	struct query *q;
	char buf[1024], *nl;

	if (!views_schema(s->info, v)) {
		screen_status(s, ROLE_ERROR, "%s: no probe in this build/recording provides table '%s'",
			      views[v].name, views[v].table->table);
		return -1;
	}
	q = query_parse(text, &err);
	if (!q || query_install(s, q, &err) < 0) {
		query_error_format(text, &err, buf, sizeof(buf));
		if ((nl = strchr(buf, '\n')))
			*nl = '\0';
		screen_status(s, ROLE_ERROR, "%s: %s", views[v].name, buf);
		query_free(q);
		return -1;
	}
	stack_clear(s);
	free(s->tv.sel_key);
	s->tv.sel_key = NULL;
	s->tv.sel = s->tv.top = s->tv.hscroll = 0;
	return 0;
}

int screen_sort(struct screen *s, int col, bool flip)
{
	size_t depth;
	bool desc;
	char *text;
	int rc;

	if (!s->res || col < 0 || (size_t)col >= s->res->ncols)
		return -1;
	if (s->res->cols[col].time) {
		screen_status(s, ROLE_STATUS, "rows are in time order already; sort by another column");
		return -1;
	}
	if (col == s->tv.sort_col)
		desc = flip ? !s->tv.sort_desc : s->tv.sort_desc;
	else
		desc = !s->res->cols[col].key;
	text = xasprintf("order by %s %s", s->res->cols[col].name, desc ? "desc" : "asc");
	depth = s->depth;
	rc = refine_or_say(s, text);
	if (s->depth > depth)
		free(s->stack[--s->depth]);
	free(text);
	return rc;
}
