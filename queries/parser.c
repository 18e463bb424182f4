/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Parse query text into the AST by recursive descent (the grammar: latop-query(7)). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../core/xalloc.h"
#include "ast.h"
#include "lexer.h"

struct parser {
	struct lexer lx;
	size_t i;
	struct query_error *err;
	int depth;		/* parentheses and NOTs around the current token */
	size_t npreds;		/* comparisons so far */
	uint64_t regex_pieces;	/* of the regexes so far (queries/regex.c) */
};

static const char *const parser_clauses[] = {"from", "where", "group", "show", "order", "limit"};
#define NCLAUSES 6

static const char *const parser_opts[OPT_COUNT] = {
	"window", "every", "sample", "threshold", "buffer", "baseline", "since", "until",
};

/* Return the current token. */
static struct token *peek(struct parser *p)
{
	return &p->lx.tok[p->i];
}

/* Return the current token and move past it (never past EOF). */
static struct token *next(struct parser *p)
{
	struct token *t = &p->lx.tok[p->i];

	if (t->kind != TK_EOF)
		p->i++;
	return t;
}

/* Return the token before the current one (for "after 'x'" messages). */
static const struct token *prev(struct parser *p)
{
	return &p->lx.tok[p->i ? p->i - 1 : 0];
}

/* Fail with a message at token t. */
static int fail_at(struct parser *p, const struct token *t, const char *msg)
{
	error_set(p->err, t->pos, t->kind == TK_EOF ? 1 : t->len, "%s", msg);
	return -1;
}

/* Fail with "expected WHAT after 'PREV'" at the current token. */
static int expected(struct parser *p, const char *what)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "expected %s after '%.40s'", what, prev(p)->text);
	return fail_at(p, peek(p), msg);
}

/* Return whether the current token is the keyword kw, consuming it if so. */
static bool take_kw(struct parser *p, const char *kw)
{
	if (!lexer_is(peek(p), kw))
		return false;
	next(p);
	return true;
}

