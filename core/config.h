/*
 * The rc file: $XDG_CONFIG_HOME/latop/latoprc (else ~/.config/latop/latoprc),
 * lines of `key = value`, `#` starts a comment line.  A later line for the
 * same key wins.  Keys: theme=, history=, ... (read by whoever uses them).
 */
#ifndef LATOP_CONFIG_H
#define LATOP_CONFIG_H

struct config;

/* Load path, or the default rc file when path is NULL.  A missing default
 * file gives an empty config; a missing named file, or a malformed line, is
 * an error "FILE:LINE: ..." in *cause. */
struct config *config_load(const char *path, char **cause);
void config_free(struct config *cfg);
/* Return the value of key, or NULL if unset. */
const char *config_get(const struct config *cfg, const char *key);
/* Return the latop config directory (malloc'd), e.g. ~/.config/latop. */
char *config_dir(void);

#endif
