/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The flows probe's pure logic: request/response matching (probes/flows/flowq.h,
 * the code the BPF programs run) and the address prefixes the planner
 * pushes into the kernel filter, checked against query_exec's residual.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/types.h>
#include "probes/filter.h"
#include "probes/flows/flowq.h"
#include "probes/flows/flows_schema.h"
#include "queries/query.h"
#include "tap.h"

#define MS 1000000ULL
#define PHI (1000 * MS)

/* Feed a request segment; return the result. */
static enum fq_result req(struct flowq *q, __u32 seq, __u32 len, int psh, __u64 t)
{
	__u32 nb;

	return fq_request(q, seq, len, psh, t, &nb);
}

/* Feed a response segment; return the result, latency in *lat. */
static enum fq_result resp(struct flowq *q, __u32 seq, __u32 len, __u32 ack, int psh, __u64 t,
			   __u64 *lat, __u32 *evicted)
{
	__u32 nb, ev;
	__u64 age, l;
	enum fq_result r = fq_response(q, seq, len, ack, psh, t, PHI, &nb, &ev, &age, &l);

	if (lat)
		*lat = l;
	if (evicted)
		*evicted = ev;
	return r;
}

static void test_basic(void)
{
	struct flowq q = {0};
	__u64 lat;
	__u32 nb, ev;

	ok(req(&q, 1000, 0, 0, 1) == FQ_NONE, "a pure ACK is no request");
	ok(fq_request(&q, 1000, 100, 1, 10, &nb) == FQ_QUEUED && nb == 100,
	   "a data segment with PSH is a request (100 new bytes)");
	ok(req(&q, 1000, 100, 1, 12) == FQ_DUP && fq_pending(&q) == 1,
	   "its retransmission is a duplicate, not a second request");
	ok(resp(&q, 5000, 0, 1100, 0, 20, &lat, NULL) == FQ_NONE, "a delayed pure ACK answers nothing");
	ok(resp(&q, 5000, 50, 1100, 1, 50, &lat, NULL) == FQ_MATCHED && lat == 40,
	   "the response acking its end answers it: 40 ns");
	ok(resp(&q, 5000, 50, 1100, 1, 60, &lat, NULL) == FQ_DUP, "a retransmitted response is ignored");
	ok(req(&q, 1000, 100, 1, 70) == FQ_DUP && fq_pending(&q) == 0,
	   "a retransmitted request already answered is ignored");
	ok(resp(&q, 5050, 10, 1100, 1, 80, &lat, &ev) == FQ_UNSOLICITED && ev == 0,
	   "data with no request pending is unsolicited");
}

static void test_segments(void)
{
	struct flowq q = {0};
	__u64 lat;

	ok(req(&q, 0, 1448, 0, 1) == FQ_PART && req(&q, 1448, 1448, 0, 2) == FQ_PART,
	   "segments without PSH are part of a request");
	ok(req(&q, 2896, 100, 1, 3) == FQ_QUEUED && q.e[0].ack == 2996,
	   "the PSH segment ends it: expected ack 2996");
	ok(resp(&q, 0, 1448, 2996, 0, 10, &lat, NULL) == FQ_MATCHED && lat == 7,
	   "the first segment of the response answers it");
	ok(resp(&q, 1448, 1448, 2996, 1, 11, &lat, NULL) == FQ_PART,
	   "the rest of the response is no new answer");
	ok(req(&q, 2996, 10, 1, 20) == FQ_QUEUED &&
	   resp(&q, 2890, 20, 3006, 1, 25, &lat, NULL) == FQ_MATCHED && lat == 5,
	   "a response that resends some old data with new data is new");
}

