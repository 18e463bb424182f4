/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The nvme tables: per (side, session, op, size) aggregates, and single I/Os. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "../filter.h"
#include "../block/blkdev.h"
#include "nvme.h"
#include "nvme_schema.h"

static const char *nvme_side_domain_name(size_t i)
{
	static const char *const sides[] = {"initiator", "target"};

	return i < 2 ? sides[i] : NULL;
}

/* The sides; the kernel tests the text (the probe maps it). */
static const struct field_domain nvme_side_domain = {nvme_side_domain_name, NULL, NULL};

static const char *nvme_op_domain_name(size_t i)
{
	static const char *const ops[] = {"flush", "read", "write"};

	return i < 3 ? ops[i] : NULL;
}

/* Return whether s is a name nvme_op_name gives: read, write, flush, op<N>. */
static bool nvme_op_domain_valid(const char *s)
{
	char *end;

	if (!strcmp(s, "flush") || !strcmp(s, "read") || !strcmp(s, "write"))
		return true;
	if (strncmp(s, "op", 2) || s[2] < '0' || s[2] > '9')
		return false;
	strtoul(s + 2, &end, 10);
	return !*end;
}

static int64_t nvme_op_domain_value(const char *s)
{
	return blkdev_op_code(s);
}

/* NVMe commands; the kernel tests the block layer's REQ_OP_* code. */
static const struct field_domain nvme_op_domain = {
	nvme_op_domain_name, nvme_op_domain_valid, nvme_op_domain_value,
};

const char *const nvme_stage_names[NVME_NSTAGES] = {
	"queue", "submit", "r2t", "data_out", "remote", "rx", "complete",
	"t_recv", "t_exec", "t_send",
};

const char *nvme_op_name(unsigned op, char *buf, size_t len)
{
	switch (op) {
	case 0: return "flush";
	case 1: return "write";
	case 2: return "read";
	default:
		snprintf(buf, len, "op%u", op);
		return buf;
	}
}

#define STAGE_HELP_QUEUE "initiator: bio queued -> nvme_tcp_queue_rq (block layer submission)"
#define STAGE_HELP_SUBMIT "initiator: queue_rq -> command capsule (and in-capsule data) handed to TCP"
#define STAGE_HELP_R2T "initiator: capsule sent -> R2T received (writes with R2T)"
#define STAGE_HELP_DATA_OUT "initiator: R2T received -> H2C data handed to TCP (writes with R2T)"
#define STAGE_HELP_REMOTE "initiator: last send -> response on the socket (network and target)"
#define STAGE_HELP_RX "initiator: response on the socket -> nvme_complete_rq (receive, completion)"
#define STAGE_HELP_COMPLETE "initiator: nvme_complete_rq -> block_rq_complete (block completion)"
#define STAGE_HELP_T_RECV "target: capsule parsed -> backing I/O starts (R2T and data in for writes)"
#define STAGE_HELP_T_EXEC "target: command on the backing device"
#define STAGE_HELP_T_SEND "target: completion -> response PDU sent (C2H data for reads)"

/*
 * Each I/O's latency (lat) splits into stages that sum to it exactly: the
 * initiator's seven (queue..complete) for side 'initiator', the target's
 * three (t_recv..t_send) for side 'target'.  They are FF_PART of time
 * (FF_TOTAL): `group by stage` unpivots them.
 */
