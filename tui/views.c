/* The view table: adding a view is one line here. */
#include <string.h>

#include "views.h"

const struct view views[] = {
	{'1', "flows", "flows",
	 "from flows group by flow, pid, comm show count, rate(count), p50(lat), p99(lat), "
	 "p999(lat), max(lat), sum(bytes_in), sum(bytes_out), sum(evicted) "
	 "order by p99(lat) desc"},
	{'2', "paths", "paths",
	 "from paths group by path, comm show count, rate(count), p50(lat), p99(lat), max(lat), "
	 "sum(calls), sum(down), sum(self) order by sum(time) desc threshold 10ms"},
	{'3', "nvme", "nvme",
	 "from nvme group by side, session, op, size show count, rate(count), misfit, p50(lat), "
	 "p99(lat), avg(queue), avg(submit), avg(remote), avg(rx), avg(t_recv), avg(t_exec), "
	 "avg(t_send) order by p99(lat) desc threshold 5ms"},
	{'4', "block", "block",
	 "from block group by dev, op show count, rate(count), sum(bytes), p50(lat), p99(lat), "
	 "max(lat), p99(sched), p99(device), max(inflight) order by p99(lat) desc threshold 10ms"},
	{'5', "locks", "locks",
	 "from locks where kind != 'futex' group by lock, kind, sym, pid, process, holder_fns "
	 "show count, max(waiters), p50(wait), p99(wait), p9999(wait), max(wait), max(hold) "
	 "order by p9999(wait) desc threshold 1us"},
	{'6', "syscalls", "syscalls",
	 "from syscalls group by pid, comm, syscall show count, rate(count), errors, p50(lat), "
	 "p99(lat), max(lat), sum(time), sum(oncpu), sum(offcpu) order by sum(time) desc "
	 "threshold 10ms"},
};

const size_t views_len = sizeof(views) / sizeof(views[0]);

/* The view showing table, or -1. */
int views_find(const char *table)
{
	size_t i;

	for (i = 0; table && i < views_len; i++)
		if (!strcmp(views[i].table, table))
			return (int)i;
	return -1;
}

/* The schema info gives for view v's table, or NULL. */
const struct schema *views_schema(const struct source_info *info, size_t v)
{
	return source_schema(info, views[v].table);
}

/* The first view whose table the source provides, or -1. */
int views_first(const struct source_info *info)
{
	size_t i;

	for (i = 0; i < views_len; i++)
		if (views_schema(info, i))
			return (int)i;
	return -1;
}