static void test_pipeline(void)
{
	struct flowq q = {0};
	__u64 lat[4];
	int i, all = 1;

	for (i = 0; i < 4; i++)
		all &= req(&q, 100 * i, 100, 1, 10 * i) == FQ_QUEUED;
	ok(all && fq_pending(&q) == 4, "four pipelined requests queue");
	/* Every response acks all four: the server has read them all. */
	for (i = 0; i < 4; i++)
		all &= resp(&q, 1000 + 10 * i, 10, 400, 1, 100 + i, &lat[i], NULL) == FQ_MATCHED;
	ok(all && lat[0] == 100 && lat[1] == 91 && lat[2] == 82 && lat[3] == 73,
	   "four responses answer them in order (%llu %llu %llu %llu)",
	   (unsigned long long)lat[0], (unsigned long long)lat[1],
	   (unsigned long long)lat[2], (unsigned long long)lat[3]);
	ok(fq_pending(&q) == 0, "nothing left pending");
}

static void test_reorder(void)
{
	struct flowq q = {0};
	__u64 lat;

	ok(req(&q, 100, 100, 1, 10) == FQ_QUEUED && req(&q, 0, 100, 1, 12) == FQ_QUEUED,
	   "a request filling a gap after a later one is queued");
	ok(q.e[0].ack == 100 && q.e[1].ack == 200, "and sorted before it");
	ok(resp(&q, 0, 5, 200, 1, 20, &lat, NULL) == FQ_MATCHED && lat == 8,
	   "the first response answers the earlier request (arrived at 12)");
	ok(resp(&q, 5, 5, 200, 1, 21, &lat, NULL) == FQ_MATCHED && lat == 11,
	   "the second the later one (arrived at 10)");
}

static void test_evict(void)
{
	struct flowq q = {0};
	__u64 lat;
	__u32 ev;
	int i, all = 1;

	req(&q, 0, 10, 1, 0);
	req(&q, 10, 10, 1, 2 * PHI);
	ok(resp(&q, 0, 10, 20, 1, 2 * PHI + MS, &lat, &ev) == FQ_MATCHED && ev == 1 && lat == MS,
	   "an unanswered request older than the timeout is evicted; the next is answered");
	ok(resp(&q, 10, 10, 20, 1, 2 * PHI + 2 * MS, &lat, &ev) == FQ_UNSOLICITED && ev == 0,
	   "and is gone");
	for (i = 0; i < FQ_LEN; i++)
		all &= req(&q, 100 + i, 1, 1, 3 * PHI) == FQ_QUEUED;
	ok(all && req(&q, 200, 1, 1, 3 * PHI) == FQ_FULL && fq_pending(&q) == FQ_LEN,
	   "a request beyond %d pending is not queued (FQ_FULL)", FQ_LEN);
	ok(resp(&q, 20, 1, 99, 1, 3 * PHI + 1, &lat, &ev) == FQ_UNSOLICITED &&
	   fq_pending(&q) == FQ_LEN, "a response acking less than the oldest request answers nothing");
}

static void test_wrap(void)
{
	struct flowq q = {0};
	__u64 lat;

	ok(req(&q, 0xffffff00u, 0x200, 1, 5) == FQ_QUEUED && q.e[0].ack == 0x100,
	   "a request across the sequence wrap expects ack 0x100");
	ok(resp(&q, 0xfffffff0u, 0x20, 0x100, 1, 9, &lat, NULL) == FQ_MATCHED && lat == 4,
	   "a response across the wrap answers it");
	ok(req(&q, 0xffffff00u, 0x200, 1, 10) == FQ_DUP, "its retransmission is a duplicate");
}

/* Parse, bind to flows and push down; NULL on error. */
static struct query *plan(const char *text, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);

	if (!q || query_bind(q, &flows_schema, &err)) {
		printf("# %s: %s\n", text, err.msg);
		query_free(q);
		return NULL;
	}
	query_pushdown(q, f);
	return q;
}

