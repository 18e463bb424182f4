/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Keys follow the query in the block, nvme and flows views: the stats key
 * fields a query reads nothing of are zeroed (block_key_mask, nvme_key_mask,
 * flows_key_mask, and the key builders the BPF programs use), so I/Os or
 * connections differing only in them share one key; a query over the
 * coarser rows answers as over the full ones.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "probes/block/block.h"
#include "probes/block/block_schema.h"
#include "probes/filter.h"
#include "probes/flows/flows.h"
#include "probes/flows/flows_schema.h"
#include "probes/nvme/nvme.h"
#include "probes/nvme/nvme_schema.h"
#include "probes/syscalls/syscalls_schema.h"
#include "queries/query.h"
#include "tap.h"

#define BLK_ALL (FILTER_NO_CGROUP_KEY | FILTER_NO_DEV_KEY | FILTER_NO_OP_KEY | \
		 FILTER_NO_PID_KEY | FILTER_NO_SIZE_KEY | FILTER_NO_COMM_KEY)
#define NVME_ALL (NVME_NO_SIDE_KEY | NVME_NO_INSTANCE_KEY | NVME_NO_CNTLID_KEY | \
		  NVME_NO_QID_KEY | NVME_NO_OP_KEY | NVME_NO_SIZE_KEY)

/* Parse text, bind it to s and push it down into f; 0 on success. */
static int plan(const struct schema *s, const char *text, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);

	if (!q || query_bind(q, s, &err)) {
		printf("# %s: %s\n", text, err.msg);
		query_free(q);
		return -1;
	}
	query_pushdown(q, f);
	query_free(q);
	return 0;
}

/* Return block_key_mask of text's filter (table: the probe's table index). */
static uint32_t blk_mask(const struct schema *s, uint32_t table, const char *text)
{
	struct filter_prog f;

	if (plan(s, text, &f))
		return ~0u;
	f.fields_table = table;
	return block_key_mask(&f);
}

static uint32_t nv_mask(const struct schema *s, uint32_t table, const char *text)
{
	struct filter_prog f;

	if (plan(s, text, &f))
		return ~0u;
	f.fields_table = table;
	return nvme_key_mask(&f);
}

static void test_block_mask(void)
{
	uint32_t m;

	m = blk_mask(&block_schema, 0, "from block group by dev show count, p99(lat)");
	ok(m == (BLK_ALL & ~FILTER_NO_DEV_KEY), "group by dev: one key per dev (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block group by op show count, max(inflight)");
	ok(m == (BLK_ALL & ~(FILTER_NO_OP_KEY | FILTER_NO_DEV_KEY)),
	   "inflight is found by the row's dev: dev stays (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block group by op show max(queued)");
	ok(!(m & FILTER_NO_DEV_KEY), "queued is found by the row's dev: dev stays (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block where comm == 'fio' and pid > 1 group by op show count");
	ok(m == (BLK_ALL & ~(FILTER_NO_OP_KEY | FILTER_NO_COMM_KEY | FILTER_NO_PID_KEY)),
	   "fields WHERE tests stay (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block group by stage show sum(time), max(size)");
	ok(m == (BLK_ALL & ~FILTER_NO_SIZE_KEY), "a field an aggregate reads stays (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block group by unit show count");
	ok(m == (BLK_ALL & ~FILTER_NO_CGROUP_KEY), "unit needs the cgroup (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block group by dev, op, size, pid, comm, container show count");
	ok(m == 0, "every key field read: the full key (mask %#x)", m);
	m = blk_mask(&block_schema, 0, "from block show count");
	ok(m == 0, "no GROUP BY: the full key (mask %#x)", m);
	m = blk_mask(&block_events_schema, 1, "from block_events group by dev show count");
	ok(m == 0, "a query of block_events leaves the block table's key whole (mask %#x)", m);
	m = blk_mask(&block_spans_schema, 2, "from block_spans group by kind show sum(dur)");
	ok(m == 0, "a query of block_spans leaves the block table's key whole (mask %#x)", m);
}

