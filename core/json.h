/* SPDX-License-Identifier: GPL-3.0-or-later */
/* JSON output: one string writer for everything latop prints as JSON. */
#ifndef LATOP_JSON_H
#define LATOP_JSON_H

#include <stdio.h>

/*
 * Print s as a JSON string, or null for NULL.  The output is valid UTF-8
 * whatever s holds: quotes, backslashes and control characters are escaped,
 * well-formed UTF-8 passes through, and each byte that does not start a
 * well-formed sequence (a name cut inside a character, Latin-1, an overlong
 * form, a surrogate) becomes U+FFFD.
 */
void json_str(FILE *out, const char *s);

#endif
