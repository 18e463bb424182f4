/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core/merge: recordings read one after another, and a joiner's derived tick. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/merge.h"
#include "core/snapshot.h"
#include "core/xalloc.h"
#include "tap.h"

static const struct field msg_fields[] = {
	{"conn", FT_U64, FF_KEY, "", "connection"},
	{"n", FT_U64, FF_SUM, "", "messages"},
};
static const struct schema msg_schema = {"msgs", "test messages", 2, msg_fields};
static const struct field pair_fields[] = {
	{"conn", FT_U64, FF_KEY, "", "connection"},
	{"a", FT_U64, FF_SUM, "", "messages of the first recording"},
	{"b", FT_U64, FF_SUM, "", "messages of the second"},
};
static const struct schema pair_schema = {"pairs", "joined", 3, pair_fields};
static const struct schema *const pair_tables[] = {&pair_schema};

/* A joiner that sums n per (recording, conn) and pairs conns seen in both. */
struct pairs {
	size_t nsrc;
	uint64_t n[2][8];
	size_t adds;
};

static void *pairs_begin(const struct source_info *const *infos, size_t nsrc)
{
	struct pairs *p;

	if (nsrc != 2 || !source_schema(infos[0], "msgs"))
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->nsrc = nsrc;
	return p;
}

static void pairs_add(void *st, size_t src, const struct tick *t)
{
	struct pairs *p = st;
	const struct frame *f = tick_frame(t, "msgs");
	size_t i;

	p->adds++;
	for (i = 0; f && i < f->nrows; i++)
		p->n[src][frame_row(f, i)[0].u & 7] += frame_row(f, i)[1].u;
}

static void pairs_finish(void *st, struct tick *out)
{
	struct pairs *p = st;
	struct frame *f = frame_new(&pair_schema, out->t_ns, 0);
	size_t c;

	for (c = 0; c < 8; c++) {
		union cell *r;

		if (!p->n[0][c] || !p->n[1][c])
			continue;
		r = frame_add_row(f);
		r[0].u = c;
		r[1].u = p->n[0][c];
		r[2].u = p->n[1][c];
	}
	tick_add(out, f);
}

static const struct joiner pairs_joiner = {
	"pairs", "test", 1, pair_tables, pairs_begin, pairs_add, pairs_finish, free,
};

/* pairs_joiner refusing any recording of host "back". */
static char *refuse_back(const struct source_info *const *infos, size_t nsrc)
{
	size_t i;

	for (i = 0; i < nsrc; i++)
		if (!strcmp(infos[i]->host, "back"))
			return xasprintf("%s: refused", infos[i]->path);
	return NULL;
}

static const struct joiner refusing_joiner = {
	"pairs", "test", 1, pair_tables, pairs_begin, pairs_add, pairs_finish, free, refuse_back,
};

static char *open_cause;	/* why open2's last merge_open failed */

/* Write a recording of host with ticks at t0, t0+1s, ...: conn c has c+k messages. */
static int write_rec(const char *path, const char *host, uint64_t t0, int nticks, int k)
{
	const struct schema *schemas[] = {&msg_schema};
	struct source_info info = {.nschemas = 1, .schemas = schemas};
	struct snap_writer *w;
	char *cause = NULL;
	int i, c;

	snprintf(info.host, sizeof(info.host), "%s", host);
	w = snap_create(path, &info, &cause);
	if (!w) {
		printf("# %s\n", cause);
		free(cause);
		return -1;
	}
	for (i = 0; i < nticks; i++) {
		struct tick t;
		struct frame *f = frame_new(&msg_schema, t0 + i * 1000000000ULL, 1000000000ULL);

		for (c = 1; c <= 3; c++) {
			union cell *r = frame_add_row(f);

			r[0].u = (uint64_t)c;
			r[1].u = (uint64_t)(c + k);
		}
		tick_init(&t, f->t_ns);
		tick_add(&t, f);
		if (snap_write_tick(w, &t, &cause)) {
			tick_done(&t);
			snap_abandon(w);
			return -1;
		}
		tick_done(&t);
	}
	return snap_close(w, &cause);
}

static struct source *open2(const char *a, const char *b, const struct joiner *const *list,
			    size_t nlist, const char *table)
{
	struct source *s[2], *m;
	char *cause = NULL;

	s[0] = replay_open(a, &cause);
	s[1] = replay_open(b, &cause);
	if (!s[0] || !s[1]) {
		printf("# %s\n", cause);
		exit(1);
	}
	m = merge_open(s, 2, list, nlist, table, &cause);
	if (!m) {
		source_close(s[0]);
		source_close(s[1]);
		free(open_cause);
		open_cause = cause;
	}
	return m;
}