/* Read a field name (a non-keyword word) into f. */
static int parse_field(struct parser *p, struct fref *f, const char *what)
{
	struct token *t = peek(p);
	char *c;

	if (t->kind != TK_WORD || lexer_reserved(t->text) || strpbrk(t->text, ".:"))
		return expected(p, what);
	next(p);
	f->name = xstrdup(t->text);
	for (c = f->name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	f->pos = t->pos;
	f->len = t->len;
	f->idx = -1;
	return 0;
}

/*
 * Return mult * 0.DIGITS (the n digits at frac) rounded to the nearest whole
 * number, halves up: the digits are multiplied from the last one up, so any
 * number of them is exact.  mult is at most an hour in ns, so no step
 * overflows.
 */
static uint64_t parse_fraction(const char *frac, size_t n, uint64_t mult)
{
	uint64_t carry = 0, v = 0;

	while (n--) {
		v = (uint64_t)(frac[n] - '0') * mult + carry;
		carry = v / 10;
	}
	return carry + (v % 10 >= 5);
}

/* Fail with "too large" at t, saying the largest value of unit kind u. */
static int parse_too_large(struct parser *p, const struct token *t, enum ukind u)
{
	error_set(p->err, t->pos, t->len, "number '%.60s' is too large: at most %s", t->text,
		  u == U_DUR ? "18446744073709551615ns (about 584 years)" :
		  u == U_SIZE ? "18446744073709551615 bytes (16 EiB)" : "18446744073709551615");
	return -1;
}

/* Scale the number in text (digits[.digits]unit) into v, exactly: leading
 * zeros and any number of decimals are fine, a fraction is rounded to the
 * unit's nanosecond or byte. */
static int parse_number(struct parser *p, const struct token *t, struct value *v)
{
	static const struct { const char *name; enum ukind kind; uint64_t mult; } units[] = {
		{"ns", U_DUR, 1}, {"us", U_DUR, 1000}, {"ms", U_DUR, 1000000},
		{"s", U_DUR, 1000000000ULL}, {"m", U_DUR, 60000000000ULL},
		{"h", U_DUR, 3600000000000ULL},
		{"B", U_SIZE, 1}, {"K", U_SIZE, 1ULL << 10}, {"KiB", U_SIZE, 1ULL << 10},
		{"M", U_SIZE, 1ULL << 20}, {"MiB", U_SIZE, 1ULL << 20},
		{"G", U_SIZE, 1ULL << 30}, {"GiB", U_SIZE, 1ULL << 30},
	};
	const char *s = t->text, *unit, *frac = NULL;
	size_t nd = strspn(s, "0123456789"), nf = 0, i;
	uint64_t mult = 1, whole = 0, part;

	if (s[nd] == '.' && isdigit((unsigned char)s[nd + 1])) {
		frac = s + nd + 1;
		nf = strspn(frac, "0123456789");
	}
	unit = frac ? frac + nf : s + nd;
	v->kind = V_NUM;
	v->unit = U_NONE;
	if (*s == '-') {
		error_set(p->err, t->pos, t->len, "'%.60s' is negative: only since and until take a "
			  "time before the end (e.g. since -5m)", s);
		return -1;
	}
	if (*unit) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i].name))
				break;
		if (i == sizeof(units) / sizeof(units[0])) {
			error_set(p->err, t->pos, t->len, "unknown unit '%.40s' in '%.60s'", unit, s);
			return -1;
		}
		v->unit = units[i].kind;
		mult = units[i].mult;
	}
	if (frac && !*unit) {
		error_set(p->err, t->pos, t->len,
			  "'%.60s' is not a whole number; give it a unit (e.g. %.60sms)", s, s);
		return -1;
	}
	for (i = 0; i < nd; i++) {
		if (whole > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return parse_too_large(p, t, v->unit);
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	part = frac ? parse_fraction(frac, nf, mult) : 0;
	if (whole > UINT64_MAX / mult || whole * mult > UINT64_MAX - part)
		return parse_too_large(p, t, v->unit);
	v->u = whole * mult + part;
	return 0;
}

/* Parse an address with an optional prefix length into v. */
static int parse_ip(struct parser *p, const char *text, int pos, int len, struct value *v)
{
	char buf[64];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);
	unsigned long pfx;
	uint8_t a4[4];
	char *end;

	v->kind = V_IP;
	memset(&v->ip, 0, sizeof(v->ip));
	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, text, n);
	buf[n] = 0;
	if (inet_pton(AF_INET, buf, a4) == 1) {
		v->ip.v4 = 1;
		v->ip.a[10] = v->ip.a[11] = 0xff;
		memcpy(v->ip.a + 12, a4, 4);
		v->ip.prefix = 32;
	} else if (inet_pton(AF_INET6, buf, v->ip.a) == 1) {
		v->ip.prefix = 128;
	} else {
		goto bad;
	}
	if (slash) {
		pfx = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || pfx > v->ip.prefix) {
			error_set(p->err, pos, len, "bad prefix length in '%.60s' (0 to %d)", text,
				  v->ip.prefix);
			return -1;
		}
		v->ip.prefix = (uint8_t)pfx;
	}
	return 0;
bad:
	error_set(p->err, pos, len, "bad address '%.60s'", text);
	return -1;
}

/* Return whether a number token looks like an address (a.b.c.d or has ':'). */
static bool looks_ip(const char *s)
{
	size_t dots = 0;

	if (strchr(s, ':'))
		return true;
	for (; *s; s++)
		dots += *s == '.';
	return dots == 3;
}

/* Parse a value: number[unit], 'string', bare word, address[/prefix]. */
static int parse_value(struct parser *p, struct value *v, const char *what)
{
	struct token *t = peek(p);

	memset(v, 0, sizeof(*v));
	v->pos = t->pos;
	v->len = t->len;
	if (t->kind == TK_STRING) {
		next(p);
		v->kind = V_STR;
		v->s = xstrdup(t->text);
		return 0;
	}
	if ((t->kind != TK_NUMBER && t->kind != TK_WORD) || lexer_reserved(t->text))
		return expected(p, what);
	next(p);
	if (looks_ip(t->text) || (t->kind == TK_NUMBER && peek(p)->kind == TK_SLASH)) {
		struct token *s = peek(p), *n = &p->lx.tok[p->i + (s->kind != TK_EOF)];

		if (s->kind == TK_SLASH && s->pos == t->pos + t->len && n->kind == TK_NUMBER &&
		    n->pos == s->pos + 1) {
			next(p);
			next(p);
			v->len = n->pos + n->len - t->pos;
		}
		v->raw = xstrndup(p->lx.src + v->pos, (size_t)v->len);
		return parse_ip(p, v->raw, v->pos, v->len, v);
	}
	v->raw = xstrdup(t->text);
	if (t->kind == TK_WORD) {
		v->kind = V_STR;
		v->s = xstrdup(t->text);
		return 0;
	}
	return parse_number(p, t, v);
}

static struct pred *parse_or(struct parser *p);

