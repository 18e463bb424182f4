/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tokens of the query language; each carries its byte offset and length. */
#ifndef LATOP_QUERY_LEXER_H
#define LATOP_QUERY_LEXER_H

#include "query.h"

enum tok_kind {
	TK_EOF,
	TK_WORD,	/* keyword, field, function, bare value: [A-Za-z_][A-Za-z0-9_.:]* */
	TK_NUMBER,	/* a run starting with a digit, "::" or '-' and a digit: 100us, 4KiB,
			 * 10.0.0.1, ::1, -5m */
	TK_STRING,	/* 'quoted', with \' and \\ escapes; text holds the unescaped value */
	TK_OP,		/* == != < <= > >= = ~ */
	TK_LPAREN,
	TK_RPAREN,
	TK_COMMA,
	TK_SLASH,
};

struct token {
	enum tok_kind kind;
	int pos, len;		/* byte span in the query text */
	char *text;		/* TK_STRING: unescaped value; others: the raw bytes */
};

struct lexer {
	const char *src;
	size_t ntok, cap;
	struct token *tok;	/* ends with a TK_EOF token */
};

/* Split text into tokens; -1 with *err on a bad character or an unterminated string. */
int lexer_run(struct lexer *lx, const char *text, struct query_error *err);
void lexer_done(struct lexer *lx);
/* Whether tok is the keyword kw (case-insensitive). */
bool lexer_is(const struct token *tok, const char *kw);
/* Whether word is a reserved keyword (cannot be a bare value or field). */
bool lexer_reserved(const char *word);
/* The reserved keywords, NULL-terminated (for completion and suggestions). */
extern const char *const lexer_keywords[];

#endif
