/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The locks view's timeline: this tick's wait records, holder samples and
 * holder off-CPU spans into lock_events and lock_spans rows (see
 * locks_timeline.h).  No libbpf here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/cgroup.h"
#include "../../core/xalloc.h"
#include "locks_schema.h"
#include "locks_timeline.h"

void lkt_init(struct lk_timeline *tl, uint64_t boot_offset_ns, uint64_t next_id)
{
	memset(tl, 0, sizeof(*tl));
	tl->boot_offset_ns = boot_offset_ns;
	tl->next_id = next_id;
}

static void fncounts_clear(struct lk_timeline *tl)
{
	size_t i, j;

	for (i = 0; i < tl->fncounts.n; i++)
		for (j = 0; j < tl->fncounts.v[i].n; j++)
			free(tl->fncounts.v[i].fns[j].fn);
	tl->fncounts.n = 0;
}

static void topfns_clear(struct lk_timeline *tl)
{
	size_t i, j;

	for (i = 0; i < tl->topfns.n; i++) {
		for (j = 0; j < tl->topfns.v[i].n; j++)
			free(tl->topfns.v[i].names[j]);
		free(tl->topfns.v[i].text);
	}
	tl->topfns.n = 0;
}

void lkt_free(struct lk_timeline *tl)
{
	size_t i;

	fncounts_clear(tl);
	free(tl->fncounts.v);
	for (i = 0; i < tl->samples.n; i++) {
		free(tl->samples.v[i].fn);
		free(tl->samples.v[i].stack);
	}
	free(tl->samples.v);
	free(tl->offs.v);
	for (i = 0; i < tl->waits.n; i++)
		free(tl->waits.v[i].sym);
	free(tl->waits.v);
	free(tl->mutexes.v);
	topfns_clear(tl);
	free(tl->topfns.v);
	memset(tl, 0, sizeof(*tl));
}

static const char *kind_name(uint32_t kind)
{
	return kind < LK_NKINDS ? lock_kind_names[kind] : "?";
}

void lkt_mutex_learn(struct lk_timeline *tl, uint32_t tgid, uint64_t addr, uint32_t kind)
{
	size_t i;

	if (kind != LK_MUTEX)
		return;
	for (i = 0; i < tl->mutexes.n; i++)
		if (tl->mutexes.v[i].addr == addr && tl->mutexes.v[i].tgid == tgid)
			return;
	*VEC_PUSH(tl->mutexes) = (struct lk_key){.addr = addr, .tgid = tgid};
}

const char *lkt_kind_label(const struct lk_timeline *tl, uint32_t tgid, uint64_t addr,
			   uint32_t kind)
{
	size_t i;

	if (kind == LK_LLL)
		for (i = 0; i < tl->mutexes.n; i++)
			if (tl->mutexes.v[i].addr == addr && tl->mutexes.v[i].tgid == tgid)
				return lock_kind_names[LK_MUTEX];
	return kind_name(kind);
}

bool lkt_kind_is_kernel(uint32_t kind)
{
	return kind >= LK_KSPIN;
}

void lkt_comm_copy(char *dst, const char *src)
{
	memcpy(dst, src, LK_COMM_LEN);
	dst[LK_COMM_LEN] = 0;
}

