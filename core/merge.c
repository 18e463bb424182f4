/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recordings from several hosts read as one source, with joined tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"
#include "xalloc.h"

struct merge {
	struct source **srcs;
	size_t n, cur;
	const struct joiner **j;	/* the joiners that run, and their states */
	void **st;
	size_t nj;
	bool joined;			/* the joined tick was given */
	uint64_t t_min, t_max;		/* over every tick read */
	struct source_info info;
	const struct schema **schemas;
	char *host, *warning;
};

/* The joiner of list[0..n) that derives table, or NULL. */
static const struct joiner *joiner_in(const struct joiner *const *list, size_t n,
				      const char *table)
{
	size_t i, k;

	for (i = 0; table && i < n; i++)
		for (k = 0; list[i] && k < list[i]->ntables; k++)
			if (!strcmp(list[i]->tables[k]->table, table))
				return list[i];
	return NULL;
}

/* Every tick of every recording in turn, then the joined tick, then 2. */
static int merge_read(struct source *s, struct tick *out, int timeout_ms, char **cause)
{
	struct merge *m = s->priv;
	size_t k;
	int r;

	while (m->cur < m->n) {
		r = source_read(m->srcs[m->cur], out, timeout_ms, cause);
		if (r == 2) {
			m->cur++;
			continue;
		}
		if (r != 1)
			return r;
		if (!m->t_min || out->t_ns < m->t_min)
			m->t_min = out->t_ns;
		if (out->t_ns > m->t_max)
			m->t_max = out->t_ns;
		for (k = 0; k < m->nj; k++)
			if (m->st[k])
				m->j[k]->add(m->st[k], m->cur, out);
		return 1;
	}
	if (m->joined)
		return 2;
	m->joined = true;
	tick_init(out, m->t_max);
	for (k = 0; k < m->nj; k++)
		if (m->st[k])
			m->j[k]->finish(m->st[k], out);
	if (!out->nframes) {
		tick_done(out);
		return 2;
	}
	/* A joined frame covers everything read, whatever each joiner stamped. */
	for (k = 0; k < out->nframes; k++) {
		out->frames[k]->t_ns = m->t_max;
		out->frames[k]->dt_ns = m->t_max - m->t_min;
	}
	return 1;
}

static const struct source_info *merge_info(struct source *s)
{
	return &((struct merge *)s->priv)->info;
}

static void merge_close(struct source *s)
{
	struct merge *m = s->priv;
	size_t i;

	for (i = 0; i < m->nj; i++)
		if (m->st[i])
			m->j[i]->free(m->st[i]);
	for (i = 0; i < m->n; i++)
		source_close(m->srcs[i]);
	free(m->srcs);
	free(m->j);
	free(m->st);
	free(m->schemas);
	free(m->host);
	free(m->warning);
	free(m);
	free(s);
}

static const struct source_ops merge_ops = {
	.name = "merge",
	.read = merge_read,
	.info = merge_info,
	.close = merge_close,
};

/* Add schema s to m's list unless a table of that name is there. */
static void merge_schema(struct merge *m, const struct schema *s, size_t *cap)
{
	size_t i;

	for (i = 0; i < m->info.nschemas; i++)
		if (!strcmp(m->schemas[i]->table, s->table))
			return;
	if (m->info.nschemas == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		m->schemas = xreallocarray(m->schemas, *cap, sizeof(*m->schemas));
	}
	m->schemas[m->info.nschemas++] = s;
}

struct source *merge_open(struct source **srcs, size_t n, const struct joiner *const *list,
			  size_t nlist, const char *table, char **cause)
{
	const struct source_info **infos;
	const struct joiner *want;
	struct source *s;
	struct merge *m;
	size_t i, k, cap = 0;
	char *why;

	if (!n) {
		*cause = xstrdup("no recordings to read");
		return NULL;
	}
	infos = xcalloc(n, sizeof(*infos));
	for (i = 0; i < n; i++)
		infos[i] = srcs[i]->ops->info(srcs[i]);
	want = joiner_in(list, nlist, table);
	if (want && want->refuse && (why = want->refuse(infos, n))) {
		*cause = why;
		free(infos);
		return NULL;
	}
	m = xcalloc(1, sizeof(*m));
	m->srcs = xcalloc(n, sizeof(*m->srcs));
	memcpy(m->srcs, srcs, n * sizeof(*srcs));
	m->n = n;
	m->j = xcalloc(nlist, sizeof(*m->j));
	m->st = xcalloc(nlist, sizeof(*m->st));
	for (i = 0; i < nlist; i++) {
		if (!list[i] || (table && want != list[i]))
			continue;
		if (!table && list[i]->refuse && (why = list[i]->refuse(infos, n))) {
			free(why);
			continue;
		}
		m->j[m->nj] = list[i];
		m->st[m->nj++] = list[i]->begin(infos, n);
	}

	m->info = *infos[0];
	m->info.nschemas = 0;
	for (i = 0; i < n; i++)
		for (k = 0; k < infos[i]->nschemas; k++)
			merge_schema(m, infos[i]->schemas[k], &cap);
	for (i = 0; i < nlist; i++)
		for (k = 0; list[i] && k < list[i]->ntables; k++)
			merge_schema(m, list[i]->tables[k], &cap);
	m->info.schemas = m->schemas;
	m->info.nticks = 0;
	for (i = 0; i < n; i++) {
		const struct source_info *in = infos[i];

		m->info.nticks += in->nticks;
		if (in->t_first_ns && (!m->info.t_first_ns || in->t_first_ns < m->info.t_first_ns))
			m->info.t_first_ns = in->t_first_ns;
		if (in->t_last_ns > m->info.t_last_ns)
			m->info.t_last_ns = in->t_last_ns;
		if (in->interval_ns != m->info.interval_ns)
			m->info.interval_ns = 0;	/* the files do not agree */
		if (in->warning) {
			char *w = m->warning ? xasprintf("%s; %s", m->warning, in->warning)
					     : xstrdup(in->warning);
			free(m->warning);
			m->warning = w;
		}
		if (i && strcmp(in->host, infos[0]->host) &&
		    (!m->host || !strstr(m->host, in->host))) {
			char *h = xasprintf("%s+%s", m->host ? m->host : infos[0]->host, in->host);

			free(m->host);
			m->host = h;
		}
	}
	if (m->host)
		snprintf(m->info.host, sizeof(m->info.host), "%s", m->host);
	m->info.warning = m->warning;
	m->info.path = n == 1 ? infos[0]->path : NULL;
	free(infos);
	s = xcalloc(1, sizeof(*s));
	s->ops = &merge_ops;
	s->priv = m;
	return s;
}
