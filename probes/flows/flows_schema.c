/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The flows tables: per TCP flow host latency, and single requests. */
#include <linux/types.h>
#include "../filter.h"
#include "flows.h"
#include "flows_schema.h"

static const char *flow_event_kind_name(size_t i)
{
	static const char *const kinds[] = {"slow", "sampled", "evicted"};

	return i < 3 ? kinds[i] : NULL;
}

/* Why a flow event was sent; the kernel does not test it. */
static const struct field_domain flow_event_kind_domain = {flow_event_kind_name, NULL, NULL};

static const struct field flows_fields[FC_NCOLS] = {
	[FC_FLOW]    = {"flow", FT_STR, FF_KEY, "", "local:port<remote:port, as the serving socket sees it"},
	[FC_LADDR]   = {"laddr", FT_IP, FF_KEY | FF_PUSH, "", "local address (the server's)", FTERM_LADDR},
	[FC_LPORT]   = {"lport", FT_U64, FF_KEY | FF_PUSH, "", "local port (the server's)", FTERM_LPORT},
	[FC_RADDR]   = {"raddr", FT_IP, FF_KEY | FF_PUSH, "", "remote address (the client's)", FTERM_RADDR},
	[FC_RPORT]   = {"rport", FT_U64, FF_KEY | FF_PUSH, "", "remote port", FTERM_RPORT},
	[FC_RNET]    = {"rnet", FT_IP, FF_KEY | FF_HIDDEN, "", "remote network: /24 of IPv4, /64 of IPv6"},
	[FC_PID]     = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process reading the requests (tgid), 0 until it reads", FTERM_PID},
	[FC_COMM]    = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "name of its thread that read "
			 "last", FTERM_COMM},
	[FC_NETNS]   = {"netns", FT_U64, FF_KEY | FF_HIDDEN, "", "network namespace inode"},
	[FC_COUNT]   = {"count", FT_U64, FF_SUM, "", "requests answered"},
	[FC_LAT]     = {"lat", FT_HIST, FF_PUSH, "ns", "host latency: request in to response out", FTERM_LAT},
	[FC_BYTES]   = {"bytes", FT_SIZE, FF_SUM, "B", "payload bytes in and out (of flows the kernel filter keeps)"},
	[FC_BYTES_IN] = {"bytes_in", FT_SIZE, FF_SUM, "B", "payload bytes received"},
	[FC_BYTES_OUT] = {"bytes_out", FT_SIZE, FF_SUM, "B", "payload bytes sent"},
	[FC_EVICTED] = {"evicted", FT_U64, FF_SUM, "", "requests never answered within the timeout, or at close"},
	[FC_UNSOLICITED] = {"unsolicited", FT_U64, FF_SUM | FF_HIDDEN, "", "responses with no request pending"},
	[FC_CGROUP]  = {"cgroup", FT_STR, FF_KEY | FF_HIDDEN, "", "cgroup v2 path of the thread that read last"},
	[FC_UNIT]    = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[FC_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema flows_schema = {
	.table = "flows",
	.help = "per TCP flow host latency, request in to response out",
	.nfields = FC_NCOLS,
	.fields = flows_fields,
};

static const struct field flow_events_fields[FE_COL_NCOLS] = {
	[FE_COL_TS]    = {"ts", FT_U64, FF_KEY, "ns", "when the response left (or the request was evicted), CLOCK_REALTIME ns"},
	[FE_COL_ID]    = {"id", FT_U64, FF_KEY | FF_HIDDEN, "", "event number"},
	[FE_COL_FLOW]  = {"flow", FT_STR, FF_KEY, "", "local:port<remote:port"},
	[FE_COL_LADDR] = {"laddr", FT_IP, FF_KEY | FF_PUSH, "", "local address", FTERM_LADDR},
	[FE_COL_LPORT] = {"lport", FT_U64, FF_KEY | FF_PUSH, "", "local port", FTERM_LPORT},
	[FE_COL_RADDR] = {"raddr", FT_IP, FF_KEY | FF_PUSH, "", "remote address", FTERM_RADDR},
	[FE_COL_RPORT] = {"rport", FT_U64, FF_KEY | FF_PUSH, "", "remote port", FTERM_RPORT},
	[FE_COL_RNET]  = {"rnet", FT_IP, FF_KEY | FF_HIDDEN, "", "remote network: /24 of IPv4, /64 of IPv6"},
	[FE_COL_PID]   = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process reading the requests", FTERM_PID},
	[FE_COL_COMM]  = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "its thread name", FTERM_COMM},
	[FE_COL_NETNS] = {"netns", FT_U64, FF_KEY | FF_HIDDEN, "", "network namespace inode"},
	[FE_COL_KIND]  = {"kind", FT_STR, FF_KEY, "", "slow (THRESHOLD), sampled (SAMPLE) or evicted", 0, &flow_event_kind_domain},
	[FE_COL_LAT]   = {"lat", FT_DUR, FF_PUSH, "ns", "host latency; for evicted, the oldest request's age", FTERM_LAT},
	[FE_COL_COUNT] = {"count", FT_U64, FF_SUM, "", "requests (evicted ones can come several at once)"},
	[FE_COL_CGROUP] = {"cgroup", FT_STR, FF_KEY | FF_HIDDEN, "", "cgroup v2 path of the thread that read last"},
	[FE_COL_UNIT]  = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[FE_COL_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema flow_events_schema = {
	.table = "flow_events",
	.help = "single requests above THRESHOLD, sampled with SAMPLE, or never answered",
	.nfields = FE_COL_NCOLS,
	.fields = flow_events_fields,
};

uint32_t flows_key_mask(const struct filter_prog *f)
{
	uint32_t mask = FLOW_AGG;

	/* A query of flow_events reads no totals: they are kept whole for
	 * whatever else reads the flows table (a recording); one that reads a
	 * connection (its flow, or its remote port) reads each connection's. */
	if (!f->fields_known || f->fields_table != 0 || filter_reads(f, FC_FLOW) ||
	    filter_reads(f, FC_RPORT))
		return 0;
	if (!filter_reads(f, FC_LADDR))
		mask |= FLOW_NO_LADDR;
	if (!filter_reads(f, FC_LPORT))
		mask |= FLOW_NO_LPORT;
	if (!filter_reads(f, FC_RADDR))
		mask |= filter_reads(f, FC_RNET) ? FLOW_RNET_ONLY : FLOW_NO_RADDR;
	if (!filter_reads(f, FC_NETNS))
		mask |= FLOW_NO_NETNS;
	if (!filter_reads(f, FC_PID))
		mask |= FLOW_NO_PID;
	if (!filter_reads(f, FC_COMM))
		mask |= FLOW_NO_COMM;
	if (!filter_reads_any_of(f, 0, FILTER_FIELD(FC_CGROUP) | FILTER_FIELD(FC_UNIT) |
					   FILTER_FIELD(FC_CONTAINER)))
		mask |= FLOW_NO_CGROUP;
	return mask;
}
