/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The locks tables: per lock x holder aggregates, single waits, their timelines. */
#include <linux/types.h>
#include "../filter.h"
#include "../../core/cgroup.h"
#include "locks_schema.h"

const char *const lock_kind_names[] = {
	"futex", "mutex", "lll", "pi", "spinlock", "rwlock-r", "rwlock-w", "kmutex",
	"rwsem-r", "rwsem-w", "rtmutex", "percpu-rwsem", "klock", NULL,
};

static const char *lock_kind_domain_name(size_t i)
{
	size_t n;

	for (n = 0; lock_kind_names[n]; n++)
		;
	return i < n ? lock_kind_names[i] : NULL;
}

/* Lock kinds; the kernel does not test them. */
static const struct field_domain lock_kind_domain = {lock_kind_domain_name, NULL, NULL};

static const struct field locks_fields[LC_NCOLS] = {
	[LC_LOCK]     = {"lock", FT_STR, FF_KEY, "", "lock address (futex word, or kernel lock)"},
	[LC_KIND]     = {"kind", FT_STR, FF_KEY, "", "mutex, lll, pi, futex; kernel: spinlock, "
			 "rwlock-r/w, kmutex, rwsem-r/w, rtmutex, percpu-rwsem", 0, &lock_kind_domain},
	[LC_SYM]      = {"sym", FT_STR, FF_KEY, "", "symbol of the lock, or the kernel function "
			 "that waited for it"},
	[LC_PID]      = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "the waiters' process id (tgid)", FTERM_PID},
	[LC_PROCESS]  = {"process", FT_STR, FF_KEY, "", "the waiters' process name"},
	[LC_COMM]     = {"comm", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "the last waiting thread's "
			 "name (pushed down: tests each waiter)", FTERM_COMM},
	[LC_HOLDER]   = {"holder", FT_U64, FF_KEY | FF_HIDDEN, "", "thread id of the holder that "
			 "kept the lock longest during a wait (0: unknown)"},
	[LC_HOLDER_COMM] = {"holder_comm", FT_STR, FF_KEY, "", "the holder's thread name"},
	[LC_HOLDER_FN] = {"holder_fn", FT_STR, FF_KEY, "", "the holder's most sampled function "
			  "while others waited (its own code first)"},
	[LC_HOLDER_FNS] = {"holder_fns", FT_STR, FF_KEY | FF_HIDDEN, "", "the lock's most sampled "
			   "holder functions, most first"},
	[LC_COUNT]    = {"count", FT_U64, FF_SUM, "", "contended waits"},
	[LC_BELOW]    = {"below", FT_U64, FF_SUM, "", "of which shorter than THRESHOLD"},
	[LC_WAITERS]  = {"waiters", FT_U64, FF_HIDDEN, "", "distinct waiting threads in a tick "
			 "(among waits sent as events)"},
	[LC_WAIT]     = {"wait", FT_HIST, FF_PUSH, "ns", "time from a wait's start until the lock "
			 "was got (or the wait gave up)", FTERM_LAT},
	[LC_HOLD]     = {"hold", FT_HIST, 0, "ns", "that holder's contended hold: from the "
			 "first waiter's arrival to its release"},
	[LC_TIME]     = {"time", FT_DUR, FF_SUM, "ns", "total time waited (sum of wait)"},
	[LC_HOLDER_OFFCPU] = {"holder_offcpu", FT_DUR, FF_SUM, "ns", "time holders were off CPU "
			      "(runnable, I/O, asleep) while others waited"},
	[LC_SAMPLES]  = {"samples", FT_U64, FF_SUM | FF_HIDDEN, "", "stack samples of holders while "
			 "others waited"},
	[LC_CGROUP]   = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the "
			 "waiting threads", FTERM_CGROUP, &cgroup_domain},
	[LC_UNIT]     = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[LC_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) "
			  "of the cgroup"},
};

const struct schema locks_schema = {
	.table = "locks",
	.help = "contended locks: waits, holders and what they ran",
	.nfields = LC_NCOLS,
	.fields = locks_fields,
};

