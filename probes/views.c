/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The list of views (probes/views.h).  libbpf-free: report and the fuzzers link it. */
#include <string.h>

#include "views.h"
#include "block/block_schema.h"
#include "flows/flows_schema.h"
#include "locks/locks_schema.h"
#include "nvme/nvme_schema.h"
#include "paths/paths_schema.h"
#include "syscalls/syscalls_schema.h"

extern const struct joiner nvme_joiner;		/* probes/nvme/nvme_join.c */
extern const struct joiner paths_joiner;	/* probes/paths/paths_join.c */

const struct view views[] = {
	{"flows", '1', "per TCP flow",
	 "from flows group by flow, pid, comm show count, rate(count), p50(lat), p99(lat), "
	 "p999(lat), max(lat), sum(bytes_in), sum(bytes_out), sum(evicted) "
	 "order by p99(lat) desc",
	 &flows_schema, &flow_events_schema, NULL, NULL, "flows"},
	{"paths", '2', "per request path",
	 "from paths group by path, comm show count, rate(count), p50(lat), p99(lat), max(lat), "
	 "sum(calls), sum(down), sum(self) order by sum(time) desc threshold 10ms",
	 &paths_schema, &path_events_schema, &path_spans_schema, &paths_joiner, "paths"},
	{"nvme", '3', "per NVMe/TCP and block I/O stage",
	 "from nvme group by side, session, op, size show count, rate(count), misfit, p50(lat), "
	 "p99(lat), avg(queue), avg(submit), avg(remote), avg(rx), avg(t_recv), avg(t_exec), "
	 "avg(t_send) order by p99(lat) desc threshold 5ms",
	 &nvme_schema, &nvme_events_schema, &nvme_spans_schema, &nvme_joiner, "nvme"},
	{"block", '4', NULL,
	 "from block group by dev, op show count, rate(count), sum(bytes), p50(lat), p99(lat), "
	 "max(lat), p99(sched), p99(device), max(inflight) order by p99(lat) desc threshold 10ms",
	 &block_schema, &block_events_schema, &block_spans_schema, NULL, "block"},
	{"locks", '5', "per contended lock and its holder",
	 "from locks where kind != 'futex' group by lock, kind, sym, pid, process, holder_fns "
	 "show count, max(waiters), p50(wait), p99(wait), p9999(wait), max(wait), max(hold) "
	 "order by p9999(wait) desc threshold 1us",
	 &locks_schema, &lock_events_schema, &lock_spans_schema, NULL, "locks"},
	{"syscalls", '6', "per syscall and kernel subsystem",
	 "from syscalls group by pid, comm, syscall show count, rate(count), errors, p50(lat), "
	 "p99(lat), max(lat), sum(time), sum(oncpu), sum(offcpu) order by sum(time) desc "
	 "threshold 10ms",
	 &syscalls_schema, &syscall_events_schema, NULL, NULL, "syscalls"},
};
const size_t views_len = sizeof(views) / sizeof(views[0]);

const struct joiner *const *views_joiners(size_t *n)
{
	static const struct joiner *list[sizeof(views) / sizeof(views[0])];
	static size_t len;

	if (!len)
		for (size_t v = 0; v < views_len; v++)
			if (views[v].joiner)
				list[len++] = views[v].joiner;
	*n = len;
	return list;
}

size_t views_ntables(const struct view *v)
{
	return 3 + (v->joiner ? v->joiner->ntables : 0);
}

const struct schema *views_table(const struct view *v, size_t i)
{
	switch (i) {
	case 0: return v->table;
	case 1: return v->events;
	case 2: return v->spans;
	}
	return i < views_ntables(v) ? v->joiner->tables[i - 3] : NULL;
}

const struct view *views_by_table(const char *table)
{
	for (size_t v = 0; table && v < views_len; v++)
		if (!strcmp(views[v].table->table, table))
			return &views[v];
	return NULL;
}

const struct schema *const *views_schemas(size_t *n)
{
	static const struct schema *list[sizeof(views) / sizeof(views[0]) * 8];
	static size_t len;

	if (!len)
		for (size_t v = 0; v < views_len; v++)
			for (size_t i = 0; i < views_ntables(&views[v]); i++)
				if (views_table(&views[v], i) && len < sizeof(list) / sizeof(list[0]))
					list[len++] = views_table(&views[v], i);
	*n = len;
	return list;
}