static void test_blk_key_of(void)
{
	struct blk_req a = {.dev = 7 << 20, .op = 1, .tgid = 100, .size = 4096, .cgroup = 9,
			    .comm = "fio"};
	struct blk_req b = {.dev = 7 << 20, .op = 0, .tgid = 200, .size = 8192, .cgroup = 10,
			    .comm = "dd"};
	uint32_t m = BLK_ALL & ~FILTER_NO_DEV_KEY;
	struct blk_key ka, kb;

	memset(&ka, 0xff, sizeof(ka));
	memset(&kb, 0x55, sizeof(kb));
	blk_key_of(&a, m, &ka);
	blk_key_of(&b, m, &kb);
	ok(!memcmp(&ka, &kb, sizeof(ka)), "two processes' requests of one dev share one key");
	ok(ka.dev == (7 << 20) && ka.op == 0 && ka.tgid == 0 && ka.size == 0 && !ka.comm[0] &&
	   ka.cgroup == 0 && ka.masked == m, "the key holds dev, zeroes the rest and says which");
	blk_key_of(&a, 0, &ka);
	blk_key_of(&b, 0, &kb);
	ok(memcmp(&ka, &kb, sizeof(ka)) && ka.tgid == 100 && ka.size == 4096 && ka.op == 1 &&
	   !strcmp(ka.comm, "fio") && ka.cgroup == 9 && ka.masked == 0,
	   "with nothing masked the key is the request's");
}

static void test_nvme_mask(void)
{
	uint32_t m;

	m = nv_mask(&nvme_schema, 0, "from nvme group by op show count, p99(lat)");
	ok(m == (NVME_ALL & ~NVME_NO_OP_KEY), "group by op: one key per op (mask %#x)", m);
	m = nv_mask(&nvme_schema, 0, "from nvme group by session show count");
	ok(m == (NVME_NO_OP_KEY | NVME_NO_SIZE_KEY),
	   "session reads side, instance, cntlid and qid (mask %#x)", m);
	m = nv_mask(&nvme_schema, 0, "from nvme where size > 4096 group by side, qid show count");
	ok(m == (NVME_NO_INSTANCE_KEY | NVME_NO_CNTLID_KEY | NVME_NO_OP_KEY),
	   "side, qid and the size WHERE tests stay (mask %#x)", m);
	m = nv_mask(&nvme_schema, 0, "from nvme group by cntlid show count");
	ok(m == (NVME_ALL & ~NVME_NO_CNTLID_KEY), "cntlid alone (mask %#x)", m);
	m = nv_mask(&nvme_schema, 0, "from nvme show count");
	ok(m == 0, "no GROUP BY: the full key (mask %#x)", m);
	m = nv_mask(&nvme_events_schema, 1, "from nvme_events group by op show count");
	ok(m == 0, "a query of nvme_events (what nvme_joined joins) leaves the key whole (mask %#x)", m);
}

/* One simulated I/O: its full key and latency. */
struct io {
	struct nvme_key k;
	uint64_t lat;
};

/* The stats map as the kernel would keep it: I/Os added up by their key
 * under mask, one row per key (masked fields empty, as nvme.c shows them). */
static struct frame *nvme_frame(const struct io *io, size_t n, uint32_t mask)
{
	struct frame *f = frame_new(&nvme_schema, 2000000000ULL, 1000000000ULL);
	struct nvme_key keys[16];
	uint64_t count[16] = {0}, time[16] = {0};
	size_t nk = 0, i, j;
	char buf[32];

	for (i = 0; i < n; i++) {
		struct nvme_key k;

		nvme_key_masked(&io[i].k, mask, &k);
		for (j = 0; j < nk && memcmp(&keys[j], &k, sizeof(k)); j++)
			;
		if (j == nk)
			keys[nk++] = k;
		count[j]++;
		time[j] += io[i].lat;
	}
	for (j = 0; j < nk; j++) {
		const struct nvme_key *k = &keys[j];
		union cell *r = frame_add_row(f);

		cell_set_str(&r[NC_SIDE], k->masked & NVME_NO_SIDE_KEY ? "" :
			     k->side == SIDE_INITIATOR ? "initiator" : "target");
		snprintf(buf, sizeof(buf), "nvme%uq%u", k->instance, k->qid);
		cell_set_str(&r[NC_SESSION], k->masked & NVME_NO_INSTANCE_KEY ? "" : buf);
		cell_set_str(&r[NC_OP], k->masked & NVME_NO_OP_KEY ? "" :
			     nvme_op_name(k->op, buf, sizeof(buf)));
		r[NC_SIZE].u = k->size;
		r[NC_QID].u = k->qid;
		r[NC_CNTLID].u = k->cntlid;
		r[NC_COUNT].u = count[j];
		r[NC_TIME].u = time[j];
	}
	return f;
}

/* Run text over the rows of io keyed under mask; return the CSV (or error) and
 * the rows the kernel would have kept in *nkeys. */
