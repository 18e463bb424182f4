/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The nvme joiner: initiator and target records matched by queue, command id and order. */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "core/merge.h"
#include "core/source.h"
#include "probes/nvme/nvme.h"
#include "probes/nvme/nvme_schema.h"
#include "tap.h"

extern const struct joiner nvme_joiner;

struct rec {
	const char *side;
	unsigned qid, cid;
	const char *op;
	unsigned size;
	uint64_t st[NVME_NSTAGES];	/* queue submit r2t data_out remote rx complete t_recv t_exec t_send */
};

/* Append one nvme_events row for r. */
static void add_rec(struct frame *f, const struct rec *r, uint64_t id)
{
	union cell *c = frame_add_row(f);
	uint64_t lat = 0;
	int i;

	c[NE_TS].u = 1000 + id;
	c[NE_ID].u = id;
	cell_set_str(&c[NE_SIDE], r->side);
	cell_set_str(&c[NE_SESSION], !strcmp(r->side, "initiator") ? "nvme0q1" : "cntlid1q1");
	cell_set_str(&c[NE_OP], r->op);
	c[NE_SIZE].u = r->size;
	c[NE_QID].u = r->qid;
	c[NE_CNTLID].u = 1;
	c[NE_CID].u = r->cid;
	cell_set_str(&c[NE_SEQ], !strcmp(r->side, "target") ? "target" : "read");
	for (i = 0; i < NVME_NSTAGES; i++) {
		c[NE_STAGE0 + i].u = r->st[i];
		lat += r->st[i];
	}
	c[NE_LAT].u = lat;
}

/* Run the joiner over recordings (arrays of records, one tick each); return the joined frame. */
static struct frame *join(const struct rec *const *recs, const size_t *n, size_t nsrc)
{
	const struct schema *schemas[] = { &nvme_events_schema };
	struct source_info info = { .nschemas = 1, .schemas = schemas };
	const struct source_info *infos[4] = { &info, &info, &info, &info };
	struct tick out;
	struct frame *f;
	void *st = nvme_joiner.begin(infos, nsrc);
	size_t s, i;

	if (!st)
		return NULL;
	for (s = 0; s < nsrc; s++) {
		struct tick t;

		tick_init(&t, 2000);
		f = frame_new(&nvme_events_schema, 2000, 1000);
		for (i = 0; i < n[s]; i++)
			add_rec(f, &recs[s][i], s * 100 + i + 1);
		tick_add(&t, f);
		nvme_joiner.add(st, s, &t);
		tick_done(&t);
	}
	tick_init(&out, 3000);
	nvme_joiner.finish(st, &out);
	nvme_joiner.free(st);
	f = out.nframes == 1 ? out.frames[0] : NULL;
	out.nframes = 0;
	tick_done(&out);
	return f;
}

/* Return the index of field name of f's schema. */
static int col(const struct frame *f, const char *name)
{
	return schema_field(f->schema, name);
}

/* Sum column name over rows of f. */
static uint64_t sum(const struct frame *f, const char *name)
{
	uint64_t s = 0;
	size_t r;

	for (r = 0; r < f->nrows; r++)
		s += frame_row(f, r)[col(f, name)].u;
	return s;
}

