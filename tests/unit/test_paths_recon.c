/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The paths reconstruction (probes/paths/paths_recon.c) on synthetic send/receive
 * records: messages, request/reply pairing, calls, fan-out, pipelining,
 * interleaved threads, work handed to another thread, and what is counted
 * when pairing fails.
 */
#include <string.h>
#include <arpa/inet.h>
#include "tap.h"
#include "../../probes/paths/paths_recon.h"

#define MAXDONE 64

struct got {
	size_t n;
	struct {
		char shape[256];
		uint64_t id, lat, down, calls, bytes_in, bytes_out, nth;
		uint32_t tid, seq;
		bool client;
	} r[MAXDONE];
};

static void on_done(void *ctx, const struct recon_req *r)
{
	struct got *g = ctx;

	if (g->n >= MAXDONE)
		return;
	recon_shape(r, g->r[g->n].shape, sizeof(g->r[g->n].shape));
	g->r[g->n].id = r->id;
	g->r[g->n].lat = r->end_ns - r->start_ns;
	g->r[g->n].down = recon_down_ns(r);
	g->r[g->n].calls = r->ncalls;
	g->r[g->n].bytes_in = r->bytes_in;
	g->r[g->n].bytes_out = r->bytes_out;
	g->r[g->n].nth = r->nth;
	g->r[g->n].tid = r->tid;
	g->r[g->n].seq = r->seq;
	g->r[g->n].client = r->client;
	g->n++;
}

/* Connections: sk, local and remote end. */
struct c {
	uint64_t sk;
	const char *laddr;
	uint16_t lport;
	const char *raddr;
	uint16_t rport;
	bool server;
};

static const struct c A = {0xa0, "10.0.0.1", 8080, "10.0.0.9", 40001, true};	/* inbound */
static const struct c A2 = {0xa2, "10.0.0.1", 8080, "10.0.0.9", 40002, true};	/* inbound */
static const struct c B = {0xb0, "10.0.0.1", 50001, "10.0.0.5", 3306, false};	/* to a db */
static const struct c B2 = {0xb2, "10.0.0.1", 50002, "10.0.0.5", 3306, false};
static const struct c C = {0xc0, "10.0.0.1", 50003, "10.0.0.6", 11211, false};	/* to a cache */

static void v4(const char *s, uint8_t a[16])
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	inet_pton(AF_INET, s, a + 12);
}

/* Feed one record: thread tid, at t (µs), dir, bytes on connection c. */
static void rec(struct recon *rc, uint32_t tid, uint64_t t_us, int dir, uint32_t bytes,
		const struct c *c, uint32_t seq)
{
	struct path_rec r = {0};

	r.ts_ns = t_us * 1000;
	r.sk = c->sk;
	r.tgid = 100;
	r.tid = tid;
	r.bytes = bytes;
	r.seq = seq;
	r.lport = c->lport;
	r.rport = c->rport;
	r.dir = dir;
	r.server = c->server;
	r.family = 4;
	v4(c->laddr, r.laddr);
	v4(c->raddr, r.raddr);
	snprintf(r.comm, sizeof(r.comm), "t%u", tid);
	recon_add(rc, &r);
}

#define R PD_RECV
#define S PD_SEND

/* A call of thread tid on client connection c: bytes sent at t_us, the
 * answer received at t_us + dur_us. */
static void call(struct recon *rc, uint32_t tid, uint64_t t_us, uint64_t dur_us, uint32_t bytes,
		 const struct c *c)
{
	rec(rc, tid, t_us, S, bytes, c, 0);
	rec(rc, tid, t_us + dur_us, R, bytes, c, 0);
}

/* Flush at t_us: a reply quiet for 1 ms is complete, what idled 60 s is forgotten. */
static void flush(struct recon *rc, uint64_t t_us)
{
	recon_flush(rc, t_us * 1000, 1000000, 60000000000ULL);
}

