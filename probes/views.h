/*
 * The views latop has, each in its own folder probes/VIEW/.  This is the one
 * list of what each view brings that the layers above use without libbpf.
 */
#ifndef LATOP_VIEWS_H
#define LATOP_VIEWS_H

#include <stddef.h>
#include "../core/merge.h"

/* Every view's joiner, for merge_open(): one line each in probes/views.c. */
extern const struct joiner *const view_joiners[];
extern const size_t view_joiners_len;

/*
 * Every compiled-in schema, for schema_known()/schema_attach() (core/table.h):
 * a schema read from a recording gets its fields' pushdown terms and
 * domains from these.
 */
extern const struct schema *const view_schemas[];
extern const size_t view_schemas_len;

#endif
