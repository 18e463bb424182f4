/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Frames, ticks and rolling windows. */
#include <string.h>
#include "core/table.h"
#include "tap.h"

static const struct field fields[] = {
	{"pid", FT_U64, FF_KEY, "", "process id"},
	{"comm", FT_STR, FF_KEY, "", "thread name"},
	{"lat", FT_HIST, 0, "ns", "latency"},
	{"addr", FT_IP, FF_KEY, "", "peer"},
	{"time", FT_DUR, FF_SUM, "ns", "total time"},
};
static const struct schema sch = {"things", "test table", 5, fields};
static int rows_not_zeroed;
static const struct schema other = {"others", "second table", 1, fields};

/* Make a frame with n rows of known content. */
static struct frame *make_frame(uint64_t t_ns, size_t n)
{
	struct frame *f = frame_new(&sch, t_ns, 1000000000);
	struct ipaddr ip = {.a = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1}, .prefix = 32, .v4 = 1};
	struct hist h;
	char comm[32];
	size_t i;

	hist_init(&h);
	for (i = 0; i < n; i++) {
		union cell *r = frame_add_row(f);

		if (r[0].u || r[1].s || r[2].h || r[3].ip || r[4].u)
			rows_not_zeroed++;
		snprintf(comm, sizeof(comm), "worker-%zu", i);
		hist_add(&h, 1000 + i);
		r[0].u = 100 + i;
		cell_set_str(&r[1], comm);
		cell_set_hist(&r[2], &h);
		ip.a[15] = (uint8_t)i;
		cell_set_ip(&r[3], &ip);
		r[4].u = i * 1000;
	}
	return f;
}

/* Check schema lookups and frames growing past their first capacity. */
static void test_frames(void)
{
	struct frame *f = make_frame(5, 1000);
	union cell *r;

	ok(schema_field(&sch, "lat") == 2 && schema_field(&sch, "nope") == -1,
	   "schema_field finds lat at 2 and refuses an unknown name");
	ok(f->nrows == 1000 && rows_not_zeroed == 0, "1000 rows appended, each starting zeroed");
	r = frame_row(f, 999);
	ok(r[0].u == 1099 && !strcmp(r[1].s, "worker-999") && r[2].h->count == 1000 &&
	   r[3].ip->a[15] == (uint8_t)999 && r[4].u == 999000, "the last row holds what was set");
	r = frame_row(f, 0);
	ok(!strcmp(r[1].s, "worker-0") && r[2].h->count == 1, "the first row survived the growth");
	cell_set_str(&r[1], "renamed");
	ok(!strcmp(r[1].s, "renamed"), "setting a string again replaces it");
	frame_free(f);
	frame_free(NULL);
}

/* Check frame_dup copies deeply. */
static void test_dup(void)
{
	struct frame *f = make_frame(7, 3), *d;

	f->stats.events = 42;
	f->stats.lost = 3;
	d = frame_dup(f);
	ok(d->nrows == 3 && d->t_ns == 7 && d->stats.events == 42 && d->stats.lost == 3,
	   "dup keeps rows, time and stats");
	ok(frame_row(d, 1)[1].s != frame_row(f, 1)[1].s && frame_row(d, 1)[2].h != frame_row(f, 1)[2].h &&
	   frame_row(d, 1)[3].ip != frame_row(f, 1)[3].ip, "dup owns its own strings, histograms, addresses");
	frame_free(f);
	ok(!strcmp(frame_row(d, 2)[1].s, "worker-2") && frame_row(d, 2)[2].h->count == 3 &&
	   frame_row(d, 2)[3].ip->a[12] == 10, "the copy is intact after the original is freed");
	frame_free(d);
}

/* Check ticks find their frames by table name. */
static void test_tick(void)
{
	struct tick t;

	tick_init(&t, 99);
	ok(tick_frame(&t, "things") == NULL, "an empty tick has no frames");
	tick_add(&t, make_frame(99, 1));
	tick_add(&t, frame_new(&other, 99, 1));
	ok(tick_frame(&t, "things") == t.frames[0] && tick_frame(&t, "others") == t.frames[1] &&
	   tick_frame(&t, "thing") == NULL, "tick_frame finds each table by exact name");
	tick_done(&t);
	ok(t.nframes == 0 && t.frames == NULL, "tick_done leaves an empty tick");
}

/* Make a tick of one frame lasting dt_ms and one lasting half of it. */
static void lengths_add(struct tick_lengths *tl, uint64_t dt_ms)
{
	struct tick t;

	tick_init(&t, 0);
	tick_add(&t, frame_new(&other, 0, dt_ms * 1000000 / 2));
	tick_add(&t, frame_new(&other, 0, dt_ms * 1000000));
	tick_lengths_add(tl, &t, NULL);
	tick_done(&t);
}

/* Check late ticks are counted against a given interval, or the median. */
static void test_tick_lengths(void)
{
	struct tick_lengths tl = {0};
	uint64_t iv = 0, longest;
	struct tick empty;
	size_t i;

	ok(tick_lengths_late(&tl, &iv, &longest) == 0 && longest == 0, "no ticks: none late");
	for (i = 0; i < 200; i++)
		lengths_add(&tl, i == 50 ? 22500 : i == 120 ? 1600 : i == 130 ? 1400 : 1000);
	tick_init(&empty, 0);
	tick_lengths_add(&tl, &empty, NULL);
	ok(tl.n == 200, "a tick without frames has no length (%zu)", tl.n);
	{
		struct tick t;

		tick_init(&t, 0);
		tick_add(&t, frame_new(&other, 0, 5000));
		tick_lengths_add(&tl, &t, "things");
		ok(tl.n == 200, "a tick without the table's frame has no length for it");
		tick_lengths_add(&tl, &t, "others");
		ok(tl.n == 201 && tl.dt_ns[200] == 5000, "the table's frame gives the length");
		tl.n--;
		tick_done(&t);
	}
	ok(tick_lengths_late(&tl, &iv, &longest) == 2 && iv == 1000000000ull &&
	   longest == 22500000000ull,
	   "the median is the interval; over 1.5 times it is late (2, the longest 22.5 s)");
	iv = 2000000000ull;
	ok(tick_lengths_late(&tl, &iv, &longest) == 1 && iv == 2000000000ull,
	   "a given interval is used as it is");
	tick_lengths_free(&tl);
	ok(!tl.dt_ns && !tl.n, "free leaves it empty");
}