static const struct field nvme_fields[NC_NCOLS] = {
	[NC_SIDE]    = {"side", FT_STR, FF_KEY | FF_PUSH, "", "initiator (nvme_tcp) or target (nvmet_tcp)", FTERM_SIDE, &nvme_side_domain},
	[NC_SESSION] = {"session", FT_STR, FF_KEY, "", "controller and queue: nvme0q1 (initiator), cntlid1q1 (target)"},
	[NC_OP]      = {"op", FT_STR, FF_KEY | FF_PUSH, "", "NVMe command: read, write, flush, op<N>", FTERM_OP, &nvme_op_domain},
	[NC_SIZE]    = {"size", FT_SIZE, FF_KEY | FF_PUSH, "B", "bytes transferred by the command", FTERM_SIZE},
	[NC_QID]     = {"qid", FT_U64, FF_KEY | FF_PUSH | FF_HIDDEN, "", "NVMe queue id (1.. for I/O queues)", FTERM_QID},
	[NC_CNTLID]  = {"cntlid", FT_U64, FF_KEY | FF_HIDDEN, "", "controller id (the same on initiator and target)"},
	[NC_COUNT]   = {"count", FT_U64, FF_SUM, "", "I/Os completed whose stages fit their sequence"},
	[NC_MISFIT]  = {"misfit", FT_U64, FF_SUM, "", "I/Os whose hooks fired out of their op's sequence (not split)"},
	[NC_LAT]     = {"lat", FT_HIST, FF_PUSH, "ns", "end-to-end latency of each I/O", FTERM_LAT},
	[NC_TIME]    = {"time", FT_DUR, FF_SUM | FF_TOTAL, "ns", "total latency (sum of lat)"},
	[NC_STAGE0 + 0] = {"queue", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_QUEUE},
	[NC_STAGE0 + 1] = {"submit", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_SUBMIT},
	[NC_STAGE0 + 2] = {"r2t", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_R2T},
	[NC_STAGE0 + 3] = {"data_out", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_DATA_OUT},
	[NC_STAGE0 + 4] = {"remote", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_REMOTE},
	[NC_STAGE0 + 5] = {"rx", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_RX},
	[NC_STAGE0 + 6] = {"complete", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_COMPLETE},
	[NC_STAGE0 + 7] = {"t_recv", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_RECV},
	[NC_STAGE0 + 8] = {"t_exec", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_EXEC},
	[NC_STAGE0 + 9] = {"t_send", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_SEND},
	[NC_HIST0 + 0] = {"queue_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the queue stage"},
	[NC_HIST0 + 1] = {"submit_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the submit stage"},
	[NC_HIST0 + 2] = {"r2t_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the r2t stage"},
	[NC_HIST0 + 3] = {"data_out_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the data_out stage"},
	[NC_HIST0 + 4] = {"remote_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the remote stage"},
	[NC_HIST0 + 5] = {"rx_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the rx stage"},
	[NC_HIST0 + 6] = {"complete_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the complete stage"},
	[NC_HIST0 + 7] = {"t_recv_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the t_recv stage"},
	[NC_HIST0 + 8] = {"t_exec_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the t_exec stage"},
	[NC_HIST0 + 9] = {"t_send_lat", FT_HIST, FF_HIDDEN, "ns", "distribution of the t_send stage"},
};

const struct schema nvme_schema = {
	.table = "nvme",
	.help = "NVMe/TCP I/O latency by stage, per side, session, op and size",
	.nfields = NC_NCOLS,
	.fields = nvme_fields,
};

