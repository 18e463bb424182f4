/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Theme files: one role per line, "role = fg bg attr...". */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/rfile.h"
#include "../core/xalloc.h"
#include "theme.h"

#ifndef LATOP_DATADIR
#define LATOP_DATADIR "/usr/local/share/latop"
#endif

#define NO_COLOR_SET (-2)
#define BAD_LISTED 3		/* bad lines listed; at this many, mostly bad is no theme */
#define QUOTE_MAX 24		/* longest word from a theme file a message quotes */

struct role_style {
	short fg, bg;		/* -1: terminal default, NO_COLOR_SET: not given */
	attr_t attr;
};

static const char *const role_names[ROLE_COUNT] = {
	[ROLE_HEADER] = "header",
	[ROLE_METER_LABEL] = "meter_label",
	[ROLE_METER_VALUE] = "meter_value",
	[ROLE_METER_WARN] = "meter_warn",
	[ROLE_METER_BAD] = "meter_bad",
	[ROLE_TAB] = "tab",
	[ROLE_TAB_ACTIVE] = "tab_active",
	[ROLE_TAB_DIM] = "tab_dim",
	[ROLE_QUERY] = "query",
	[ROLE_TABLE_HEADER] = "table_header",
	[ROLE_TABLE_SORT] = "table_sort",
	[ROLE_ROW] = "row",
	[ROLE_ROW_DIM] = "row_dim",
	[ROLE_SELECTION] = "selection",
	[ROLE_STATUS] = "status",
	[ROLE_STATUS_KEY] = "status_key",
	[ROLE_ERROR] = "error",
	[ROLE_CARET] = "caret",
	[ROLE_PROMPT] = "prompt",
	[ROLE_HELP] = "help",
	[ROLE_HELP_KEY] = "help_key",
	[ROLE_HIST_BAR] = "hist_bar",
	[ROLE_HIST_MARK] = "hist_mark",
	[ROLE_BAR_ONCPU] = "bar_oncpu",
	[ROLE_BAR_OFFCPU] = "bar_offcpu",
	[ROLE_BAR_RUNQ] = "bar_runq",
	[ROLE_BAR_BLOCK] = "bar_block",
	[ROLE_BAR_NET] = "bar_net",
	[ROLE_BAR_MM] = "bar_mm",
	[ROLE_BAR_LOCK] = "bar_lock",
	[ROLE_BAR_SOFTIRQ] = "bar_softirq",
	[ROLE_BAR_SLEEP] = "bar_sleep",
	[ROLE_BAR_OTHER] = "bar_other",
	[ROLE_TIMELINE] = "timeline",
};

/* What a role looks like with no theme, or on a terminal without colors. */
static const attr_t mono_attrs[ROLE_COUNT] = {
	[ROLE_HEADER] = A_BOLD,
	[ROLE_METER_LABEL] = A_NORMAL,
	[ROLE_METER_VALUE] = A_BOLD,
	[ROLE_METER_WARN] = A_BOLD | A_UNDERLINE,
	[ROLE_METER_BAD] = A_REVERSE,
	[ROLE_TAB_ACTIVE] = A_REVERSE | A_BOLD,
	[ROLE_TAB_DIM] = A_DIM,
	[ROLE_QUERY] = A_BOLD,
	[ROLE_TABLE_HEADER] = A_REVERSE,
	[ROLE_TABLE_SORT] = A_REVERSE | A_BOLD | A_UNDERLINE,
	[ROLE_ROW_DIM] = A_DIM,
	[ROLE_SELECTION] = A_REVERSE,
	[ROLE_STATUS] = A_REVERSE,
	[ROLE_STATUS_KEY] = A_BOLD,
	[ROLE_ERROR] = A_BOLD,
	[ROLE_CARET] = A_BOLD,
	[ROLE_PROMPT] = A_BOLD,
	[ROLE_HELP_KEY] = A_BOLD,
	[ROLE_HIST_MARK] = A_BOLD,
	[ROLE_TIMELINE] = A_DIM,
};

static const struct {
	const char *name;
	attr_t attr;
} attr_names[] = {
	{"normal", A_NORMAL}, {"bold", A_BOLD}, {"dim", A_DIM},
	{"underline", A_UNDERLINE}, {"reverse", A_REVERSE}, {"standout", A_STANDOUT},
	{"blink", A_BLINK}, {"italic", A_ITALIC},
};

static const char *const color_names[8] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

/* The built-in cycle of the 't' key. */
static const char *const cycle[] = {"default", "light", "solarized-dark", "mono"};

static attr_t cur_attrs[ROLE_COUNT];
static bool cur_color;
static char cur_name[64] = "mono";