static const struct field lock_events_fields[LE_NCOLS] = {
	[LE_TS]       = {"ts", FT_U64, FF_KEY, "ns", "end of the wait, CLOCK_REALTIME ns"},
	[LE_ID]       = {"id", FT_U64, FF_KEY, "", "the wait, for lock_spans"},
	[LE_LOCK]     = {"lock", FT_STR, FF_KEY, "", "lock address"},
	[LE_KIND]     = {"kind", FT_STR, FF_KEY, "", "lock kind (as in locks)", 0, &lock_kind_domain},
	[LE_SYM]      = {"sym", FT_STR, FF_KEY, "", "symbol of the lock or its kernel caller"},
	[LE_PID]      = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "the waiter's process id", FTERM_PID},
	[LE_PROCESS]  = {"process", FT_STR, FF_KEY, "", "the waiter's process name"},
	[LE_TID]      = {"tid", FT_U64, FF_KEY | FF_PUSH, "", "the waiting thread", FTERM_TID},
	[LE_COMM]     = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "the waiting thread's name", FTERM_COMM},
	[LE_HOLDER]   = {"holder", FT_U64, FF_KEY, "", "the thread that held the lock longest "
			 "during the wait (0: unknown)"},
	[LE_HOLDER_COMM] = {"holder_comm", FT_STR, FF_KEY, "", "the holder's thread name"},
	[LE_HOLDER_FN] = {"holder_fn", FT_STR, FF_KEY, "", "the holder's most sampled function "
			  "during this wait"},
	[LE_HOLDER_STACK] = {"holder_stack", FT_STR, FF_KEY | FF_HIDDEN, "", "the holder's most "
			     "sampled stack during this wait, innermost first"},
	[LE_WAIT]     = {"wait", FT_DUR, FF_PUSH | FF_TOTAL, "ns", "this wait", FTERM_LAT},
	[LE_HOLD]     = {"hold", FT_DUR, 0, "ns", "that holder's contended hold"},
	[LE_HOLDER_OFFCPU] = {"holder_offcpu", FT_DUR, FF_SUM, "ns", "the holder off CPU while "
			      "holding the lock during the wait"},
	[LE_HOLDER_RUNQ] = {"holder_runq", FT_DUR, FF_SUM, "ns", "of which runnable, waiting "
			    "for a CPU"},
	[LE_HOLDER_IO] = {"holder_io", FT_DUR, FF_SUM, "ns", "of which blocked on I/O"},
	[LE_SAMPLES]  = {"samples", FT_U64, FF_SUM, "", "stack samples of the holder during the wait"},
	[LE_CGROUP]   = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the "
			 "waiting thread", FTERM_CGROUP, &cgroup_domain},
	[LE_UNIT]     = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[LE_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) "
			  "of the cgroup"},
};

const struct schema lock_events_schema = {
	.table = "lock_events",
	.help = "single lock waits above THRESHOLD or sampled with SAMPLE, with their holder",
	.nfields = LE_NCOLS,
	.fields = lock_events_fields,
};

static const struct field lock_spans_fields[LS_NCOLS] = {
	[LS_ID]    = {"id", FT_U64, FF_KEY, "", "the wait (lock_events.id)"},
	[LS_ROW]   = {"row", FT_STR, FF_KEY, "", "the line it is drawn on (\"holder 4242 bgsnap\")"},
	[LS_START] = {"start", FT_U64, FF_KEY, "ns", "CLOCK_REALTIME ns"},
	[LS_DUR]   = {"dur", FT_DUR, 0, "ns", "length"},
	[LS_KIND]  = {"kind", FT_STR, FF_KEY, "", "wait, hold, oncpu, offcpu, runq"},
	[LS_LABEL] = {"label", FT_STR, FF_KEY, "", "function the holder ran, or why it was off CPU"},
};

const struct schema lock_spans_schema = {
	.table = "lock_spans",
	.help = "timelines of the worst lock waits: waiters, holder, its functions and off-CPU time",
	.nfields = LS_NCOLS,
	.fields = lock_spans_fields,
};
