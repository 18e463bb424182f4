/*
 * The locks probe, user side: load and attach locks.bpf.c, open the
 * holder-sampling perf events, and each tick turn the kernel's per-key
 * totals into a frame of locks, and its ring records (waits, holder stack
 * samples, holder off-CPU spans) into lock_events and lock_spans.
 *
 * Samples and off-CPU spans come before the wait they explain ends, so each
 * tick first reads every record, then joins: a wait gets the samples and
 * spans of its holder that fall inside it, from this tick or the one before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../../core/clock.h"
#include "../../core/xalloc.h"
#include "../../core/hist.h"
#include "../../core/symbols.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "locks.h"
#include "locks_schema.h"
#include "locks.skel.h"

#define IDLE_TICKS 10		/* a key idle this many ticks leaves the map */
#define PREV_SLOTS 16384	/* user-side key table (a power of 2, > 2 * LK_MAX_KEYS) */
#define SPAN_PER_LOCK 4	/* worst waits per lock and tick whose timeline goes to lock_spans */
#define SPAN_NEWEST 32		/* ... and newest (what the detail pane lists) */
#define SPAN_WAITS 1024		/* ... at most this many per tick */
#define SPAN_OTHERS 6		/* other waiters drawn on a timeline */
#define MAX_FNS 8		/* functions counted per (lock, holder) */
#define KFRAMES 4		/* kernel frames in a stack text */
#define UFRAMES 6		/* user frames in a stack text */
#define STACK_DEPTH 127
#define MAX_REMEMBERED 4096	/* (lock, holder) function counts, sticky sets, known mutexes */
#define STR_(x) #x
#define LATOP_STR(x) STR_(x)

/* Kernel functions that are the locking itself, skipped to find the caller. */
static const char *const lock_fn_parts[] = {
	"mutex_lock", "down_read", "down_write", "rwsem", "_raw_spin", "_raw_read", "_raw_write",
	"queued_", "bpf_", "lock_contended", "rt_mutex", "rwbase", "percpu_down", "trace_contention",
	"__traceiter", "osq_lock", "_down", "mutex_optimistic",
};

struct hook_spec {
	const char *stage;
	const char *label;
	const char *tp_btf[2];		/* tracepoints checked with a real load */
	const char *progs[2];
	bool required;
};

/* Futex waits: their own syscall tracepoints where tracefs gives their ids. */
static const struct hook_spec futex_spec = {
	"futex waits and wakes (user locks)", "tp/syscalls/sys_enter_futex+sys_exit_futex",
	{NULL}, {"futex_enter", "futex_exit"}, false,
};
/* ... else the scheduler: sleeps inside futex(WAIT), and who wakes them. */
static const struct hook_spec futex_sched_spec = {
	"futex waits and wakes (user locks)",
	"tp_btf/sched_switch+sched_waking (sleeps inside futex(WAIT), found by the saved registers)",
	{"sched_switch", "sched_waking"}, {"futex_waking"}, true,
};

static const struct hook_spec hook_specs[] = {
	{"kernel lock contention", "tp_btf/contention_begin+contention_end",
	 {"contention_begin", "contention_end"}, {"lock_begin", "lock_end"}, false},
	{"holder off-CPU spans", "tp_btf/sched_switch", {"sched_switch"}, {"sched_switch"}, false},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))
#define NCHOICES (NSPECS + 2)

struct prev_ent {
	struct lk_key key;
	bool used, dead;
	uint32_t idle;
	char *sym;
	struct lk_stats st;
};

/* Functions sampled on one holder of one lock (cumulative). */
struct fncount {
	uint64_t addr;
	uint32_t lock_tgid, holder;
	size_t n;
	struct {
		char *fn;
		uint64_t count;
	} fns[MAX_FNS];
};

struct sample {
	uint64_t ts_ns;
	uint64_t addr;
	uint32_t tgid, tid, lock_tgid;
	char *fn;
	char *stack;
};

struct offspan {
	uint64_t start_ns, end_ns, addr;
	uint32_t tid, state;
};

struct waitev {
	struct lk_wait_rec r;
	uint64_t id;
	char *sym;
	bool drawn;		/* its timeline went to lock_spans */
};

/* The text of a lock's holder_fns, kept while the set of functions stays. */
struct topfns {
	uint64_t addr;
	uint32_t lock_tgid;
	size_t n;
	char *names[3];
	char *text;
};

/* Drop the first k entries of vec. */
#define VEC_DROP(vec, k) do { \
	if ((k) && (vec).v) \
		memmove((vec).v, (vec).v + (k), ((vec).n - (k)) * sizeof(*(vec).v)); \
	(vec).n -= (k); \
} while (0)

/* A growing array of T. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec) \
	((vec).n == (vec).cap ? \
	 ((vec).v = xreallocarray((vec).v, (vec).cap = (vec).cap ? (vec).cap * 2 : 64, \
				  sizeof(*(vec).v))) : 0, &(vec).v[(vec).n++])

struct locks_priv {
	struct locks_bpf *skel;
	struct ring_buffer *rb;
	struct hook_choice choices[NCHOICES];
	size_t nchoices;
	int ncpus;
	int *perf_fds;
	struct bpf_link **perf_links;
	uint64_t boot_offset_ns;
	uint64_t next_id;
	uint32_t sample_n;
	uint64_t health_prev[LH_N];
	struct prev_ent *prev[PREV_SLOTS];
	VEC(struct fncount) fncounts;
	VEC(struct sample) samples;	/* this tick's and the last */
	VEC(struct offspan) offs;
	VEC(struct waitev) waits;
	VEC(__u32) stack_ids;		/* read this tick: deleted at its end */
	VEC(struct lk_key) keys;	/* the stats hash's keys this tick */
	VEC(struct lk_key) mutexes;
	VEC(struct topfns) topfns;	/* (addr, tgid) of locks seen with a mutex's owner */
	size_t samples_old, offs_old, waits_old;	/* entries before these are last tick's */
	struct symbols *syms;
	struct hist *h;
	__u64 *ips;
};

static const char *kind_name(uint32_t kind)
{
	return kind < LK_NKINDS ? lock_kind_names[kind] : "?";
}

