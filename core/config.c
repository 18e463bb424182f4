/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The rc file: `key = value` lines, read as someone else's file. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "config.h"
#include "fmt.h"
#include "rfile.h"
#include "xalloc.h"

/* Bad lines listed one by one; at this many, a file mostly of bad lines is
 * not an rc file at all. */
#define CONFIG_BAD_LISTED 3

struct config_ent {
	char *key, *value;
	unsigned line;
};

struct config {
	char *path;		/* the file read, for FILE:LINE; NULL if none */
	struct config_ent *ents;
	size_t n;
	char **warnings;
	size_t nwarnings;
	bool say;		/* write warnings to stderr as they arise */
	long owner;		/* the uid the file read belongs to; -1 if none was read */
};

char *config_dir(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg == '/')
		return xasprintf("%s/latop", xdg);
	return xasprintf("%s/.config/latop", home && *home ? home : ".");
}

/* Add a warning (taking it), and say it when the config says them. */
static void config_add_warning(struct config *cfg, char *w)
{
	cfg->warnings = xreallocarray(cfg->warnings, cfg->nwarnings + 1, sizeof(char *));
	cfg->warnings[cfg->nwarnings++] = w;
	if (cfg->say)
		fprintf(stderr, "latop: warning: %s\n", w);
}

/* Strip leading and trailing white space in place; return the start. */
static char *config_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Set key to value from line, replacing an earlier setting. */
static void config_set(struct config *cfg, const char *key, const char *value, unsigned line)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		if (!strcmp(cfg->ents[i].key, key)) {
			free(cfg->ents[i].value);
			cfg->ents[i].value = xstrdup(value);
			cfg->ents[i].line = line;
			return;
		}
	}
	cfg->ents = xreallocarray(cfg->ents, cfg->n + 1, sizeof(*cfg->ents));
	cfg->ents[cfg->n].key = xstrdup(key);
	cfg->ents[cfg->n].value = xstrdup(value);
	cfg->ents[cfg->n].line = line;
	cfg->n++;
}

/* Forget every setting. */
static void config_clear(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		free(cfg->ents[i].key);
		free(cfg->ents[i].value);
	}
	free(cfg->ents);
	cfg->ents = NULL;
	cfg->n = 0;
}

/* Check a key is [a-z0-9_.-]+; return 0 if so. */
static int config_check_key(const char *key)
{
	if (!*key)
		return -1;
	for (; *key; key++)
		if (!islower((unsigned char)*key) && !isdigit((unsigned char)*key) &&
		    !strchr("_.-", *key))
			return -1;
	return 0;
}

/*
 * Parse one line (len bytes, NUL-terminated) into cfg: 1 if it set a key,
 * 0 for a blank or comment line, -1 with *why if it is malformed.  *why
 * quotes nothing from the line.
 */
static int config_line(struct config *cfg, char *line, size_t len, unsigned lineno,
		       const char **why)
{
	char *s, *eq, *key;

	if (memchr(line, '\0', len)) {
		*why = "not a 'key = value' line (it holds a NUL byte)";
		return -1;
	}
	s = config_trim(line);
	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq) {
		*why = "not a 'key = value' line";
		return -1;
	}
	*eq = '\0';
	key = config_trim(s);
	if (config_check_key(key)) {
		*why = "bad key (use lower case letters, digits, '_', '.', '-')";
		return -1;
	}
	config_set(cfg, key, config_trim(eq + 1), lineno);
	return 1;
}

/* Parse the text of cfg->path into settings and warnings. */
static void config_parse(struct config *cfg, char *text, size_t len)
{
	char *line = text, *end = text + len;
	unsigned lineno = 0, good = 0, bad = 0;
	size_t first_warning = cfg->nwarnings;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		const char *why = NULL;
		int r;

		line[n] = '\0';
		lineno++;
		r = config_line(cfg, line, n, lineno, &why);
		line += n + 1;
		if (r > 0)
			good++;
		if (r >= 0)
			continue;
		if (++bad != CONFIG_BAD_LISTED || bad <= good) {
			if (bad <= CONFIG_BAD_LISTED)
				config_add_warning(cfg, xasprintf("%s:%u: %s; line ignored", cfg->path,
								  lineno, why));
			continue;
		}
		/* Mostly not `key = value`: say so once, and use none of it. */
		while (cfg->nwarnings > first_warning)
			free(cfg->warnings[--cfg->nwarnings]);
		config_clear(cfg);
		config_add_warning(cfg, xasprintf("%s: not an rc file (%u of its first %u lines are "
						  "not 'key = value' lines): no setting used",
						  cfg->path, bad, lineno));
		return;
	}
	if (bad > CONFIG_BAD_LISTED)
		config_add_warning(cfg, xasprintf("%s: %u more bad lines ignored", cfg->path,
						  bad - CONFIG_BAD_LISTED));
}