/* Fail when the current tokens are time( outside GROUP BY (clause names where). */
static int parse_time_misplaced(struct parser *p, const char *clause)
{
	const struct token *t = peek(p);

	if (!lexer_is(t, "time") || p->lx.tok[p->i + 1].kind != TK_LPAREN)
		return 0;
	error_set(p->err, t->pos, t->len, "time(...) cannot be in %s: it goes in GROUP BY "
		  "(group by time(10s)); since and until select a stretch of time", clause);
	return -1;
}

/* Fail with a message at token t if one more list entry would pass max. */
static int parse_room(struct parser *p, const struct token *t, size_t n, size_t max,
		      const char *what)
{
	if (n < max)
		return 0;
	error_set(p->err, t->pos, t->len ? t->len : 1, "more than %zu %s", max, what);
	return -1;
}

/* Make an AND/OR/NOT node. */
static struct pred *pred_node(enum pred_kind kind, struct pred *l, struct pred *r)
{
	struct pred *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->l = l;
	n->r = r;
	n->f.idx = -1;
	return n;
}

/* Parse the IN list after "field in". */
static int parse_in(struct parser *p, struct pred *n)
{
	size_t cap = 0;

	if (peek(p)->kind != TK_LPAREN)
		return expected(p, "'('");
	next(p);
	for (;;) {
		if (parse_room(p, peek(p), n->nvals, QUERY_MAX_VALUES, "values in one IN list"))
			return -1;
		if (n->nvals == cap) {
			cap = cap ? 2 * cap : 8;
			n->vals = xreallocarray(n->vals, cap, sizeof(*n->vals));
		}
		n->nvals++;
		if (parse_value(p, &n->vals[n->nvals - 1], "a value"))
			return -1;
		if (peek(p)->kind == TK_RPAREN)
			break;
		if (peek(p)->kind != TK_COMMA)
			return expected(p, "',' or ')'");
		next(p);
	}
	next(p);
	return 0;
}

/*
 * Check the size of regex '/re/' (or '/re' when unclosed: binding says so)
 * at v, adding its pieces to the query's: regcomp takes memory that grows
 * with them (queries/regex.c).
 */
static int parse_regex(struct parser *p, const struct value *v)
{
	size_t n = strlen(v->s);
	char *body = xstrndup(v->s + 1, n - 1 - (n > 1 && v->s[n - 1] == '/'));
	uint64_t pieces;
	size_t nullrep[2];
	int depth;

	regex_measure(body, &pieces, &depth, nullrep);
	if (nullrep[0] && depth <= QUERY_MAX_DEPTH) {
		size_t len = nullrep[1] - nullrep[0];

		error_set(p->err, v->pos, v->len,
			  "regex '%.60s': '%c' repeats '%.*s%s', which can match nothing; "
			  "write it without that repetition", v->s, body[nullrep[1] - 1],
			  (int)(len > 40 ? 40 : len), body + nullrep[0] - 1, len > 40 ? "..." : "");
		free(body);
		return -1;
	}
	free(body);
	if (depth > QUERY_MAX_DEPTH) {
		error_set(p->err, v->pos, v->len, "regex '%.60s' nests groups more than %d deep",
			  v->s, QUERY_MAX_DEPTH);
		return -1;
	}
	if (p->regex_pieces + pieces > QUERY_MAX_REGEX) {
		if (p->regex_pieces)
			error_set(p->err, v->pos, v->len,
				  "regex '%.60s' is too big: with the query's other regexes, "
				  "repetitions written out make %llu pieces (at most %d)", v->s,
				  (unsigned long long)(p->regex_pieces + pieces), QUERY_MAX_REGEX);
		else
			error_set(p->err, v->pos, v->len,
				  "regex '%.60s' is too big: its repetitions written out make "
				  "%llu pieces (at most %d)", v->s, (unsigned long long)pieces,
				  QUERY_MAX_REGEX);
		return -1;
	}
	p->regex_pieces += pieces;
	return 0;
}

/* Parse a comparison: field op value | field in (...) | field ~ 'pattern'. */
static struct pred *parse_leaf(struct parser *p)
{
	struct pred *n = pred_node(P_CMP, NULL, NULL);
	struct token *t;
	char msg[160];