void lkt_thread_comm(uint32_t tgid, uint32_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* Return the function counts of (lock_tgid, addr, holder), or NULL. */
static struct lkt_fncount *fncount_find(const struct lk_timeline *tl, uint32_t lock_tgid,
					uint64_t addr, uint32_t holder)
{
	size_t i;

	for (i = 0; i < tl->fncounts.n; i++) {
		struct lkt_fncount *fc = &tl->fncounts.v[i];

		if (fc->addr == addr && fc->lock_tgid == lock_tgid && fc->holder == holder)
			return fc;
	}
	return NULL;
}

/* Return the function counts of (lock_tgid, addr, holder), creating them. */
static struct lkt_fncount *fncount_get(struct lk_timeline *tl, uint32_t lock_tgid,
				       uint64_t addr, uint32_t holder)
{
	struct lkt_fncount *fc = fncount_find(tl, lock_tgid, addr, holder);

	if (fc)
		return fc;
	fc = VEC_PUSH(tl->fncounts);
	memset(fc, 0, sizeof(*fc));
	fc->addr = addr;
	fc->lock_tgid = lock_tgid;
	fc->holder = holder;
	return fc;
}

/* Count fn once in fc; when full, the least counted function gives way. */
static void fncount_add(struct lkt_fncount *fc, const char *fn)
{
	size_t i, least = 0;

	for (i = 0; i < fc->n; i++) {
		if (!strcmp(fc->fns[i].fn, fn)) {
			fc->fns[i].count++;
			return;
		}
		if (fc->fns[i].count < fc->fns[least].count)
			least = i;
	}
	if (fc->n < LKT_MAX_FNS)
		least = fc->n++;
	else
		free(fc->fns[least].fn);
	fc->fns[least].fn = xstrdup(fn);
	fc->fns[least].count = 1;
}

const char *lkt_holder_fn(const struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr,
			  uint32_t holder)
{
	const struct lkt_fncount *fc = fncount_find(tl, lock_tgid, addr, holder);
	size_t i, best = 0;

	if (!fc || !fc->n)
		return "";
	for (i = 1; i < fc->n; i++)
		if (fc->fns[i].count > fc->fns[best].count)
			best = i;
	return fc->fns[best].fn;
}

/* A function and its samples over all holders of one lock. */
struct fnsum {
	const char *fn;
	uint64_t count;
};

/* Fill all with the lock's functions summed over its holders; return how many. */
static size_t lock_fn_sums(const struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr,
			   struct fnsum *all, size_t max)
{
	size_t i, j, k, n = 0;

	for (i = 0; i < tl->fncounts.n; i++) {
		const struct lkt_fncount *fc = &tl->fncounts.v[i];

		if (fc->addr != addr || fc->lock_tgid != lock_tgid)
			continue;
		for (j = 0; j < fc->n; j++) {
			for (k = 0; k < n && strcmp(all[k].fn, fc->fns[j].fn); k++)
				;
			if (k == n && n < max)
				all[n++] = (struct fnsum){fc->fns[j].fn, 0};
			if (k < n)
				all[k].count += fc->fns[j].count;
		}
	}
	return n;
}

/* Return the samples of fn in all (0 if absent). */
static uint64_t fn_sum(const struct fnsum *all, size_t n, const char *fn)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(all[i].fn, fn))
			return all[i].count;
	return 0;
}

/* Order function sums by count, most first (for qsort). */
static int fnsum_cmp(const void *a, const void *b)
{
	const struct fnsum *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->fn, y->fn);
}

