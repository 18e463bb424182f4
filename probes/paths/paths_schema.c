/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The paths tables: per path shape aggregates, single requests, their timelines. */
#include <linux/types.h>
#include "../filter.h"
#include "../../core/cgroup.h"
#include "paths_schema.h"

/*
 * A request's latency (lat) splits into time waiting on its downstream
 * calls (down: the union of their intervals) and the rest (self: time in
 * this tier), so down + self = time.
 */
static const struct field paths_fields[PC_NCOLS] = {
	[PC_PATH]  = {"path", FT_STR, FF_KEY, "", "path shape: entry port → each downstream address ×calls"},
	[PC_LPORT] = {"lport", FT_U64, FF_KEY, "", "local port the requests arrived on (0: made outside any request)"},
	[PC_PID]   = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process id (tgid) that received the requests", FTERM_PID},
	[PC_COMM]  = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "thread name", FTERM_COMM},
	[PC_COUNT] = {"count", FT_U64, FF_SUM, "", "requests completed"},
	[PC_LAT]   = {"lat", FT_HIST, 0, "ns", "request latency: first byte received to last byte of the reply sent"},
	[PC_TIME]  = {"time", FT_DUR, FF_SUM | FF_TOTAL, "ns", "total request time (sum of lat)"},
	[PC_CALLS] = {"calls", FT_U64, FF_SUM, "", "downstream calls made"},
	[PC_DOWN]  = {"down", FT_DUR, FF_SUM | FF_PART, "ns", "time waiting on downstream calls"},
	[PC_SELF]  = {"self", FT_DUR, FF_SUM | FF_PART, "ns", "time in this tier (lat minus down)"},
	[PC_BYTES_IN]  = {"bytes_in", FT_SIZE, FF_SUM | FF_HIDDEN, "B", "request bytes received"},
	[PC_BYTES_OUT] = {"bytes_out", FT_SIZE, FF_SUM | FF_HIDDEN, "B", "reply bytes sent"},
	[PC_CGROUP] = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the thread that received the requests", FTERM_CGROUP, &cgroup_domain},
	[PC_UNIT]   = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[PC_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema paths_schema = {
	.table = "paths",
	.help = "requests by path: entry port, downstream calls, tier and downstream time",
	.nfields = PC_NCOLS,
	.fields = paths_fields,
};

static const struct field path_events_fields[PE_NCOLS] = {
	[PE_TS]    = {"ts", FT_U64, FF_KEY, "ns", "end of the request, CLOCK_REALTIME ns"},
	[PE_ID]    = {"id", FT_U64, FF_KEY, "", "the request (path_spans.id)"},
	[PE_PATH]  = {"path", FT_STR, FF_KEY, "", "path shape"},
	[PE_LPORT] = {"lport", FT_U64, FF_KEY, "", "local port it arrived on (0: made outside any request)"},
	[PE_PID]   = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process id (tgid)", FTERM_PID},
	[PE_TID]   = {"tid", FT_U64, FF_KEY, "", "thread that received it (not pushed: another thread may answer)"},
	[PE_COMM]  = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "thread name", FTERM_COMM},
	[PE_LADDR] = {"laddr", FT_IP, FF_HIDDEN, "", "local address of the entry connection"},
	[PE_RADDR] = {"raddr", FT_IP, FF_HIDDEN, "", "client address of the entry connection"},
	[PE_RPORT] = {"rport", FT_U64, FF_HIDDEN, "", "client port of the entry connection"},
	[PE_SEQ]   = {"seq", FT_U64, FF_HIDDEN, "", "TCP sequence number of the request's first byte"},
	[PE_NTH]   = {"nth", FT_U64, FF_HIDDEN, "", "its index among the requests seen on the connection"},
	[PE_START] = {"start", FT_U64, FF_HIDDEN, "ns", "first byte received, CLOCK_REALTIME ns"},
	[PE_LAT]   = {"lat", FT_DUR, FF_TOTAL, "ns", "latency of this request"},
	[PE_CALLS] = {"calls", FT_U64, FF_SUM, "", "downstream calls it made"},
	[PE_DOWN]  = {"down", FT_DUR, FF_SUM | FF_PART, "ns", "time waiting on downstream calls"},
	[PE_SELF]  = {"self", FT_DUR, FF_SUM | FF_PART, "ns", "time in this tier"},
	[PE_BYTES_IN]  = {"bytes_in", FT_SIZE, FF_SUM, "B", "request bytes"},
	[PE_BYTES_OUT] = {"bytes_out", FT_SIZE, FF_SUM, "B", "reply bytes"},
	[PE_CGROUP] = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the thread", FTERM_CGROUP, &cgroup_domain},
	[PE_UNIT]   = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[PE_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema path_events_schema = {
	.table = "path_events",
	.help = "single requests above THRESHOLD or sampled with SAMPLE",
	.nfields = PE_NCOLS,
	.fields = path_events_fields,
};

static const struct field path_spans_fields[PS_NCOLS] = {
	[PS_ID]    = {"id", FT_U64, FF_KEY, "", "the request (path_events.id)"},
	[PS_ROW]   = {"row", FT_STR, FF_KEY, "", "timeline row: the request, or call N and its address"},
	[PS_START] = {"start", FT_U64, 0, "ns", "span start, CLOCK_REALTIME ns"},
	[PS_DUR]   = {"dur", FT_DUR, 0, "ns", "span length"},
	[PS_KIND]  = {"kind", FT_STR, FF_KEY, "", "request, or call (call-open: no reply by the end)"},
	[PS_LABEL] = {"label", FT_STR, FF_KEY, "", "the connection: client → entry port, or downstream address"},
	[PS_LADDR] = {"laddr", FT_IP, FF_HIDDEN, "", "local address of the span's connection"},
	[PS_LPORT] = {"lport", FT_U64, FF_HIDDEN, "", "local port of the span's connection"},
	[PS_RADDR] = {"raddr", FT_IP, FF_HIDDEN, "", "remote address of the span's connection"},
	[PS_RPORT] = {"rport", FT_U64, FF_HIDDEN, "", "remote port of the span's connection"},
	[PS_SEQ]   = {"seq", FT_U64, FF_HIDDEN, "", "TCP sequence number of the first byte sent (call) or received (request)"},
	[PS_N]     = {"n", FT_U64, FF_HIDDEN, "", "0 for the request, N for its N-th call"},
};

const struct schema path_spans_schema = {
	.table = "path_spans",
	.help = "timelines of the requests in path_events: the request, then each call",
	.nfields = PS_NCOLS,
	.fields = path_spans_fields,
};
