/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Split a query into tokens with byte positions, for the parser and completion. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../core/xalloc.h"
#include "lexer.h"

const char *const lexer_keywords[] = {
	"from", "where", "group", "by", "show", "order", "asc", "desc", "limit",
	"and", "or", "not", "in", "as", "window", "every", "sample", "threshold",
	"buffer", "baseline", "since", "until", NULL,
};

bool lexer_reserved(const char *word)
{
	size_t i;

	for (i = 0; lexer_keywords[i]; i++)
		if (!strcasecmp(word, lexer_keywords[i]))
			return true;
	return false;
}

bool lexer_is(const struct token *tok, const char *kw)
{
	return tok->kind == TK_WORD && !strcasecmp(tok->text, kw);
}

/* Append a token. */
static void lexer_push(struct lexer *lx, enum tok_kind kind, int pos, int len, char *text)
{
	if (lx->ntok == lx->cap) {
		lx->cap = lx->cap ? lx->cap * 2 : 16;
		lx->tok = xreallocarray(lx->tok, lx->cap, sizeof(*lx->tok));
	}
	lx->tok[lx->ntok++] = (struct token){kind, pos, len, text};
}

/* Return whether c continues a word or number. */
static bool lexer_wordch(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == ':';
}

/* Scan a quoted string starting at s[i] == '\''; return its end or -1. */
static int lexer_string(struct lexer *lx, const char *s, int i, struct query_error *err)
{
	size_t cap = strlen(s + i) + 1, n = 0;
	char *buf = xmalloc(cap);
	int j = i + 1;

	for (;;) {
		if (!s[j]) {
			free(buf);
			err->pos = i;
			err->len = j - i;
			snprintf(err->msg, sizeof(err->msg), "unterminated string");
			return -1;
		}
		if (s[j] == '\'')
			break;
		if (s[j] == '\\' && (s[j + 1] == '\'' || s[j + 1] == '\\'))
			j++;
		buf[n++] = s[j++];
	}
	buf[n] = 0;
	lexer_push(lx, TK_STRING, i, j + 1 - i, buf);
	return j + 1;
}

/* Return the length of the operator at s, or 0. */
static int lexer_op(const char *s)
{
	if ((s[0] == '=' || s[0] == '!' || s[0] == '<' || s[0] == '>') && s[1] == '=')
		return 2;
	if (s[0] == '=' || s[0] == '<' || s[0] == '>' || s[0] == '~')
		return 1;
	return 0;
}

int lexer_run(struct lexer *lx, const char *text, struct query_error *err)
{
	int i = 0, n;

	memset(lx, 0, sizeof(*lx));
	lx->src = text;
	while (text[i]) {
		unsigned char c = (unsigned char)text[i];
		int start = i;

		if (isspace(c)) {
			i++;
		} else if (c == '\'') {
			i = lexer_string(lx, text, i, err);
			if (i < 0) {
				lexer_done(lx);
				return -1;
			}
		} else if (isalnum(c) || c == '_' || (c == ':' && text[i + 1] == ':') ||
			   (c == '-' && isdigit((unsigned char)text[i + 1]))) {
			i += c == '-';
			while (lexer_wordch((unsigned char)text[i]))
				i++;
			lexer_push(lx, isalpha(c) || c == '_' ? TK_WORD : TK_NUMBER, start,
				   i - start, xstrndup(text + start, (size_t)(i - start)));
		} else if ((n = lexer_op(text + i))) {
			lexer_push(lx, TK_OP, i, n, xstrndup(text + i, (size_t)n));
			i += n;
		} else if (c == '(' || c == ')' || c == ',' || c == '/') {
			lexer_push(lx, c == '(' ? TK_LPAREN : c == ')' ? TK_RPAREN :
				   c == ',' ? TK_COMMA : TK_SLASH, i, 1, xstrndup(text + i, 1));
			i++;
		} else {
			err->pos = i;
			err->len = 1;
			if (c == '!')
				snprintf(err->msg, sizeof(err->msg),
					 "unexpected '!' (use '!=' or 'not')");
			else if (c == '"')
				snprintf(err->msg, sizeof(err->msg),
					 "strings use single quotes: 'text'");
			else if (isprint(c))
				snprintf(err->msg, sizeof(err->msg), "unexpected character '%c'", c);
			else
				snprintf(err->msg, sizeof(err->msg),
					 "unexpected byte 0x%02x", c);
			lexer_done(lx);
			return -1;
		}
	}
	lexer_push(lx, TK_EOF, i, 0, xstrdup(""));
	return 0;
}

/* Free the tokens. */
void lexer_done(struct lexer *lx)
{
	size_t i;

	for (i = 0; i < lx->ntok; i++)
		free(lx->tok[i].text);
	free(lx->tok);
	lx->tok = NULL;
	lx->ntok = lx->cap = 0;
}