void lkt_top_fns(struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr, char *buf,
		 size_t len)
{
	struct fnsum all[64], cur[3];
	struct lkt_topfns *t = NULL;
	size_t n, i, j, m, o = 0;
	bool changed = false;

	n = lock_fn_sums(tl, lock_tgid, addr, all, 64);
	/* A sample whose stack could not be read ("?": its process gone before
	 * it was read) names no function. */
	for (i = j = 0; i < n; i++)
		if (strcmp(all[i].fn, "?"))
			all[j++] = all[i];
	n = j;
	qsort(all, n, sizeof(all[0]), fnsum_cmp);
	for (i = 0; i < tl->topfns.n && !t; i++)
		if (tl->topfns.v[i].addr == addr && tl->topfns.v[i].lock_tgid == lock_tgid)
			t = &tl->topfns.v[i];
	if (!t) {
		t = VEC_PUSH(tl->topfns);
		memset(t, 0, sizeof(*t));
		t->addr = addr;
		t->lock_tgid = lock_tgid;
	}
	for (i = 0; i < n && i < 3; i++) {
		for (j = 0; j < t->n && strcmp(t->names[j], all[i].fn); j++)
			;
		if (j < t->n)
			continue;
		if (t->n < 3) {
			t->names[t->n++] = xstrdup(all[i].fn);
			changed = true;
			continue;
		}
		for (j = 1, m = 0; j < t->n; j++)
			if (fn_sum(all, n, t->names[j]) < fn_sum(all, n, t->names[m]))
				m = j;
		if (all[i].count >= 2 * fn_sum(all, n, t->names[m]) + 4) {
			free(t->names[m]);
			t->names[m] = xstrdup(all[i].fn);
			changed = true;
		}
	}
	if (changed || !t->text) {
		for (i = 0; i < t->n; i++)
			cur[i] = (struct fnsum){t->names[i], fn_sum(all, n, t->names[i])};
		qsort(cur, t->n, sizeof(cur[0]), fnsum_cmp);
		buf[0] = 0;
		for (i = 0; i < t->n && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", cur[i].fn);
		free(t->text);
		t->text = xstrdup(buf);
	}
	snprintf(buf, len, "%s", t->text);
}

/* Return the time in [lo, hi) that the spans of holder tid (every holder:
 * LKT_ANY_HOLDER) spent in state (any: -1). */
static uint64_t holder_off(const struct lk_timeline *tl, uint32_t tid, uint64_t lo, uint64_t hi,
			   int state, uint64_t addr, bool by_addr)
{
	uint64_t sum = 0;
	size_t i;

	/* By lock: this tick's spans only (a row counts each once). */
	for (i = by_addr ? tl->offs_old : 0; i < tl->offs.n; i++) {
		const struct lkt_offspan *o = &tl->offs.v[i];
		uint64_t a = o->start_ns > lo ? o->start_ns : lo;
		uint64_t b = o->end_ns < hi ? o->end_ns : hi;

		if ((tid != LKT_ANY_HOLDER && o->tid != tid) || b <= a ||
		    (state >= 0 && (int)o->state != state))
			continue;
		if (by_addr && o->addr != addr)
			continue;
		sum += b - a;
	}
	return sum;
}

/* Whether sample s was taken while holder tid held lock (lock_tgid, addr),
 * in [lo, hi]. */
static bool sample_of(const struct lkt_sample *s, uint32_t tid, uint32_t lock_tgid,
		      uint64_t addr, uint64_t lo, uint64_t hi)
{
	return s->tid == tid && s->addr == addr && s->lock_tgid == lock_tgid && s->ts_ns >= lo &&
	       s->ts_ns <= hi;
}

/* The lock_tgid of samples on the lock of wait w (0 for kernel locks). */
static uint32_t wait_lock_tgid(const struct lk_wait_rec *w)
{
	return lkt_kind_is_kernel(w->kind) ? 0 : w->tgid;
}

/* The samples of holder tid on lock (lock_tgid, addr) in [lo, hi]: count, and
 * the most frequent fn and stack, of those that name a function if any do
 * ("?": a stack that could not be read or named). */
static size_t holder_samples(const struct lk_timeline *tl, uint32_t tid, uint32_t lock_tgid,
			     uint64_t addr, uint64_t lo, uint64_t hi, const char **fn,
			     const char **stack)
{
	size_t i, j, n = 0, best = 0, best_n = 0;
	bool best_named = false;

	*fn = *stack = "";
	for (i = 0; i < tl->samples.n; i++) {
		const struct lkt_sample *s = &tl->samples.v[i];
		size_t same = 0;
		bool named;

		if (!sample_of(s, tid, lock_tgid, addr, lo, hi))
			continue;
		n++;
		for (j = 0; j < tl->samples.n; j++) {
			const struct lkt_sample *t = &tl->samples.v[j];

			if (sample_of(t, tid, lock_tgid, addr, lo, hi) && !strcmp(t->stack, s->stack))
				same++;
		}
		named = strcmp(s->fn, "?") != 0;
		if ((named && !best_named) || (named == best_named && same > best_n)) {
			best_named = named;
			best_n = same;
			best = i;
		}
	}
	if (n) {
		*fn = tl->samples.v[best].fn;
		*stack = tl->samples.v[best].stack;
	}
	return n;
}

/* Return the thread name of the holder of w ("" if unknown). */
static void wait_holder_comm(const struct lk_wait_rec *w, char *comm, size_t len)
{
	lkt_comm_copy(comm, w->holder_comm);
	if (!comm[0] && w->holder && !lkt_kind_is_kernel(w->kind))
		lkt_thread_comm(w->tgid, w->holder, comm, len);
}

/* The part of wait w its holder held the lock: [*lo, *hi]; false if unknown. */
static bool wait_hold(const struct lk_wait_rec *w, uint64_t *lo, uint64_t *hi)
{
	if (!w->holder)
		return false;
	*lo = w->hold_start_ns > w->start_ns ? w->hold_start_ns : w->start_ns;
	*hi = w->hold_end_ns && w->hold_end_ns < w->end_ns ? w->hold_end_ns : w->end_ns;
	return *hi > *lo;
}

/* Set a row's cgroup, unit and container cells from cgroup v2 id (as
 * probe_cgroup_cells, which this libbpf-free file cannot use). */
static void cgroup_cells(union cell *c, uint64_t id)
{
	char path[CGROUP_PATH_MAX], buf[CGROUP_PATH_MAX];

	cgroup_path(id, path, sizeof(path));
	cell_set_str(&c[0], path);
	cell_set_str(&c[1], cgroup_unit(path, buf, sizeof(buf)));
	cell_set_str(&c[2], cgroup_container(path, buf, sizeof(buf)));
}

/* Append one lock_events row for wait w. */
static void add_event(const struct lk_timeline *tl, struct frame *ev, const struct lkt_wait *we)
{
	const struct lk_wait_rec *w = &we->r;
	char buf[64], comm[LK_COMM_LEN + 1];
	const char *fn = "", *stack = "";
	union cell *r = frame_add_row(ev);
	uint64_t lo, hi;
	size_t n = 0;

	r[LE_TS].u = w->end_ns + tl->boot_offset_ns;
	r[LE_ID].u = we->id;
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)w->addr);
	cell_set_str(&r[LE_LOCK], buf);
	cell_set_str(&r[LE_KIND], lkt_kind_label(tl, w->tgid, w->addr, w->kind));
	cell_set_str(&r[LE_SYM], we->sym ? we->sym : "");
	r[LE_PID].u = w->tgid;
	lkt_comm_copy(comm, w->process);
	cell_set_str(&r[LE_PROCESS], comm);
	r[LE_TID].u = w->tid;
	lkt_comm_copy(comm, w->comm);
	cell_set_str(&r[LE_COMM], comm);
	r[LE_HOLDER].u = w->holder;
	wait_holder_comm(w, comm, sizeof(comm));
	cell_set_str(&r[LE_HOLDER_COMM], comm);
	if (wait_hold(w, &lo, &hi)) {
		n = holder_samples(tl, w->holder, wait_lock_tgid(w), w->addr, lo, hi, &fn, &stack);
		r[LE_HOLDER_OFFCPU].u = holder_off(tl, w->holder, lo, hi, -1, 0, false);
		r[LE_HOLDER_RUNQ].u = holder_off(tl, w->holder, lo, hi, LO_RUNQ, 0, false);
		r[LE_HOLDER_IO].u = holder_off(tl, w->holder, lo, hi, LO_IO, 0, false);
	}
	cell_set_str(&r[LE_HOLDER_FN], fn);
	cell_set_str(&r[LE_HOLDER_STACK], stack);
	r[LE_WAIT].u = w->end_ns - w->start_ns;
	r[LE_HOLD].u = w->hold_start_ns && w->hold_end_ns > w->hold_start_ns ?
		       w->hold_end_ns - w->hold_start_ns : 0;
	r[LE_SAMPLES].u = n;
	cgroup_cells(r + LE_CGROUP, w->cgroup);
}