	if (parse_room(p, peek(p), p->npreds++, QUERY_MAX_PREDS, "comparisons in WHERE"))
		goto fail;
	if (parse_time_misplaced(p, "WHERE"))
		goto fail;
	if (parse_field(p, &n->f, "a field name"))
		goto fail;
	t = peek(p);
	n->oppos = t->pos;
	n->oplen = t->len;
	if (lexer_is(t, "in")) {
		next(p);
		n->kind = P_IN;
		if (parse_in(p, n))
			goto fail;
		return n;
	}
	if (t->kind != TK_OP) {
		snprintf(msg, sizeof(msg),
			 "expected an operator after '%.40s' (==, !=, <, <=, >, >=, ~ or in)",
			 n->f.name);
		fail_at(p, t, msg);
		goto fail;
	}
	next(p);
	n->vals = xcalloc(1, sizeof(*n->vals));
	n->nvals = 1;
	if (!strcmp(t->text, "~")) {
		n->kind = P_MATCH;
		if (peek(p)->kind != TK_STRING) {
			expected(p, "a quoted pattern ('glob*' or '/regex/')");
			goto fail;
		}
		parse_value(p, &n->vals[0], "a pattern");
		/* '/re/' is a regex; a glob may start with '/' too (a cgroup path) */
		n->regex = n->vals[0].s[0] == '/' && strlen(n->vals[0].s) >= 2 &&
			   n->vals[0].s[strlen(n->vals[0].s) - 1] == '/';
		if (n->regex && parse_regex(p, &n->vals[0]))
			goto fail;
		return n;
	}
	for (n->op = CMP_EQ; n->op <= CMP_GE; n->op++)
		if (!strcmp(t->text, ast_cmp_text[n->op]))
			break;
	if (!strcmp(t->text, "="))
		n->op = CMP_EQ;
	if (parse_value(p, &n->vals[0], "a value"))
		goto fail;
	return n;
fail:
	ast_pred_free(n);
	return NULL;
}

static struct pred *parse_unary(struct parser *p);

/* Parse what NOT or '(' (the current token) opens, one level deeper. */
static struct pred *parse_nested(struct parser *p)
{
	struct token *t = next(p);
	struct pred *n;

	if (p->depth == QUERY_MAX_DEPTH) {
		error_set(p->err, t->pos, t->len, "more than %d levels of parentheses and NOT",
			  QUERY_MAX_DEPTH);
		return NULL;
	}
	p->depth++;
	if (t->kind != TK_LPAREN) {
		n = parse_unary(p);
		n = n ? pred_node(P_NOT, n, NULL) : NULL;
	} else if ((n = parse_or(p)) && peek(p)->kind != TK_RPAREN) {
		expected(p, "')'");
		ast_pred_free(n);
		n = NULL;
	} else if (n) {
		next(p);
	}
	p->depth--;
	return n;
}

/*
 * Parse NOT, parentheses and comparisons.  Nesting is limited (QUERY_MAX_DEPTH)
 * and so are comparisons (QUERY_MAX_PREDS): every walk of the tree
 * (binding, pushdown, evaluation, printing, freeing) recurses at most
 * that many levels plus one per comparison.
 */
static struct pred *parse_unary(struct parser *p)
{
	if (lexer_is(peek(p), "not") || peek(p)->kind == TK_LPAREN)
		return parse_nested(p);
	return parse_leaf(p);
}

/* Parse a chain of ANDs (binds tighter than OR). */
static struct pred *parse_and(struct parser *p)
{
	struct pred *l = parse_unary(p), *r;

	while (l && take_kw(p, "and")) {
		r = parse_unary(p);
		if (!r) {
			ast_pred_free(l);
			return NULL;
		}
		l = pred_node(P_AND, l, r);
	}
	return l;
}

/* Parse a chain of ORs. */
static struct pred *parse_or(struct parser *p)
{
	struct pred *l = parse_and(p), *r;

	while (l && take_kw(p, "or")) {
		r = parse_and(p);
		if (!r) {
			ast_pred_free(l);
			return NULL;
		}
		l = pred_node(P_OR, l, r);
	}
	return l;
}

/* Parse a SHOW / ORDER BY item: field | agg(field) [/base] [AS name], where
 * only ORDER BY (ratio_ok) may name a BASELINE ratio. */