/* Remember that (tgid, addr) is a pthread mutex when a wait saw its owner. */
static void mutex_learn(struct locks_priv *sp, uint32_t tgid, uint64_t addr, uint32_t kind)
{
	size_t i;

	if (kind != LK_MUTEX)
		return;
	for (i = 0; i < sp->mutexes.n; i++)
		if (sp->mutexes.v[i].addr == addr && sp->mutexes.v[i].tgid == tgid)
			return;
	*VEC_PUSH(sp->mutexes) = (struct lk_key){.addr = addr, .tgid = tgid};
}

/*
 * The kind of a wait as shown: a glibc lock whose owner field read 0 (it
 * was being released) is a mutex if any other wait on it saw the owner.
 */
static const char *kind_label(const struct locks_priv *sp, uint32_t tgid, uint64_t addr,
			      uint32_t kind)
{
	size_t i;

	if (kind == LK_LLL)
		for (i = 0; i < sp->mutexes.n; i++)
			if (sp->mutexes.v[i].addr == addr && sp->mutexes.v[i].tgid == tgid)
				return lock_kind_names[LK_MUTEX];
	return kind_name(kind);
}

static bool kind_is_kernel(uint32_t kind)
{
	return kind >= LK_KSPIN;
}

/* Copy a fixed-size kernel string. */
static void comm_copy(char *dst, const char *src)
{
	memcpy(dst, src, LK_COMM_LEN);
	dst[LK_COMM_LEN] = 0;
}

/* Read the thread name of tid in process tgid into buf ("" when gone). */
static void thread_comm(uint32_t tgid, uint32_t tid, char *buf, size_t len)
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

/* Read stack id into sp->ips; return the number of frames (0 when gone). */
static size_t stack_read(struct locks_priv *sp, int64_t id)
{
	__u32 key = (__u32)id;
	size_t n;

	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.stacks), &key, sp->ips))
		return 0;
	*VEC_PUSH(sp->stack_ids) = key;
	for (n = 0; n < STACK_DEPTH && sp->ips[n]; n++)
		;
	return n;
}

/* Return whether a kernel function name is part of the locking itself. */
static bool is_lock_fn(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(lock_fn_parts) / sizeof(lock_fn_parts[0]); i++)
		if (strstr(name, lock_fn_parts[i]))
			return true;
	return false;
}

/* Name a lock: its symbol, the mm lock, or the kernel function that waited. */
static char *lock_sym(struct locks_priv *sp, uint64_t addr, uint32_t tgid, uint32_t kind,
		      uint32_t flags, int64_t kstack)
{
	struct sym_loc loc;
	size_t n, i;

	if (!kind_is_kernel(kind)) {
		char buf[256];

		if (symbols_user(sp->syms, tgid, addr, false, &loc) && loc.func)
			return loc.off ? xasprintf("%s+0x%llx", loc.func, (unsigned long long)loc.off)
				       : xstrdup(loc.func);
		return xstrdup(loc.obj && loc.obj[0] == '/' ?
			       sym_format(&loc, addr, true, buf, sizeof(buf)) : loc.obj ? loc.obj : "");
	}
	if (flags & LKF_MMAP_LOCK)
		return xstrdup("mmap_lock");
	if (symbols_kernel(sp->syms, addr, true, &loc))
		return loc.off ? xasprintf("%s+0x%llx", loc.func, (unsigned long long)loc.off)
			       : xstrdup(loc.func);
	n = stack_read(sp, kstack);
	for (i = 0; i < n; i++)
		if (symbols_kernel(sp->syms, sp->ips[i], false, &loc) && !is_lock_fn(loc.func))
			return xasprintf("in %s", loc.func);
	return xstrdup("");
}

/* Return whether an object path is the C library or the dynamic loader. */
static bool is_libc(const char *obj)
{
	const char *base = obj ? strrchr(obj, '/') : NULL;

	base = base ? base + 1 : obj;
	return base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
			!strncmp(base, "ld-linux", 8) || !strncmp(base, "libpthread", 10));
}

/*
 * Symbolize one holder sample: its function (the innermost frame of the
 * program's own code, else outside libc, else the innermost user frame, else
 * the kernel's; kernel locks prefer the kernel frame) and its stack text.
 */
static void sample_symbolize(struct locks_priv *sp, struct sample *s, int64_t ustack,
			     int64_t kstack)
{
	char text[1024], buf[256], *fn_main = NULL, *fn_nolibc = NULL, *fn_user = NULL;
	char *fn_kernel = NULL;
	size_t n, i, o = 0, shown = 0;
	struct sym_loc loc;

	text[0] = 0;
	n = stack_read(sp, kstack);
	for (i = 0; i < n; i++) {
		if (!symbols_kernel(sp->syms, sp->ips[i], false, &loc) || is_lock_fn(loc.func))
			continue;
		if (!fn_kernel)
			fn_kernel = xstrdup(loc.func);
		if (shown++ < KFRAMES && o < sizeof(text))
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", o ? " < " : "",
					      loc.func);
	}
	n = stack_read(sp, ustack);
	for (i = 0, shown = 0; i < n; i++) {
		bool ok = symbols_user(sp->syms, s->tgid, sp->ips[i], i > 0, &loc) && loc.func;

		if (ok) {
			if (!fn_user)
				fn_user = xstrdup(loc.func);
			if (!fn_nolibc && !is_libc(loc.obj))
				fn_nolibc = xstrdup(loc.func);
			if (!fn_main && loc.main)
				fn_main = xstrdup(loc.func);
		}
		if (shown++ < UFRAMES && o < sizeof(text))
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", o ? " < " : "",
					      sym_format(&loc, sp->ips[i], false, buf, sizeof(buf)));
	}
	if (s->lock_tgid == 0 && fn_kernel)
		s->fn = xstrdup(fn_kernel);
	else
		s->fn = xstrdup(fn_main ? fn_main : fn_nolibc ? fn_nolibc : fn_user ? fn_user :
				fn_kernel ? fn_kernel : "?");
	s->stack = xstrdup(text);
	free(fn_main);
	free(fn_nolibc);
	free(fn_user);
	free(fn_kernel);
}

/* Return the function counts of (lock_tgid, addr, holder), creating them. */
static struct fncount *fncount_get(struct locks_priv *sp, uint32_t lock_tgid, uint64_t addr,
				   uint32_t holder, bool create)
{
	struct fncount *fc;
	size_t i;

	for (i = 0; i < sp->fncounts.n; i++) {
		fc = &sp->fncounts.v[i];
		if (fc->addr == addr && fc->lock_tgid == lock_tgid && fc->holder == holder)
			return fc;
	}
	if (!create)
		return NULL;
	fc = VEC_PUSH(sp->fncounts);
	memset(fc, 0, sizeof(*fc));
	fc->addr = addr;
	fc->lock_tgid = lock_tgid;
	fc->holder = holder;
	return fc;
}