/* Append one span to the spans frame. */
static void add_span(const struct lk_timeline *tl, struct frame *f, uint64_t id, const char *row,
		     uint64_t start, uint64_t end, const char *kind, const char *label)
{
	union cell *r;

	/* A release alone (its hold's start unseen) is a mark of no length. */
	if (end < start || (end == start && strcmp(kind, "release")))
		return;
	r = frame_add_row(f);
	r[LS_ID].u = id;
	cell_set_str(&r[LS_ROW], row);
	r[LS_START].u = start + tl->boot_offset_ns;
	r[LS_DUR].u = end - start;
	cell_set_str(&r[LS_KIND], kind);
	cell_set_str(&r[LS_LABEL], label);
}

/* Draw holder tid's functions (runs of its samples on w's lock) and off-CPU
 * spans in [lo, hi] on row. */
static void add_holder_activity(const struct lk_timeline *tl, struct frame *f, uint64_t id,
				const char *row, const struct lk_wait_rec *w, uint32_t tid,
				uint64_t lo, uint64_t hi)
{
	uint64_t period = 1000000000ULL / LK_SAMPLE_HZ, run_start = 0, run_end = 0;
	const char *run_fn = NULL;
	size_t i;

	for (i = 0; i < tl->samples.n; i++) {
		const struct lkt_sample *s = &tl->samples.v[i];

		if (!sample_of(s, tid, wait_lock_tgid(w), w->addr, lo, hi))
			continue;
		if (run_fn && !strcmp(run_fn, s->fn) && s->ts_ns <= run_end + period * 3 / 2) {
			run_end = s->ts_ns;
			continue;
		}
		if (run_fn)
			add_span(tl, f, id, row, run_start, run_end, "oncpu", run_fn);
		run_fn = s->fn;
		run_start = s->ts_ns - period > lo ? s->ts_ns - period : lo;
		run_end = s->ts_ns;
	}
	if (run_fn)
		add_span(tl, f, id, row, run_start, run_end, "oncpu", run_fn);
	for (i = 0; i < tl->offs.n; i++) {
		const struct lkt_offspan *o = &tl->offs.v[i];
		uint64_t a = o->start_ns > lo ? o->start_ns : lo, b = o->end_ns < hi ? o->end_ns : hi;

		if (o->tid != tid || b <= a)
			continue;
		add_span(tl, f, id, row, a, b, o->state == LO_RUNQ ? "runq" : "offcpu",
			 o->state == LO_RUNQ ? "runnable" : o->state == LO_IO ? "I/O wait" : "sleep");
	}
}

