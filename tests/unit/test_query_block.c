/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block tables in the query language: the stage pseudo-key (and its
 * other name, subsystem), pNN/avg of a stage reading its per-request
 * histogram, the stage flag on result columns, and dev/op/size pushdown.
 */
#include <stdlib.h>
#include <string.h>
#include "core/hist.h"
#include "probes/block/block_schema.h"
#include "queries/query.h"
#include "tap.h"

/* Add one block row of n requests, each with the given stage times. */
static void add(struct frame *f, const char *dev, const char *op, uint64_t size, uint64_t n,
		uint64_t alloc, uint64_t plug, uint64_t sched, uint64_t device)
{
	union cell *r = frame_add_row(f);
	uint64_t st[4] = {alloc, plug, sched, device}, lat = alloc + plug + sched + device, i;
	struct hist *h = hist_new();
	int s;

	cell_set_str(&r[BC_DEV], dev);
	cell_set_str(&r[BC_OP], op);
	r[BC_SIZE].u = size;
	r[BC_PID].u = 7;
	cell_set_str(&r[BC_COMM], "fio");
	r[BC_COUNT].u = n;
	r[BC_BYTES].u = n * size;
	for (i = 0; i < n; i++)
		hist_add(h, lat);
	cell_set_hist(&r[BC_LAT], h);
	r[BC_TIME].u = n * lat;
	for (s = 0; s < 4; s++) {
		r[BC_ALLOC + s].u = n * st[s];
		hist_init(h);
		for (i = 0; i < n; i++)
			hist_add(h, st[s]);
		cell_set_hist(&r[BC_ALLOC_LAT + s], h);
	}
	r[BC_INFLIGHT].u = 4;
	hist_free(h);
}

/* Run text over w; return the CSV output or the error. */
static char *run(const struct window *w, const char *text, struct result **keep)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct result *r = NULL;
	char *buf = NULL;
	size_t n = 0;
	FILE *m;

	if (!q || query_bind(q, &block_schema, &err) || !(r = query_exec(q, w, &err))) {
		query_free(q);
		return strdup(err.msg);
	}
	m = open_memstream(&buf, &n);
	result_print(m, r, RF_CSV);
	fclose(m);
	if (keep)
		*keep = r;
	else
		result_free(r);
	query_free(q);
	return buf;
}

/* Check that text over w prints want. */
static void check(const struct window *w, const char *text, const char *want)
{
	char *got = run(w, text, NULL);

	ok(!strcmp(got, want), "%s", text);
	if (strcmp(got, want))
		printf("#   want:\n%s#   got:\n%s\n", want, got);
	free(got);
}

/* Parse, bind to block and push down; 0 on success. */
static int plan(const char *text, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);

	if (!q || query_bind(q, &block_schema, &err)) {
		printf("# %s: %s\n", text, err.msg);
		query_free(q);
		return -1;
	}
	query_pushdown(q, f);
	query_free(q);
	return 0;
}

int main(void)
{
	struct frame *f = frame_new(&block_schema, 2000000000ULL, 1000000000ULL);
	struct filter_prog fp;
	struct result *r = NULL;
	struct window w;
	struct tick t;
	char *out;

	add(f, "loop0", "read", 4096, 10, 1000, 500, 0, 20000);
	add(f, "loop0", "write", 131072, 2, 2000, 1000, 3000, 200000);
	tick_init(&t, 2000000000ULL);
	tick_add(&t, f);
	window_init(&w, 10000000000ULL);
	window_push(&w, &t);

	check(&w, "from block group by stage show sum(time), count order by stage",
	      "stage,sum(time),count\n"
	      "alloc,14000,1\n"
	      "device,600000,11\n"
	      "plug,7000,0\n"
	      "sched,6000,0\n");
	check(&w, "from block group by subsystem show sum(time) order by subsystem limit 1",
	      "subsystem,sum(time)\nalloc,14000\n");
	check(&w, "from block where stage == 'sched' group by op, stage show sum(time)",
	      "op,stage,sum(time)\nwrite,sched,6000\n");
	check(&w, "from block group by op show p99(device), avg(device), sum(device), max(alloc) "
	      "order by op",
	      "op,p99(device),avg(device),sum(device),max(alloc)\n"
	      "read,20000,20000,200000,1000\n"
	      "write,200000,200000,400000,2000\n");
	check(&w, "from block group by op show dist(sched) order by op limit 1",
	      "op,dist(sched)\nread,\"{\"\"count\"\":10,\"\"buckets\"\":[[0,10]]}\"\n");
	check(&w, "from block where stage == 'devise'",
	      "unknown stage 'devise' (did you mean 'device'?)");
	check(&w, "from block group by dev show max(inflight), rate(device)",
	      "dev,max(inflight),rate(device)\nloop0,4,600000\n");

	out = run(&w, "from block group by op show count, avg(device), sum(time)", &r);
	ok(r && r->ncols == 4 && !r->cols[1].part && r->cols[2].part && !r->cols[3].part,
	   "result columns of a stage are marked (%s)", out);
	free(out);
	result_free(r);

	ok(!plan("from block where op == 'write' and size == 128K and pid == 7", &fp) &&
	   fp.n == 5 && fp.e[0].term == FTERM_OP && fp.e[0].value == 1 &&
	   fp.e[1].term == FTERM_SIZE && fp.e[1].value == 131072 &&
	   fp.e[3].term == FTERM_PID && fp.e[3].value == 7,
	   "op by name, size and pid push down");
	ok(!plan("from block where dev == '7:3'", &fp) && fp.n == 1 &&
	   fp.e[0].term == FTERM_DEV && fp.e[0].value == ((7u << 20) | 3),
	   "dev as MAJ:MIN pushes down as the kernel's dev_t");
	ok(plan("from block where dev == '7:3' or op == 'bogus'", &fp),
	   "an unknown op is refused");
	ok(!plan("from block where dev == 'no-such-disk'", &fp) && fp.n == 0,
	   "a device this machine lacks is taken (a recording's may have it) and left to "
	   "user space");
	ok(!plan("from block where op in (read, flush) and comm == 'fio'", &fp) && fp.n == 5 &&
	   fp.e[0].value == 0 && fp.e[1].value == 2 && fp.e[3].term == FTERM_COMM,
	   "op in (read, flush) pushes down as REQ_OP codes");
	window_done(&w);
	tap_done();
}