static int push_kept_frames;

/* Push a one-frame tick at t_s seconds. */
static void push(struct window *w, uint64_t t_s)
{
	struct tick t;

	tick_init(&t, t_s * 1000000000ULL);
	tick_add(&t, make_frame(t.t_ns, 1));
	window_push(w, &t);
	if (t.nframes || t.frames)
		push_kept_frames++;
	tick_done(&t);
}

/* Check window eviction keeps a tick exactly at the boundary. */
static void test_window(void)
{
	struct window w;
	uint64_t s;

	window_init(&w, 5000000000ULL);
	for (s = 1; s <= 10; s++)
		push(&w, s);
	ok(w.nticks == 6 && w.ticks[0].t_ns == 5000000000ULL && w.ticks[5].t_ns == 10000000000ULL,
	   "a 5s window at t=10s keeps 5s..10s, the 5s tick exactly at the boundary (%zu ticks)", w.nticks);
	ok(tick_frame(&w.ticks[0], "things") != NULL && !push_kept_frames,
	   "the window took each pushed tick's frames");
	window_set(&w, 2000000000ULL);
	ok(w.nticks == 3 && w.ticks[0].t_ns == 8000000000ULL, "shrinking to 2s evicts down to 8s..10s");
	window_set(&w, 60000000000ULL);
	push(&w, 11);
	ok(w.nticks == 4, "growing the window evicts nothing");
	window_clear(&w);
	ok(w.nticks == 0, "clear empties the window");
	push(&w, 1);
	window_done(&w);
}

/* A tick of n rows, each a histogram of one or two values, as a fork loop's
 * syscalls make them. */
static void sparse_tick(struct tick *t, uint64_t t_s, size_t n)
{
	struct frame *f;
	struct hist h;
	size_t i;

	tick_init(t, t_s * 1000000000ULL);
	f = frame_new(&sch, t->t_ns, 1000000000);
	for (i = 0; i < n; i++) {
		union cell *r = frame_add_row(f);

		hist_init(&h);
		hist_add(&h, 1000 + 37 * (t_s + i));
		if (i % 2)
			hist_add_n(&h, 250000, 3);
		r[0].u = 1000 + i;
		cell_set_str(&r[1], "true");
		cell_set_hist(&r[2], &h);
	}
	tick_add(t, f);
}

/* Check a window bounded by memory: the oldest ticks go, what stays fits. */
static void test_window_bytes(void)
{
	const uint64_t max = 8ULL << 20;
	uint64_t per, sum, over = 0;
	struct window w;
	struct tick t;
	size_t i, k;
	int consecutive = 1;

	sparse_tick(&t, 0, 2000);
	per = tick_bytes(&t);
	tick_done(&t);
	ok(per < 2000 * 400, "a tick of 2000 rows of sparse histograms holds %llu KiB "
	   "(under 400 bytes a row; a dense histogram alone is %zu)",
	   (unsigned long long)(per >> 10), sizeof(struct hist));

	window_init(&w, UINT64_MAX);
	window_set_bytes(&w, max);
	for (i = 1; i <= 500; i++) {
		sparse_tick(&t, i, 2000);
		window_push(&w, &t);
		if (w.bytes > max)
			over++;
	}
	for (sum = 0, k = 0; k < w.nticks; k++) {
		sum += tick_bytes(&w.ticks[k]);
		if (k && w.ticks[k].t_ns != w.ticks[k - 1].t_ns + 1000000000ULL)
			consecutive = 0;
	}
	ok(!over && sum == w.bytes, "500 ticks of %llu KiB pushed under an 8 MiB bound: the "
	   "ticks kept always held at most the bound (%llu KiB in %zu ticks, counted right)",
	   (unsigned long long)(per >> 10), (unsigned long long)(w.bytes >> 10), w.nticks);
	ok(w.nticks > 1 && w.nticks < 500 && consecutive &&
	   w.ticks[w.nticks - 1].t_ns == 500000000000ULL && w.bytes + per > max,
	   "the oldest went first: ticks %llu..500 are kept, as many as fit",
	   (unsigned long long)(w.ticks[0].t_ns / 1000000000ULL));
	ok(w.dropped >= (500 - w.nticks) * per / 2, "the dropped ticks are counted (%llu KiB)",
	   (unsigned long long)(w.dropped >> 10));
	window_set_bytes(&w, 1);
	ok(w.nticks == 1 && w.ticks[0].t_ns == 500000000000ULL,
	   "a bound smaller than one tick keeps the newest");
	window_set_bytes(&w, 0);
	sparse_tick(&t, 501, 10);
	window_push(&w, &t);
	ok(w.nticks == 2 && !w.bytes, "no bound: nothing is dropped or counted");
	window_done(&w);
}

int main(void)
{
	test_frames();
	test_dup();
	test_tick();
	test_tick_lengths();
	test_window();
	test_window_bytes();
	tap_done();
}