/*
 * The timeline of wait we: the waiter's wait, the other waiters of the lock
 * in that time, and every holder that released the lock during it with its
 * contended hold, the functions its samples ran (consecutive samples of one
 * function make one span) and its off-CPU spans while holding; a holder
 * whose hold began unseen, with its release alone.
 */
static void add_spans(const struct lk_timeline *tl, struct frame *f, const struct lkt_wait *we)
{
	const struct lk_wait_rec *w = &we->r;
	uint64_t lo = w->start_ns, hi = w->end_ns;
	char row[96], comm[LK_COMM_LEN + 1];
	size_t i, others = 0;
	bool holder_drawn = false;

	lkt_comm_copy(comm, w->comm);
	snprintf(row, sizeof(row), "waiter %u %s", w->tid, comm);
	add_span(tl, f, we->id, row, w->start_ns, w->end_ns, "wait", we->sym ? we->sym : "");
	for (i = 0; i < LK_RELS; i++) {
		const struct lk_rel *r = &w->rels[i];
		uint64_t a = lk_rel_since(w->rels, i, lo);

		if (!r->tid || r->tid == w->tid || r->end_ns < lo || r->end_ns > hi)
			continue;
		a = a > lo ? a : lo;
		lkt_comm_copy(comm, w->rel_comms[i]);
		if (!comm[0])
			lkt_thread_comm(w->tgid, r->tid, comm, sizeof(comm));
		snprintf(row, sizeof(row), "holder %u %s", r->tid, comm);
		holder_drawn |= r->tid == w->holder;
		if (a >= r->end_ns) {
			/* It took the lock when no wait could see it: its
			 * release is known, its hold's start is not. */
			add_span(tl, f, we->id, row, r->end_ns, r->end_ns, "release", "");
			continue;
		}
		add_span(tl, f, we->id, row, a, r->end_ns, "hold", "hold");
		add_holder_activity(tl, f, we->id, row, w, r->tid, a, r->end_ns);
	}
	if (w->holder && !holder_drawn && wait_hold(w, &lo, &hi)) {
		wait_holder_comm(w, comm, sizeof(comm));
		snprintf(row, sizeof(row), "holder %u %s", w->holder, comm);
		add_span(tl, f, we->id, row, lo, hi, "hold", "hold");
		add_holder_activity(tl, f, we->id, row, w, w->holder, lo, hi);
	}
	for (i = 0; i < tl->waits.n && others < LKT_SPAN_OTHERS; i++) {
		const struct lk_wait_rec *o = &tl->waits.v[i].r;

		if (o == w || o->addr != w->addr || o->tgid != w->tgid || o->tid == w->tid ||
		    o->end_ns <= w->start_ns || o->start_ns >= w->end_ns)
			continue;
		lkt_comm_copy(comm, o->comm);
		snprintf(row, sizeof(row), "waiter %u %s", o->tid, comm);
		add_span(tl, f, we->id, row, o->start_ns, o->end_ns, "wait", "");
		others++;
	}
}

