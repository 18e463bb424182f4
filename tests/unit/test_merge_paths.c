/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The paths joiner (probes/paths/paths_join.c) over two synthetic recordings whose
 * clocks disagree: calls joined to the requests they served by connection
 * and TCP sequence number, the end-to-end path, and what stays unjoined.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "core/merge.h"
#include "probes/views.h"
#include "core/snapshot.h"
#include "probes/paths/paths_schema.h"
#include "tap.h"

#define MS 1000000ULL

static struct ipaddr ip(const char *s)
{
	struct ipaddr a = {.prefix = 32, .v4 = 1};

	a.a[10] = a.a[11] = 0xff;
	inet_pton(AF_INET, s, a.a + 12);
	return a;
}

/* A request row of path_events. */
static void req(struct frame *f, uint64_t id, const char *laddr, uint64_t lport,
		const char *raddr, uint64_t rport, uint64_t seq, uint64_t lat, uint64_t self,
		const char *path)
{
	union cell *r = frame_add_row(f);
	struct ipaddr a;

	r[PE_TS].u = f->t_ns;
	r[PE_ID].u = id;
	cell_set_str(&r[PE_PATH], path);
	r[PE_LPORT].u = lport;
	cell_set_str(&r[PE_COMM], "srv");
	a = ip(laddr);
	cell_set_ip(&r[PE_LADDR], &a);
	a = ip(raddr);
	cell_set_ip(&r[PE_RADDR], &a);
	r[PE_RPORT].u = rport;
	r[PE_SEQ].u = seq;
	r[PE_LAT].u = lat;
	r[PE_SELF].u = self;
	r[PE_DOWN].u = lat - self;
}

/* A call span of path_spans. */
static void call(struct frame *f, uint64_t id, uint64_t n, const char *laddr, uint64_t lport,
		 const char *raddr, uint64_t rport, uint64_t seq, uint64_t dur)
{
	union cell *r = frame_add_row(f);
	struct ipaddr a;
	char label[64];

	snprintf(label, sizeof(label), "%s:%llu", raddr, (unsigned long long)rport);
	r[PS_ID].u = id;
	cell_set_str(&r[PS_ROW], label);
	r[PS_START].u = f->t_ns;
	r[PS_DUR].u = dur;
	cell_set_str(&r[PS_KIND], "call");
	cell_set_str(&r[PS_LABEL], label);
	a = ip(laddr);
	cell_set_ip(&r[PS_LADDR], &a);
	r[PS_LPORT].u = lport;
	a = ip(raddr);
	cell_set_ip(&r[PS_RADDR], &a);
	r[PS_RPORT].u = rport;
	r[PS_SEQ].u = seq;
	r[PS_N].u = n;
}

/* Write one tick of events and spans as a recording of host. */
static int write_rec(const char *path, const char *host, struct frame *ev, struct frame *sp)
{
	const struct schema *schemas[] = {&path_events_schema, &path_spans_schema};
	struct source_info info = {.nschemas = 2, .schemas = schemas};
	struct snap_writer *w;
	char *cause = NULL;
	struct tick t;
	int rc;

	snprintf(info.host, sizeof(info.host), "%s", host);
	w = snap_create(path, &info, &cause);
	if (!w)
		return -1;
	tick_init(&t, ev->t_ns);
	tick_add(&t, ev);
	tick_add(&t, sp);
	rc = snap_write_tick(w, &t, &cause);
	tick_done(&t);
	return rc || snap_close(w, &cause);
}