/* Count fn once in fc; when full, the least counted function gives way. */
static void fncount_add(struct fncount *fc, const char *fn)
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
	if (fc->n < MAX_FNS)
		least = fc->n++;
	else
		free(fc->fns[least].fn);
	fc->fns[least].fn = xstrdup(fn);
	fc->fns[least].count = 1;
}

/* Return the most counted function of fc ("" when none). */
static const char *fncount_top(const struct fncount *fc)
{
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
static size_t lock_fn_sums(const struct locks_priv *sp, uint32_t lock_tgid, uint64_t addr,
			   struct fnsum *all, size_t max)
{
	size_t i, j, k, n = 0;

	for (i = 0; i < sp->fncounts.n; i++) {
		const struct fncount *fc = &sp->fncounts.v[i];

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

/*
 * Write the lock's three most sampled holder functions over all its holders
 * into buf, most first.  The set is sticky, so a lock's rows stay one group
 * over a window: a function enters a full set only with twice the samples
 * of the one it replaces (and 4 more), and the text changes only with the set.
 */
static void lock_top_fns(struct locks_priv *sp, uint32_t lock_tgid, uint64_t addr, char *buf,
			 size_t len)
{
	struct fnsum all[64], cur[3];
	struct topfns *t = NULL;
	size_t n, i, j, m, o = 0;
	bool changed = false;

	n = lock_fn_sums(sp, lock_tgid, addr, all, 64);
	qsort(all, n, sizeof(all[0]), fnsum_cmp);
	for (i = 0; i < sp->topfns.n && !t; i++)
		if (sp->topfns.v[i].addr == addr && sp->topfns.v[i].lock_tgid == lock_tgid)
			t = &sp->topfns.v[i];
	if (!t) {
		t = VEC_PUSH(sp->topfns);
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

/* Take one ring buffer record into this tick's buffers. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct locks_priv *sp = ctx;
	__u32 type;

	if (size < sizeof(type))
		return 0;
	type = *(const __u32 *)data;
	if (type == LR_WAIT && size >= sizeof(struct lk_wait_rec)) {
		struct waitev *w = VEC_PUSH(sp->waits);

		memcpy(&w->r, data, sizeof(w->r));
		/* Its maps now: by the time its lock is named, it may have exited. */
		if (!kind_is_kernel(w->r.kind))
			symbols_note(sp->syms, w->r.tgid);
		w->id = sp->next_id++;
		w->sym = NULL;
		w->drawn = false;
	} else if (type == LR_SAMPLE && size >= sizeof(struct lk_sample_rec)) {
		const struct lk_sample_rec *r = data;
		struct sample *s = VEC_PUSH(sp->samples);

		*s = (struct sample){r->ts_ns, r->addr, r->tgid, r->tid, r->lock_tgid, NULL, NULL};
		sample_symbolize(sp, s, r->ustack, r->kstack);
		fncount_add(fncount_get(sp, r->lock_tgid, r->addr, r->tid, true), s->fn);
	} else if (type == LR_OFFCPU && size >= sizeof(struct lk_off_rec)) {
		const struct lk_off_rec *r = data;

		*VEC_PUSH(sp->offs) = (struct offspan){r->start_ns, r->end_ns, r->addr, r->tid,
						       r->state};
	}
	return 0;
}

/* Return the user-side entry of key (NULL if none); *slot gets where to insert. */
static struct prev_ent *prev_find(struct locks_priv *sp, const struct lk_key *key, size_t *slot)
{
	uint64_t h = (key->addr * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)key->tgid << 20) ^
		     ((uint64_t)key->holder << 7) ^ key->kind ^ ((uint64_t)key->flags << 40);
	size_t i, s, first_dead = PREV_SLOTS;

	for (i = 0; i < PREV_SLOTS; i++) {
		struct prev_ent *p;

		s = (h + i) & (PREV_SLOTS - 1);
		p = sp->prev[s];
		if (!p) {
			*slot = first_dead < PREV_SLOTS ? first_dead : s;
			return NULL;
		}
		if (p->dead) {
			if (first_dead == PREV_SLOTS)
				first_dead = s;
			continue;
		}
		if (!memcmp(&p->key, key, sizeof(*key)))
			return p;
	}
	*slot = first_dead;
	return NULL;
}

/* Build a histogram of the values between two monotonic bucket arrays. */
static void hist_delta(struct hist *h, const __u32 *cur, const __u32 *prev, uint64_t count,
		       uint64_t sum, uint64_t max, bool max_moved)
{
	int lo, hi, nb = LH_NBUCKETS;

	probe_hist_buckets(h, cur, prev, &lo, &hi);
	h->count = count;
	h->sum = sum;
	if (lo < 0) {
		hist_settle(h);
		return;
	}
	h->min = lh_bucket_low(lo);
	h->max = max_moved ? max : hi + 1 < nb ? lh_bucket_low(hi + 1) - 1 : max;
	if (h->max > max)
		h->max = max;
	if (h->min > h->max)
		h->min = h->max;
	hist_settle(h);
}

/* Return the time in [lo, hi) that the spans of holder tid spent in state (any: -1). */
static uint64_t holder_off(const struct locks_priv *sp, uint32_t tid, uint64_t lo, uint64_t hi,
			   int state, uint64_t addr, bool by_addr)
{
	uint64_t sum = 0;
	size_t i;

	/* By lock: this tick's spans only (a row counts each once). */
	for (i = by_addr ? sp->offs_old : 0; i < sp->offs.n; i++) {
		const struct offspan *o = &sp->offs.v[i];
		uint64_t a = o->start_ns > lo ? o->start_ns : lo;
		uint64_t b = o->end_ns < hi ? o->end_ns : hi;

		if (o->tid != tid || b <= a || (state >= 0 && (int)o->state != state))
			continue;
		if (by_addr && o->addr != addr)
			continue;
		sum += b - a;
	}
	return sum;
}

/* Append one locks row for key's waits since last tick. */
static uint64_t add_row(struct locks_priv *sp, struct frame *f, struct prev_ent *p,
			const struct lk_stats *cur)
{
	const struct lk_key *k = &p->key;
	uint64_t n = sp->sample_n > 1 ? sp->sample_n : 1;
	uint64_t count = delta(cur->count, p->st.count), samples = 0, off = 0;
	uint32_t lock_tgid = kind_is_kernel(k->kind) ? 0 : k->tgid;
	char buf[64], comm[LK_COMM_LEN + 1], fns[256];
	uint32_t seen[64];
	size_t i, nseen = 0;
	union cell *r = frame_add_row(f);

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)k->addr);
	cell_set_str(&r[LC_LOCK], buf);
	cell_set_str(&r[LC_KIND], kind_label(sp, k->tgid, k->addr, k->kind));
	cell_set_str(&r[LC_SYM], p->sym ? p->sym : "");
	r[LC_PID].u = k->tgid;
	comm_copy(comm, cur->process);
	cell_set_str(&r[LC_PROCESS], comm);
	comm_copy(comm, cur->comm);
	cell_set_str(&r[LC_COMM], comm);
	r[LC_HOLDER].u = k->holder;
	comm_copy(comm, cur->holder_comm);
	if (!comm[0] && k->holder && lock_tgid)
		thread_comm(k->tgid, k->holder, comm, sizeof(comm));
	cell_set_str(&r[LC_HOLDER_COMM], comm);
	cell_set_str(&r[LC_HOLDER_FN], fncount_top(fncount_get(sp, lock_tgid, k->addr, k->holder,
								false)));
	lock_top_fns(sp, lock_tgid, k->addr, fns, sizeof(fns));
	cell_set_str(&r[LC_HOLDER_FNS], fns);
	r[LC_COUNT].u = count * n;
	r[LC_BELOW].u = delta(cur->below, p->st.below) * n;
	for (i = sp->waits_old; i < sp->waits.n; i++) {
		const struct lk_wait_rec *w = &sp->waits.v[i].r;
		size_t j;

		if (w->addr != k->addr || w->tgid != k->tgid || w->holder != k->holder ||
		    w->kind != k->kind)
			continue;
		for (j = 0; j < nseen && seen[j] != w->tid; j++)
			;
		if (j == nseen && nseen < 64)
			seen[nseen++] = w->tid;
	}
	r[LC_WAITERS].u = nseen;
	hist_delta(sp->h, cur->hist, p->st.hist, count, delta(cur->wait_sum, p->st.wait_sum),
		   cur->wait_max, cur->wait_max > p->st.wait_max || !p->st.count);
	if (n > 1)
		hist_scale(sp->h, n);
	cell_set_hist(&r[LC_WAIT], sp->h);
	hist_delta(sp->h, cur->hold_hist, p->st.hold_hist, count,
		   delta(cur->hold_sum, p->st.hold_sum), cur->hold_max,
		   cur->hold_max > p->st.hold_max || !p->st.count);
	if (n > 1)
		hist_scale(sp->h, n);
	cell_set_hist(&r[LC_HOLD], sp->h);
	r[LC_TIME].u = delta(cur->wait_sum, p->st.wait_sum) * n;
	for (i = sp->samples_old; i < sp->samples.n; i++) {
		const struct sample *s = &sp->samples.v[i];

		if (s->tid == k->holder && s->addr == k->addr && s->lock_tgid == lock_tgid)
			samples++;
	}
	if (k->holder)
		off = holder_off(sp, k->holder, 0, UINT64_MAX, -1, k->addr, true);
	r[LC_HOLDER_OFFCPU].u = off;
	r[LC_SAMPLES].u = samples;
	return count;
}

