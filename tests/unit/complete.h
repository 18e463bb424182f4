/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the query tests: completion candidates as one string. */
#ifndef LATOP_TEST_COMPLETE_H
#define LATOP_TEST_COMPLETE_H

#include <stdlib.h>
#include <string.h>
#include "queries/query.h"
#include "probes/syscalls/syscalls_schema.h"

/* Complete text at its end against both syscalls tables; return the words. */
static char *complete(const char *text)
{
	const struct schema *schemas[] = {&syscalls_schema, &syscall_events_schema};
	char *out[64], buf[2048] = "";
	size_t n = query_complete(text, strlen(text), schemas, 2, out, 64), i;

	for (i = 0; i < n; i++) {
		strcat(buf, i ? " " : "");
		strncat(buf, out[i], sizeof(buf) - strlen(buf) - 1);
		free(out[i]);
	}
	return strdup(buf);
}

#endif