/* Parse a color word: a name, "bright" + name, "default" or 0-255; -3 if none. */
static int color_parse(const char *w)
{
	char *end;
	long v;
	int i;

	if (!strcmp(w, "default"))
		return -1;
	for (i = 0; i < 8; i++)
		if (!strcmp(w, color_names[i]))
			return i;
	if (!strncmp(w, "bright", 6)) {
		const char *b = w + 6;

		if (*b == '-' || *b == '_')
			b++;
		for (i = 0; i < 8; i++)
			if (!strcmp(b, color_names[i]))
				return 8 + i;
	}
	errno = 0;
	v = strtol(w, &end, 10);
	if (end != w && !*end && !errno && v >= 0 && v <= 255)
		return (int)v;
	return -3;
}

/* Parse an attribute word into *a; false if w is not one. */
static bool attr_parse(const char *w, attr_t *a)
{
	size_t i;

	for (i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
		if (!strcmp(w, attr_names[i].name)) {
			*a |= attr_names[i].attr;
			return true;
		}
	}
	return false;
}

/* Return the role named name, or -1. */
static int role_lookup(const char *name)
{
	int i;

	for (i = 0; i < ROLE_COUNT; i++)
		if (!strcmp(role_names[i], name))
			return i;
	return -1;
}

/* Append msg (taking it) to the warnings, "; " between them. */
static void warn_add(char **warning, char *msg)
{
	char *w = *warning ? xasprintf("%s; %s", *warning, msg) : msg;

	if (*warning) {
		free(*warning);
		free(msg);
	}
	*warning = w;
}

/* Whether a word from a theme file may be quoted in a message: a short word
 * of [a-z0-9_-], the shape of every role, color and attribute name. */