/* The warning for a default rc file that cannot be read (err is -errno). */
static char *config_unreadable(int err, const char *why)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	struct stat st;

	if (err == -ENOTDIR && xdg && *xdg == '/' && (stat(xdg, &st) < 0 || !S_ISDIR(st.st_mode)))
		return xasprintf("XDG_CONFIG_HOME=%s is not a directory: no rc file read", xdg);
	return xasprintf("%s; no rc setting used", why);
}

struct config *config_load(const char *path)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	char *text = NULL, *why = NULL;
	struct stat st;
	size_t len = 0;
	int err;

	cfg->owner = -1;
	if (path) {
		cfg->path = xstrdup(path);
	} else {
		char *dir = config_dir();

		cfg->path = xasprintf("%s/latoprc", dir);
		free(dir);
	}
	err = rfile_read(cfg->path, RFILE_SETTINGS_MAX_BYTES, &text, &len, &why);
	if (err == -ENOENT && !path) {
		free(why);
		return cfg;
	}
	if (err) {
		config_add_warning(cfg, path ? xasprintf("%s; no rc setting used", why)
					     : config_unreadable(err, why));
		free(why);
		return cfg;
	}
	if (stat(cfg->path, &st) == 0)
		cfg->owner = (long)st.st_uid;
	config_parse(cfg, text, len);
	free(text);
	return cfg;
}

long config_owner(const struct config *cfg)
{
	return cfg->owner;
}

struct config *config_shared(void)
{
	static struct config *shared;
	size_t i;

	if (shared)
		return shared;
	shared = config_load(NULL);
	for (i = 0; i < shared->nwarnings; i++)
		fprintf(stderr, "latop: warning: %s\n", shared->warnings[i]);
	shared->say = true;
	return shared;
}

/* Free a config. */
void config_free(struct config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	config_clear(cfg);
	for (i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	free(cfg->path);
	free(cfg);
}

const char *config_get(const struct config *cfg, const char *key)
{
	size_t i;

	for (i = 0; cfg && i < cfg->n; i++)
		if (!strcmp(cfg->ents[i].key, key))
			return cfg->ents[i].value;
	return NULL;
}

void config_warn(struct config *cfg, const char *key, const char *what)
{
	unsigned line = 0;
	size_t i;

	if (!key) {
		config_add_warning(cfg, xstrdup(what));
		return;
	}
	for (i = 0; i < cfg->n; i++)
		if (!strcmp(cfg->ents[i].key, key))
			line = cfg->ents[i].line;
	config_add_warning(cfg, xasprintf("%s:%u: %s: %s", cfg->path, line, key, what));
}

void config_check_keys(struct config *cfg, const char *const *known, size_t n)
{
	size_t i, j;

	for (i = 0; i < cfg->n; i++) {
		const char *key = cfg->ents[i].key, *pick;
		char *what;

		for (j = 0; j < n && strcmp(known[j], key); j++)
			;
		if (j < n)
			continue;
		for (j = 0; j < i && strcmp(cfg->ents[j].key, key); j++)
			;
		if (j < i)
			continue;	/* said once, at its last line */
		pick = text_suggest(key, known, n);
		what = xasprintf("not a latoprc key; ignored%s%s%s", pick ? " (did you mean '" : "",
				 pick ? pick : "", pick ? "'?)" : "");
		config_warn(cfg, key, what);
		free(what);
	}
}

size_t config_nwarnings(const struct config *cfg)
{
	return cfg->nwarnings;
}

const char *config_warning(const struct config *cfg, size_t i)
{
	return i < cfg->nwarnings ? cfg->warnings[i] : NULL;
}
