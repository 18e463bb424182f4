/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The man pages cannot drift from the code: every table every probe and
 * joiner gives has its section in latop-query(7) naming each of its fields,
 * every probe (view) is named in latop(1), and so is every latoprc key the
 * probes, the live source and the TUI read.  Run from the top of the tree.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "core/merge.h"
#include "probes/probe.h"
#include "probes/views.h"
#include "tui/tui.h"
#include "tap.h"

/* The whole of file path, with troff's font escapes and \- made plain; NULL if unreadable. */
static char *read_man(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf, *out;
	size_t n, i, o = 0;

	if (!f)
		return NULL;
	buf = calloc(1, 1 << 20);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	out = calloc(1, n + 1);
	for (i = 0; i < n; i++) {
		if (buf[i] == '\\' && buf[i + 1] == 'f' && buf[i + 2]) {
			i += 2;		/* \fB \fR \fI */
			continue;
		}
		if (buf[i] == '\\' && buf[i + 1] == '-') {
			out[o++] = '-';
			i++;
			continue;
		}
		out[o++] = buf[i];
	}
	free(buf);
	return out;
}

/* True if word appears in [s, end) with no [a-z0-9_] either side. */
static bool has_word(const char *s, const char *end, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = s; p && p + len <= end; p++) {
		p = strstr(p, word);
		if (!p || p + len > end)
			return false;
		if ((p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
		    !(isalnum((unsigned char)p[len]) || p[len] == '_'))
			return true;
	}
	return false;
}

/* The text of section ".SS table" (to the next .SS or .SH), in *end; NULL if none. */
static const char *section(const char *man, const char *table, const char **end)
{
	char head[128];
	const char *p = man;

	snprintf(head, sizeof(head), "\n.SS %s", table);
	while ((p = strstr(p, head))) {
		char c = p[strlen(head)];

		if (c == '\n' || c == ' ') {
			const char *ss = strstr(p + 1, "\n.SS "), *sh = strstr(p + 1, "\n.SH ");

			*end = ss && (!sh || ss < sh) ? ss : sh ? sh : p + strlen(p);
			return p;
		}
		p++;
	}
	return NULL;
}

/* Check one table's section; count what is missing. */
static void check_table(const char *man, const struct schema *s, int *tables, int *missing)
{
	const char *end, *sec = section(man, s->table, &end);

	(*tables)++;
	if (!sec) {
		printf("# latop-query(7) has no section .SS %s\n", s->table);
		(*missing)++;
		return;
	}
	for (size_t i = 0; i < s->nfields; i++)
		if (!has_word(sec, end, s->fields[i].name)) {
			printf("# latop-query(7), .SS %s: no field %s\n", s->table, s->fields[i].name);
			(*missing)++;
		}
}

int main(void)
{
	char *query = read_man("man/latop-query.7"), *latop = read_man("man/latop.1");
	const struct schema *schemas[64];
	size_t n = probe_schemas(schemas, 64);
	int tables = 0, missing = 0, views_missing = 0;

	ok(query && latop, "man/latop-query.7 and man/latop.1 are read from the top of the tree");
	if (!query || !latop)
		tap_done();
	for (size_t i = 0; i < n; i++)
		check_table(query, schemas[i], &tables, &missing);
	size_t njoiners;
	const struct joiner *const *joiners = views_joiners(&njoiners);

	for (size_t j = 0; j < njoiners; j++)
		for (size_t k = 0; k < joiners[j]->ntables; k++)
			check_table(query, joiners[j]->tables[k], &tables, &missing);
	ok(tables >= 18 && missing == 0,
	   "latop-query(7) has a section for each of the %d tables, naming every field (%d missing)",
	   tables, missing);
	for (size_t i = 0; i < probe_registry_len; i++)
		if (!has_word(latop, latop + strlen(latop), probe_registry[i]->name)) {
			printf("# latop(1) never names the view %s\n", probe_registry[i]->name);
			views_missing++;
		}
	ok(probe_registry_len >= 6 && views_missing == 0, "latop(1) names each of the %zu views",
	   probe_registry_len);
	const char *const *lists[16];
	size_t nlists = 0, nkeys = 0;
	int keys_missing = 0;

	for (size_t i = 0; i < probe_registry_len && nlists < 14; i++)
		lists[nlists++] = probe_registry[i]->config_keys;
	lists[nlists++] = live_config_keys;
	lists[nlists++] = tui_config_keys;
	for (size_t l = 0; l < nlists; l++)
		for (const char *const *k = lists[l]; k && *k; k++, nkeys++)
			if (!has_word(latop, latop + strlen(latop), *k)) {
				printf("# latop(1) never names the latoprc key %s\n", *k);
				keys_missing++;
			}
	ok(nkeys >= 15 && keys_missing == 0, "latop(1) names each of the %zu latoprc keys", nkeys);
	free(query);
	free(latop);
	tap_done();
}
