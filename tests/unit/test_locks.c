/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The locks view without root: what its queries push down to the kernel,
 * the shape of its tables (tui/detail.h's contract), core/symbols on this
 * very program (functions, data, file:line) and on kallsyms, and its
 * timeline (probes/locks/locks_timeline.c) on synthetic records.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "core/symbols.h"
#include "probes/locks/locks.h"
#include "probes/locks/locks_schema.h"
#include "probes/locks/locks_timeline.h"
#include "queries/query.h"
#include "tap.h"

/* A data object and a function for the symbolizer to find. */
int locks_test_object[64];

__attribute__((noinline)) int locks_test_function(int x)
{
	return x * 3 + locks_test_object[x & 63];
}

/* Parse, bind to schema s and push down into f; false on error. */
static bool plan(const char *text, const struct schema *s, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	bool good = q && !query_bind(q, s, &err);

	if (!good)
		printf("# %s: %s\n", text, err.msg);
	else
		query_pushdown(q, f);
	query_free(q);
	return good;
}

/* The pushdown of locks queries: pid, comm and wait go down, kind stays. */
static void test_pushdown(void)
{
	struct filter_prog f;

	ok(plan("from locks where pid == 42 and wait > 1ms threshold 1us sample 1/10",
		&locks_schema, &f) && f.n == 3 && f.e[0].op == FOP_EQ && f.e[0].term == FTERM_PID &&
	   f.e[0].value == 42 && f.e[1].op == FOP_GT && f.e[1].term == FTERM_LAT &&
	   f.e[1].value == 1000000 && f.e[2].op == FOP_AND && f.needs_lat &&
	   f.threshold_ns == 1000 && f.sample_n == 10,
	   "pid == 42 and wait > 1ms: two pushed terms, THRESHOLD 1us and SAMPLE 1/10");
	ok(plan("from locks where comm ~ 'req*'", &locks_schema, &f) && f.n == 1 &&
	   f.e[0].op == FOP_PREFIX && f.e[0].term == FTERM_COMM && !strcmp(f.strs[0], "req"),
	   "comm ~ 'req*' goes down as a prefix test");
	ok(plan("from locks where kind == 'mutex' and holder_comm == 'bgsnap'", &locks_schema, &f) &&
	   f.n == 0, "kind and holder_comm stay in user space (nothing pushed)");
	ok(plan("from lock_events where tid == 7 and wait >= 10us", &lock_events_schema, &f) &&
	   f.n == 3 && f.e[0].term == FTERM_TID && f.e[1].term == FTERM_LAT && f.needs_lat,
	   "lock_events: tid and wait go down");
	ok(plan("from locks where cgroup == 'cgroup:77' and wait > 1ms", &locks_schema, &f) &&
	   f.n == 3 && f.e[0].op == FOP_EQ && f.e[0].term == FTERM_CGROUP && f.e[0].value == 77 &&
	   f.e[1].term == FTERM_LAT && f.needs_lat,
	   "cgroup goes down: the waiter's, tested in its context");
	ok(plan("from lock_events where cgroup != 'cgroup:77'", &lock_events_schema, &f) &&
	   f.n == 1 && f.e[0].op == FOP_NE && f.e[0].term == FTERM_CGROUP,
	   "lock_events: cgroup goes down");
}

/* Check that table t has field name of type ft with flags including fl. */
static bool has_field(const struct schema *t, const char *name, enum ftype ft, unsigned fl)
{
	int i = schema_field(t, name);

	return i >= 0 && t->fields[i].type == ft && (t->fields[i].flags & fl) == fl;
}

/* The tables follow tui/detail.h: T_events with ts and id, T_spans keyed by id and row. */
static void test_schemas(void)
{
	ok(!strcmp(lock_events_schema.table, "lock_events") &&
	   !strcmp(lock_spans_schema.table, "lock_spans"),
	   "locks' events and spans tables are named lock_events and lock_spans");
	ok(has_field(&lock_events_schema, "ts", FT_U64, FF_KEY) &&
	   has_field(&lock_events_schema, "id", FT_U64, 0),
	   "lock_events has ts and id (FT_U64)");
	ok(has_field(&lock_spans_schema, "id", FT_U64, FF_KEY) &&
	   has_field(&lock_spans_schema, "row", FT_STR, FF_KEY) &&
	   has_field(&lock_spans_schema, "start", FT_U64, 0) &&
	   has_field(&lock_spans_schema, "dur", FT_DUR, 0) &&
	   has_field(&lock_spans_schema, "kind", FT_STR, 0) &&
	   has_field(&lock_spans_schema, "label", FT_STR, 0),
	   "lock_spans has id, row, start, dur, kind, label as tui/detail.h says");
	ok(has_field(&locks_schema, "lock", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "kind", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "pid", FT_U64, FF_KEY | FF_PUSH) &&
	   has_field(&locks_schema, "comm", FT_STR, FF_KEY | FF_PUSH) &&
	   has_field(&locks_schema, "holder", FT_U64, FF_KEY) &&
	   has_field(&locks_schema, "holder_comm", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "holder_fn", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "count", FT_U64, FF_SUM) &&
	   has_field(&locks_schema, "wait", FT_HIST, FF_PUSH) &&
	   has_field(&locks_schema, "hold", FT_HIST, 0) &&
	   has_field(&locks_schema, "cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN) &&
	   has_field(&locks_schema, "unit", FT_STR, FF_KEY | FF_HIDDEN) &&
	   has_field(&locks_schema, "container", FT_STR, FF_KEY | FF_HIDDEN) &&
	   has_field(&lock_events_schema, "cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN) &&
	   has_field(&lock_events_schema, "container", FT_STR, FF_KEY | FF_HIDDEN),
	   "locks has the fields the view and its queries use");
}

/* Return the address of name in /proc/kallsyms (0 if unreadable or hidden). */
static uint64_t kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long addr = 0, a;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) &&
		    !strchr(line, '[')) {
			addr = a;
			break;
		}
	fclose(f);
	return addr;
}

