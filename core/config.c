/* The rc file: `key = value` lines. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "xalloc.h"

struct config_ent {
	char *key, *value;
};

struct config {
	struct config_ent *ents;
	size_t n;
};

/* Return the latop config directory. */
char *config_dir(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg == '/')
		return xasprintf("%s/latop", xdg);
	return xasprintf("%s/.config/latop", home && *home ? home : ".");
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

/* Set key to value, replacing an earlier setting. */
static void config_set(struct config *cfg, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		if (!strcmp(cfg->ents[i].key, key)) {
			free(cfg->ents[i].value);
			cfg->ents[i].value = xstrdup(value);
			return;
		}
	}
	cfg->ents = xreallocarray(cfg->ents, cfg->n + 1, sizeof(*cfg->ents));
	cfg->ents[cfg->n].key = xstrdup(key);
	cfg->ents[cfg->n].value = xstrdup(value);
	cfg->n++;
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

/* Parse one line into cfg; -1 with *why on a malformed line. */
static int config_line(struct config *cfg, char *line, char **why)
{
	char *s = config_trim(line), *eq, *key;

	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq) {
		*why = xasprintf("expected 'key = value', found '%s'", s);
		return -1;
	}
	*eq = '\0';
	key = config_trim(s);
	if (config_check_key(key)) {
		*why = xasprintf("bad key '%s' (use lower case letters, digits, '_', '.', '-')", key);
		return -1;
	}
	config_set(cfg, key, config_trim(eq + 1));
	return 0;
}

/* Load an rc file (the default one when path is NULL). */
struct config *config_load(const char *path, char **cause)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	char *dflt = NULL, *line = NULL, *why = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	FILE *f;

	if (!path) {
		char *dir = config_dir();

		dflt = xasprintf("%s/latoprc", dir);
		free(dir);
		path = dflt;
	}
	f = fopen(path, "re");
	if (!f) {
		if (dflt && errno == ENOENT) {
			free(dflt);
			return cfg;
		}
		*cause = xasprintf("%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		if (config_line(cfg, line, &why)) {
			*cause = xasprintf("%s:%u: %s", path, lineno, why);
			free(why);
			fclose(f);
			goto fail;
		}
	}
	fclose(f);
	free(line);
	free(dflt);
	return cfg;
fail:
	free(line);
	free(dflt);
	config_free(cfg);
	return NULL;
}

/* Free a config. */
void config_free(struct config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->n; i++) {
		free(cfg->ents[i].key);
		free(cfg->ents[i].value);
	}
	free(cfg->ents);
	free(cfg);
}

/* Return the value of key, or NULL. */
const char *config_get(const struct config *cfg, const char *key)
{
	size_t i;

	for (i = 0; cfg && i < cfg->n; i++)
		if (!strcmp(cfg->ents[i].key, key))
			return cfg->ents[i].value;
	return NULL;
}
