/* The list of views (probes/views.h).  libbpf-free: report and the fuzzers link it. */
#include "views.h"

#include "flows/flows_schema.h"
#include "paths/paths_schema.h"
#include "nvme/nvme_schema.h"
#include "block/block_schema.h"
#include "locks/locks_schema.h"
#include "syscalls/syscalls_schema.h"

extern const struct joiner nvme_joiner;		/* probes/nvme/nvme_join.c */
extern const struct joiner paths_joiner;	/* probes/paths/paths_join.c */

const struct joiner *const view_joiners[] = {
	&nvme_joiner,
	&paths_joiner,
};
const size_t view_joiners_len = sizeof(view_joiners) / sizeof(view_joiners[0]);

const struct schema *const view_schemas[] = {
	&flows_schema, &flow_events_schema,
	&paths_schema, &path_events_schema, &path_spans_schema,
	&nvme_schema, &nvme_events_schema, &nvme_spans_schema,
	&block_schema, &block_events_schema, &block_spans_schema,
	&locks_schema, &lock_events_schema, &lock_spans_schema,
	&syscalls_schema, &syscall_events_schema,
};
const size_t view_schemas_len = sizeof(view_schemas) / sizeof(view_schemas[0]);