/* Order waits by length, longest first. */
static int wait_cmp_desc(const void *a, const void *b)
{
	const struct lkt_wait *x = *(struct lkt_wait *const *)a, *y = *(struct lkt_wait *const *)b;
	uint64_t lx = x->r.end_ns - x->r.start_ns, ly = y->r.end_ns - y->r.start_ns;

	return lx < ly ? 1 : lx > ly ? -1 : 0;
}

/* Past LKT_MAX_REMEMBERED entries, forget what is remembered across ticks. */
static void forget_if_full(struct lk_timeline *tl)
{
	if (tl->fncounts.n > LKT_MAX_REMEMBERED)
		fncounts_clear(tl);
	if (tl->topfns.n > LKT_MAX_REMEMBERED)
		topfns_clear(tl);
	if (tl->mutexes.n > LKT_MAX_REMEMBERED)
		tl->mutexes.n = 0;
}

/* Order waits by lock, then newest first. */
static int wait_cmp_lock_newest(const void *a, const void *b)
{
	const struct lkt_wait *x = *(struct lkt_wait *const *)a, *y = *(struct lkt_wait *const *)b;

	if (x->r.tgid != y->r.tgid)
		return x->r.tgid < y->r.tgid ? -1 : 1;
	if (x->r.addr != y->r.addr)
		return x->r.addr < y->r.addr ? -1 : 1;
	return x->r.end_ns < y->r.end_ns ? 1 : x->r.end_ns > y->r.end_ns ? -1 : 0;
}

void lkt_rows(struct lk_timeline *tl, struct frame *ev, struct frame *spans)
{
	size_t i, k, nw = tl->waits.n - tl->waits_old, ndrawn;
	struct lkt_wait **worst = xcalloc(nw ? nw : 1, sizeof(*worst));

	for (i = 0; i < nw; i++) {
		worst[i] = &tl->waits.v[tl->waits_old + i];
		add_event(tl, ev, worst[i]);
	}
	qsort(worst, nw, sizeof(*worst), wait_cmp_desc);
	for (i = 0, ndrawn = 0; i < nw && ndrawn < LKT_SPAN_WAITS; i++) {
		size_t j, same = 0;

		for (j = 0; j < i && same < LKT_SPAN_PER_LOCK; j++)
			same += worst[j]->r.addr == worst[i]->r.addr &&
				worst[j]->r.tgid == worst[i]->r.tgid;
		if (same >= LKT_SPAN_PER_LOCK)
			continue;
		add_spans(tl, spans, worst[i]);
		worst[i]->drawn = true;
		ndrawn++;
	}
	qsort(worst, nw, sizeof(*worst), wait_cmp_lock_newest);
	for (i = 0, k = 0; i < nw && ndrawn < LKT_SPAN_WAITS; i++) {
		k = i && worst[i]->r.addr == worst[i - 1]->r.addr &&
		    worst[i]->r.tgid == worst[i - 1]->r.tgid ? k + 1 : 0;
		if (k >= LKT_SPAN_NEWEST || worst[i]->drawn)
			continue;
		add_spans(tl, spans, worst[i]);
		worst[i]->drawn = true;
		ndrawn++;
	}
	free(worst);
}

