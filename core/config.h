/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The rc file: $XDG_CONFIG_HOME/latop/latoprc (else ~/.config/latop/latoprc),
 * lines of `key = value`, `#` starts a comment line.  A later line for the
 * same key wins.  Keys are read by whoever uses them (theme by the TUI,
 * flow_max by the flows probe, ...); latop.c checks the file's keys against
 * all of them.
 *
 * latop runs as root with a user's rc file, so the file is treated as
 * someone else's: only a regular file of at most 1 MiB is read, and no
 * message quotes its text, only its name, line numbers and key names.
 * Nothing in it is fatal: a bad line is a warning and is ignored (the rest
 * applies); a file that cannot be read, or that is mostly not `key = value`
 * lines, is one warning and no setting applies.
 */
#ifndef LATOP_CONFIG_H
#define LATOP_CONFIG_H

#include <stddef.h>

struct config;

/* Load path, or the default rc file when path is NULL.  Never NULL: a
 * missing default file is an empty config, and every problem is a warning
 * "FILE:LINE: what" (see config_warning). */
struct config *config_load(const char *path);
/* The process's rc file (the default one), loaded on first use and shared
 * by all its readers.  Its warnings, and those config_warn adds to it later,
 * are written to stderr once, as "latop: warning: ...", when they arise. */
struct config *config_shared(void);
void config_free(struct config *cfg);
/* Return the uid the rc file read belongs to, or -1 if none was read:
 * a path it names for latop to write is trusted only from its owner. */
long config_owner(const struct config *cfg);
/* Return the value of key, or NULL if unset. */
const char *config_get(const struct config *cfg, const char *key);
/* Warn that key's setting is not usable: "FILE:LINE: KEY: what"; with key
 * NULL, warn "what" as is (a problem the rc file did not name). */
void config_warn(struct config *cfg, const char *key, const char *what);
/* Warn of every key set that is not one of known[0..n): "FILE:LINE: KEY:
 * not a latoprc key; ignored (did you mean 'K'?)".  The keys belong to the
 * layers that read them, so the caller that knows them all gathers them. */
void config_check_keys(struct config *cfg, const char *const *known, size_t n);
/* The number of warnings so far. */
size_t config_nwarnings(const struct config *cfg);
/* The i-th warning, or NULL past the last. */
const char *config_warning(const struct config *cfg, size_t i);
/* Return the latop config directory (malloc'd), e.g. ~/.config/latop. */
char *config_dir(void);

#endif