int main(void)
{
	char a[] = "/tmp/latop-pj-a-XXXXXX", b[] = "/tmp/latop-pj-b-XXXXXX";
	struct frame *ev, *sp;
	struct source *s[2], *m;
	char *cause = NULL;
	struct tick t;
	size_t nj;
	const struct joiner *const *joiners = views_joiners(&nj);
	const struct frame *pj = NULL;
	struct tick joined = {0};
	int ci[6];

	close(mkstemp(a));
	close(mkstemp(b));
	/* front (clock at 5000 s): one request, three calls to mid; the third
	 * call's sequence number matches nothing recorded. */
	ev = frame_new(&path_events_schema, 5000000 * MS, 1000 * MS);
	sp = frame_new(&path_spans_schema, 5000000 * MS, 1000 * MS);
	req(ev, 1, "10.0.0.1", 8080, "10.0.0.9", 40000, 100, 12 * MS, 2 * MS,
	    ":8080 → 10.0.0.2:9090 ×3");
	call(sp, 1, 1, "10.0.0.1", 50000, "10.0.0.2", 9090, 500, 5 * MS);
	call(sp, 1, 2, "10.0.0.1", 50000, "10.0.0.2", 9090, 520, 3 * MS);
	call(sp, 1, 3, "10.0.0.1", 50000, "10.0.0.2", 9090, 777, 2 * MS);
	ok(write_rec(a, "front", ev, sp) == 0, "front's recording written");
	/* mid (clock at 7 s): the two requests front's calls made, one with a
	 * call of its own to a host not recorded, and one nobody recorded calling. */
	ev = frame_new(&path_events_schema, 7000 * MS, 1000 * MS);
	sp = frame_new(&path_spans_schema, 7000 * MS, 1000 * MS);
	req(ev, 7, "10.0.0.2", 9090, "10.0.0.1", 50000, 500, 4 * MS, 4 * MS, ":9090");
	req(ev, 8, "10.0.0.2", 9090, "10.0.0.1", 50000, 520, 2500000, 1500000,
	    ":9090 → 10.0.0.3:3306 ×1");
	call(sp, 8, 1, "10.0.0.2", 51000, "10.0.0.3", 3306, 9, 1 * MS);
	req(ev, 9, "10.0.0.2", 9090, "10.0.0.7", 41000, 999, 1 * MS, 1 * MS, ":9090");
	ok(write_rec(b, "mid", ev, sp) == 0, "mid's recording written");

	s[0] = replay_open(a, &cause);
	s[1] = replay_open(b, &cause);
	m = s[0] && s[1] ? merge_open(s, 2, joiners, nj, "path_joins", &cause) : NULL;
	ok(m && source_schema(m->ops->info(m), "path_joins"), "path_joins is offered over the two");
	while (m && source_read(m, &t, 0, &cause) == 1) {
		if (tick_frame(&t, "path_joins")) {
			joined = t;
			pj = tick_frame(&t, "path_joins");
			continue;
		}
		tick_done(&t);
	}
	ok(pj && pj->nrows == 2, "two roots: front's request, and mid's request nobody recorded calling (%zu)",
	   pj ? pj->nrows : 0);
	if (pj && pj->nrows == 2) {
		const char *names[6] = {"path", "requests", "joined", "unjoined", "work", "net"};
		const union cell *r = frame_row(pj, 0), *r2 = frame_row(pj, 1);

		for (int i = 0; i < 6; i++)
			ci[i] = schema_field(pj->schema, names[i]);
		if (r[schema_field(pj->schema, "id")].u != 1) {
			const union cell *x = r;

			r = r2;
			r2 = x;
		}
		ok(!strcmp(r[ci[0]].s, ":8080 → 10.0.0.2:9090 ×3 (:9090 | :9090 → 10.0.0.3:3306 ×1)"),
		   "the end-to-end path: each distinct path served by the calls (%s)", r[ci[0]].s);
		ok(r[ci[1]].u == 3 && r[ci[2]].u == 2 && r[ci[3]].u == 2,
		   "3 requests; 2 calls joined; the unmatched call and mid's call to an unrecorded host unjoined");
		ok(r[ci[4]].u == 2 * MS + 4 * MS + 1500000 && r[ci[5]].u == 1 * MS + 500000,
		   "work = self of every tier (7.5 ms), net = call time minus callee latency (1.5 ms): %llu %llu",
		   (unsigned long long)r[ci[4]].u, (unsigned long long)r[ci[5]].u);
		ok(!strcmp(r2[ci[0]].s, ":9090") && !strcmp(r2[schema_field(pj->schema, "host")].s, "mid"),
		   "the other root is mid's own (%s on %s)", r2[ci[0]].s,
		   r2[schema_field(pj->schema, "host")].s);
	}
	tick_done(&joined);
	source_close(m);
	unlink(a);
	unlink(b);
	tap_done();
}