int main(void)
{
	struct got g = {0};
	struct recon *rc = recon_new(on_done, &g);
	const struct recon_stats *st = recon_stats(rc);

	/* One request, one call; messages split over several calls. */
	rec(rc, 1, 1000, R, 10, &A, 5000);
	rec(rc, 1, 1001, R, 20, &A, 5010);
	rec(rc, 1, 1100, S, 40, &B, 7000);
	rec(rc, 1, 1500, R, 1000, &B, 0);
	rec(rc, 1, 1510, R, 500, &B, 0);
	rec(rc, 1, 1600, S, 300, &A, 0);
	rec(rc, 1, 1650, S, 200, &A, 0);
	ok(g.n == 0, "a request is not complete while its reply may go on");
	rec(rc, 1, 9000, R, 30, &A, 5030);
	ok(g.n == 1 && !strcmp(g.r[0].shape, ":8080 → 10.0.0.5:3306 ×1"),
	   "the next message ends the reply: one request, one call (%s)", g.r[0].shape);
	ok(g.r[0].lat == 650000 && g.r[0].down == 410000 && g.r[0].calls == 1,
	   "lat from first receive to last reply send (650 µs), down = the call (410 µs): %llu %llu",
	   (unsigned long long)g.r[0].lat, (unsigned long long)g.r[0].down);
	ok(g.r[0].bytes_in == 30 && g.r[0].bytes_out == 500 && g.r[0].seq == 5000 && g.r[0].nth == 0,
	   "bytes of the merged messages, the request's first TCP sequence number, nth 0");

	/* Fan-out: the second request makes 3 calls to B and 2 to C. */
	call(rc, 1, 9100, 100, 1, &B);
	call(rc, 1, 9300, 100, 1, &C);
	call(rc, 1, 9500, 100, 1, &B);
	call(rc, 1, 9700, 100, 1, &C);
	call(rc, 1, 9900, 100, 1, &B);
	rec(rc, 1, 10100, S, 1, &A, 0);
	flush(rc, 10100 + 5000);
	ok(g.n == 2 && !strcmp(g.r[1].shape, ":8080 → 10.0.0.5:3306 ×3, 10.0.0.6:11211 ×2"),
	   "fan-out: calls counted per address in first-call order (%s)", g.r[1].shape);
	ok(g.r[1].calls == 5 && g.r[1].down == 500000 && g.r[1].lat == 1100000 && g.r[1].nth == 1,
	   "5 calls, 500 µs downstream of 1.1 ms; flush ended the quiet reply");

	/* Overlapping calls (asynchronous fan-out): down is their union. */
	g.n = 0;
	rec(rc, 2, 20000, R, 8, &A2, 0);
	rec(rc, 2, 20100, S, 8, &B2, 0);
	rec(rc, 2, 20110, S, 8, &C, 0);
	rec(rc, 2, 20500, R, 8, &B2, 0);
	rec(rc, 2, 20700, R, 8, &C, 0);
	rec(rc, 2, 21000, S, 8, &A2, 0);
	flush(rc, 21000 + 5000);
	ok(g.n == 1 && g.r[0].calls == 2 && g.r[0].down == 600000,
	   "overlapping calls: down is the union (600 µs), not the sum (%llu)",
	   (unsigned long long)g.r[0].down);

	/* Two threads interleaved, each serving its own connection. */
	g.n = 0;
	rec(rc, 1, 30000, R, 8, &A, 0);
	rec(rc, 2, 30001, R, 8, &A2, 0);
	rec(rc, 1, 30010, S, 8, &B, 0);
	rec(rc, 2, 30011, S, 8, &C, 0);
	rec(rc, 2, 30100, R, 8, &C, 0);
	rec(rc, 1, 30200, R, 8, &B, 0);
	rec(rc, 2, 30110, S, 8, &C, 0);
	rec(rc, 2, 30150, R, 8, &C, 0);
	rec(rc, 1, 30300, S, 8, &A, 0);
	rec(rc, 2, 30400, S, 8, &A2, 0);
	flush(rc, 40000);
	ok(g.n == 2, "interleaved threads: two requests (%zu)", g.n);
	ok(g.n == 2 && g.r[0].tid + g.r[1].tid == 3 &&
	   !strcmp(g.r[g.r[0].tid == 1 ? 0 : 1].shape, ":8080 → 10.0.0.5:3306 ×1") &&
	   !strcmp(g.r[g.r[0].tid == 2 ? 0 : 1].shape, ":8080 → 10.0.0.6:11211 ×2"),
	   "each thread's calls go to its own request (%s | %s)", g.r[0].shape, g.r[1].shape);

	/* Pipelining: two requests on one connection read by two threads;
	 * the n-th reply answers the n-th request, whoever sends it. */
	g.n = 0;
	rec(rc, 1, 50000, R, 8, &A, 100);
	rec(rc, 2, 50010, R, 8, &A, 108);
	rec(rc, 2, 50500, S, 8, &A, 0);
	rec(rc, 1, 50800, S, 8, &A, 0);
	flush(rc, 60000);
	ok(g.n == 2 && g.r[0].seq == 100 && g.r[0].lat == 500000 && g.r[1].seq == 108 &&
	   g.r[1].lat == 790000,
	   "pipelined: replies pair with requests in order (first reply answers seq 100)");

	/* Pipelined requests read in one receive are one message: one request. */
	g.n = 0;
	rec(rc, 1, 61000, R, 16, &A, 116);
	rec(rc, 1, 61100, S, 16, &A, 0);
	flush(rc, 70000);
	ok(g.n == 1 && g.r[0].bytes_in == 16, "two requests in one receive count as one");

	/* Work handed to another thread: the reply pairs, the calls do not. */
	g.n = 0;
	rec(rc, 1, 71000, R, 8, &A, 0);
	rec(rc, 3, 71100, S, 8, &B, 0);
	rec(rc, 3, 71500, R, 8, &B, 0);
	rec(rc, 3, 71600, S, 8, &A, 0);
	flush(rc, 80000);
	ok(g.n == 2, "handoff: the request and the helper's call both complete (%zu)", g.n);
	ok(g.n == 2 && g.r[0].client && !strcmp(g.r[0].shape, "- → 10.0.0.5:3306 ×1") &&
	   g.r[0].lat == 400000,
	   "the helper thread's call stands alone as '- → …' (%s)", g.r[0].shape);
	ok(g.n == 2 && !strcmp(g.r[1].shape, ":8080") && g.r[1].lat == 600000 && g.r[1].tid == 1,
	   "the request answered by another thread keeps its latency, without the call (%s)",
	   g.r[1].shape);
	/* The receiving thread reads the next request with nothing in between:
	 * the helper's reply on the connection ended its message. */
	g.n = 0;
	rec(rc, 1, 72000, R, 8, &A, 0);
	rec(rc, 3, 72100, S, 8, &A, 0);
	rec(rc, 1, 73000, R, 8, &A, 0);
	rec(rc, 3, 73300, S, 8, &A, 0);
	flush(rc, 80000);
	ok(g.n == 2 && g.r[0].lat == 100000 && g.r[1].lat == 300000,
	   "handoff: back-to-back receives by the same thread are two requests (%zu)", g.n);

	/* A pure client: each call is its own path. */
	g.n = 0;
	rec(rc, 4, 81000, S, 8, &B2, 0);
	rec(rc, 4, 81300, R, 8, &B2, 0);
	rec(rc, 4, 81400, S, 8, &B2, 0);
	ok(g.n == 1 && g.r[0].client && g.r[0].lat == 300000 && g.r[0].down == 300000,
	   "a client call completes when the next message starts (300 µs, all downstream)");

	/* Pairing failures are counted. */
	rec(rc, 5, 90000, S, 8, &A2, 0);
	ok(st->stray_replies == 1, "a reply with no open request is counted (%llu)",
	   (unsigned long long)st->stray_replies);
	rec(rc, 5, 90100, R, 8, &C, 0);
	ok(st->stray_call_replies == 1, "a message on a client connection with no call is counted");
	rec(rc, 6, 90200, R, 8, &A2, 0);
	flush(rc, 90200 + 61000000ULL);
	ok(st->unanswered == 1 && st->conns == 0 && st->threads == 0,
	   "idle connections and threads are forgotten, the open request counted unanswered");

	/* A socket address reused by a new connection starts afresh. */
	g.n = 0;
	{
		struct c a = A;

		rec(rc, 7, 100000000, R, 8, &a, 0);
		a.rport = 40999;
		rec(rc, 8, 100000100, R, 8, &a, 0);
		rec(rc, 8, 100000200, S, 8, &a, 0);
		flush(rc, 100010000ULL);
		ok(g.n == 1 && g.r[0].nth == 0 && g.r[0].tid == 8 && st->unanswered == 2,
		   "a reused socket: the old connection's request is given up, the new one pairs");
	}

	/* A socket that served a request is reused for a connection this end
	 * opened: the queue of the old role must not be written as the new one. */
	{
		struct c srv = {0xe0, "10.0.0.1", 8080, "10.0.0.9", 41000, true};
		struct c cli = {0xe0, "10.0.0.1", 51000, "10.0.0.7", 5432, false};
		size_t before = g.n;

		g.n = 0;
		rec(rc, 9, 200000000, R, 8, &srv, 0);
		rec(rc, 9, 200000100, R, 8, &A2, 0);
		call(rc, 9, 200000200, 100, 8, &cli);
		rec(rc, 9, 200000400, S, 8, &A2, 0);
		flush(rc, 200010000ULL);
		ok(g.n == 1 && !strcmp(g.r[0].shape, ":8080 → 10.0.0.7:5432 ×1"),
		   "a server socket reused as a client: its call counts for the request (%s)",
		   g.n ? g.r[0].shape : "none");
		g.n = before;
	}

	/* Addresses print as operators expect. */
	{
		struct recon_tuple t = {0};
		char buf[64];

		inet_pton(AF_INET6, "2001:db8::5", t.raddr);
		t.rport = 443;
		recon_remote(&t, buf, sizeof(buf));
		ok(!strcmp(buf, "[2001:db8::5]:443"), "IPv6 remote in brackets (%s)", buf);
		v4("192.168.1.2", t.raddr);
		recon_remote(&t, buf, sizeof(buf));
		ok(!strcmp(buf, "192.168.1.2:443"), "v4-mapped remote as a.b.c.d (%s)", buf);
	}
	recon_free(rc);
	tap_done();
}