/* Fold every key of the stats hash into f; evict keys idle IDLE_TICKS. */
static uint64_t read_stats(struct locks_priv *sp, struct frame *f)
{
	int fd = bpf_map__fd(sp->skel->maps.stats);
	struct lk_key key, next, *kp = NULL;
	struct lk_stats *cur = xmalloc(sizeof(*cur));
	uint64_t events = 0;
	size_t i, k;

	for (i = 0; i < PREV_SLOTS; i++)
		if (sp->prev[i] && !sp->prev[i]->dead)
			sp->prev[i]->used = false;
	sp->keys.n = 0;
	while (!bpf_map_get_next_key(fd, kp, &next)) {
		key = next;
		kp = &key;
		*VEC_PUSH(sp->keys) = key;
		mutex_learn(sp, key.tgid, key.addr, key.kind);
	}
	for (i = 0; i < sp->waits.n; i++)
		mutex_learn(sp, sp->waits.v[i].r.tgid, sp->waits.v[i].r.addr, sp->waits.v[i].r.kind);
	for (k = 0; k < sp->keys.n; k++) {
		struct prev_ent *p;
		size_t slot;

		key = sp->keys.v[k];
		if (bpf_map_lookup_elem(fd, &key, cur))
			continue;
		p = prev_find(sp, &key, &slot);
		if (!p) {
			if (slot >= PREV_SLOTS)
				continue;
			free(sp->prev[slot]);
			p = sp->prev[slot] = xcalloc(1, sizeof(*p));
			p->key = key;
			p->sym = lock_sym(sp, key.addr, key.tgid, key.kind, key.flags, cur->kstack);
		}
		p->used = true;
		if (cur->count == p->st.count) {
			p->idle++;
			continue;
		}
		events += add_row(sp, f, p, cur);
		p->st = *cur;
		p->idle = 0;
	}
	for (i = 0; i < PREV_SLOTS; i++) {
		struct prev_ent *p = sp->prev[i];

		if (!p || p->dead || (p->used && p->idle < IDLE_TICKS))
			continue;
		if (p->used)
			bpf_map_delete_elem(fd, &p->key);
		free(p->sym);
		p->sym = NULL;
		p->dead = true;
	}
	free(cur);
	return events;
}

/* The samples of holder tid in [lo, hi]: count, and the most frequent fn and stack. */
static size_t holder_samples(const struct locks_priv *sp, uint32_t tid, uint64_t lo,
			     uint64_t hi, const char **fn, const char **stack)
{
	size_t i, j, n = 0, best = 0, best_n = 0;

	*fn = *stack = "";
	for (i = 0; i < sp->samples.n; i++) {
		const struct sample *s = &sp->samples.v[i];
		size_t same = 0;

		if (s->tid != tid || s->ts_ns < lo || s->ts_ns > hi)
			continue;
		n++;
		for (j = 0; j < sp->samples.n; j++) {
			const struct sample *t = &sp->samples.v[j];

			if (t->tid == tid && t->ts_ns >= lo && t->ts_ns <= hi &&
			    !strcmp(t->stack, s->stack))
				same++;
		}
		if (same > best_n) {
			best_n = same;
			best = i;
		}
	}
	if (n) {
		*fn = sp->samples.v[best].fn;
		*stack = sp->samples.v[best].stack;
	}
	return n;
}