static void test_plan(void)
{
	struct filter_prog f;
	struct query *q;

	q = plan("from flows where raddr == 10.0.0.0/8", &f);
	ok(q && f.n == 1 && f.e[0].op == FOP_EQ && f.e[0].term == FTERM_RADDR &&
	   f.e[0].value == FILTER_ADDR_VALUE(0, 104) && f.addrs[0][0] == 0 &&
	   f.addrs[0][1] == 0x0000ffff0a000000ULL,
	   "raddr == 10.0.0.0/8: prefix 0 of 104 bits, ::ffff:10.0.0.0");
	query_free(q);
	q = plan("from flows where laddr == ::1 and lport == 8080", &f);
	ok(q && f.n == 3 && f.e[0].term == FTERM_LADDR && f.e[0].value == FILTER_ADDR_VALUE(0, 128) &&
	   f.addrs[0][0] == 0 && f.addrs[0][1] == 1 && f.e[1].term == FTERM_LPORT &&
	   f.e[1].value == 8080 && f.e[2].op == FOP_AND, "laddr == ::1 and lport == 8080");
	query_free(q);
	q = plan("from flows where raddr != fd00::/8", &f);
	ok(q && f.n == 1 && f.e[0].op == FOP_NE && f.addrs[0][0] == 0xfd00000000000000ULL &&
	   f.e[0].value == FILTER_ADDR_VALUE(0, 8), "raddr != fd00::/8");
	query_free(q);
	q = plan("from flows where raddr in (10.0.0.0/8, 192.168.1.0/24, 10.0.0.0/8)", &f);
	ok(q && f.n == 5 && f.e[1].value == FILTER_ADDR_VALUE(1, 120) &&
	   f.e[3].value == FILTER_ADDR_VALUE(0, 104) && f.addrs[1][1] == 0x0000ffffc0a80100ULL,
	   "raddr in (...): a repeated prefix shares its slot");
	query_free(q);
	q = plan("from flows where raddr == ::/0", &f);
	ok(q && f.n == 0, "::/0 covers IPv4-mapped space: left to the residual");
	query_free(q);
	q = plan("from flows where raddr == ::ffff:1.2.3.4", &f);
	ok(q && f.n == 0, "an IPv4-mapped IPv6 literal: left to the residual");
	query_free(q);
	q = plan("from flows where raddr != 1.0.0.0/8 and raddr != 2.0.0.0/8 and "
		 "raddr != 3.0.0.0/8 and raddr != 4.0.0.0/8 and raddr != 5.0.0.0/8", &f);
	ok(q && f.n == 7, "a fifth distinct prefix does not fit: its conjunct stays residual");
	query_free(q);
	q = plan("from flows where pid == 7 and comm == 'nginx' and lat > 1ms", &f);
	ok(q && f.n == 5 && f.needs_lat, "pid, comm and lat push down too");
	query_free(q);
}

/* Return a random address: IPv4 in 10.0.0.0/14 or IPv6 in fd00::/110, mostly. */
static void rand_ip(struct ipaddr *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (rand() % 2) {
		ip->v4 = 1;
		ip->prefix = 32;
		ip->a[10] = ip->a[11] = 0xff;
		ip->a[12] = rand() % 8 ? 10 : 11;
		ip->a[13] = rand() % 4;
		ip->a[14] = rand() % 256;
		ip->a[15] = rand() % 256;
	} else {
		ip->prefix = 128;
		ip->a[0] = rand() % 8 ? 0xfd : 0xfe;
		ip->a[13] = rand() % 4;
		ip->a[14] = rand() % 256;
		ip->a[15] = rand() % 256;
	}
}