static const struct field nvme_events_fields[NE_NCOLS] = {
	[NE_TS]      = {"ts", FT_U64, FF_KEY, "ns", "end of the I/O, CLOCK_REALTIME ns"},
	[NE_ID]      = {"id", FT_U64, FF_KEY, "", "I/O number on its side (a key: one row per I/O)"},
	[NE_SIDE]    = {"side", FT_STR, FF_KEY | FF_PUSH, "", "initiator or target", FTERM_SIDE, &nvme_side_domain},
	[NE_SESSION] = {"session", FT_STR, FF_KEY, "", "controller and queue"},
	[NE_OP]      = {"op", FT_STR, FF_KEY | FF_PUSH, "", "NVMe command", FTERM_OP, &nvme_op_domain},
	[NE_SIZE]    = {"size", FT_SIZE, FF_KEY | FF_PUSH, "B", "bytes transferred", FTERM_SIZE},
	[NE_QID]     = {"qid", FT_U64, FF_KEY | FF_PUSH, "", "NVMe queue id", FTERM_QID},
	[NE_CNTLID]  = {"cntlid", FT_U64, FF_KEY, "", "controller id"},
	[NE_CID]     = {"cid", FT_U64, FF_KEY, "", "NVMe command id"},
	[NE_SEQ]     = {"seq", FT_STR, FF_KEY, "", "stage sequence: read, write_inline, write_r2t, target"},
	[NE_LAT]     = {"lat", FT_DUR, FF_PUSH | FF_TOTAL, "ns", "end-to-end latency", FTERM_LAT},
	[NE_STAGE0 + 0] = {"queue", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_QUEUE},
	[NE_STAGE0 + 1] = {"submit", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_SUBMIT},
	[NE_STAGE0 + 2] = {"r2t", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_R2T},
	[NE_STAGE0 + 3] = {"data_out", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_DATA_OUT},
	[NE_STAGE0 + 4] = {"remote", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_REMOTE},
	[NE_STAGE0 + 5] = {"rx", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_RX},
	[NE_STAGE0 + 6] = {"complete", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_COMPLETE},
	[NE_STAGE0 + 7] = {"t_recv", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_RECV},
	[NE_STAGE0 + 8] = {"t_exec", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_EXEC},
	[NE_STAGE0 + 9] = {"t_send", FT_DUR, FF_SUM | FF_PART, "ns", STAGE_HELP_T_SEND},
};

const struct schema nvme_events_schema = {
	.table = "nvme_events",
	.help = "single NVMe/TCP I/Os with every stage (sampled, above THRESHOLD, or up to BUFFER)",
	.nfields = NE_NCOLS,
	.fields = nvme_events_fields,
};

static const struct field nvme_spans_fields[NP_NCOLS] = {
	[NP_ID]    = {"id", FT_U64, FF_KEY, "", "the I/O (nvme_events.id)"},
	[NP_ROW]   = {"row", FT_STR, FF_KEY, "", "side and session the stage ran on"},
	[NP_START] = {"start", FT_U64, 0, "ns", "start of the stage, CLOCK_REALTIME ns"},
	[NP_DUR]   = {"dur", FT_DUR, 0, "ns", "length of the stage"},
	[NP_KIND]  = {"kind", FT_STR, 0, "", "the stage"},
	[NP_LABEL] = {"label", FT_STR, 0, "", "the stage drawn on the span"},
};

const struct schema nvme_spans_schema = {
	.table = "nvme_spans",
	.help = "the stages of each I/O in nvme_events as spans on one time axis",
	.nfields = NP_NCOLS,
	.fields = nvme_spans_fields,
};

uint32_t nvme_key_mask(const struct filter_prog *f)
{
	/* session names the initiator's controller instance and queue, or the
	 * target's controller id and queue: it reads side, instance, cntlid
	 * and qid. */
	bool session = filter_reads(f, NC_SESSION);
	uint32_t mask = 0;

	/* A query of nvme_events or nvme_spans (and so nvme_joined, which
	 * joins events) reads no stats: they are kept whole for whatever else
	 * reads the nvme table (a recording). */
	if (!f->fields_known || f->fields_table != 0)
		return 0;
	if (!session && !filter_reads(f, NC_SIDE))
		mask |= NVME_NO_SIDE_KEY;
	if (!session)
		mask |= NVME_NO_INSTANCE_KEY;
	if (!session && !filter_reads(f, NC_CNTLID))
		mask |= NVME_NO_CNTLID_KEY;
	if (!session && !filter_reads(f, NC_QID))
		mask |= NVME_NO_QID_KEY;
	if (!filter_reads(f, NC_OP))
		mask |= NVME_NO_OP_KEY;
	if (!filter_reads(f, NC_SIZE))
		mask |= NVME_NO_SIZE_KEY;
	return mask;
}