/* Return the thread name of the holder of w ("" if unknown). */
static void wait_holder_comm(const struct lk_wait_rec *w, char *comm, size_t len)
{
	comm_copy(comm, w->holder_comm);
	if (!comm[0] && w->holder && !kind_is_kernel(w->kind))
		thread_comm(w->tgid, w->holder, comm, len);
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

/* Append one lock_events row for wait w. */
static void add_event(struct locks_priv *sp, struct frame *ev, struct waitev *we)
{
	const struct lk_wait_rec *w = &we->r;
	char buf[64], comm[LK_COMM_LEN + 1];
	const char *fn = "", *stack = "";
	union cell *r = frame_add_row(ev);
	uint64_t lo, hi;
	size_t n = 0, slot;

	if (!we->sym) {
		struct lk_key k = {w->addr, w->tgid, w->holder, w->kind, w->flags};
		struct prev_ent *p = prev_find(sp, &k, &slot);

		we->sym = p && p->sym ? xstrdup(p->sym) :
			  lock_sym(sp, w->addr, w->tgid, w->kind, w->flags, w->kstack);
	}
	r[LE_TS].u = w->end_ns + sp->boot_offset_ns;
	r[LE_ID].u = we->id;
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)w->addr);
	cell_set_str(&r[LE_LOCK], buf);
	cell_set_str(&r[LE_KIND], kind_label(sp, w->tgid, w->addr, w->kind));
	cell_set_str(&r[LE_SYM], we->sym);
	r[LE_PID].u = w->tgid;
	comm_copy(comm, w->process);
	cell_set_str(&r[LE_PROCESS], comm);
	r[LE_TID].u = w->tid;
	comm_copy(comm, w->comm);
	cell_set_str(&r[LE_COMM], comm);
	r[LE_HOLDER].u = w->holder;
	wait_holder_comm(w, comm, sizeof(comm));
	cell_set_str(&r[LE_HOLDER_COMM], comm);
	if (wait_hold(w, &lo, &hi)) {
		n = holder_samples(sp, w->holder, lo, hi, &fn, &stack);
		r[LE_HOLDER_OFFCPU].u = holder_off(sp, w->holder, lo, hi, -1, 0, false);
		r[LE_HOLDER_RUNQ].u = holder_off(sp, w->holder, lo, hi, LO_RUNQ, 0, false);
		r[LE_HOLDER_IO].u = holder_off(sp, w->holder, lo, hi, LO_IO, 0, false);
	}
	cell_set_str(&r[LE_HOLDER_FN], fn);
	cell_set_str(&r[LE_HOLDER_STACK], stack);
	r[LE_WAIT].u = w->end_ns - w->start_ns;
	r[LE_HOLD].u = w->hold_start_ns && w->hold_end_ns > w->hold_start_ns ?
		       w->hold_end_ns - w->hold_start_ns : 0;
	r[LE_SAMPLES].u = n;
}

/* Append one span to the spans frame. */
static void add_span(struct locks_priv *sp, struct frame *f, uint64_t id, const char *row,
		     uint64_t start, uint64_t end, const char *kind, const char *label)
{
	union cell *r;

	if (end <= start)
		return;
	r = frame_add_row(f);
	r[LS_ID].u = id;
	cell_set_str(&r[LS_ROW], row);
	r[LS_START].u = start + sp->boot_offset_ns;
	r[LS_DUR].u = end - start;
	cell_set_str(&r[LS_KIND], kind);
	cell_set_str(&r[LS_LABEL], label);
}

/* Draw holder tid's functions (runs of samples) and off-CPU spans in [lo, hi] on row. */
static void add_holder_activity(struct locks_priv *sp, struct frame *f, uint64_t id,
				const char *row, uint32_t tid, uint64_t lo, uint64_t hi)
{
	uint64_t period = 1000000000ULL / LK_SAMPLE_HZ, run_start = 0, run_end = 0;
	const char *run_fn = NULL;
	size_t i;

	for (i = 0; i < sp->samples.n; i++) {
		const struct sample *s = &sp->samples.v[i];

		if (s->tid != tid || s->ts_ns < lo || s->ts_ns > hi)
			continue;
		if (run_fn && !strcmp(run_fn, s->fn) && s->ts_ns <= run_end + period * 3 / 2) {
			run_end = s->ts_ns;
			continue;
		}
		if (run_fn)
			add_span(sp, f, id, row, run_start, run_end, "oncpu", run_fn);
		run_fn = s->fn;
		run_start = s->ts_ns - period > lo ? s->ts_ns - period : lo;
		run_end = s->ts_ns;
	}
	if (run_fn)
		add_span(sp, f, id, row, run_start, run_end, "oncpu", run_fn);
	for (i = 0; i < sp->offs.n; i++) {
		const struct offspan *o = &sp->offs.v[i];
		uint64_t a = o->start_ns > lo ? o->start_ns : lo, b = o->end_ns < hi ? o->end_ns : hi;

		if (o->tid != tid || b <= a)
			continue;
		add_span(sp, f, id, row, a, b, o->state == LO_RUNQ ? "runq" : "offcpu",
			 o->state == LO_RUNQ ? "runnable" : o->state == LO_IO ? "I/O wait" : "sleep");
	}
}

/*
 * The timeline of wait we: the waiter's wait, the other waiters of the lock
 * in that time, and every holder that released the lock during it with its
 * contended hold, the functions its samples ran (consecutive samples of one
 * function make one span) and its off-CPU spans while holding.
 */