int main(void)
{
	char a[] = "/tmp/latop-merge-a-XXXXXX", b[] = "/tmp/latop-merge-b-XXXXXX";
	const struct joiner *const list[] = {&pairs_joiner};
	struct source *m;
	struct tick t;
	char *cause = NULL;
	int r, nticks = 0, fa, fb;
	uint64_t last = 0;
	bool ordered = true;
	const struct frame *pf = NULL;
	struct tick joined = {0};

	fa = mkstemp(a);
	fb = mkstemp(b);
	close(fa);
	close(fb);
	/* Host b's clock is far behind a's: the join must not care. */
	ok(write_rec(a, "front", 5000000000000ULL, 3, 0) == 0 &&
	   write_rec(b, "back", 7000000000ULL, 2, 10) == 0, "two recordings written");

	m = open2(a, b, list, 1, NULL);
	ok(m != NULL, "merge_open over two recordings");
	ok(strcmp(m->ops->info(m)->host, "front+back") == 0, "host names both (%s)",
	   m->ops->info(m)->host);
	ok(m->ops->info(m)->nschemas == 2 && source_schema(m->ops->info(m), "pairs") &&
	   source_schema(m->ops->info(m), "msgs"), "info lists recorded and joined tables");
	ok(m->ops->info(m)->nticks == 5, "nticks sums the files (%zu)", m->ops->info(m)->nticks);
	while ((r = source_read(m, &t, 0, &cause)) == 1) {
		nticks++;
		if (tick_frame(&t, "pairs")) {
			pf = tick_frame(&t, "pairs");
			joined = t;
			continue;
		}
		/* within a file ticks rise; file b follows file a */
		if (nticks == 4)
			ordered = ordered && t.t_ns == 7000000000ULL;
		else if (nticks > 1)
			ordered = ordered && t.t_ns > last;
		last = t.t_ns;
		tick_done(&t);
	}
	ok(r == 2, "ends with 2 (%d)", r);
	ok(nticks == 6 && ordered, "5 recorded ticks in file order, then the joined one (%d)",
	   nticks);
	ok(pf && pf->nrows == 3 && frame_row(pf, 0)[1].u == 3 && frame_row(pf, 0)[2].u == 22 &&
	   frame_row(pf, 2)[1].u == 9 && frame_row(pf, 2)[2].u == 26,
	   "the joiner saw each recording under its own index");
	ok(pf && pf->t_ns == 5002000000000ULL && pf->dt_ns == 5002000000000ULL - 7000000000ULL,
	   "the joined frame covers everything read");
	ok(source_read(m, &t, 0, &cause) == 2, "and stays at the end");
	tick_done(&joined);
	source_close(m);

	m = open2(a, b, list, 1, "msgs");
	nticks = 0;
	while (source_read(m, &t, 0, &cause) == 1) {
		nticks++;
		tick_done(&t);
	}
	ok(nticks == 5, "a query on a recorded table runs no joiner (%d ticks)", nticks);
	source_close(m);

	m = open2(a, a, list, 1, NULL);
	nticks = 0;
	while (source_read(m, &t, 0, &cause) == 1) {
		nticks++;
		tick_done(&t);
	}
	ok(nticks == 7 && strcmp(m->ops->info(m)->host, "front") == 0,
	   "the same host twice is named once; the joiner's frame comes (%d)", nticks);
	source_close(m);

	/* A joiner that refuses the recordings fails a query on its table, and is
	 * skipped (the recorded ticks still read) when the query names none. */
	{
		const struct joiner *const rlist[] = {&refusing_joiner};

		m = open2(a, b, rlist, 1, "pairs");
		ok(!m && open_cause && strstr(open_cause, b) && strstr(open_cause, "refused"),
		   "a refused join fails, with the joiner's reason (%s)", open_cause ? open_cause : "");
		source_close(m);
		m = open2(a, b, rlist, 1, NULL);
		nticks = 0;
		while (m && source_read(m, &t, 0, &cause) == 1) {
			nticks++;
			tick_done(&t);
		}
		ok(nticks == 5, "with no table named, the refusing joiner is skipped (%d ticks)",
		   nticks);
		source_close(m);
		free(open_cause);
		open_cause = NULL;
	}

	ok(merge_open(NULL, 0, NULL, 0, NULL, &cause) == NULL && cause && strstr(cause, "no recordings"),
	   "no recordings is an error (%s)", cause ? cause : "");
	free(cause);
	unlink(a);
	unlink(b);
	tap_done();
}