void lkt_age(struct lk_timeline *tl)
{
	size_t i;

	for (i = 0; i < tl->samples_old; i++) {
		free(tl->samples.v[i].fn);
		free(tl->samples.v[i].stack);
	}
	VEC_DROP(tl->samples, tl->samples_old);
	tl->samples_old = tl->samples.n;
	VEC_DROP(tl->offs, tl->offs_old);
	tl->offs_old = tl->offs.n;
	for (i = 0; i < tl->waits_old; i++)
		free(tl->waits.v[i].sym);
	VEC_DROP(tl->waits, tl->waits_old);
	tl->waits_old = tl->waits.n;
	forget_if_full(tl);
}

struct lkt_wait *lkt_add_wait(struct lk_timeline *tl, const struct lk_wait_rec *r)
{
	struct lkt_wait *w = VEC_PUSH(tl->waits);

	w->r = *r;
	w->id = tl->next_id++;
	w->sym = NULL;
	w->drawn = false;
	return w;
}

void lkt_add_sample(struct lk_timeline *tl, const struct lk_sample_rec *r, char *fn,
		    char *stack)
{
	*VEC_PUSH(tl->samples) = (struct lkt_sample){r->ts_ns, r->addr, r->tgid, r->tid,
						     r->lock_tgid, fn, stack};
	fncount_add(fncount_get(tl, r->lock_tgid, r->addr, r->tid), fn);
}

void lkt_add_off(struct lk_timeline *tl, const struct lk_off_rec *r)
{
	*VEC_PUSH(tl->offs) = (struct lkt_offspan){r->start_ns, r->end_ns, r->addr, r->tid,
						   r->state};
}

uint64_t lkt_lock_samples(const struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr,
			  uint32_t holder)
{
	uint64_t n = 0;
	size_t i;

	for (i = tl->samples_old; i < tl->samples.n; i++) {
		const struct lkt_sample *s = &tl->samples.v[i];

		if ((holder == LKT_ANY_HOLDER || s->tid == holder) && s->addr == addr &&
		    s->lock_tgid == lock_tgid)
			n++;
	}
	return n;
}

uint64_t lkt_lock_offcpu(const struct lk_timeline *tl, uint32_t tid, uint64_t addr)
{
	return holder_off(tl, tid, 0, UINT64_MAX, -1, addr, true);
}

uint64_t lkt_waiters(const struct lk_timeline *tl, const struct lk_key *k)
{
	uint32_t seen[64];
	size_t i, nseen = 0;

	for (i = tl->waits_old; i < tl->waits.n; i++) {
		const struct lk_wait_rec *w = &tl->waits.v[i].r;
		size_t j;

		if (w->addr != k->addr || w->tgid != k->tgid || w->kind != k->kind ||
		    (k->holder != LKT_ANY_HOLDER && w->holder != k->holder) ||
		    (k->cgroup && w->cgroup != k->cgroup))
			continue;
		for (j = 0; j < nseen && seen[j] != w->tid; j++)
			;
		if (j == nseen && nseen < 64)
			seen[nseen++] = w->tid;
	}
	return nseen;
}

bool lkt_stack_stale(uint32_t stamp, uint32_t tick)
{
	return (int32_t)(stamp - tick) < 0;
}
