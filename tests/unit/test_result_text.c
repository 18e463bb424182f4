/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Results as text and CSV: strings whole however long, columns aligned by
 * what a terminal shows (a comm in UTF-8, one cut inside a character),
 * control characters never reach the terminal, CSV valid UTF-8; and
 * utf8_clean and utf8_width, which text output is made of.
 */
#include <stdlib.h>
#include <string.h>
#include "core/utf8.h"
#include "core/xalloc.h"
#include "queries/query.h"
#include "tap.h"

/* A result of two columns (comm, count) with the given comms. */
static struct result *two_cols(const char *const *comms, size_t n)
{
	struct result *r = xcalloc(1, sizeof(*r));
	size_t i;

	r->ncols = 2;
	r->nrows = n;
	r->cols = xcalloc(2, sizeof(*r->cols));
	r->cols[0] = (struct result_col){ .name = xstrdup("comm"), .type = FT_STR, .key = true };
	r->cols[1] = (struct result_col){ .name = xstrdup("count"), .type = FT_U64 };
	r->vals = xcalloc(2 * n, sizeof(*r->vals));
	for (i = 0; i < n; i++) {
		r->vals[2 * i].s = xstrdup(comms[i]);
		r->vals[2 * i + 1].u = 100 + i;
	}
	return r;
}

/* What result_print prints for r in fmt (malloc'd). */
static char *printed(const struct result *r, enum result_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	result_print(f, r, fmt);
	fclose(f);
	return buf;
}

/* The terminal columns of line n (0 = the header) of text: where its
 * right-aligned count ends. */
static int line_width(const char *text, int n)
{
	char *copy = xstrdup(text), *line = copy, *end;
	int i, w;

	for (i = 0; i < n && line; i++)
		line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
	if (!line || !*line) {
		free(copy);
		return -1;
	}
	if ((end = strchr(line, '\n')))
		*end = 0;
	w = utf8_width(line);
	free(copy);
	return w;
}

/* Whether s is valid UTF-8 throughout. */
static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

int main(void)
{
	char *t, *c;

	/* utf8_clean and utf8_width */
	t = utf8_clean("caf\xc3\xa9");
	ok(!strcmp(t, "caf\xc3\xa9") && utf8_width(t) == 4, "clean: UTF-8 passes, 'café' is 4 columns (%d)",
	   utf8_width(t));
	free(t);
	t = utf8_clean("worker-\xe2\x82\xac\xe2\x82\xac\xe2\x82");
	ok(!strcmp(t, "worker-\xe2\x82\xac\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd") && utf8_width(t) == 11,
	   "clean: a name cut inside a character ends in U+FFFD per stray byte, 11 columns (%d)",
	   utf8_width(t));
	free(t);
	t = utf8_clean("a\x1b[31mred\x7f\tb\xc2\x9b");
	ok(!strcmp(t, "a?[31mred??b?"), "clean: ESC, DEL, tab and C1 CSI are '?' (%s)", t);
	free(t);
	t = utf8_clean(NULL);
	ok(!strcmp(t, ""), "clean: NULL is empty");
	free(t);
	ok(utf8_width("\xe6\xbc\xa2\xe5\xad\x97") == 4, "width: two CJK characters are 4 columns (%d)",
	   utf8_width("\xe6\xbc\xa2\xe5\xad\x97"));
	ok(utf8_width("e\xcc\x81") == 1, "width: a combining accent takes no column (%d)",
	   utf8_width("e\xcc\x81"));

	/* Text: aligned by columns, not bytes. */
	{
		const char *comms[] = { "newnamex\xc3\xa9\xc3\xa9\xc3\xa9\xc3", "bash",
					"\xe6\xbc\xa2\xe5\xad\x97-worker" };
		struct result *r = two_cols(comms, 3);
		int h, i, bad = 0;

		t = printed(r, RF_TEXT);
		h = line_width(t, 0);
		for (i = 1; i <= 3; i++)
			bad += line_width(t, i) != h;
		ok(h > 0 && !bad, "text: every row's count ends in the header's column (%d)\n%s", h, t);
		ok(strstr(t, "newnamex\xc3\xa9\xc3\xa9\xc3\xa9\xef\xbf\xbd  ") != NULL,
		   "text: the cut character is U+FFFD");
		ok(valid_utf8(t), "text: valid UTF-8");
		free(t);
		c = printed(r, RF_CSV);
		ok(valid_utf8(c) && strstr(c, "newnamex\xc3\xa9\xc3\xa9\xc3\xa9\xef\xbf\xbd,100\n"),
		   "csv: valid UTF-8, the cut character U+FFFD\n%s", c);
		free(c);
		result_free(r);
	}

	/* Text: a string of any length whole (cgroup paths, IPv6 flows,
	 * holder function lists pass 63 bytes), an escape never raw. */
	{
		const char *comms[] = {
			"/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
			"evil\x1b]0;owned\x07",
		};
		struct result *r = two_cols(comms, 2);

		t = printed(r, RF_TEXT);
		ok(strstr(t, comms[0]) != NULL, "text: a 92-byte string is printed whole");
		ok(!strchr(t, '\x1b') && !strchr(t, '\x07') && strstr(t, "evil?]0;owned?"),
		   "text: a comm's escape sequence reaches the terminal as '?'");
		ok(line_width(t, 1) == line_width(t, 0) && line_width(t, 2) == line_width(t, 0),
		   "text: the long string's column holds it (%d %d %d)", line_width(t, 0),
		   line_width(t, 1), line_width(t, 2));
		free(t);
		c = printed(r, RF_CSV);
		ok(strstr(c, comms[0]) != NULL, "csv: the long string whole");
		free(c);
		result_free(r);
	}
	tap_done();
}