static void test_symbols(void)
{
	struct symbols *s = symbols_new();
	uint64_t fn = (uint64_t)(uintptr_t)&locks_test_function;
	uint64_t obj = (uint64_t)(uintptr_t)&locks_test_object[10];
	uint64_t k = kallsyms_addr("schedule");
	struct sym_loc loc;
	char buf[256];

	ok(symbols_user(s, (uint32_t)getpid(), fn + 4, false, &loc) && loc.func &&
	   !strcmp(loc.func, "locks_test_function") && loc.off == 4 && loc.main,
	   "a function of this program: name, offset, and in the main object (%s)",
	   loc.func ? loc.func : "none");
	if (symbols_have_lines())
		ok(loc.file && !strcmp(loc.file, "test_locks.c") && loc.line >= 22 && loc.line <= 26,
		   "its file:line from DWARF (%s:%d)", loc.file ? loc.file : "none", loc.line);
	else
		skip("built without libdw: no file:line");
	ok(!strcmp(sym_format(&loc, fn + 4, true, buf, sizeof(buf)), "locks_test_function+0x4") ||
	   !strncmp(buf, "locks_test_function+0x4 (test_locks.c:", 38),
	   "formatted as function+offset (file:line) (%s)", buf);
	ok(symbols_user(s, (uint32_t)getpid(), obj, false, &loc) && loc.func &&
	   !strcmp(loc.func, "locks_test_object") && loc.off == 40,
	   "a data object (a lock's symbol): name and offset (%s+%llu)",
	   loc.func ? loc.func : "none", (unsigned long long)loc.off);
	ok(!symbols_user(s, (uint32_t)getpid(), 8, false, &loc), "an unmapped address resolves to nothing");
	if (k) {
		ok(symbols_kernel(s, k + 1, false, &loc) && loc.func && !strcmp(loc.func, "schedule") &&
		   loc.off == 1, "a kernel function through kallsyms (%s)", loc.func ? loc.func : "none");
	} else {
		skip("kallsyms addresses are hidden here (kptr_restrict)");
	}
	symbols_free(s);
}

/* rels from (tid, since, end) triples; tid 0 leaves a slot empty. */
static void set_rels(struct lk_rel *rels, const uint64_t (*v)[3])
{
	for (int i = 0; i < LK_RELS; i++)
		rels[i] = (struct lk_rel){.tid = (__u32)v[i][0], .since_ns = v[i][1], .end_ns = v[i][2]};
}

/*
 * When a holder's contended hold began, for a wait from 100 to 1000: its own
 * taking of the lock when seen; from the wait's start when it took the lock
 * unseen but nobody else let go of it since; unknown (empty) otherwise.
 */