static bool word_quotable(const char *w)
{
	size_t n = strspn(w, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	return n > 0 && n <= QUOTE_MAX && !w[n];
}

/*
 * Parse one "role = words" line into styles[]; a message on error, else
 * NULL.  Only a quotable role name is quoted; words after '=' never are
 * (they are where another file's secrets would be): they are numbered.
 */
static char *line_parse(char *line, struct role_style *styles)
{
	char *eq, *name, *w, *save = NULL;
	struct role_style st = {NO_COLOR_SET, NO_COLOR_SET, A_NORMAL};
	int r, ncolors = 0, nword = 0;

	eq = strchr(line, '=');
	if (!eq)
		return xstrdup("not a theme line (expected 'role = color...')");
	*eq = '\0';
	name = strtok_r(line, " \t", &save);
	if (!name)
		return xstrdup("missing role name before '='");
	r = role_lookup(name);
	if (r < 0 && word_quotable(name))
		return xasprintf("unknown role '%s'", name);
	if (r < 0)
		return xstrdup("unknown role (role names are lower case words like header)");
	save = NULL;
	for (w = strtok_r(eq + 1, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		int c;

		nword++;
		if (attr_parse(w, &st.attr))
			continue;
		c = color_parse(w);
		if (c == -3)
			return xasprintf("%s: word %d after '=' is not a color or attribute",
					 role_names[r], nword);
		if (ncolors == 2)
			return xasprintf("%s: more than two colors (word %d after '=')",
					 role_names[r], nword);
		if (ncolors++ == 0)
			st.fg = (short)c;
		else
			st.bg = (short)c;
	}
	styles[r] = st;
	return NULL;
}

/*
 * Parse theme text into styles[]; -1 with *warning if it is not a theme
 * file (at the BAD_LISTED'th bad line, more bad lines than good ones).
 * Problems are "FILE:LINE: what", the first BAD_LISTED listed.
 */
static int text_parse(const char *path, char *text, size_t len, struct role_style *styles,
		      char **warning)
{
	char *line = text, *end = text + len, *listed = NULL;
	unsigned lineno = 0, good = 0, bad = 0;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		char *s = line, *e = line + n, *msg;

		line[n] = '\0';
		line += n + 1;
		lineno++;
		while (isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (e == s || *s == '#')
			continue;
		msg = memchr(s, '\0', (size_t)(e - s)) ? xstrdup("not a theme line (it holds a NUL byte)")
						       : line_parse(s, styles);
		if (!msg) {
			good++;
			continue;
		}
		if (++bad == BAD_LISTED && bad > good) {
			free(msg);
			free(listed);
			warn_add(warning, xasprintf("%s: not a theme file (%u of its first %u lines are "
						    "not 'role = color...' lines)", path, bad, lineno));
			return -1;
		}
		if (bad <= BAD_LISTED)
			warn_add(&listed, xasprintf("%s:%u: %s", path, lineno, msg));
		free(msg);
	}
	if (bad > BAD_LISTED)
		warn_add(&listed, xasprintf("%s: %u more bad lines", path, bad - BAD_LISTED));
	if (listed)
		warn_add(warning, listed);
	return 0;
}

/* Read the theme file at path into styles[]; -1 with *warning if it cannot be
 * read or is not a theme file. */
static int file_parse(const char *path, struct role_style *styles, char **warning)
{
	char *text = NULL, *why = NULL;
	size_t len = 0;
	int rc;

	if (rfile_read(path, RFILE_SETTINGS_MAX_BYTES, &text, &len, &why) < 0) {
		warn_add(warning, why);
		return -1;
	}
	rc = text_parse(path, text, len, styles, warning);
	free(text);
	return rc;
}

/* Whether a file exists at path (readable or not: reading it says why not). */
static bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Fill path with the first existing file for theme name; false if none.  The
 * program's own themes/ is looked for next to it and up to two levels up
 * (.output/san/latop in the source tree). */
static bool theme_find(const char *name, char *path, size_t n)
{
	char exe[PATH_MAX], *slash, *dir;
	ssize_t len;
	int up;

	if (strchr(name, '/')) {
		snprintf(path, n, "%s", name);
		return true;
	}
	dir = config_dir();
	snprintf(path, n, "%s/themes/%s.theme", dir, name);
	free(dir);
	if (file_exists(path))
		return true;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	for (up = 0; up < 3 && (slash = strrchr(exe, '/')); up++) {
		*slash = '\0';
		if (snprintf(path, n, "%s/themes/%s.theme", exe, name) < (int)n && file_exists(path))
			return true;
	}
	snprintf(path, n, "%s/themes/%s.theme", LATOP_DATADIR, name);
	return file_exists(path);
}

/* Map a color to what this terminal has: brights fold to base + bold. */
static short color_fit(short c, attr_t *attr)
{
	if (c < 0 || c < COLORS)
		return c;
	if (c < 16) {
		*attr |= A_BOLD;
		return (short)(c - 8);
	}
	return -1;
}

/* Turn parsed styles into curses attributes (color pairs when color). */
static void theme_apply(const struct role_style *styles, bool color)
{
	int r;

	for (r = 0; r < ROLE_COUNT; r++) {
		const struct role_style *st = &styles[r];
		attr_t a = st->attr;
		short fg, bg;

		if (st->fg == NO_COLOR_SET && st->bg == NO_COLOR_SET && !st->attr) {
			cur_attrs[r] = mono_attrs[r];
			continue;
		}
		if (color) {
			fg = color_fit(st->fg == NO_COLOR_SET ? -1 : st->fg, &a);
			bg = color_fit(st->bg == NO_COLOR_SET ? -1 : st->bg, &a);
			init_pair((short)(r + 1), fg, bg);
			a |= COLOR_PAIR(r + 1);
		}
		cur_attrs[r] = a;
	}
}

/* Set every role to "not given". */
static void styles_clear(struct role_style *styles)
{
	int r;

	for (r = 0; r < ROLE_COUNT; r++)
		styles[r] = (struct role_style){NO_COLOR_SET, NO_COLOR_SET, A_NORMAL};
}

/* Fall back to the monochrome defaults; return -1. */
static int theme_mono(void)
{
	struct role_style styles[ROLE_COUNT];

	styles_clear(styles);
	theme_apply(styles, false);
	snprintf(cur_name, sizeof(cur_name), "mono");
	return -1;
}

int theme_load(const char *name, bool color, char **warning)
{
	struct role_style styles[ROLE_COUNT];
	char path[PATH_MAX];

	color = color && has_colors();
	styles_clear(styles);
	if (!color)
		name = "mono";
	cur_color = false;
	snprintf(cur_name, sizeof(cur_name), "%s", name);
	if (!theme_find(name, path, sizeof(path))) {
		warn_add(warning, xasprintf("theme '%s' not found (looked in $XDG_CONFIG_HOME/latop/themes, "
					    "the program's themes/ and %s/themes): using monochrome",
					    name, LATOP_DATADIR));
		return theme_mono();
	}
	if (file_parse(path, styles, warning) < 0) {
		warn_add(warning, xstrdup("using monochrome"));
		return theme_mono();
	}
	theme_apply(styles, color);
	cur_color = color;
	return 0;
}

attr_t theme_attr(enum role r)
{
	return cur_attrs[r];
}

enum role theme_bar_role(const char *component)
{
	char name[64];
	int r;

	snprintf(name, sizeof(name), "bar_%s", component);
	r = role_lookup(name);
	return r < 0 ? ROLE_BAR_OTHER : (enum role)r;
}

bool theme_has_color(void)
{
	return cur_color;
}

const char *theme_name(void)
{
	return cur_name;
}

const char *theme_next(const char *name)
{
	size_t i, n = sizeof(cycle) / sizeof(cycle[0]);

	for (i = 0; i < n; i++)
		if (!strcmp(cycle[i], name))
			return cycle[(i + 1) % n];
	return cycle[0];
}