static void add_spans(struct locks_priv *sp, struct frame *f, const struct waitev *we)
{
	const struct lk_wait_rec *w = &we->r;
	uint64_t lo = w->start_ns, hi = w->end_ns;
	char row[96], comm[LK_COMM_LEN + 1];
	size_t i, others = 0;
	bool holder_drawn = false;

	comm_copy(comm, w->comm);
	snprintf(row, sizeof(row), "waiter %u %s", w->tid, comm);
	add_span(sp, f, we->id, row, w->start_ns, w->end_ns, "wait", we->sym ? we->sym : "");
	for (i = 0; i < LK_RELS; i++) {
		const struct lk_rel *r = &w->rels[i];
		uint64_t a = lk_rel_since(w->rels, i, lo);

		if (!r->tid || r->tid == w->tid || r->end_ns < lo || r->end_ns > hi)
			continue;
		a = a > lo ? a : lo;
		comm_copy(comm, w->rel_comms[i]);
		if (!comm[0])
			thread_comm(w->tgid, r->tid, comm, sizeof(comm));
		snprintf(row, sizeof(row), "holder %u %s", r->tid, comm);
		add_span(sp, f, we->id, row, a, r->end_ns, "hold", "hold");
		add_holder_activity(sp, f, we->id, row, r->tid, a, r->end_ns);
		holder_drawn |= r->tid == w->holder;
	}
	if (w->holder && !holder_drawn && wait_hold(w, &lo, &hi)) {
		wait_holder_comm(w, comm, sizeof(comm));
		snprintf(row, sizeof(row), "holder %u %s", w->holder, comm);
		add_span(sp, f, we->id, row, lo, hi, "hold", "hold");
		add_holder_activity(sp, f, we->id, row, w->holder, lo, hi);
	}
	for (i = 0; i < sp->waits.n && others < SPAN_OTHERS; i++) {
		const struct lk_wait_rec *o = &sp->waits.v[i].r;

		if (o == w || o->addr != w->addr || o->tgid != w->tgid || o->tid == w->tid ||
		    o->end_ns <= w->start_ns || o->start_ns >= w->end_ns)
			continue;
		comm_copy(comm, o->comm);
		snprintf(row, sizeof(row), "waiter %u %s", o->tid, comm);
		add_span(sp, f, we->id, row, o->start_ns, o->end_ns, "wait", "");
		others++;
	}
}

/* Order waits by length, longest first. */
static int wait_cmp_desc(const void *a, const void *b)
{
	const struct waitev *x = *(struct waitev *const *)a, *y = *(struct waitev *const *)b;
	uint64_t lx = x->r.end_ns - x->r.start_ns, ly = y->r.end_ns - y->r.start_ns;

	return lx < ly ? 1 : lx > ly ? -1 : 0;
}

/*
 * Keep what is remembered across ticks bounded: past MAX_REMEMBERED entries
 * the function counts, the sticky holder_fns sets and the known mutexes
 * start over (a long run over many short-lived locks).
 */
static void forget_if_full(struct locks_priv *sp)
{
	size_t i, j;

	if (sp->fncounts.n > MAX_REMEMBERED) {
		for (i = 0; i < sp->fncounts.n; i++)
			for (j = 0; j < sp->fncounts.v[i].n; j++)
				free(sp->fncounts.v[i].fns[j].fn);
		sp->fncounts.n = 0;
	}
	if (sp->topfns.n > MAX_REMEMBERED) {
		for (i = 0; i < sp->topfns.n; i++) {
			for (j = 0; j < sp->topfns.v[i].n; j++)
				free(sp->topfns.v[i].names[j]);
			free(sp->topfns.v[i].text);
		}
		sp->topfns.n = 0;
	}
	if (sp->mutexes.n > MAX_REMEMBERED)
		sp->mutexes.n = 0;
}

/* Order waits by lock, then newest first. */
static int wait_cmp_lock_newest(const void *a, const void *b)
{
	const struct waitev *x = *(struct waitev *const *)a, *y = *(struct waitev *const *)b;

	if (x->r.tgid != y->r.tgid)
		return x->r.tgid < y->r.tgid ? -1 : 1;
	if (x->r.addr != y->r.addr)
		return x->r.addr < y->r.addr ? -1 : 1;
	return x->r.end_ns < y->r.end_ns ? 1 : x->r.end_ns > y->r.end_ns ? -1 : 0;
}

/* Drop last tick's buffered records; this tick's become last tick's. */
static void buffers_age(struct locks_priv *sp)
{
	size_t i;
	__u32 *ids = sp->stack_ids.v;
	int fd = bpf_map__fd(sp->skel->maps.stacks);

	for (i = 0; i < sp->samples_old; i++) {
		free(sp->samples.v[i].fn);
		free(sp->samples.v[i].stack);
	}
	VEC_DROP(sp->samples, sp->samples_old);
	sp->samples_old = sp->samples.n;
	VEC_DROP(sp->offs, sp->offs_old);
	sp->offs_old = sp->offs.n;
	for (i = 0; i < sp->waits_old; i++)
		free(sp->waits.v[i].sym);
	VEC_DROP(sp->waits, sp->waits_old);
	sp->waits_old = sp->waits.n;
	forget_if_full(sp);
	for (i = 0; i < sp->stack_ids.n; i++)
		bpf_map_delete_elem(fd, &ids[i]);
	sp->stack_ids.n = 0;
}

/* Read the per-CPU health counters summed over CPUs into sum. */
static void read_health(struct locks_priv *sp, uint64_t sum[LH_N])
{
	probe_percpu_sum(bpf_map__fd(sp->skel->maps.health), sp->ncpus, sum, LH_N);
}