int main(void)
{
	/* Initiator: read 4K and write 128K on cid 5, read on cid 6.  Target: both uses of
	 * cid 5, not cid 6, and a cid 9 the initiator never recorded. */
	static const struct rec init[] = {
		{"initiator", 1, 5, "read", 4096, {10, 20, 0, 0, 500, 30, 5}},
		{"initiator", 1, 6, "read", 4096, {10, 20, 0, 0, 400, 30, 5}},
		{"initiator", 1, 5, "write", 131072, {10, 20, 300, 100, 600, 30, 5}},
	};
	static const struct rec tgt[] = {
		{"target", 1, 5, "read", 4096, {0, 0, 0, 0, 0, 0, 0, 40, 200, 60}},
		{"target", 1, 9, "read", 4096, {0, 0, 0, 0, 0, 0, 0, 40, 200, 60}},
		{"target", 1, 5, "write", 131072, {0, 0, 0, 0, 0, 0, 0, 500, 100, 50}},
	};
	const struct rec *two[] = { init, tgt };
	size_t n2[] = { 3, 3 };
	struct frame *f = join(two, n2, 2);
	size_t r;
	int bad = 0;

	ok(f && f->nrows == 4, "two recordings: 2 joined rows + 1 unmatched on each side (%zu rows)",
	   f ? f->nrows : 0);
	if (!f)
		tap_done();
	ok(sum(f, "count") == 2 && sum(f, "unmatched") == 2, "count 2, unmatched 2");
	for (r = 0; r < f->nrows; r++) {
		const union cell *c = frame_row(f, r);
		uint64_t parts = 0;
		const char *p[] = {"queue", "submit", "net", "t_recv", "t_exec", "t_send", "rx", "complete"};
		size_t i;

		for (i = 0; i < 8; i++)
			parts += c[col(f, p[i])].u;
		if (parts != c[col(f, "lat")].u)
			bad++;
		if (c[col(f, "count")].u && !strcmp(c[col(f, "op")].s, "read") &&
		    c[col(f, "net")].u != 500 - 300)
			bad++;
		/* write: r2t + data_out + remote = 1000, target 650 */
		if (c[col(f, "count")].u && !strcmp(c[col(f, "op")].s, "write") &&
		    (c[col(f, "net")].u != 1000 - 650 || c[col(f, "t_recv")].u != 500))
			bad++;
	}
	ok(!bad, "net = initiator's send-to-response minus the target's latency; parts sum to lat");
	frame_free(f);

	/* One recording holding both sides gives the same join. */
	{
		struct rec both[6];
		const struct rec *one[] = { both };
		size_t n1[] = { 6 };

		memcpy(both, init, sizeof(init));
		memcpy(both + 3, tgt, sizeof(tgt));
		f = join(one, n1, 1);
		ok(f && sum(f, "count") == 2 && sum(f, "unmatched") == 2,
		   "one recording with both sides joins the same");
		frame_free(f);
	}

	/* A lost target record: the initiator's extra use is the unmatched one, the
	 * later uses still pair in order. */
	{
		static const struct rec i2[] = {
			{"initiator", 2, 7, "read", 4096, {1, 1, 0, 0, 500, 1, 1}},
			{"initiator", 2, 7, "read", 4096, {1, 1, 0, 0, 500, 1, 1}},
			{"initiator", 2, 7, "write", 4096, {1, 1, 0, 0, 500, 1, 1}},
		};
		static const struct rec t2[] = {
			{"target", 2, 7, "read", 4096, {0, 0, 0, 0, 0, 0, 0, 1, 100, 1}},
			{"target", 2, 7, "write", 4096, {0, 0, 0, 0, 0, 0, 0, 1, 100, 1}},
		};
		const struct rec *s2[] = { i2, t2 };
		size_t n[] = { 3, 2 };

		f = join(s2, n, 2);
		ok(f && sum(f, "count") == 2 && sum(f, "unmatched") == 1 &&
		   sum(f, "t_exec") == 200, "a record lost on one side leaves one unmatched, the rest pair in order");
		frame_free(f);
	}

	/* A target that took longer than the initiator waited is not this I/O. */
	{
		static const struct rec i3[] = { {"initiator", 1, 1, "read", 4096, {1, 1, 0, 0, 50, 1, 1}} };
		static const struct rec t3[] = { {"target", 1, 1, "read", 4096, {0, 0, 0, 0, 0, 0, 0, 10, 100, 1}} };
		const struct rec *s3[] = { i3, t3 };
		size_t n[] = { 1, 1 };

		f = join(s3, n, 2);
		ok(f && sum(f, "count") == 0 && sum(f, "unmatched") == 2,
		   "a pair whose target time exceeds the initiator's wait stays unmatched");
		frame_free(f);
	}

	/* SAMPLE 1/N keeps the same I/Os on both sides (by queue and command id), so
	 * the join pairs exactly what the true pairing does: 4 queues whose commands
	 * cycle through 32 slots with the command id's generation bits above them,
	 * t_exec different for every I/O.  The initiator samples 1/4, the target 1/2:
	 * every 1/4 slot is kept whole on both, the target's other ones unmatched. */
	{
		enum { M = 4096 };
		struct rec *ri = calloc(M, sizeof(*ri)), *rt = calloc(M, sizeof(*rt));
		const struct rec *s4[] = { ri, rt };
		size_t n[] = { 0, 0 }, both = 0, tonly = 0, i;
		uint64_t true_exec = 0;

		for (i = 0; i < M; i++) {
			unsigned qid = 1 + i % 4, slot = (i / 4) % 32, gen = (i / 128) % 16;
			unsigned cid = gen << 12 | slot;
			uint64_t exec = 100 + (i * 37) % 1000;
			struct rec a = {"initiator", qid, cid, "read", 4096, {1, 1, 0, 0, exec + 50, 1, 1}};
			struct rec b = {"target", qid, cid, "read", 4096, {0, 0, 0, 0, 0, 0, 0, 10, exec, 10}};

			if (nvme_sample_keep(4, qid, cid)) {
				ri[n[0]++] = a;
				true_exec += exec;
				both++;
			}
			if (nvme_sample_keep(2, qid, cid)) {
				rt[n[1]++] = b;
				tonly += !nvme_sample_keep(4, qid, cid);
			}
		}
		ok(both > M / 4 - M / 16 && both < M / 4 + M / 16,
		   "SAMPLE 1/4 by command slot keeps about a quarter (%zu of %d)", both, M);
		f = join(s4, n, 2);
		ok(f && sum(f, "count") == both && sum(f, "unmatched") == tonly &&
		   sum(f, "t_exec") == true_exec,
		   "sampled sides: %llu pairs, t_exec %llu as the true pairing (%zu, %llu)",
		   f ? (unsigned long long)sum(f, "count") : 0,
		   f ? (unsigned long long)sum(f, "t_exec") : 0, both, (unsigned long long)true_exec);
		frame_free(f);
		free(ri);
		free(rt);
	}

	/* A recording whose nvme I/Os were chosen by latency is refused, naming it. */
	{
		const struct schema *schemas[] = { &nvme_events_schema };
		struct source_info plain = { .nschemas = 1, .schemas = schemas,
					     .status = "replay of a.snap; recorded: nvme: initiator on",
					     .path = "a.snap" };
		struct source_info thr = plain;
		const struct source_info *infos[] = { &plain, &thr };
		char *why;

		thr.status = "replay of b.snap; recorded: nvme: THRESHOLD 1000000ns on single events";
		thr.path = "b.snap";
		ok(nvme_joiner.refuse && !nvme_joiner.refuse(infos, 1),
		   "refuse: NULL for recordings without a THRESHOLD");
		why = nvme_joiner.refuse ? nvme_joiner.refuse(infos, 2) : NULL;
		ok(why && strstr(why, "b.snap") && strstr(why, "THRESHOLD") && !strstr(why, "a.snap"),
		   "refuse: a thresholded recording, named (%s)", why ? why : "none");
		free(why);
		thr.status = "replay of b.snap; recorded: nvme: a WHERE on latency chooses its events";
		why = nvme_joiner.refuse ? nvme_joiner.refuse(infos, 2) : NULL;
		ok(why && strstr(why, "b.snap") && strstr(why, "WHERE on latency"),
		   "refuse: a recording whose I/Os a WHERE on lat chose (%s)", why ? why : "none");
		free(why);
	}

	/* Nothing to join without an nvme_events table. */
	{
		struct source_info info = { 0 };
		const struct source_info *infos[] = { &info };

		ok(nvme_joiner.begin(infos, 1) == NULL, "begin: NULL for recordings without nvme_events");
	}

	/* The schema's stage columns are in the order the probe fills them. */
	{
		int i, bad2 = 0;

		for (i = 0; i < NVME_NSTAGES; i++)
			if (strcmp(nvme_schema.fields[NC_STAGE0 + i].name, nvme_stage_names[i]) ||
			    strcmp(nvme_events_schema.fields[NE_STAGE0 + i].name, nvme_stage_names[i]) ||
			    !(nvme_schema.fields[NC_STAGE0 + i].flags & FF_PART) ||
			    strncmp(nvme_schema.fields[NC_HIST0 + i].name, nvme_stage_names[i],
				    strlen(nvme_stage_names[i])))
				bad2++;
		ok(!bad2, "nvme and nvme_events: stage columns and histograms in enum order");
	}
	tap_done();
}
