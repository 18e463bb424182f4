/* The list of views (probes/views.h).  libbpf-free: report and the fuzzers link it. */
#include "views.h"

extern const struct joiner nvme_joiner;		/* probes/nvme/nvme_join.c */
extern const struct joiner paths_joiner;	/* probes/paths/paths_join.c */

const struct joiner *const view_joiners[] = {
	&nvme_joiner,
	&paths_joiner,
};
const size_t view_joiners_len = sizeof(view_joiners) / sizeof(view_joiners[0]);
