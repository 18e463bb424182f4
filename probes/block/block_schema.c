/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The block tables: per (dev, op, size, pid) aggregates, single requests, their spans. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "../filter.h"
#include "../../core/xalloc.h"
#include "blkdev.h"
#include "block.h"
#include "block_schema.h"

static const char *blkop_domain_name(size_t i)
{
	size_t n;

	for (n = 0; blkdev_op_names[n]; n++)
		;
	return i < n ? blkdev_op_names[i] : NULL;
}

static int64_t blkop_domain_value(const char *s)
{
	return blkdev_op_code(s);
}

/* Block operations; the kernel tests their REQ_OP_* codes. */
static const struct field_domain blkop_domain = {blkop_domain_name, NULL, blkop_domain_value};

static int blkdev_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The devices in /sys/class/block, read once, sorted. */
static const char *blkdev_domain_name(size_t i)
{
	static char **names;
	static size_t n;
	static bool read;
	struct dirent *e;
	DIR *d;

	if (!read) {
		read = true;
		if ((d = opendir("/sys/class/block"))) {
			while ((e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				names = xreallocarray(names, n + 1, sizeof(*names));
				names[n++] = xstrdup(e->d_name);
			}
			closedir(d);
		}
		qsort(names, n, sizeof(*names), blkdev_name_cmp);
	}
	return i < n ? names[i] : NULL;
}

/*
 * Any name: a recording names the devices of the machine it was made on,
 * which this one need not have.  A name this machine does not know is left
 * to user space (value -1), so it matches the recorded rows of that name.
 */
static bool blkdev_domain_valid(const char *s)
{
	return s[0] != 0;
}

static int64_t blkdev_domain_value(const char *s)
{
	uint32_t dev;

	return blkdev_lookup(s, &dev) ? -1 : (int64_t)dev;
}

/* Block devices by name ("loop0") or number ("7:0"): completion offers this
 * machine's; the kernel tests the dev_t of those it knows. */
static const struct field_domain blkdev_domain = {
	blkdev_domain_name, blkdev_domain_valid, blkdev_domain_value,
};

/*
 * A request's latency (lat, summed in time) splits into the stages
 * alloc + plug + sched + device exactly.  The stages are FF_PART and time
 * FF_TOTAL: queries unpivot them into one row per stage (GROUP BY stage).
 * Each stage also has a per-request histogram, <stage>_lat, which
 * pNN(<stage>), avg, min, max, stddev and dist read.
 */
static const struct field block_fields[BC_NCOLS] = {
	[BC_DEV]      = {"dev", FT_STR, FF_KEY | FF_PUSH, "", "block device (loop0, sda, nvme0n1)", FTERM_DEV, &blkdev_domain},
	[BC_OP]       = {"op", FT_STR, FF_KEY | FF_PUSH, "", "operation: read, write, flush, discard, write_zeroes...", FTERM_OP, &blkop_domain},
	[BC_SIZE]     = {"size", FT_SIZE, FF_KEY | FF_PUSH, "B", "request size in bytes, exact (as issued)", FTERM_SIZE},
	[BC_PID]      = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process that queued the I/O (tgid)", FTERM_PID},
	[BC_COMM]     = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "name of the thread that queued the I/O, "
			 "as it was then", FTERM_COMM},
	[BC_COUNT]    = {"count", FT_U64, FF_SUM, "", "requests completed"},
	[BC_ERRORS]   = {"errors", FT_U64, FF_SUM, "", "requests completed with an error"},
	[BC_REQUEUES] = {"requeues", FT_U64, FF_SUM, "", "times requests went back from the driver to be issued again"},
	[BC_MERGES]   = {"merges", FT_U64, FF_SUM, "", "bios merged into another request"},
	[BC_BYTES]    = {"bytes", FT_SIZE, FF_SUM, "B", "bytes completed"},
	[BC_LAT]      = {"lat", FT_HIST, FF_PUSH, "ns", "latency of each request, bio queued to completion", FTERM_LAT},
	[BC_TIME]     = {"time", FT_DUR, FF_SUM | FF_TOTAL, "ns", "total time of requests (sum of lat)"},
	[BC_ALLOC]    = {"alloc", FT_DUR, FF_SUM | FF_PART, "ns", "bio queued to request allocated: waiting for a tag"},
	[BC_PLUG]     = {"plug", FT_DUR, FF_SUM | FF_PART, "ns", "allocated to inserted (or issued directly): plug and submit path"},
	[BC_SCHED]    = {"sched", FT_DUR, FF_SUM | FF_PART, "ns", "inserted or requeued to issued: I/O scheduler and dispatch"},
	[BC_DEVICE]   = {"device", FT_DUR, FF_SUM | FF_PART, "ns", "issued to completed: driver and device"},
	[BC_ALLOC_LAT]  = {"alloc_lat", FT_HIST, FF_HIDDEN, "ns", "alloc stage of each request"},
	[BC_PLUG_LAT]   = {"plug_lat", FT_HIST, FF_HIDDEN, "ns", "plug stage of each request"},
	[BC_SCHED_LAT]  = {"sched_lat", FT_HIST, FF_HIDDEN, "ns", "sched stage of each request"},
	[BC_DEVICE_LAT] = {"device_lat", FT_HIST, FF_HIDDEN, "ns", "device stage of each request"},
	[BC_INFLIGHT] = {"inflight", FT_U64, FF_HIDDEN, "", "most requests of the device at the driver at once this tick"},
	[BC_QUEUED]   = {"queued", FT_U64, FF_HIDDEN, "", "most requests of the device queued and not completed at once this tick"},
	[BC_CGROUP]   = {"cgroup", FT_STR, FF_KEY | FF_HIDDEN, "", "cgroup v2 path of the thread that queued the I/O"},
	[BC_UNIT]     = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[BC_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema block_schema = {
	.table = "block",
	.help = "block I/O latency by device, operation, size and process, split into stages",
	.nfields = BC_NCOLS,
	.fields = block_fields,
};

static const struct field block_events_fields[BE_NCOLS] = {
	[BE_TS]       = {"ts", FT_U64, FF_KEY, "ns", "completion, CLOCK_REALTIME ns (a key: one row per request)"},
	[BE_ID]       = {"id", FT_U64, FF_KEY | FF_HIDDEN, "", "the request (its first bio's kernel address)"},
	[BE_DEV]      = {"dev", FT_STR, FF_KEY | FF_PUSH, "", "block device", FTERM_DEV, &blkdev_domain},
	[BE_OP]       = {"op", FT_STR, FF_KEY | FF_PUSH, "", "operation", FTERM_OP, &blkop_domain},
	[BE_SIZE]     = {"size", FT_SIZE, FF_KEY | FF_PUSH, "B", "request size in bytes", FTERM_SIZE},
	[BE_PID]      = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process that queued the I/O (tgid)", FTERM_PID},
	[BE_TID]      = {"tid", FT_U64, FF_KEY | FF_PUSH | FF_HIDDEN, "", "thread that queued the I/O", FTERM_TID},
	[BE_COMM]     = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "thread name", FTERM_COMM},
	[BE_SECTOR]   = {"sector", FT_U64, FF_HIDDEN, "", "first sector (512 bytes)"},
	[BE_LAT]      = {"lat", FT_DUR, FF_PUSH | FF_TOTAL, "ns", "latency of this request", FTERM_LAT},
	[BE_ALLOC]    = {"alloc", FT_DUR, FF_SUM | FF_PART, "ns", "bio queued to request allocated"},
	[BE_PLUG]     = {"plug", FT_DUR, FF_SUM | FF_PART, "ns", "allocated to inserted or issued"},
	[BE_SCHED]    = {"sched", FT_DUR, FF_SUM | FF_PART, "ns", "inserted or requeued to issued"},
	[BE_DEVICE]   = {"device", FT_DUR, FF_SUM | FF_PART, "ns", "issued to completed"},
	[BE_REQUEUES] = {"requeues", FT_U64, 0, "", "times requeued"},
	[BE_ERROR]    = {"error", FT_U64, 0, "", "blk_status_t (0: success)"},
	[BE_CGROUP]   = {"cgroup", FT_STR, FF_KEY | FF_HIDDEN, "", "cgroup v2 path of the thread that queued the I/O"},
	[BE_UNIT]     = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[BE_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema block_events_schema = {
	.table = "block_events",
	.help = "single block requests above THRESHOLD or sampled with SAMPLE",
	.nfields = BE_NCOLS,
	.fields = block_events_fields,
};

static const struct field block_spans_fields[BS_COL_N] = {
	[BS_COL_ID]    = {"id", FT_U64, FF_KEY, "", "the request (block_events.id)"},
	[BS_COL_ROW]   = {"row", FT_STR, FF_KEY, "", "the line a span is drawn on"},
	[BS_COL_START] = {"start", FT_U64, FF_KEY, "ns", "start of the stage, CLOCK_REALTIME ns (a key: one row per span)"},
	[BS_COL_DUR]   = {"dur", FT_DUR, 0, "ns", "length of the stage"},
	[BS_COL_KIND]  = {"kind", FT_STR, FF_KEY, "", "the stage: alloc, plug, sched, device"},
	[BS_COL_LABEL] = {"label", FT_STR, 0, "", "drawn on the span"},
};

const struct schema block_spans_schema = {
	.table = "block_spans",
	.help = "the stages of each request in block_events, on a time axis",
	.nfields = BS_COL_N,
	.fields = block_spans_fields,
};

uint32_t block_key_mask(const struct filter_prog *f)
{
	/* The block table's fields each key field gives: the devices' in-flight
	 * and queued maxima are found by the row's dev. */
	const uint64_t dev = FILTER_FIELD(BC_DEV) | FILTER_FIELD(BC_INFLIGHT) |
			     FILTER_FIELD(BC_QUEUED),
		       cgroup = FILTER_FIELD(BC_CGROUP) | FILTER_FIELD(BC_UNIT) |
				FILTER_FIELD(BC_CONTAINER);
	uint32_t mask = 0;

	/* A query of block_events or block_spans reads no stats: they are kept
	 * whole for whatever else reads the block table (a recording). */
	if (!f->fields_known || f->fields_table != 0)
		return 0;
	if (!filter_reads_any_of(f, 0, dev))
		mask |= FILTER_NO_DEV_KEY;
	if (!filter_reads(f, BC_OP))
		mask |= FILTER_NO_OP_KEY;
	if (!filter_reads(f, BC_PID))
		mask |= FILTER_NO_PID_KEY;
	if (!filter_reads(f, BC_SIZE))
		mask |= FILTER_NO_SIZE_KEY;
	if (!filter_reads(f, BC_COMM))
		mask |= FILTER_NO_COMM_KEY;
	if (!filter_reads_any_of(f, 0, cgroup))
		mask |= FILTER_NO_CGROUP_KEY;
	return mask;
}
