/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A function's contract is written once, in its header: a non-static
 * function whose declaration in a header of core/, probes/, queries/ or
 * tui/ has a comment directly above it has no comment block ending on the
 * line directly above its definition in a .c (what the .c has to add, how
 * and why, goes inside the body).  A definition is found from its name and
 * '(' to its '{', wherever the return type sits, and the comment block is
 * the one ending on the line above where the definition starts.  Skips
 * *.bpf.c and generated skeletons.  Runs from LATOP_TOP, else from the
 * current directory (tests/run.sh runs it from the top of the tree).
 */
#include <ctype.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

#define MAX_FUNCS 4096

struct func {
	char name[128];
	char header[256];
	int line;
	bool defined;
};

static struct func funcs[MAX_FUNCS];
static int nfuncs;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return NULL;
	}
	buf[n] = '\0';
	fclose(f);
	*len = n;
	return buf;
}

/*
 * One top-level statement or definition head of a file: its text with
 * comments, strings and preprocessor lines blanked, the line it starts on,
 * and whether it ended with '{' (a body follows) or ';'.
 */
struct stmt {
	char text[4096];
	size_t len;
	int line;
	bool body;
};

/* The line (1-based) holding offset off of buf. */
static int line_at(const char *buf, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off; i++)
		line += buf[i] == '\n';
	return line;
}

/*
 * Whether a comment block ends on the line before line (1-based) of buf: that
 * line ends with a comment whose opening has nothing but blanks before it on
 * its line (a comment trailing a declaration belongs to that declaration),
 * or is a // comment.
 */