static void test_rel_since(void)
{
	struct lk_rel r[LK_RELS];

	set_rels(r, (const uint64_t[][3]){{7, 50, 900}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 50, "a seen taking of the lock is the hold's start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 100, "taken unseen, the only release: held from the wait's start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 20, 60}, {9, 60, 80}, {5, 80, 95}});
	ok(lk_rel_since(r, 0, 100) == 100, "taken unseen, every other release before the wait: from its start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 20, 300}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 900, "taken unseen after another release in the wait: unknown");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 200, 950}, {9, 950, 960}, {5, 960, 970}});
	ok(lk_rel_since(r, 0, 100) == 900,
	   "taken unseen, the oldest of four full slots: an older release may be in the wait, unknown");
	set_rels(r, (const uint64_t[][3]){{7, 40, 40}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 40, "a release before the wait is left as it is");
}

/* ---- the timeline, on synthetic records ---- */

#define MS 1000000ULL

/* A wait of tid in process 50 on lock addr from start to end (ms). */
static struct lk_wait_rec wait_rec(uint32_t tid, uint64_t addr, uint64_t start, uint64_t end)
{
	struct lk_wait_rec w = {.type = LR_WAIT, .tgid = 50, .tid = tid, .addr = addr,
				.start_ns = start * MS, .end_ns = end * MS, .kind = LK_MUTEX,
				.kstack = -1};

	snprintf(w.comm, sizeof(w.comm), "w%u", tid);
	snprintf(w.process, sizeof(w.process), "proc");
	return w;
}

/* Set release i of w: tid held it from since to end (ns). */
static void rel(struct lk_wait_rec *w, int i, uint32_t tid, uint64_t since, uint64_t end)
{
	w->rels[i] = (struct lk_rel){.tid = tid, .since_ns = since, .end_ns = end};
	snprintf(w->rel_comms[i], sizeof(w->rel_comms[i]), "h%u", tid);
}

/* Make thread 201 ("h201") w's holder, holding from start to end (ns). */
static void held_by_201(struct lk_wait_rec *w, uint64_t start, uint64_t end)
{
	w->holder = 201;
	snprintf(w->holder_comm, sizeof(w->holder_comm), "h201");
	w->hold_start_ns = start;
	w->hold_end_ns = end;
}

/* Feed a sample of holder tid of lock addr at ts (ns) in function fn. */
static void sample(struct lk_timeline *tl, uint32_t tid, uint64_t addr, uint64_t ts,
		   const char *fn)
{
	struct lk_sample_rec r = {.type = LR_SAMPLE, .tgid = 50, .tid = tid, .lock_tgid = 50,
				  .addr = addr, .ts_ns = ts, .ustack = -1, .kstack = -1};

	lkt_add_sample(tl, &r, xstrdup(fn), xasprintf("%s < main", fn));
}

static void offcpu(struct lk_timeline *tl, uint32_t tid, uint64_t addr, uint64_t start,
		   uint64_t end, uint32_t state)
{
	struct lk_off_rec r = {.type = LR_OFFCPU, .tid = tid, .tgid = 50, .state = state,
			       .addr = addr, .start_ns = start, .end_ns = end};

	lkt_add_off(tl, &r);
}

/* The number of spans of wait id on row of kind; the first one in *lo, *hi, *label. */
static int span_find(const struct frame *f, uint64_t id, const char *row, const char *kind,
		     uint64_t *lo, uint64_t *hi, const char **label)
{
	int n = 0;

	for (size_t i = 0; i < f->nrows; i++) {
		const union cell *r = frame_row(f, i);

		if (r[LS_ID].u != id || strcmp(r[LS_ROW].s, row) || strcmp(r[LS_KIND].s, kind))
			continue;
		if (!n++) {
			if (lo)
				*lo = r[LS_START].u;
			if (hi)
				*hi = r[LS_START].u + r[LS_DUR].u;
			if (label)
				*label = r[LS_LABEL].s;
		}
	}
	return n;
}

/* Return whether some span of f has id (its wait's timeline was drawn). */
static bool drawn(const struct frame *f, uint64_t id)
{
	for (size_t i = 0; i < f->nrows; i++)
		if (frame_row(f, i)[LS_ID].u == id)
			return true;
	return false;
}

/*
 * A wait from 10 to 100 ms that two holders ended: 200 held the lock from
 * 5 to 40 ms, 201 (the one holding it longest) from 40 to 100.  201 ran
 * work() for three samples in a row, work() again after a gap, then other(),
 * and was in I/O wait from 70 to 120 ms (and asleep on another lock before).
 */
static void test_timeline_two_holders(void)
{
	struct lk_timeline tl;
	struct lk_wait_rec w = wait_rec(100, 0x1000, 10, 100);
	struct frame *ev = frame_new(&lock_events_schema, 0, 0);
	struct frame *sp = frame_new(&lock_spans_schema, 0, 0);
	uint64_t p = 1000000000ULL / LK_SAMPLE_HZ, lo = 0, hi = 0;
	const char *label = "";
	const union cell *r;
	struct lkt_wait *we;

	lkt_init(&tl, 5, 1000);
	held_by_201(&w, 40 * MS, 100 * MS);
	rel(&w, 0, 200, 5 * MS, 40 * MS);
	rel(&w, 1, 201, 40 * MS, 100 * MS);
	sample(&tl, 200, 0x1000, 20 * MS, "prep");
	sample(&tl, 201, 0x1000, 50 * MS, "work");
	sample(&tl, 201, 0x1000, 50 * MS + p, "work");
	sample(&tl, 201, 0x1000, 50 * MS + 2 * p, "work");
	sample(&tl, 201, 0x1000, 60 * MS, "work");
	sample(&tl, 201, 0x1000, 61 * MS, "other");
	sample(&tl, 201, 0x1000, 150 * MS, "later");
	offcpu(&tl, 201, 0x1000, 70 * MS, 120 * MS, LO_IO);
	offcpu(&tl, 202, 0x1000, 70 * MS, 120 * MS, LO_RUNQ);
	offcpu(&tl, 201, 0x2000, 0, 5 * MS, LO_SLEEP);
	we = lkt_add_wait(&tl, &w);
	we->sym = xstrdup("the_lock");
	lkt_rows(&tl, ev, sp);

	ok(ev->nrows == 1, "one wait: one lock_events row (%zu)", ev->nrows);
	r = frame_row(ev, 0);
	ok(r[LE_ID].u == 1000 && r[LE_TS].u == 100 * MS + 5 && !strcmp(r[LE_SYM].s, "the_lock") &&
	   !strcmp(r[LE_KIND].s, "mutex") && r[LE_TID].u == 100 && !strcmp(r[LE_COMM].s, "w100"),
	   "the event: id, end time on the boot clock, lock, kind and waiter");
	ok(r[LE_HOLDER].u == 201 && !strcmp(r[LE_HOLDER_COMM].s, "h201") &&
	   r[LE_WAIT].u == 90 * MS && r[LE_HOLD].u == 60 * MS,
	   "the event names the holder that held longest, with wait 90 ms and hold 60 ms");
	ok(r[LE_SAMPLES].u == 5 && !strcmp(r[LE_HOLDER_FN].s, "work") &&
	   !strcmp(r[LE_HOLDER_STACK].s, "work < main"),
	   "its holder's samples in the hold: 5, mostly work (%llu, %s)",
	   (unsigned long long)r[LE_SAMPLES].u, r[LE_HOLDER_FN].s);
	ok(r[LE_HOLDER_OFFCPU].u == 30 * MS && r[LE_HOLDER_IO].u == 30 * MS &&
	   r[LE_HOLDER_RUNQ].u == 0,
	   "its holder's I/O wait clipped to the hold: 30 ms (%llu)",
	   (unsigned long long)r[LE_HOLDER_OFFCPU].u);

	ok(span_find(sp, 1000, "waiter 100 w100", "wait", &lo, &hi, &label) == 1 &&
	   lo == 10 * MS + 5 && hi == 100 * MS + 5 && !strcmp(label, "the_lock"),
	   "the waiter's row: its wait, labelled with the lock");
	ok(span_find(sp, 1000, "holder 200 h200", "hold", &lo, &hi, NULL) == 1 &&
	   lo == 10 * MS + 5 && hi == 40 * MS + 5,
	   "the first holder's hold, clipped to the wait: 10 to 40 ms");
	ok(span_find(sp, 1000, "holder 200 h200", "oncpu", &lo, &hi, &label) == 1 &&
	   !strcmp(label, "prep") && lo == 20 * MS - p + 5 && hi == 20 * MS + 5,
	   "its one sample: one sample period of prep");
	ok(span_find(sp, 1000, "holder 201 h201", "hold", &lo, &hi, NULL) == 1 &&
	   lo == 40 * MS + 5 && hi == 100 * MS + 5,
	   "the second holder's hold: 40 to 100 ms");
	ok(span_find(sp, 1000, "holder 201 h201", "oncpu", &lo, &hi, &label) == 3 &&
	   !strcmp(label, "work") && lo == 50 * MS - p + 5 && hi == 50 * MS + 2 * p + 5,
	   "its samples in runs: work x3 merged, work after a gap, other (3 spans)");
	ok(span_find(sp, 1000, "holder 201 h201", "offcpu", &lo, &hi, &label) == 1 &&
	   lo == 70 * MS + 5 && hi == 100 * MS + 5 && !strcmp(label, "I/O wait"),
	   "its off-CPU span clipped to the hold: 70 to 100 ms, I/O wait");
	ok(sp->nrows == 8, "nothing else drawn: no span of another thread (%zu spans)", sp->nrows);
	ok(lkt_waiters(&tl, &(struct lk_key){0x1000, 50, 201, LK_MUTEX, 0}) == 1 &&
	   lkt_waiters(&tl, &(struct lk_key){0x1000, 50, 200, LK_MUTEX, 0}) == 0 &&
	   lkt_lock_offcpu(&tl, 201, 0x1000) == 50 * MS &&
	   lkt_lock_samples(&tl, 50, 0x1000, 201) == 6,
	   "the locks row of (lock, 201): one waiter, 50 ms off CPU, 6 samples this tick");
	ok(lkt_waiters(&tl, &(struct lk_key){0x1000, 50, LKT_ANY_HOLDER, LK_MUTEX, 0}) == 1 &&
	   lkt_lock_offcpu(&tl, LKT_ANY_HOLDER, 0x1000) == 100 * MS &&
	   lkt_lock_samples(&tl, 50, 0x1000, LKT_ANY_HOLDER) == 7,
	   "the lock's row keyed without its holder: its waiter, every holder's samples (7) and "
	   "off-CPU time on it (201's and 202's: 100 ms)");
	frame_free(ev);
	frame_free(sp);
	lkt_age(&tl);
	lkt_free(&tl);
}

/* Draw the timeline of w alone; return the spans. */
static struct frame *spans_of(struct lk_wait_rec w)
{
	struct lk_timeline tl;
	struct frame *ev = frame_new(&lock_events_schema, 0, 0);
	struct frame *sp = frame_new(&lock_spans_schema, 0, 0);

	lkt_init(&tl, 0, 1);
	lkt_add_wait(&tl, &w);
	lkt_rows(&tl, ev, sp);
	frame_free(ev);
	lkt_free(&tl);
	return sp;
}

/*
 * A holder that took the lock unseen (since == end in its release) held it
 * from the wait's start when no other release came between; the named
 * holder not among the releases is drawn from its own hold.
 */
static void test_timeline_unseen(void)
{
	struct lk_wait_rec w = wait_rec(100, 0x1000, 10, 100);
	uint64_t lo = 0, hi = 0;
	struct frame *sp;

	w.holder = 201;
	rel(&w, 0, 201, 100 * MS, 100 * MS);
	sp = spans_of(w);
	ok(span_find(sp, 1, "holder 201 h201", "hold", &lo, &hi, NULL) == 1 && lo == 10 * MS &&
	   hi == 100 * MS, "taken unseen, the only release: a hold from the wait's start");
	frame_free(sp);

	rel(&w, 1, 199, 5 * MS, 30 * MS);
	sp = spans_of(w);
	ok(span_find(sp, 1, "holder 199 h199", "hold", &lo, &hi, NULL) == 1 && lo == 10 * MS &&
	   hi == 30 * MS && !span_find(sp, 1, "holder 201 h201", "hold", NULL, NULL, NULL),
	   "taken unseen after another release in the wait: no hold drawn for it");
	ok(span_find(sp, 1, "holder 201 h201", "release", &lo, &hi, NULL) == 1 &&
	   lo == 100 * MS && hi == 100 * MS,
	   "but its row, with its release at 100 ms: a mark of no length");
	ok(span_find(sp, 1, "holder 199 h199", "release", NULL, NULL, NULL) == 0,
	   "a release whose hold is drawn has no mark of its own");
	frame_free(sp);

	w = wait_rec(100, 0x1000, 10, 100);
	w.holder = 300;
	snprintf(w.holder_comm, sizeof(w.holder_comm), "h300");
	w.hold_end_ns = 80 * MS;
	sp = spans_of(w);
	ok(span_find(sp, 1, "holder 300 h300", "hold", &lo, &hi, NULL) == 1 && lo == 10 * MS &&
	   hi == 80 * MS, "a holder with no release recorded: its hold from the wait's start");
	frame_free(sp);
}

/*
 * A stack is deleted at a tick's end only when it was last handed out
 * before that tick's ring was read, the ticks counted modulo 2^32.
 */
static void test_stacks_stale(void)
{
	ok(lkt_stack_stale(6, 7) && !lkt_stack_stale(7, 7) && !lkt_stack_stale(8, 7),
	   "handed out in an earlier tick: stale; in this one or after (its record unread): kept");
	ok(lkt_stack_stale(0xfffffffeU, 1) && !lkt_stack_stale(1, 0xfffffffeU),
	   "across the counter's wrap");
}

/*
 * A barging holder releases its lock again and again while one thread
 * waits: most of its samples are releases whose stack could not be named
 * ("?", stack ""), one a tick inside its own code.  The wait names the one
 * that names a function, and counts them all.
 */
static void test_timeline_unnamed(void)
{
	struct lk_timeline tl;
	struct lk_wait_rec w = wait_rec(100, 0x1000, 10, 100);
	struct frame *ev = frame_new(&lock_events_schema, 0, 0);
	struct frame *sp = frame_new(&lock_spans_schema, 0, 0);
	struct lk_sample_rec q = {.type = LR_SAMPLE, .tgid = 50, .tid = 201, .lock_tgid = 50,
				  .addr = 0x1000, .ustack = -1, .kstack = -1, .why = LS_RELEASE};
	const union cell *r;
	struct lkt_wait *we;

	lkt_init(&tl, 0, 1);
	held_by_201(&w, 10 * MS, 100 * MS);
	for (int i = 0; i < 3; i++) {
		q.ts_ns = (20 + i) * MS;
		lkt_add_sample(&tl, &q, xstrdup("?"), xstrdup(""));
	}
	sample(&tl, 201, 0x1000, 30 * MS, "request_main");
	we = lkt_add_wait(&tl, &w);
	we->sym = xstrdup("the_lock");
	lkt_rows(&tl, ev, sp);
	r = frame_row(ev, 0);
	ok(ev->nrows == 1 && r[LE_SAMPLES].u == 4 && !strcmp(r[LE_HOLDER_FN].s, "request_main") &&
	   !strcmp(r[LE_HOLDER_STACK].s, "request_main < main"),
	   "3 unnamed samples and 1 in request_main: holder_fn request_main, 4 samples (%llu, %s)",
	   (unsigned long long)r[LE_SAMPLES].u, r[LE_HOLDER_FN].s);
	frame_free(ev);
	frame_free(sp);
	lkt_free(&tl);
}

/*
 * A holder's samples on another lock it holds, in the same time, are not
 * this wait's: a wait joins only samples of its holder on its own lock.
 */
static void test_timeline_other_lock(void)
{
	struct lk_timeline tl;
	struct lk_wait_rec w = wait_rec(100, 0x1000, 10, 100);
	struct frame *ev = frame_new(&lock_events_schema, 0, 0);
	struct frame *sp = frame_new(&lock_spans_schema, 0, 0);
	const union cell *r;
	struct lkt_wait *we;

	lkt_init(&tl, 0, 1);
	held_by_201(&w, 10 * MS, 100 * MS);
	sample(&tl, 201, 0x1000, 20 * MS, "flush_journal");
	sample(&tl, 201, 0x2000, 30 * MS, "other_lock_fn");
	sample(&tl, 201, 0x2000, 40 * MS, "other_lock_fn");
	we = lkt_add_wait(&tl, &w);
	we->sym = xstrdup("the_lock");
	lkt_rows(&tl, ev, sp);
	r = frame_row(ev, 0);
	ok(ev->nrows == 1 && r[LE_SAMPLES].u == 1 && !strcmp(r[LE_HOLDER_FN].s, "flush_journal"),
	   "a wait counts only its holder's samples on its lock (%llu, %s)",
	   (unsigned long long)r[LE_SAMPLES].u, r[LE_HOLDER_FN].s);
	ok(!span_find(sp, 1, "holder 201 h201", "oncpu", NULL, NULL, NULL) ||
	   span_find(sp, 1, "holder 201 h201", "oncpu", NULL, NULL, NULL) == 1,
	   "its timeline draws no run of the other lock's function");
	for (size_t i = 0; i < sp->nrows; i++)
		ok(strcmp(frame_row(sp, i)[LS_LABEL].s, "other_lock_fn"),
		   "span %zu is not the other lock's function", i);
	ok(lkt_lock_samples(&tl, 50, 0x1000, 201) == 1 && lkt_lock_samples(&tl, 50, 0x2000, 201) == 2,
	   "samples counted per lock");
	frame_free(ev);
	frame_free(sp);
	lkt_free(&tl);
}

/*
 * Of 40 waits on one lock in a tick, the timelines of the 4 longest and of
 * the 32 newest are drawn; a wait on another lock is drawn too.  Other
 * waiters of the lock in the same time show on a timeline, at most 6.
 */
static void test_timeline_ranking(void)
{
	struct lk_timeline tl;
	struct frame *ev = frame_new(&lock_events_schema, 0, 0);
	struct frame *sp = frame_new(&lock_spans_schema, 0, 0);
	bool good = true;
	int i, others;

	lkt_init(&tl, 0, 0);
	for (i = 0; i < 40; i++) {
		/* The oldest four are the longest. */
		uint64_t end = 1000 + (uint64_t)i, len = i < 4 ? 500 + (uint64_t)i : 100;

		lkt_add_wait(&tl, &(struct lk_wait_rec){0});
		tl.waits.v[tl.waits.n - 1].r = wait_rec(100 + (uint32_t)i, 0x1000, end - len, end);
	}
	lkt_add_wait(&tl, &(struct lk_wait_rec){0});
	tl.waits.v[40].r = wait_rec(99, 0x2000, 0, 2);
	lkt_rows(&tl, ev, sp);
	ok(ev->nrows == 41, "every wait is an event (%zu)", ev->nrows);
	for (i = 0; i < 40; i++)
		good &= drawn(sp, (uint64_t)i) == (i < 4 || i >= 8);
	ok(good, "the 4 longest and the 32 newest waits of a lock are drawn, no other");
	ok(drawn(sp, 40), "the wait on another lock is drawn");
	others = 0;
	for (i = 0; i < 40; i++) {
		char row[32];

		snprintf(row, sizeof(row), "waiter %d w%d", 100 + i, 100 + i);
		others += i != 0 && span_find(sp, 0, row, "wait", NULL, NULL, NULL);
	}
	ok(others == LKT_SPAN_OTHERS, "the longest wait's timeline shows 6 other waiters (%d)",
	   others);
	frame_free(ev);
	frame_free(sp);
	lkt_free(&tl);
}

/* Samples are joined for a tick after theirs, then dropped. */
static void test_timeline_ageing(void)
{
	struct lk_timeline tl;
	struct lk_wait_rec w = wait_rec(100, 0x1000, 10, 100);
	uint64_t got[3];
	int t;

	w.holder = 201;
	w.hold_end_ns = 100 * MS;
	lkt_init(&tl, 0, 0);
	sample(&tl, 201, 0x1000, 50 * MS, "work");
	for (t = 0; t < 3; t++) {
		struct frame *ev = frame_new(&lock_events_schema, 0, 0);
		struct frame *sp = frame_new(&lock_spans_schema, 0, 0);

		if (t)
			lkt_add_wait(&tl, &w);
		lkt_rows(&tl, ev, sp);
		got[t] = ev->nrows == 1 ? frame_row(ev, 0)[LE_SAMPLES].u : 99;
		frame_free(ev);
		frame_free(sp);
		lkt_age(&tl);
	}
	ok(got[0] == 99 && got[1] == 1 && got[2] == 0 && tl.waits.n == 1 && tl.samples.n == 0,
	   "a sample counts for a wait of the next tick, not the one after (%llu, %llu)",
	   (unsigned long long)got[1], (unsigned long long)got[2]);
	lkt_free(&tl);
}

/* Counted functions, the sticky holder_fns set and known mutexes. */
static void test_timeline_fns(void)
{
	struct lk_timeline tl;
	char buf[128];
	int i;

	lkt_init(&tl, 0, 0);
	for (i = 0; i < 5; i++)
		sample(&tl, 201, 0x1000, (uint64_t)i, "a");
	for (i = 0; i < 3; i++)
		sample(&tl, 202, 0x1000, (uint64_t)i, "b");
	sample(&tl, 202, 0x1000, 9, "c");
	sample(&tl, 202, 0x1000, 9, "a");
	for (i = 0; i < 7; i++)
		sample(&tl, 204, 0x1000, (uint64_t)i, "?");
	lkt_top_fns(&tl, 50, 0x1000, buf, sizeof(buf));
	ok(!strcmp(lkt_holder_fn(&tl, 50, 0x1000, 202), "b") && !strcmp(buf, "a, b, c") &&
	   lkt_lock_samples(&tl, 50, 0x1000, 202) == 5,
	   "holder_fn of one holder, holder_fns over all its holders, most first, no \"?\" (%s)",
	   buf);
	for (i = 0; i < 5; i++)
		sample(&tl, 203, 0x1000, (uint64_t)i, "d");
	lkt_top_fns(&tl, 50, 0x1000, buf, sizeof(buf));
	ok(!strcmp(buf, "a, b, c"), "a new function with a few samples leaves the set (%s)", buf);
	for (i = 0; i < 10; i++)
		sample(&tl, 203, 0x1000, (uint64_t)i, "d");
	lkt_top_fns(&tl, 50, 0x1000, buf, sizeof(buf));
	ok(!strcmp(buf, "d, a, b"), "with twice the samples (and 4) it takes the least one's place (%s)",
	   buf);
	ok(!strcmp(lkt_kind_label(&tl, 50, 0x1000, LK_LLL), "lll"), "a glibc lock is lll ...");
	lkt_mutex_learn(&tl, 50, 0x1000, LK_MUTEX);
	ok(!strcmp(lkt_kind_label(&tl, 50, 0x1000, LK_LLL), "mutex") &&
	   !strcmp(lkt_kind_label(&tl, 51, 0x1000, LK_LLL), "lll"),
	   "... until a wait on it saw its owner: a mutex (in that process only)");
	lkt_free(&tl);
}

/* What is remembered across ticks starts over past LKT_MAX_REMEMBERED entries. */
static void test_timeline_bounded(void)
{
	struct lk_timeline tl;
	char buf[64];
	uint32_t i;
	size_t kept[3];

	lkt_init(&tl, 0, 0);
	for (i = 0; i < LKT_MAX_REMEMBERED; i++) {
		sample(&tl, 1000 + i, 0x1000, i, "f");
		lkt_top_fns(&tl, 50, 0x1000 + i, buf, sizeof(buf));
		lkt_mutex_learn(&tl, 50, 0x1000 + i, LK_MUTEX);
	}
	lkt_age(&tl);
	lkt_age(&tl);
	kept[0] = tl.fncounts.n;
	kept[1] = tl.topfns.n;
	kept[2] = tl.mutexes.n;
	ok(kept[0] == LKT_MAX_REMEMBERED && kept[1] == LKT_MAX_REMEMBERED &&
	   kept[2] == LKT_MAX_REMEMBERED && !strcmp(lkt_holder_fn(&tl, 50, 0x1000, 1000), "f"),
	   "up to %d (lock, holder) function counts, holder_fns sets and mutexes are kept",
	   LKT_MAX_REMEMBERED);
	sample(&tl, 999, 0x1000, 0, "f");
	lkt_top_fns(&tl, 50, 0x999, buf, sizeof(buf));
	lkt_mutex_learn(&tl, 50, 0x999, LK_MUTEX);
	lkt_age(&tl);
	ok(tl.fncounts.n == 0 && tl.topfns.n == 0 && tl.mutexes.n == 0 &&
	   !strcmp(lkt_holder_fn(&tl, 50, 0x1000, 1000), ""),
	   "one more and they start over (%zu, %zu, %zu)", tl.fncounts.n, tl.topfns.n,
	   tl.mutexes.n);
	lkt_free(&tl);
}

int main(void)
{
	test_rel_since();
	test_timeline_two_holders();
	test_timeline_unseen();
	test_timeline_other_lock();
	test_timeline_unnamed();
	test_stacks_stale();
	test_timeline_ranking();
	test_timeline_ageing();
	test_timeline_fns();
	test_timeline_bounded();
	test_pushdown();
	test_schemas();
	test_symbols();
	tap_done();
}