/* Read and fold this tick's totals and records into three frames of t. */
static int locks_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			 char **cause)
{
	struct locks_priv *sp = p->priv;
	struct frame *f = frame_new(&locks_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&lock_events_schema, t_ns, dt_ns);
	struct frame *spans = frame_new(&lock_spans_schema, t_ns, dt_ns);
	struct waitev **worst;
	uint64_t health[LH_N];
	size_t i, k, nw, ndrawn;
	int err;

	err = ring_buffer__consume(sp->rb);
	sp->skel->bss->events_used = 0;
	if (err < 0) {
		*cause = xasprintf("locks: reading the events ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(ev);
		frame_free(spans);
		return -1;
	}
	f->stats.events = read_stats(sp, f);
	nw = sp->waits.n - sp->waits_old;
	worst = xcalloc(nw ? nw : 1, sizeof(*worst));
	for (i = 0; i < nw; i++) {
		worst[i] = &sp->waits.v[sp->waits_old + i];
		add_event(sp, ev, worst[i]);
	}
	qsort(worst, nw, sizeof(*worst), wait_cmp_desc);
	for (i = 0, ndrawn = 0; i < nw && ndrawn < SPAN_WAITS; i++) {
		size_t j, same = 0;

		for (j = 0; j < i && same < SPAN_PER_LOCK; j++)
			same += worst[j]->r.addr == worst[i]->r.addr &&
				worst[j]->r.tgid == worst[i]->r.tgid;
		if (same >= SPAN_PER_LOCK)
			continue;
		add_spans(sp, spans, worst[i]);
		worst[i]->drawn = true;
		ndrawn++;
	}
	qsort(worst, nw, sizeof(*worst), wait_cmp_lock_newest);
	for (i = 0, k = 0; i < nw && ndrawn < SPAN_WAITS; i++) {
		k = i && worst[i]->r.addr == worst[i - 1]->r.addr &&
		    worst[i]->r.tgid == worst[i - 1]->r.tgid ? k + 1 : 0;
		if (k >= SPAN_NEWEST || worst[i]->drawn)
			continue;
		add_spans(sp, spans, worst[i]);
		worst[i]->drawn = true;
		ndrawn++;
	}
	free(worst);
	read_health(sp, health);
	/* Single events over the per-tick budget (BUFFER) are left out by design:
	 * dropped, not lost. */
	f->stats.dropped = delta(health[LH_DROPPED], sp->health_prev[LH_DROPPED]) +
			   delta(health[LH_BUDGET], sp->health_prev[LH_BUDGET]);
	f->stats.lost = delta(health[LH_LOST], sp->health_prev[LH_LOST]) +
			delta(health[LH_STACK], sp->health_prev[LH_STACK]);
	f->stats.evicted = delta(health[LH_EVICTED], sp->health_prev[LH_EVICTED]);
	memcpy(sp->health_prev, health, sizeof(health));
	ev->stats = f->stats;
	ev->stats.events = ev->nrows;
	spans->stats = f->stats;
	spans->stats.events = spans->nrows;
	buffers_age(sp);
	tick_add(t, f);
	tick_add(t, ev);
	tick_add(t, spans);
	return 0;
}

/* Check that f fits the interpreter; fill *cause if not. */
static int filter_check(const struct filter_prog *f, char **cause)
{
	uint32_t i;

	if (f->n > FILTER_MAX_ENTRIES) {
		*cause = xasprintf("locks: filter has %u entries, at most %d fit", f->n,
				   FILTER_MAX_ENTRIES);
		return -1;
	}
	for (i = 0; i < f->n; i++) {
		const struct filter_entry *e = &f->e[i];

		if (e->op < FOP_EQ || e->op > FOP_NOT || e->term >= FTERM_MAX ||
		    (e->term == FTERM_COMM && e->value >= FILTER_MAX_STRS)) {
			*cause = xasprintf("locks: filter entry %u: bad op %u or term %u", i, e->op,
					   e->term);
			return -1;
		}
	}
	return 0;
}

/* Install f in the idle slot, then make it current. */
static int locks_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct locks_priv *sp = p->priv;
	uint32_t next, i, need = 0;

	if (filter_check(f, cause))
		return -1;
	for (i = 0; i < f->n; i++)
		if (f->e[i].term == FTERM_COMM)
			need |= LK_NEED_COMM;
	next = (sp->skel->bss->filter_idx + 1) & 1;
	sp->skel->bss->filters[next] = *f;
	sp->skel->bss->filter_need[next] = need;
	__atomic_store_n(&sp->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	sp->sample_n = f->sample_n;
	return 0;
}

/* Open a cpu-clock sampling event on every CPU for the holder sampler. */
static int open_sampler(struct locks_priv *sp, char *why, size_t len)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1, .sample_freq = LK_SAMPLE_HZ,
	};
	int cpu, nopen = 0, err = 0;

	sp->perf_fds = xcalloc(sp->ncpus, sizeof(*sp->perf_fds));
	sp->perf_links = xcalloc(sp->ncpus, sizeof(*sp->perf_links));
	for (cpu = 0; cpu < sp->ncpus; cpu++) {
		sp->perf_fds[cpu] = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
						 PERF_FLAG_FD_CLOEXEC);
		if (sp->perf_fds[cpu] >= 0)
			nopen++;
		else if (!err && errno != ENODEV)
			err = errno;
	}
	if (!nopen) {
		snprintf(why, len, "perf_event_open(cpu-clock, %d Hz): %s", LK_SAMPLE_HZ,
			 strerror(err ? err : ENODEV));
		return -1;
	}
	return 0;
}

/* Free everything locks_open made. */
static void locks_close(struct probe *p)
{
	struct locks_priv *sp = p->priv;
	size_t i, j;
	int c;

	if (!sp)
		return;
	for (c = 0; sp->perf_links && c < sp->ncpus; c++)
		bpf_link__destroy(sp->perf_links[c]);
	for (c = 0; sp->perf_fds && c < sp->ncpus; c++)
		if (sp->perf_fds[c] >= 0)
			close(sp->perf_fds[c]);
	free(sp->perf_links);
	free(sp->perf_fds);
	ring_buffer__free(sp->rb);
	locks_bpf__destroy(sp->skel);
	for (i = 0; i < PREV_SLOTS; i++) {
		if (sp->prev[i])
			free(sp->prev[i]->sym);
		free(sp->prev[i]);
	}
	for (i = 0; i < sp->fncounts.n; i++)
		for (j = 0; j < sp->fncounts.v[i].n; j++)
			free(sp->fncounts.v[i].fns[j].fn);
	free(sp->fncounts.v);
	for (i = 0; i < sp->samples.n; i++) {
		free(sp->samples.v[i].fn);
		free(sp->samples.v[i].stack);
	}
	free(sp->samples.v);
	free(sp->offs.v);
	for (i = 0; i < sp->waits.n; i++)
		free(sp->waits.v[i].sym);
	free(sp->waits.v);
	free(sp->stack_ids.v);
	free(sp->keys.v);
	free(sp->mutexes.v);
	for (i = 0; i < sp->topfns.n; i++) {
		for (j = 0; j < sp->topfns.v[i].n; j++)
			free(sp->topfns.v[i].names[j]);
		free(sp->topfns.v[i].text);
	}
	free(sp->topfns.v);
	symbols_free(sp->syms);
	hist_free(sp->h);
	free(sp->ips);
	free(sp);
	p->priv = NULL;
}

/* Return whether tracefs (where libbpf looks) lists event ("group/name"). */
static bool tracefs_event(const char *event)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[256];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
		if (!access(path, R_OK))
			return true;
	}
	return false;
}