static bool comment_above(const char *buf, int line)
{
	const char *p = buf, *start, *end, *open;
	int n = 1;

	if (line <= 1)
		return false;
	while (n < line - 1 && (p = strchr(p, '\n'))) {
		p++;
		n++;
	}
	if (!p)
		return false;
	start = p;
	end = strchr(start, '\n');
	if (!end)
		end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	while (start < end && isspace((unsigned char)*start))
		start++;
	if (end - start >= 2 && start[0] == '/' && start[1] == '/')
		return true;
	if (end - start < 2 || end[-2] != '*' || end[-1] != '/')
		return false;
	for (open = end - 2; open > buf && !(open[-1] == '/' && open[0] == '*'); open--)
		;
	if (open == buf)
		return false;
	for (p = open - 1; p > buf && p[-1] != '\n'; p--)
		if (!isspace((unsigned char)p[-1]))
			return false;
	return true;
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/*
 * The name of the function a statement declares or defines, into name;
 * false if it is not one (a variable, a type, a function pointer, static).
 */
static bool func_name(const struct stmt *s, char *name, size_t len)
{
	const char *t = s->text;
	size_t i = 0;

	while (isspace((unsigned char)t[i]))
		i++;
	if (!strncmp(t + i, "static", 6) && !is_ident(t[i + 6]))
		return false;
	if (!strncmp(t + i, "typedef", 7) && !is_ident(t[i + 7]))
		return false;
	for (; i < s->len; i++) {
		size_t e, b;

		if (t[i] == '=' || t[i] == '{')
			return false;
		if (t[i] != '(')
			continue;
		e = i;
		while (e > 0 && isspace((unsigned char)t[e - 1]))
			e--;
		b = e;
		while (b > 0 && is_ident(t[b - 1]))
			b--;
		if (b == e)
			return false; /* "(*fp)(...)" and other shapes */
		if (e - b >= len)
			return false;
		memcpy(name, t + b, e - b);
		name[e - b] = '\0';
		if (!strcmp(name, "__attribute__") || !strcmp(name, "__attribute")) {
			/* skip the attribute's parentheses and look on */
			int depth = 0;

			for (; i < s->len; i++) {
				depth += t[i] == '(';
				depth -= t[i] == ')';
				if (!depth)
					break;
			}
			continue;
		}
		return !isdigit((unsigned char)name[0]);
	}
	return false;
}

/* A definition's head ends in ')' (a parameter list, maybe an attribute). */
static bool ends_in_params(const struct stmt *s)
{
	size_t e = s->len;

	while (e > 0 && isspace((unsigned char)s->text[e - 1]))
		e--;
	return e > 0 && s->text[e - 1] == ')';
}

/*
 * Walk the top level of buf, calling fn for every statement (at brace depth
 * 0, ended by ';' or by the '{' of a body, whose contents are skipped).
 */
static void walk(const char *path, const char *buf, size_t n,
		 void (*fn)(const char *path, const char *buf, const struct stmt *s))
{
	struct stmt s = {0};
	int depth = 0;
	bool in_stmt = false, bol = true;

	for (size_t i = 0; i < n; i++) {
		char c = buf[i];

		if (c == '/' && buf[i + 1] == '*') {
			const char *e = strstr(buf + i + 2, "*/");

			i = e ? (size_t)(e - buf) + 1 : n;
			if (in_stmt && depth == 0 && s.len < sizeof(s.text) - 1)
				s.text[s.len++] = ' ';
			continue;
		}
		if (c == '/' && buf[i + 1] == '/') {
			while (i < n && buf[i] != '\n')
				i++;
			bol = true;
			continue;
		}
		if (bol && c == '#') {
			/* a preprocessor line, with its continuations */
			while (i < n && !(buf[i] == '\n' && buf[i - 1] != '\\'))
				i++;
			bol = true;
			continue;
		}
		if (c == '\n') {
			bol = true;
			if (in_stmt && depth == 0 && s.len < sizeof(s.text) - 1)
				s.text[s.len++] = ' ';
			continue;
		}
		if (isspace((unsigned char)c)) {
			if (in_stmt && depth == 0 && s.len < sizeof(s.text) - 1)
				s.text[s.len++] = ' ';
			continue;
		}
		bol = false;
		if (c == '"' || c == '\'') {
			for (i++; i < n && buf[i] != c; i++)
				if (buf[i] == '\\')
					i++;
			if (in_stmt && depth == 0 && s.len < sizeof(s.text) - 2) {
				s.text[s.len++] = c;
				s.text[s.len++] = c;
			}
			continue;
		}
		if (depth > 0) {
			depth += c == '{';
			depth -= c == '}';
			continue;
		}
		if (!in_stmt) {
			if (c == '}' || c == ';')
				continue;
			in_stmt = true;
			s.len = 0;
			s.line = line_at(buf, i);
		}
		if (c == ';') {
			s.text[s.len] = '\0';
			s.body = false;
			fn(path, buf, &s);
			in_stmt = false;
			continue;
		}
		if (c == '{') {
			s.text[s.len] = '\0';
			s.body = true;
			fn(path, buf, &s);
			depth = 1;
			/*
			 * A struct, union, enum or initializer goes on to a ';'
			 * after its braces; a function body does not.  Either way
			 * what follows the braces is a statement of its own only
			 * after a ';', so keep collecting for non-functions.
			 */
			in_stmt = !ends_in_params(&s);
			continue;
		}
		if (s.len < sizeof(s.text) - 1)
			s.text[s.len++] = c;
	}
}

static struct func *find(const char *name)
{
	for (int i = 0; i < nfuncs; i++)
		if (!strcmp(funcs[i].name, name))
			return &funcs[i];
	return NULL;
}

/* A header's declaration: record it if a comment sits directly above. */
static void on_header(const char *path, const char *buf, const struct stmt *s)
{
	char name[128];

	if (s->body || !func_name(s, name, sizeof(name)) || !comment_above(buf, s->line))
		return;
	if (find(name) || nfuncs == MAX_FUNCS)
		return;
	snprintf(funcs[nfuncs].name, sizeof(funcs[nfuncs].name), "%s", name);
	snprintf(funcs[nfuncs].header, sizeof(funcs[nfuncs].header), "%s", path);
	funcs[nfuncs].line = s->line;
	nfuncs++;
}

static int bad;

/* A .c's definition of a header-documented function: no comment above it. */
static void on_source(const char *path, const char *buf, const struct stmt *s)
{
	char name[128];
	struct func *f;

	if (!s->body || !ends_in_params(s) || !func_name(s, name, sizeof(name)))
		return;
	f = find(name);
	if (!f)
		return;
	f->defined = true;
	if (comment_above(buf, s->line)) {
		printf("# %s:%d: %s() has a comment above its definition; its contract is in %s:%d\n",
		       path, s->line, name, f->header, f->line);
		bad++;
	}
}

static const char *const pats_h[] = {"core/*.h", "probes/*.h", "probes/*/*.h",
				     "queries/*.h", "tui/*.h", "latop.h"};
static const char *const pats_c[] = {"core/*.c", "probes/*.c", "probes/*/*.c",
				     "queries/*.c", "tui/*.c", "latop.c"};

/* Every file matching pats (but BPF and skeletons), through fn; the count. */
static int scan(const char *const *pats, size_t npats,
		void (*fn)(const char *path, const char *buf, const struct stmt *s))
{
	int files = 0;
	glob_t g;

	for (size_t p = 0; p < npats; p++) {
		if (glob(pats[p], 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *file = g.gl_pathv[i];
			size_t len;
			char *buf;

			if (strstr(file, ".bpf.c") || strstr(file, ".skel.h"))
				continue;
			buf = slurp(file, &len);
			if (!buf) {
				printf("# cannot read %s\n", file);
				bad++;
				continue;
			}
			walk(file, buf, len, fn);
			free(buf);
			files++;
		}
		globfree(&g);
	}
	return files;
}

int main(void)
{
	const char *top = getenv("LATOP_TOP");
	int headers, sources, defined = 0;

	if (top && chdir(top)) {
		printf("# cannot enter LATOP_TOP %s\n", top);
		bad++;
	}
	headers = scan(pats_h, sizeof(pats_h) / sizeof(pats_h[0]), on_header);
	sources = scan(pats_c, sizeof(pats_c) / sizeof(pats_c[0]), on_source);
	for (int i = 0; i < nfuncs; i++)
		defined += funcs[i].defined;
	printf("# %d headers, %d sources: %d functions documented in a header, %d of them defined in a .c\n",
	       headers, sources, nfuncs, defined);
	ok(headers > 30 && sources > 50 && defined >= 100,
	   "the tree's headers and sources are found and parsed (%d header-documented functions checked)",
	   defined);
	ok(bad == 0, "no header-documented function has a comment above its definition (%d do)", bad);
	tap_done();
}