static int parse_item(struct parser *p, struct item *it, const char *what, bool ratio_ok)
{
	struct token *t = peek(p);
	const char *sug;
	char *c;
	double pct = 0;
	char *lc;

	memset(it, 0, sizeof(*it));
	it->f.idx = -1;
	it->pos = t->pos;
	if (parse_time_misplaced(p, ratio_ok ? "ORDER BY" : "SHOW"))
		return -1;
	if (t->kind != TK_WORD || lexer_reserved(t->text))
		return expected(p, what);
	if (p->lx.tok[p->i + 1].kind != TK_LPAREN) {
		if (parse_field(p, &it->f, what))
			return -1;
	} else {
		next(p);
		lc = xstrdup(t->text);
		for (c = lc; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		it->func = lc;
		it->agg = ast_func(lc, &pct);
		it->pct = pct;
		if (it->agg == AGG_NONE) {
			sug = text_suggest(lc, ast_funcs, SIZE_MAX);
			error_set(p->err, t->pos, t->len, "unknown function '%.40s'%s%s%s", t->text,
				  sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
			return -1;
		}
		next(p);
		if (peek(p)->kind == TK_RPAREN && it->agg == AGG_COUNT) {
			it->f.idx = -1;
		} else if (parse_field(p, &it->f, "a field name")) {
			return -1;
		}
		if (peek(p)->kind != TK_RPAREN)
			return expected(p, "')'");
		next(p);
	}
	if (peek(p)->kind == TK_SLASH && lexer_is(&p->lx.tok[p->i + 1], "base")) {
		if (!ratio_ok) {
			error_set(p->err, peek(p)->pos,
				  p->lx.tok[p->i + 1].pos + p->lx.tok[p->i + 1].len - peek(p)->pos,
				  "BASELINE adds the '/base' columns by itself; only ORDER BY names one");
			return -1;
		}
		next(p);
		next(p);
		it->base = true;
	}
	it->len = prev(p)->pos + prev(p)->len - it->pos;
	if (take_kw(p, "as")) {
		t = peek(p);
		if (t->kind != TK_WORD || lexer_reserved(t->text) || strpbrk(t->text, ".:"))
			return expected(p, "a column name");
		it->as = xstrdup(next(p)->text);
	}
	return 0;
}

/* Parse a comma-separated list of items (SHOW). */
static int parse_show(struct parser *p, struct query *q)
{
	q->has_show = true;
	for (;;) {
		if (parse_room(p, peek(p), q->nshow, QUERY_MAX_SHOW, "columns in SHOW"))
			return -1;
		q->show = xreallocarray(q->show, q->nshow + 1, sizeof(*q->show));
		if (parse_item(p, &q->show[q->nshow], "a field or function", false)) {
			ast_item_done(&q->show[q->nshow]);
			return -1;
		}
		q->nshow++;
		if (peek(p)->kind != TK_COMMA)
			return 0;
		next(p);
	}
}

/* Parse time(DURATION) in GROUP BY (the current token is time). */
static int parse_bucket(struct parser *p, struct query *q)
{
	struct token *kw = next(p), *t;
	struct value v;

	if (q->bucket_ns) {
		error_set(p->err, kw->pos, kw->len, "time(...) is already in GROUP BY");
		return -1;
	}
	next(p);
	t = peek(p);
	if (t->kind == TK_NUMBER && t->text[0] == '-') {
		error_set(p->err, t->pos, t->len, "time(%.40s): the window must be a duration "
			  "longer than 0 (e.g. time(10s))", t->text);
		return -1;
	}
	if (t->kind != TK_NUMBER)
		return expected(p, "a duration (e.g. time(10s))");
	memset(&v, 0, sizeof(v));
	if (parse_number(p, t, &v))
		return -1;
	if (v.unit != U_DUR || !v.u) {
		error_set(p->err, t->pos, t->len, "time(%.40s): the window must be a duration "
			  "longer than 0 with a unit (ns us ms s m h), e.g. time(10s)", t->text);
		return -1;
	}
	next(p);
	if (peek(p)->kind != TK_RPAREN)
		return expected(p, "')'");
	next(p);
	q->bucket_ns = v.u;
	q->bucket_raw = xstrdup(t->text);
	q->bucket_pos = kw->pos;
	q->bucket_len = prev(p)->pos + prev(p)->len - kw->pos;
	return 0;
}

/* Parse the fields after GROUP BY. */
static int parse_group(struct parser *p, struct query *q)
{
	if (!take_kw(p, "by"))
		return expected(p, "'by'");
	q->has_group = true;
	for (;;) {
		if (parse_room(p, peek(p), q->ngroup, QUERY_MAX_GROUP, "fields in GROUP BY"))
			return -1;
		if (lexer_is(peek(p), "time") && p->lx.tok[p->i + 1].kind == TK_LPAREN) {
			if (parse_bucket(p, q))
				return -1;
		} else {
			q->group = xreallocarray(q->group, q->ngroup + 1, sizeof(*q->group));
			memset(&q->group[q->ngroup], 0, sizeof(*q->group));
			if (parse_field(p, &q->group[q->ngroup], "a field name"))
				return -1;
			q->ngroup++;
		}
		if (peek(p)->kind != TK_COMMA)
			return 0;
		next(p);
	}
}

/* Parse ORDER BY item [ASC|DESC]. */
static int parse_order(struct parser *p, struct query *q)
{
	if (!take_kw(p, "by"))
		return expected(p, "'by'");
	q->has_order = true;
	if (parse_item(p, &q->order, "a field or function", true))
		return -1;
	if (take_kw(p, "asc"))
		q->dir = DIR_ASC;
	else if (take_kw(p, "desc"))
		q->dir = DIR_DESC;
	return 0;
}

/* Parse a plain whole number (LIMIT, BUFFER). */
static int parse_count(struct parser *p, uint64_t *out, const char *what)
{
	struct token *t = peek(p);
	struct value v;

	if (t->kind != TK_NUMBER)
		return expected(p, what);
	memset(&v, 0, sizeof(v));
	if (parse_number(p, t, &v))
		return -1;
	if (v.unit != U_NONE) {
		error_set(p->err, t->pos, t->len, "'%.60s' takes a plain number, not '%.60s'",
			  prev(p)->text, t->text);
		return -1;
	}
	next(p);
	*out = v.u;
	return 0;
}

/* Parse a duration (WINDOW, EVERY, THRESHOLD); raw gets the text as written. */
static int parse_dur(struct parser *p, uint64_t *out, char **raw, bool zero_ok)
{
	struct token *t = peek(p);
	struct value v;

	if (t->kind != TK_NUMBER)
		return expected(p, "a duration (e.g. 5s)");
	memset(&v, 0, sizeof(v));
	if (parse_number(p, t, &v))
		return -1;
	if (v.unit != U_DUR) {
		error_set(p->err, t->pos, t->len,
			  "'%.40s' needs a duration with a unit (ns us ms s m h), not '%.60s'",
			  prev(p)->text, t->text);
		return -1;
	}
	if (!v.u && !zero_ok) {
		error_set(p->err, t->pos, t->len, "'%.40s' must be longer than 0", prev(p)->text);
		return -1;
	}
	next(p);
	*out = v.u;
	*raw = xstrdup(t->text);
	return 0;
}

/* Parse SAMPLE 1/N. */
static int parse_sample(struct parser *p, struct query *q)
{
	struct token *one = peek(p), *slash = &p->lx.tok[p->i + (one->kind != TK_EOF)];
	struct token *n = &p->lx.tok[p->i + (one->kind != TK_EOF) + (slash->kind != TK_EOF)];
	char *end;
	unsigned long long v;

	if (one->kind != TK_NUMBER || strcmp(one->text + strspn(one->text, "0"), "1") ||
	    slash->kind != TK_SLASH ||
	    n->kind != TK_NUMBER)
		return expected(p, "1/N (e.g. sample 1/100)");
	v = strtoull(n->text, &end, 10);
	if (*end || !v || v > UINT32_MAX) {
		error_set(p->err, n->pos, n->len, "N in 'sample 1/N' must be a whole number from 1 to %u",
			  UINT32_MAX);
		return -1;
	}
	next(p);
	next(p);
	next(p);
	q->opts.sample_n = (uint32_t)v;
	q->optraw[2] = xasprintf("1/%llu", v);
	return 0;
}

/* Parse SINCE or UNTIL's time: 'YYYY-MM-DD HH:MM[:SS]', RFC 3339, 'HH:MM[:SS]'
 * (quoted) or -DURATION (before the end). */
static int parse_when(struct parser *p, struct query *q, int o)
{
	struct token *t = peek(p);
	struct qtime *w = 1u << o == OPT_SINCE ? &q->since : &q->until;
	char why[200];

	if (t->kind == TK_NUMBER && t->text[0] != '-') {
		error_set(p->err, t->pos, t->len, "'%.40s' after %s: write a time in quotes "
			  "('2026-11-25 10:00:00') or a time before the end (-5m)", t->text,
			  parser_opts[o]);
		return -1;
	}
	if (t->kind != TK_STRING && t->kind != TK_NUMBER)
		return expected(p, "a time ('2026-11-25 10:00:00', or -5m: before the end)");
	if (qtime_parse(t->text, w, why, sizeof(why))) {
		error_set(p->err, t->pos, t->len, "%s", why);
		return -1;
	}
	next(p);
	if (1u << o == OPT_SINCE) {
		q->spos = t->pos;
		q->slen = t->len;
	} else {
		q->upos = t->pos;
		q->ulen = t->len;
	}
	q->optraw[o] = t->kind == TK_STRING ? xasprintf("'%s'", t->text) : xstrdup(t->text);
	return 0;
}

/* Fail when SINCE is not before UNTIL, where that is known without the
 * recording: both absolute, or both before the end. */
static int parse_stretch(const struct query *q, struct query_error *err)
{
	if (!(q->optset & OPT_SINCE) || !(q->optset & OPT_UNTIL) ||
	    q->since.kind != q->until.kind || q->since.kind == QT_DAY ||
	    q->since.ns < q->until.ns)
		return 0;
	error_set(err, q->upos, q->ulen, "until must come after since: nothing is in between");
	return -1;
}

/* Parse one option (the keyword is the current token). */
static int parse_option(struct parser *p, struct query *q, int o)
{
	struct token *kw = next(p);
	uint64_t v;

	if (q->optset & (1u << o)) {
		error_set(p->err, kw->pos, kw->len, "'%s' given twice", parser_opts[o]);
		return -1;
	}
	q->optset |= 1u << o;
	switch (1u << o) {
	case OPT_WINDOW:
		return parse_dur(p, &q->opts.window_ns, &q->optraw[o], false);
	case OPT_EVERY:
		if (parse_dur(p, &q->opts.every_ns, &q->optraw[o], false))
			return -1;
		if (q->opts.every_ns < QUERY_MIN_EVERY_NS) {
			error_set(p->err, prev(p)->pos, prev(p)->len,
				  "'every' must be at least 10ms, the shortest tick");
			return -1;
		}
		return 0;
	case OPT_THRESHOLD:
		return parse_dur(p, &q->opts.threshold_ns, &q->optraw[o], true);
	case OPT_SAMPLE:
		return parse_sample(p, q);
	case OPT_BUFFER:
		if (parse_count(p, &v, "a number of events"))
			return -1;
		q->opts.buffer = v;
		q->optraw[o] = xasprintf("%llu", (unsigned long long)v);
		return 0;
	case OPT_SINCE:
	case OPT_UNTIL:
		return parse_when(p, q, o);
	default:
		if (peek(p)->kind != TK_STRING)
			return expected(p, "a quoted file name");
		q->bpos = peek(p)->pos;
		q->blen = peek(p)->len;
		q->opts.baseline = xstrdup(next(p)->text);
		q->base = xcalloc(1, sizeof(*q->base));
		return 0;
	}
}

/* Return the clause (0..5) or option (6 + i) the keyword t starts, or -1. */
static int clause_of(const struct token *t)
{
	int i;

	for (i = 0; i < NCLAUSES; i++)
		if (lexer_is(t, parser_clauses[i]))
			return i;
	for (i = 0; i < OPT_COUNT; i++)
		if (lexer_is(t, parser_opts[i]))
			return NCLAUSES + i;
	return -1;
}

/* Parse FROM table. */
static int parse_from(struct parser *p, struct query *q)
{
	struct fref f = {0};

	if (parse_field(p, &f, "a table name"))
		return -1;
	q->table = f.name;
	q->tpos = f.pos;
	q->tlen = f.len;
	return 0;
}

/* Parse the clauses in order, then options in any order. */
static int parse_query(struct parser *p, struct query *q)
{
	int rank = -1, c;
	const struct token *last = NULL;
	struct token *t;

	while ((t = peek(p))->kind != TK_EOF) {
		c = clause_of(t);
		if (c < 0) {
			char msg[200];

			snprintf(msg, sizeof(msg), last ? "unexpected '%.40s' after the query" :
				 "unexpected '%.40s': a query starts with from, where, group by, "
				 "show, order by, limit or an option", t->text);
			return fail_at(p, t, msg);
		}
		if (c < NCLAUSES && c == rank) {
			error_set(p->err, t->pos, t->len, "'%s' given twice", parser_clauses[c]);
			return -1;
		}
		if (c < NCLAUSES && c < rank) {
			error_set(p->err, t->pos, t->len, "'%s' must come before '%.40s'",
				  parser_clauses[c], last->text);
			return -1;
		}
		last = t;
		if (c >= NCLAUSES) {
			rank = NCLAUSES;
			if (parse_option(p, q, c - NCLAUSES))
				return -1;
			continue;
		}
		rank = c;
		next(p);
		switch (c) {
		case 0: if (parse_from(p, q)) return -1; break;
		case 1:
			if (!(q->where = parse_or(p)))
				return -1;
			break;
		case 2: if (parse_group(p, q)) return -1; break;
		case 3: if (parse_show(p, q)) return -1; break;
		case 4: if (parse_order(p, q)) return -1; break;
		default:
			if (parse_count(p, &q->limit, "a number"))
				return -1;
			q->has_limit = true;
		}
	}
	return 0;
}

/* Fail unless q's canonical text fits QUERY_MAX_TEXT, so it parses again. */
static int parse_canon_fits(const struct query *q, struct query_error *err)
{
	char *text = query_text(q);
	size_t n = strlen(text);

	free(text);
	if (n <= QUERY_MAX_TEXT)
		return 0;
	error_set(err, 0, 1, "query too long: %zu bytes written out in canonical form (at most %d)",
		  n, QUERY_MAX_TEXT);
	return -1;
}

/* Parse text into a query; NULL with *err on a syntax error or past a limit. */
struct query *query_parse(const char *text, struct query_error *err)
{
	struct parser p = {.err = err};
	size_t n = strlen(text);
	struct query *q;

	memset(err, 0, sizeof(*err));
	if (n > QUERY_MAX_TEXT) {
		error_set(err, QUERY_MAX_TEXT, 1, "query too long: %zu bytes (at most %d)", n,
			  QUERY_MAX_TEXT);
		return NULL;
	}
	if (lexer_run(&p.lx, text, err))
		return NULL;
	q = ast_query_new();
	if (parse_query(&p, q) || parse_stretch(q, err) || parse_canon_fits(q, err)) {
		query_free(q);
		q = NULL;
	}
	lexer_done(&p.lx);
	return q;
}

struct query *query_refine(const struct query *base, const char *text,
			   struct query_error *err)
{
	struct query *frag = query_parse(text, err), *m, *out;
	size_t i;
	char *s;

	if (!frag)
		return NULL;
	if (frag->table)
		return frag;
	m = ast_query_new();
	m->table = base->table ? xstrdup(base->table) : NULL;
	m->where = ast_pred_dup(base->where);
	if (frag->where)
		m->where = m->where ? pred_node(P_AND, m->where, ast_pred_dup(frag->where)) :
			   ast_pred_dup(frag->where);
	const struct query *g = frag->has_group ? frag : base;
	m->has_group = g->has_group;
	m->ngroup = g->ngroup;
	m->group = g->ngroup ? xcalloc(g->ngroup, sizeof(*m->group)) : NULL;
	for (i = 0; i < g->ngroup; i++) {
		m->group[i] = g->group[i];
		m->group[i].name = xstrdup(g->group[i].name);
	}
	m->bucket_ns = g->bucket_ns;
	m->bucket_raw = g->bucket_raw ? xstrdup(g->bucket_raw) : NULL;
	g = frag->has_show ? frag : base;
	m->has_show = g->has_show;
	m->nshow = g->nshow;
	m->show = g->nshow ? xcalloc(g->nshow, sizeof(*m->show)) : NULL;
	for (i = 0; i < g->nshow; i++)
		ast_item_copy(&m->show[i], &g->show[i]);
	g = frag->has_order ? frag : base;
	m->has_order = g->has_order;
	if (g->has_order)
		ast_item_copy(&m->order, &g->order);
	m->dir = g->dir;
	g = frag->has_limit ? frag : base;
	m->has_limit = g->has_limit;
	m->limit = g->limit;
	for (i = 0; i < OPT_COUNT; i++) {
		g = frag->optset & (1u << i) ? frag : base;
		if (!(g->optset & (1u << i)))
			continue;
		m->optset |= 1u << i;
		m->optraw[i] = g->optraw[i] ? xstrdup(g->optraw[i]) : NULL;
	}
	g = frag->optset & OPT_WINDOW ? frag : base;
	m->opts.window_ns = g->opts.window_ns;
	g = frag->optset & OPT_EVERY ? frag : base;
	m->opts.every_ns = g->opts.every_ns;
	g = frag->optset & OPT_THRESHOLD ? frag : base;
	m->opts.threshold_ns = g->opts.threshold_ns;
	g = frag->optset & OPT_SAMPLE ? frag : base;
	m->opts.sample_n = g->opts.sample_n;
	g = frag->optset & OPT_BUFFER ? frag : base;
	m->opts.buffer = g->opts.buffer;
	g = frag->optset & OPT_BASELINE ? frag : base;
	m->opts.baseline = g->opts.baseline ? xstrdup(g->opts.baseline) : NULL;
	query_free(frag);
	s = query_text(m);
	query_free(m);
	out = query_parse(s, err);
	free(s);
	return out;
}