/* Interpret f for one address as raddr, the way probes/filter.bpf.h does. */
static int kernel_keeps(const struct filter_prog *f, const struct ipaddr *ip)
{
	__u64 have[2] = {0, 0};
	uint64_t st = 0;
	uint32_t i;
	int k;

	for (k = 0; k < 8; k++) {
		have[0] = have[0] << 8 | ip->a[k];
		have[1] = have[1] << 8 | ip->a[8 + k];
	}
	if (!f->n)
		return 1;
	for (i = 0; i < f->n; i++) {
		const struct filter_entry *e = &f->e[i];
		int bit;

		if (e->op == FOP_AND || e->op == FOP_OR) {
			uint64_t a = st & 1, b = (st >> 1) & 1;

			st = (st >> 2) << 1 | (e->op == FOP_AND ? (a & b) : (a | b));
			continue;
		}
		if (e->op == FOP_NOT) {
			st ^= 1;
			continue;
		}
		bit = filter_addr_match(have, f->addrs[FILTER_ADDR_IDX(e->value)],
					FILTER_ADDR_BITS(e->value));
		st = st << 1 | (uint64_t)(e->op == FOP_NE ? !bit : bit);
	}
	return st & 1;
}

/* Return whether query_exec keeps a one-row flows window with raddr ip. */
static int residual_keeps(const struct query *q, const struct ipaddr *ip)
{
	struct frame *fr = frame_new(&flows_schema, 2000000000ULL, 1000000000ULL);
	union cell *r = frame_add_row(fr);
	struct query_error err;
	struct window w;
	struct result *res;
	struct tick t;
	struct hist h;
	int keep;

	hist_init(&h);
	hist_add(&h, 1000);
	cell_set_str(&r[FC_FLOW], "x");
	cell_set_ip(&r[FC_LADDR], ip);
	cell_set_ip(&r[FC_RADDR], ip);
	cell_set_ip(&r[FC_RNET], ip);
	cell_set_str(&r[FC_COMM], "c");
	r[FC_COUNT].u = 1;
	cell_set_hist(&r[FC_LAT], &h);
	window_init(&w, 10000000000ULL);
	tick_init(&t, fr->t_ns);
	tick_add(&t, fr);
	window_push(&w, &t);
	res = query_exec(q, &w, &err);
	keep = res && res->nrows == 1 && result_row(res, 0)[0].u == 1;
	result_free(res);
	window_done(&w);
	return keep;
}

static void test_agree(void)
{
	static const char *const preds[] = {
		"raddr == 10.0.0.0/8", "raddr != 10.0.0.0/8", "raddr == 10.1.0.0/16",
		"raddr == fd00::/8", "raddr != fd00::/8", "raddr == fd00::2:0/110",
		"raddr in (10.2.0.0/15, fe00::/8)", "not raddr == 10.0.0.0/14",
		"raddr == 10.0.0.0/8 or raddr == fd00::/7", "raddr == 0.0.0.0/0",
		"raddr != 0.0.0.0/0", "raddr == 10.1.16.0/20", "raddr != fd00::3:0/116",
	};
	size_t i;
	int n;

	srand(7);
	for (i = 0; i < sizeof(preds) / sizeof(preds[0]); i++) {
		char text[160];
		struct filter_prog f;
		struct query *q;
		int agree = 1, kept = 0;

		snprintf(text, sizeof(text), "from flows where %s show count(lat)", preds[i]);
		q = plan(text, &f);
		if (!q || !f.n) {
			ok(0, "%s is pushed down", preds[i]);
			query_free(q);
			continue;
		}
		for (n = 0; n < 400; n++) {
			struct ipaddr ip;
			int k, r;

			rand_ip(&ip);
			k = kernel_keeps(&f, &ip);
			r = residual_keeps(q, &ip);
			kept += r;
			if (k != r) {
				char buf[64];

				inet_ntop(AF_INET6, ip.a, buf, sizeof(buf));
				printf("# %s: %s kernel %d residual %d\n", preds[i], buf, k, r);
				agree = 0;
				break;
			}
		}
		ok(agree, "kernel filter and residual agree on 400 addresses: %s (%d kept)",
		   preds[i], kept);
		query_free(q);
	}
}

int main(void)
{
	test_basic();
	test_segments();
	test_pipeline();
	test_reorder();
	test_evict();
	test_wrap();
	test_plan();
	test_agree();
	tap_done();
}