static char *nvme_run(const struct io *io, size_t n, uint32_t mask, const char *text,
		      size_t *nkeys)
{
	struct frame *f = nvme_frame(io, n, mask);
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct result *res = NULL;
	struct window w;
	struct tick t;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	*nkeys = f->nrows;
	tick_init(&t, 2000000000ULL);
	tick_add(&t, f);
	window_init(&w, 10000000000ULL);
	window_push(&w, &t);
	if (!q || query_bind(q, &nvme_schema, &err) || !(res = query_exec(q, &w, &err))) {
		query_free(q);
		window_done(&w);
		return strdup(err.msg);
	}
	m = open_memstream(&buf, &len);
	result_print(m, res, RF_CSV);
	fclose(m);
	result_free(res);
	query_free(q);
	window_done(&w);
	return buf;
}

/* The same answers from the coarser keys as from the full ones. */
static void test_nvme_rows(void)
{
	static const char *const queries[] = {
		"from nvme group by op show count, sum(time) order by op",
		"from nvme group by side show count, sum(time) order by side",
		"from nvme where size >= 8192 group by op show count order by op",
		"from nvme group by session show count order by session",
	};
	struct io io[12];
	size_t i, nfull, nmasked;

	for (i = 0; i < 12; i++) {
		memset(&io[i], 0, sizeof(io[i]));
		io[i].k.side = i % 3 ? SIDE_INITIATOR : SIDE_TARGET;
		io[i].k.instance = 0;
		io[i].k.cntlid = 1;
		io[i].k.qid = 1 + i % 4;
		io[i].k.op = i % 2 ? 1 : 2;
		io[i].k.size = 4096 << (i % 3);
		io[i].lat = 1000 + 100 * i;
	}
	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		struct filter_prog f;
		char *full, *masked;

		if (plan(&nvme_schema, queries[i], &f)) {
			ok(0, "%s binds", queries[i]);
			continue;
		}
		full = nvme_run(io, 12, 0, queries[i], &nfull);
		masked = nvme_run(io, 12, nvme_key_mask(&f), queries[i], &nmasked);
		ok(!strcmp(full, masked) && nmasked <= nfull,
		   "%s: the same answer from %zu keys as from %zu", queries[i], nmasked, nfull);
		if (strcmp(full, masked))
			printf("#   full:\n%s#   masked:\n%s\n", full, masked);
		free(full);
		free(masked);
	}
	free(nvme_run(io, 12, NVME_ALL & ~NVME_NO_OP_KEY, queries[0], &nmasked));
	ok(nmasked == 2, "group by op: two keys (%zu) for 12 I/Os of 2 ops, 3 sizes, 4 queues, "
	   "2 sides", nmasked);
}

/* A filter installed for a probe's other table says nothing of the first
 * one's fields: syscalls keys by thread and cgroup unless a query of the
 * syscalls table itself reads neither. */
static void test_reads_of(void)
{
	struct filter_prog f;

	if (plan(&syscalls_schema, "from syscalls group by comm show count", &f) == 0) {
		f.fields_table = 0;
		ok(!filter_reads_of(&f, 0, SC_TID) && !filter_reads_of(&f, 0, SC_CGROUP),
		   "from syscalls group by comm: no tid, no cgroup in the key");
	}
	if (plan(&syscall_events_schema, "from syscall_events group by comm show count", &f) == 0) {
		f.fields_table = 1;
		ok(filter_reads_of(&f, 0, SC_TID) && filter_reads_of(&f, 0, SC_CGROUP) &&
		   filter_reads_of(&f, 0, SC_CONTAINER),
		   "from syscall_events group by comm: the syscalls table keeps tid and cgroup "
		   "(its fields are not the events')");
		ok(filter_reads_any_of(&f, 0, FILTER_FIELD(SC_CGROUP)),
		   "and so does a test of several fields at once");
	}
	if (plan(&syscalls_schema, "from syscalls group by unit show count", &f) == 0) {
		uint64_t cg = FILTER_FIELD(SC_CGROUP) | FILTER_FIELD(SC_UNIT) |
			      FILTER_FIELD(SC_CONTAINER);

		f.fields_table = 0;
		ok(filter_reads_any_of(&f, 0, cg) &&
		   !filter_reads_any_of(&f, 0, FILTER_FIELD(SC_CGROUP) | FILTER_FIELD(SC_TID)),
		   "group by unit reads one of cgroup, unit, container, and neither cgroup nor tid");
		f.fields_known = 0;
		ok(filter_reads_any_of(&f, 0, FILTER_FIELD(SC_TID)),
		   "fields unknown: every field may be read");
		f.fields_known = 1;
		f.fields_used = 1ULL << 63;
		ok(filter_reads_any_of(&f, 0, FILTER_FIELD(70)) &&
		   !filter_reads_any_of(&f, 0, FILTER_FIELD(62)),
		   "fields past 62 share the last bit");
	}
}