/* Fill choice for spec: the hook used, or why it is refused. */
static bool choose_hook(const struct hook_spec *spec, struct hook_choice *choice)
{
	char why[140];
	size_t i;

	choice->stage = spec->stage;
	choice->hook = spec->label;
	choice->why[0] = 0;
	for (i = 0; i < 2 && spec->tp_btf[i]; i++) {
		if (!feature_tp_btf(spec->tp_btf[i], why, sizeof(why))) {
			choice->hook = NULL;
			snprintf(choice->why, sizeof(choice->why), "refused: %.140s", why);
			return false;
		}
	}
	if (!spec->tp_btf[0] && !tracefs_event("syscalls/sys_enter_futex")) {
		choice->hook = NULL;
		snprintf(choice->why, sizeof(choice->why), "refused: no tracefs with "
			 "syscalls/sys_enter_futex (tracepoint ids come from tracefs)");
		return false;
	}
	return true;
}

/* Switch off the programs of a refused optional spec. */
static void disable_spec(struct locks_bpf *skel, const struct hook_spec *spec)
{
	size_t i;

	for (i = 0; i < 2 && spec->progs[i]; i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, spec->progs[i]);

		if (prog)
			bpf_program__set_autoload(prog, false);
	}
}

/* Choose hooks and load; locks_attach starts counting. */
static int locks_open(struct probe *p, char **cause)
{
	struct locks_priv *sp = xcalloc(1, sizeof(*sp));
	struct hook_choice *c;
	char why[160];
	size_t i;
	int err;

	p->priv = sp;
	sp->ncpus = libbpf_num_possible_cpus();
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("locks: %s", why);
		goto fail;
	}
	sp->skel = locks_bpf__open();
	if (!sp->skel) {
		*cause = xasprintf("locks: opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	c = &sp->choices[sp->nchoices++];
	if (choose_hook(&futex_spec, c)) {
		disable_spec(sp->skel, &futex_sched_spec);
	} else {
		struct hook_choice fb;

		disable_spec(sp->skel, &futex_spec);
		if (!choose_hook(&futex_sched_spec, &fb)) {
			*cause = xasprintf("locks: %s: %s; %s", c->stage, c->why, fb.why);
			goto fail;
		}
		c->hook = futex_sched_spec.label;
		sp->skel->rodata->futex_by_sched = true;
	}
	for (i = 0; i < NSPECS; i++) {
		c = &sp->choices[sp->nchoices++];
		if (choose_hook(&hook_specs[i], c))
			continue;
		if (hook_specs[i].required) {
			*cause = xasprintf("locks: %s: %s", c->stage, c->why);
			goto fail;
		}
		disable_spec(sp->skel, &hook_specs[i]);
	}
	c = &sp->choices[sp->nchoices++];
	c->stage = "holder stacks (sampled while others wait)";
	c->hook = "perf_event/cpu-clock " LATOP_STR(LK_SAMPLE_HZ) " Hz";
	if (open_sampler(sp, why, sizeof(why))) {
		c->hook = NULL;
		snprintf(c->why, sizeof(c->why), "refused: %.140s", why);
		bpf_program__set_autoload(sp->skel->progs.holder_sample, false);
	}
	sp->skel->rodata->self_tgid = getpid();
	err = locks_bpf__load(sp->skel);
	if (err) {
		*cause = err == -EPERM ?
			 xasprintf("loading BPF programs needs root or CAP_BPF+CAP_PERFMON "
				   "(EPERM at load of locks)") :
			 xasprintf("locks: loading the BPF programs: %s", strerror(-err));
		goto fail;
	}
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.events), on_record, sp, NULL);
	if (!sp->rb) {
		*cause = xasprintf("locks: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	sp->boot_offset_ns = boot_offset_ns();
	/* Distinct across runs, and exact as a JSON number (< 2^53). */
	sp->next_id = (uint64_t)time(NULL) * 1000000ULL;
	sp->syms = symbols_new();
	sp->h = hist_new();
	sp->ips = xcalloc(STACK_DEPTH, sizeof(*sp->ips));
	read_health(sp, sp->health_prev);
	return 0;
fail:
	locks_close(p);
	return -1;
}

/* Attach the loaded programs and the sampler. */
static int locks_attach(struct probe *p, char **cause)
{
	struct locks_priv *sp = p->priv;
	int err = locks_bpf__attach(sp->skel), c;

	if (err) {
		*cause = xasprintf("locks: attaching the BPF programs: %s", strerror(-err));
		return -1;
	}
	if (!bpf_program__autoload(sp->skel->progs.holder_sample))
		return 0;
	for (c = 0; c < sp->ncpus; c++) {
		if (sp->perf_fds[c] < 0)
			continue;
		sp->perf_links[c] = bpf_program__attach_perf_event(sp->skel->progs.holder_sample,
								   sp->perf_fds[c]);
		if (!sp->perf_links[c]) {
			*cause = xasprintf("locks: attaching the holder sampler on CPU %d: %s", c,
					   strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* List the hooks of each stage: the ones in use when open, else what would be. */
static size_t locks_hooks(struct probe *p, struct hook_choice *out, size_t max)
{
	struct locks_priv *sp = p ? p->priv : NULL;
	struct hook_choice all[NCHOICES];
	size_t i, n = 0;

	if (sp) {
		memcpy(all, sp->choices, sizeof(all));
		n = sp->nchoices;
	} else {
		if (!choose_hook(&futex_spec, &all[n])) {
			struct hook_choice fb;

			if (choose_hook(&futex_sched_spec, &fb))
				all[n].hook = futex_sched_spec.label;
		}
		n++;
		for (i = 0; i < NSPECS; i++)
			choose_hook(&hook_specs[i], &all[n++]);
		all[n].stage = "holder stacks (sampled while others wait)";
		all[n].hook = "perf_event/cpu-clock " LATOP_STR(LK_SAMPLE_HZ) " Hz";
		all[n++].why[0] = 0;
	}
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	return n;
}

/* List the fds of the loaded programs. */
static size_t locks_prog_fds(struct probe *p, int *out, size_t max)
{
	struct locks_priv *sp = p->priv;

	return sp ? probe_prog_fds(sp->skel->obj, out, max) : 0;
}

static const struct schema *const locks_tables[] = {
	&locks_schema, &lock_events_schema, &lock_spans_schema,
};

const struct probe_ops locks_probe_ops = {
	.name = "locks",
	.help = "contended user (futex) and kernel locks: waits, holders, and what holders ran",
	.ntables = 3,
	.tables = locks_tables,
	.open = locks_open,
	.attach = locks_attach,
	.set_filter = locks_set_filter,
	.collect = locks_collect,
	.hooks = locks_hooks,
	.close = locks_close,
	.prog_fds = locks_prog_fds,
};
