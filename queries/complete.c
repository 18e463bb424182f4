/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Completion for the query line: the candidates for the word ending at the
 * cursor.  After FROM: table names.  Elsewhere: fields of the FROM table
 * (of every table without FROM, with PART_KEY for tables that have parts),
 * then time( in GROUP BY, then functions (with their "("), then
 * keywords, each matching the typed prefix case-insensitively.  A value
 * compared with a field that has a domain (after ==, != or in ( ... ,):
 * the domain's names only.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../core/xalloc.h"
#include "../probes/views.h"
#include "ast.h"
#include "lexer.h"

struct cands {
	char **out;
	size_t n, max;
	const char *prefix;
	size_t plen;
};

/* Add a candidate if it matches the prefix and is new. */
static void complete_add(struct cands *c, const char *word, const char *suffix)
{
	char *s;
	size_t i;

	if (c->n >= c->max || strncasecmp(word, c->prefix, c->plen))
		return;
	s = xasprintf("%s%s", word, suffix);
	for (i = 0; i < c->n; i++) {
		if (!strcmp(c->out[i], s)) {
			free(s);
			return;
		}
	}
	c->out[c->n++] = s;
}

/* Return the word before position start (lower-cased into buf), or "". */
static const char *complete_prev(const char *text, size_t start, char *buf, size_t n)
{
	size_t e = start, b;

	while (e && isspace((unsigned char)text[e - 1]))
		e--;
	b = e;
	while (b && (isalnum((unsigned char)text[b - 1]) || text[b - 1] == '_'))
		b--;
	if (e - b >= n)
		e = b + n - 1;
	for (size_t i = b; i < e; i++)
		buf[i - b] = (char)tolower((unsigned char)text[i]);
	buf[e - b] = 0;
	return buf;
}

/* Return the schema named after FROM in text, or NULL. */
static const struct schema *complete_from(const char *text, const struct schema *const *schemas,
					  size_t nschemas)
{
	struct query_error err;
	struct lexer lx;
	const struct schema *s = NULL;
	size_t i, j;

	if (lexer_run(&lx, text, &err))
		return NULL;
	for (i = 0; i + 1 < lx.ntok && !s; i++)
		if (lexer_is(&lx.tok[i], "from") && lx.tok[i + 1].kind == TK_WORD)
			for (j = 0; j < nschemas; j++)
				if (!strcasecmp(schemas[j]->table, lx.tok[i + 1].text))
					s = schemas[j];
	lexer_done(&lx);
	return s;
}

/* Return the field name (in lx) a value at the end of lx is compared with,
 * or NULL: "f ==", "f !=", "f in (", "f not in ('a', 'b',". */
static const char *complete_cmp_field(const struct lexer *lx)
{
	const struct token *t = lx->tok;
	long k = (long)lx->ntok - 2;	/* the last token before TK_EOF */

	if (k < 1)
		return NULL;
	if (t[k].kind == TK_OP && (!strcmp(t[k].text, "==") || !strcmp(t[k].text, "!=") ||
				   !strcmp(t[k].text, "=")))
		return t[k - 1].kind == TK_WORD ? t[k - 1].text : NULL;
	while (k >= 2 && t[k].kind == TK_COMMA &&
	       (t[k - 1].kind == TK_STRING || t[k - 1].kind == TK_WORD))
		k -= 2;
	if (k < 2 || t[k].kind != TK_LPAREN || !lexer_is(&t[k - 1], "in"))
		return NULL;
	k -= 2;
	if (k >= 1 && lexer_is(&t[k], "not"))
		k--;
	return t[k].kind == TK_WORD ? t[k].text : NULL;
}

/* Add the domain names of the field a value at start is compared with;
 * return whether the word is such a value. */
static bool complete_value(struct cands *c, const char *text, size_t start,
			   const struct schema *from, const struct schema *const *schemas,
			   size_t nschemas)
{
	const struct field_domain *d = NULL;
	const struct field *k;
	struct query_error err;
	struct lexer lx;
	const char *fname, *n;
	char *head;
	size_t i, j, end = start;
	int idx;

	if (end && text[end - 1] == '\'')
		end--;
	head = xstrndup(text, end);
	if (lexer_run(&lx, head, &err)) {
		free(head);
		return false;
	}
	fname = complete_cmp_field(&lx);
	for (i = 0; fname && !d && i < nschemas; i++) {
		const struct schema *s = from ? from : schemas[i];

		if ((idx = schema_field(s, fname)) >= 0) {
			d = s->fields[idx].domain;
			size_t nknown;
			const struct schema *const *known = views_schemas(&nknown);

			if (!d && (k = schema_known(s, (size_t)idx, known, nknown)))
				d = k->domain;
		}
		if (from)
			break;
	}
	lexer_done(&lx);
	free(head);
	if (!d)
		return false;
	for (j = 0; (n = d->name(j)); j++)
		complete_add(c, n, "");
	return true;
}

/* Return whether the word at start is in GROUP BY: the last keyword before
 * it but BY is GROUP. */
static bool complete_in_group(const char *text, size_t start)
{
	static const char *const clauses[] = {"from", "where", "group", "show", "order", "limit"};
	struct query_error err;
	struct lexer lx;
	char *head = xstrndup(text, start);
	bool in = false;
	size_t i, k;

	if (lexer_run(&lx, head, &err)) {
		free(head);
		return false;
	}
	for (i = 0; i < lx.ntok; i++) {
		if (lx.tok[i].kind != TK_WORD || !lexer_reserved(lx.tok[i].text))
			continue;
		for (k = 0; k < sizeof(clauses) / sizeof(clauses[0]); k++)
			if (lexer_is(&lx.tok[i], clauses[k]))
				break;
		if (k < sizeof(clauses) / sizeof(clauses[0]))
			in = k == 2;
		else if (!lexer_is(&lx.tok[i], "by"))
			in = false;	/* an option ends GROUP BY */
	}
	lexer_done(&lx);
	free(head);
	return in;
}

size_t query_complete(const char *text, size_t pos, const struct schema *const *schemas,
		      size_t nschemas, char **out, size_t max)
{
	struct cands c = {out, 0, max, NULL, 0};
	const struct schema *from;
	char prevw[32], *head;
	size_t start = pos, i, j;

	if (pos > strlen(text))
		pos = start = strlen(text);
	while (start && (isalnum((unsigned char)text[start - 1]) || text[start - 1] == '_'))
		start--;
	c.prefix = text + start;
	c.plen = pos - start;
	if (!strcmp(complete_prev(text, start, prevw, sizeof(prevw)), "from")) {
		for (i = 0; i < nschemas; i++)
			complete_add(&c, schemas[i]->table, "");
		return c.n;
	}
	/* an opening quote right before the word is no part of FROM's text */
	head = xstrndup(text, start && text[start - 1] == '\'' ? start - 1 : start);
	from = complete_from(head, schemas, nschemas);
	free(head);
	if (complete_value(&c, text, start, from, schemas, nschemas))
		return c.n;
	for (i = 0; i < nschemas; i++) {
		const struct schema *s = from ? from : schemas[i];

		for (j = 0; j < s->nfields; j++)
			complete_add(&c, s->fields[j].name, "");
		if (bind_has_bytes(s))
			complete_add(&c, BYTES_FIELD, "");
		if (bind_part_key(s)) {
			complete_add(&c, bind_part_key(s), "");
			complete_add(&c, PART_KEY_ALIAS, "");
		}
		if (from)
			break;
	}
	if (complete_in_group(text, start))
		complete_add(&c, "time", "(");
	for (i = 0; ast_funcs[i]; i++)
		complete_add(&c, ast_funcs[i], "(");
	for (i = 0; lexer_keywords[i]; i++)
		complete_add(&c, lexer_keywords[i], "");
	return c.n;
}