static uint32_t fl_mask(const struct schema *s, uint32_t table, const char *text)
{
	struct filter_prog f;

	if (plan(s, text, &f))
		return ~0u;
	f.fields_table = table;
	return flows_key_mask(&f);
}

#define FL_ALL (FLOW_AGG | FLOW_NO_LADDR | FLOW_NO_LPORT | FLOW_NO_RADDR | FLOW_NO_NETNS | \
		FLOW_NO_PID | FLOW_NO_COMM | FLOW_NO_CGROUP)

static void test_flows_mask(void)
{
	uint32_t m;

	m = fl_mask(&flows_schema, 0, "from flows group by lport show count, p99(lat)");
	ok(m == (FL_ALL & ~FLOW_NO_LPORT), "group by lport: one key per port (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows group by comm, pid show count, sum(bytes)");
	ok(m == (FL_ALL & ~(FLOW_NO_COMM | FLOW_NO_PID)), "group by comm, pid (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows where laddr == 127.0.0.1 group by rnet show count");
	ok(m == ((FL_ALL & ~(FLOW_NO_LADDR | FLOW_NO_RADDR)) | FLOW_RNET_ONLY),
	   "group by rnet keeps the remote network only; WHERE's laddr stays (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows group by container show count");
	ok(m == (FL_ALL & ~FLOW_NO_CGROUP), "container needs the cgroup (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows group by flow, pid, comm show count");
	ok(m == 0, "group by flow: a row per connection (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows where rport == 5000 group by lport show count");
	ok(m == 0, "a query that reads rport reads connections (mask %#x)", m);
	m = fl_mask(&flows_schema, 0, "from flows show count");
	ok(m == 0, "no GROUP BY: every field kept, for a recording (mask %#x)", m);
	m = fl_mask(&flow_events_schema, 1, "from flow_events group by lport show count");
	ok(m == 0, "a query of flow_events keeps the flows totals whole (mask %#x)", m);
}

/* The group key: the fields the mask names cleared, rport always, the CPU
 * kept; an IPv4 remote cut to its /24, an IPv6 one to its /64. */
static void test_flows_akey(void)
{
	struct fl_key v4 = {.laddr = {0, 0x0000ffff7f000001ULL}, .raddr = {0, 0x0000ffff0a010203ULL},
			    .lport = 80, .rport = 40000, .netns = 7};
	struct fl_key v6 = {.laddr = {1, 1}, .raddr = {0x20010db800000001ULL, 0x1234ULL},
			    .lport = 443, .rport = 50000, .netns = 7};
	__u64 comm[2] = {0x786e69676eULL, 0};	/* "nginx" */
	struct fl_akey a, b;

	fl_akey_make(&v4, 42, comm, 99, FL_ALL & ~FLOW_NO_LPORT, 1, &a);
	ok(a.k.lport == 80 && !a.k.rport && !a.k.laddr[1] && !a.k.raddr[1] && !a.pid &&
	   !a.comm[0] && !a.cgroup && !a.k.netns && a.cpu == 1 && a.masked == (FL_ALL & ~FLOW_NO_LPORT),
	   "group by lport: only the port and the CPU stay");
	v4.rport = 40001;
	fl_akey_make(&v4, 42, comm, 99, FL_ALL & ~FLOW_NO_LPORT, 1, &b);
	ok(!memcmp(&a, &b, sizeof(a)), "two connections to one port share one key");
	fl_akey_make(&v4, 42, comm, 99, (FL_ALL & ~FLOW_NO_RADDR) | FLOW_RNET_ONLY, 0, &a);
	ok(a.k.raddr[0] == 0 && a.k.raddr[1] == 0x0000ffff0a010200ULL, "IPv4 rnet: its /24 (%#llx)",
	   (unsigned long long)a.k.raddr[1]);
	fl_akey_make(&v6, 42, comm, 99, (FL_ALL & ~FLOW_NO_RADDR) | FLOW_RNET_ONLY, 0, &a);
	ok(a.k.raddr[0] == 0x20010db800000001ULL && a.k.raddr[1] == 0, "IPv6 rnet: its /64");
	fl_akey_make(&v6, 42, comm, 99, FL_ALL & ~(FLOW_NO_PID | FLOW_NO_COMM | FLOW_NO_CGROUP), 3, &a);
	ok(a.pid == 42 && a.comm[0] == comm[0] && a.cgroup == 99 && a.cpu == 3 && !a.k.lport,
	   "group by pid, comm, cgroup: the server's ids stay");
}

int main(void)
{
	test_flows_mask();
	test_flows_akey();
	test_reads_of();
	test_block_mask();
	test_blk_key_of();
	test_nvme_mask();
	test_nvme_rows();
	tap_done();
}
