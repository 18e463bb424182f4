/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The list of views (probes/views.h): every view has its own key and name,
 * its tables are schemas with fields, its default query binds against its
 * table, every table a schema source names (.table = "...") belongs to
 * some view, and FROM tells a known table this source lacks from an
 * unknown one by that list.  Run from the top of the tree.
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include "probes/views.h"
#include "queries/query.h"
#include "tap.h"

/* Whether some view has a table named name. */
static bool in_some_view(const char *name)
{
	for (size_t v = 0; v < views_len; v++)
		for (size_t i = 0; i < views_ntables(&views[v]); i++)
			if (views_table(&views[v], i) && !strcmp(views_table(&views[v], i)->table, name))
				return true;
	return false;
}

/* Whether file has a line that is exactly line. */
static bool has_line(const char *file, const char *line)
{
	char buf[512];
	FILE *f = fopen(file, "r");
	bool found = false;

	while (f && !found && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		found = !strcmp(buf, line);
	}
	if (f)
		fclose(f);
	return found;
}

/* Check every `.table = "NAME"` in the probes' sources is some view's. */
static void named_tables(void)
{
	glob_t g;
	char line[512], name[128];
	int n = 0;

	if (glob("probes/*/*.c", 0, NULL, &g)) {
		ok(0, "probes/*/*.c found (run from the top of the tree)");
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, " .table = \"%127[^\"]\"", name) == 1) {
				ok(in_some_view(name), "table %s (%s) is in some view", name, g.gl_pathv[i]);
				n++;
			}
		if (f)
			fclose(f);
	}
	globfree(&g);
	ok(n >= 6, "the probes' sources name %d tables", n);
}

/* Bind "from table" against schema s; return the error text ("" if it binds). */
static const char *bind_from(const char *table, const struct schema *s)
{
	static struct query_error err;
	char text[128];
	struct query *q;

	snprintf(text, sizeof(text), "from %s", table);
	memset(&err, 0, sizeof(err));
	q = query_parse(text, &err);
	if (q && query_bind(q, s, &err) == 0)
		err.msg[0] = '\0';
	query_free(q);
	return err.msg;
}

int main(void)
{
	char ss[160];
	size_t v, w, i, nj;

	ok(views_len > 0, "there are views");
	for (v = 0; v < views_len; v++) {
		const struct view *vw = &views[v];
		struct query_error err;
		struct query *q;

		for (w = 0; w < v; w++) {
			ok(views[w].key != vw->key, "views %s and %s have different keys",
			   views[w].name, vw->name);
			ok(strcmp(views[w].name, vw->name), "views %zu and %zu have different names", w, v);
		}
		ok(vw->key >= '1' && vw->key <= '9', "view %s has a digit key", vw->name);
		ok(vw->help || v > 0, "view %s has --help text or shares the previous view's", vw->name);
		ok(vw->table && vw->table->nfields && vw->table->fields, "view %s has a table with fields",
		   vw->name);
		for (i = 0; i < views_ntables(vw); i++) {
			const struct schema *t = views_table(vw, i);

			if (i < 3 && !t)
				continue;	/* no events or spans table */
			ok(t && t->table && t->nfields && t->fields, "view %s: table %zu has fields",
			   vw->name, i);
		}
		ok(!views_table(vw, views_ntables(vw)), "view %s: no table past the last", vw->name);
		/* The detail pane lists the events table when there is one; spans
		 * without events have nothing to hang from. */
		ok(vw->events || !vw->spans, "view %s has spans only with an events table",
		   vw->name);
		ok(views_by_table(vw->table->table) == vw, "view %s is found by its table", vw->name);
		memset(&err, 0, sizeof(err));
		q = query_parse(vw->query, &err);
		ok(q && query_table(q) && !strcmp(query_table(q), vw->table->table) &&
		   query_bind(q, vw->table, &err) == 0,
		   "view %s: its default query parses and binds on %s (%s)", vw->name,
		   vw->table->table, err.msg);
		query_free(q);
		snprintf(ss, sizeof(ss), ".SS %s", vw->man);
		ok(vw->man && has_line("man/latop-query.7", ss), "view %s: latop-query(7) has '%s'",
		   vw->name, ss);
	}
	ok(!views_by_table("no_such_table"), "no view shows an unknown table");
	views_joiners(&nj);
	for (v = 0, w = 0; v < views_len; v++)
		w += views[v].joiner != NULL;
	ok(nj == w, "views_joiners lists the %zu joiners of the views", w);
	named_tables();

	/* FROM: every view's table is known, even one the source lacks. */
	for (v = 0; v < views_len; v++)
		for (i = 1; i < views_ntables(&views[v]); i++) {
			const struct schema *t = views_table(&views[v], i);
			const char *msg;

			if (!t)
				continue;
			msg = bind_from(t->table, views[0].table);
			ok(strstr(msg, "this source has no table") || !strcmp(t->table, views[0].table->table),
			   "from %s on %s: %s", t->table, views[0].table->table, msg);
		}
	ok(strstr(bind_from("flowz", views[1].table), "unknown table 'flowz' (did you mean 'flows'?)"),
	   "an unknown table is told apart: %s", bind_from("flowz", views[1].table));
	tap_done();
}
