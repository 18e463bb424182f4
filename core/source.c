/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What every source shares: finding a table's schema in its info. */
#include <string.h>
#include "source.h"

const struct schema *source_schema(const struct source_info *info, const char *table)
{
	size_t i;

	for (i = 0; table && i < info->nschemas; i++)
		if (!strcmp(info->schemas[i]->table, table))
			return info->schemas[i];
	return NULL;
}
