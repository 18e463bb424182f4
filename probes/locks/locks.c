/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The locks probe, user side: load and attach locks.bpf.c, open the
 * holder-sampling perf events, and each tick turn the kernel's per-key
 * totals into a frame of locks, and feed its ring records (waits, holder
 * stack samples, holder off-CPU spans) to the timeline (locks_timeline.h),
 * which makes lock_events and lock_spans of them.  Here: what needs the
 * BPF maps (stacks, stats, health) and the symbolizer's names of locks and
 * of sampled stacks.
 */
#include <errno.h>
#include <signal.h>
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
#include "../../core/unwind.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "locks.h"
#include "locks_schema.h"
#include "locks_timeline.h"
#include "locks.skel.h"

#define IDLE_TICKS 10		/* a key idle this many ticks leaves the map */
#define KFRAMES 4		/* kernel frames in a stack text */
#define UFRAMES 6		/* user frames in a stack text */
#define STACK_DEPTH 127
#define STR_(x) #x
#define LATOP_STR(x) STR_(x)

/* Kernel functions that are the locking itself, skipped to find the caller. */
static const char *const lock_fn_parts[] = {
	"mutex_lock", "down_read", "down_write", "rwsem", "_raw_spin", "_raw_read", "_raw_write",
	"queued_", "bpf_", "lock_contended", "rt_mutex", "rwbase", "percpu_down", "trace_contention",
	"__traceiter", "osq_lock", "_down", "mutex_optimistic",
};

/* Each stage and its hooks, preferred first. */
static const struct hook_spec hook_specs[] = {
	/* Futex waits: their own syscall tracepoints where tracefs gives their
	 * ids, else the scheduler: sleeps inside futex(WAIT), and who wakes them. */
	{"futex waits and wakes (user locks)", true, NULL,
	 {{"tp", NULL, {"syscalls/sys_enter_futex", "syscalls/sys_exit_futex"},
	   {"futex_enter", "futex_exit"}, "tp/syscalls/sys_enter_futex+sys_exit_futex"},
	  {"tp_btf", NULL, {"sched_switch", "sched_waking"}, {"futex_waking"},
	   "tp_btf/sched_switch+sched_waking (sleeps inside futex(WAIT), found by the saved "
	   "registers)"}}},
	{"kernel lock contention", false, NULL,
	 {{"tp_btf", NULL, {"contention_begin", "contention_end"}, {"lock_begin", "lock_end"},
	   "tp_btf/contention_begin+contention_end"}}},
	{"holder off-CPU spans", false, NULL, {HOOK_TP_BTF("sched_switch", "sched_switch")}},
	/* Without it an exited thread's open wait is given up at the sweep. */
	{"thread exits (open waits given up)", false, NULL,
	 {HOOK_TP_BTF("sched_process_exit", "locks_exit")}},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))
#define NCHOICES (NSPECS + 3)	/* and the holder sampler and the two tables' sizes */
#define FUTEX_STAGE 0

/* Where each health counter goes in the frames' stats: single events over
 * the per-tick budget (BUFFER) are left out by design, dropped, not lost. */
static const enum probe_stat health_to[LH_N] = {
	[LH_DROPPED] = PSTAT_DROPPED, [LH_BUDGET] = PSTAT_DROPPED, [LH_LOST] = PSTAT_LOST,
	[LH_STACK] = PSTAT_LOST, [LH_EVICTED] = PSTAT_EVICTED, [LH_SAMPLES] = PSTAT_NONE,
	[LH_OVERFLOW] = PSTAT_OVERFLOW, [LH_UNHELD] = PSTAT_LOST,
};

struct prev_ent {
	struct lk_key key;
	bool used, dead;
	uint32_t idle;
	char *sym;
	struct lk_stats st;
};

struct locks_priv {
	struct locks_bpf *skel;
	struct ring_buffer *rb;
	struct ring_buffer *notices;	/* new keys' processes, read as they come */
	int ncpus;
	int *perf_fds;			/* per CPU: LK_SAMPLE_HZ, then LK_FAST_HZ (ncpus each) */
	struct bpf_link **perf_links;
	bool fast;			/* the LK_FAST_HZ events are enabled */
	uint32_t sample_n;
	struct probe_health health;
	struct prev_ent **prev;		/* nprev slots: the user-side key table */
	size_t nprev;			/* a power of 2, twice the stats hash's keys or more */
	uint32_t max_keys;		/* the stats hash's size: latoprc lock_max */
	uint32_t max_waits;		/* the matching tables' size: latoprc lock_wait_max */
	uint64_t ticks;
	bool nocgroup;			/* stats keys leave out the cgroup (filter_nocgroup) */
	bool noholder;			/* ... and the holder (filter_noholder) */
	VEC(struct lkstate_key) waited;	/* the user locks the sweep found waits on */
	struct prev_ent ovf;		/* the overflow entry's totals last tick */
	struct lk_timeline tl;		/* waits, holder samples and spans: the timeline */
	VEC(__u32) stack_ids;		/* the stacks map's ids, swept at a tick's end */
	uint32_t stack_tick;		/* this tick's, the BPF side's stack_tick */
	VEC(struct lk_key) keys;	/* the stats hash's keys this tick, and the reserve's */
	VEC(struct lk_key) rkeys;	/* the reserve hash's keys this tick, sorted */
	VEC(struct lk_sample_rec *) pending;	/* samples read, to symbolize (at their length) */
	struct symbols *syms;
	struct unwinder *unw;		/* samples' copied user stacks, unwound */
	__u64 *ips;
	uint64_t *uips;			/* a sample's unwound user frames */
	bool *uret;			/* ... and whether each is a return address */
};

static void sampler_fast(struct locks_priv *sp, bool on);

/* Read stack id into sp->ips; return the number of frames (0 when gone). */
static size_t stack_read(struct locks_priv *sp, int64_t id)
{
	__u32 key = (__u32)id;
	size_t n;

	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.stacks), &key, sp->ips))
		return 0;
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

	if (!lkt_kind_is_kernel(kind)) {
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
 * Put the user frames of sample s (stack: its copied stack) in sp->uips and
 * sp->uret; return how many.  The copy unwound with the call frame
 * information when that gets past the first frame (a copy of the stack's
 * top only, LKS_SHORT, no further than it holds), else the frame-pointer
 * stack.  Through code without frame pointers (Debian's C library) that
 * stack skips callers: a pc in fsync() is followed by its caller's caller.
 * Where this build unwinds, such a stack keeps its first frame alone, the
 * pc, which is certain; elsewhere it is all there is.
 */
static size_t sample_user_frames(struct locks_priv *sp, const struct lk_sample_rec *s,
				 const void *stack)
{
	size_t n = 0, i;

	if (s->stack_len)
		n = unwind_user(sp->unw, s->tgid, s->tid, (const uint64_t *)s->regs, stack,
				s->stack_len, !(s->flags & LKS_SHORT), sp->uips, sp->uret,
				STACK_DEPTH);
	/* A copy sent no frame-pointer stack: its pc alone, if that is all. */
	if (n >= 2 || (n == 1 && s->ustack < 0))
		return n;
	n = stack_read(sp, s->ustack);
	if (n > 1 && unwind_available())
		n = 1;
	for (i = 0; i < n; i++) {
		sp->uips[i] = sp->ips[i];
		sp->uret[i] = i > 0;
	}
	return n;
}

/*
 * Symbolize one holder sample: its function (the innermost frame of the
 * program's own code, else outside libc, else the innermost user frame, else
 * the kernel's; kernel locks prefer the kernel frame) and its stack text.
 */
static void sample_symbolize(struct locks_priv *sp, const struct lk_sample_rec *s,
			     const void *ustack, int64_t kstack, char **fn, char **stack)
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
	n = sample_user_frames(sp, s, ustack);
	for (i = 0, shown = 0; i < n; i++) {
		bool ok = symbols_user(sp->syms, s->tgid, sp->uips[i], sp->uret[i], &loc) && loc.func;

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
					      sym_format(&loc, sp->uips[i], false, buf, sizeof(buf)));
	}
	if (s->lock_tgid == 0 && fn_kernel)
		*fn = xstrdup(fn_kernel);
	else
		*fn = xstrdup(fn_main ? fn_main : fn_nolibc ? fn_nolibc : fn_user ? fn_user :
				fn_kernel ? fn_kernel : "?");
	*stack = xstrdup(text);
	free(fn_main);
	free(fn_nolibc);
	free(fn_user);
	free(fn_kernel);
}

/*
 * Take one ring buffer record into this tick's buffers.  This runs as the
 * ring is read, at the collector's priority, and only copies: a process's
 * maps are noted here, before it can exit; its samples are symbolized and
 * unwound later, in samples_symbolize().
 */
static int on_record(void *ctx, void *data, size_t size)
{
	struct locks_priv *sp = ctx;
	__u32 type;

	if (size < sizeof(type))
		return 0;
	type = *(const __u32 *)data;
	if (type == LR_WAIT && size >= sizeof(struct lk_wait_rec)) {
		struct lk_wait_rec r;

		memcpy(&r, data, sizeof(r));
		if (!lkt_kind_is_kernel(r.kind))
			symbols_note(sp->syms, r.tgid, 0);
		lkt_add_wait(&sp->tl, &r);
	} else if (type == LR_SAMPLE && size >= LK_SAMPLE_HDR) {
		struct lk_sample_rec *r;
		size_t len = ((const struct lk_sample_rec *)data)->stack_len;

		/* Sent at its length: the header, then stack_len bytes of stack. */
		if (len > size - LK_SAMPLE_HDR)
			len = 0;
		r = xmalloc(LK_SAMPLE_HDR + len);
		memcpy(r, data, LK_SAMPLE_HDR + len);
		r->stack_len = (__u32)len;
		if (r->tgid) {
			symbols_note(sp->syms, r->tgid, 0);
			if (len)
				unwind_note(sp->unw, r->tgid);
		}
		*VEC_PUSH(sp->pending) = r;
	} else if (type == LR_OFFCPU && size >= sizeof(struct lk_off_rec)) {
		lkt_add_off(&sp->tl, data);
	}
	return 0;
}

/*
 * A new user lock key, sent the moment its first wait ends: its process's
 * maps are noted now, and read again when those noted do not cover its lock
 * word (a thread stack or an arena mapped since), so its locks and stacks
 * are named at the tick even when it exits before (the tick reads the maps
 * too, but a process of less than a tick would have none left to read).
 */
static int on_notice(void *ctx, void *data, size_t size)
{
	struct locks_priv *sp = ctx;
	struct lk_notice n;

	if (size < sizeof(n))
		return 0;
	memcpy(&n, data, sizeof(n));
	symbols_note(sp->syms, n.tgid, n.addr);
	unwind_note(sp->unw, n.tgid);
	return 0;
}

static int locks_wake_fd(struct probe *p)
{
	struct locks_priv *sp = p->priv;

	return sp && sp->notices ? ring_buffer__epoll_fd(sp->notices) : -1;
}

static void locks_wake(struct probe *p)
{
	struct locks_priv *sp = p->priv;

	ring_buffer__consume(sp->notices);
}

/* Symbolize and unwind the samples on_record() read, into the timeline. */
static void samples_symbolize(struct locks_priv *sp)
{
	size_t i;

	for (i = 0; i < sp->pending.n; i++) {
		struct lk_sample_rec *r = sp->pending.v[i];
		char *fn, *stack;

		sample_symbolize(sp, r, r->stack, r->kstack, &fn, &stack);
		lkt_add_sample(&sp->tl, r, fn, stack);
		free(r);
	}
	sp->pending.n = 0;
}

/* Return the user-side entry of key (NULL if none); *slot gets where to insert. */
static struct prev_ent *prev_find(struct locks_priv *sp, const struct lk_key *key, size_t *slot)
{
	uint64_t h = (key->addr * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)key->tgid << 20) ^
		     ((uint64_t)key->holder << 7) ^ key->kind ^ ((uint64_t)key->flags << 40) ^
		     key->cgroup * 0xff51afd7ed558ccdULL;
	size_t i, s, first_dead = sp->nprev;

	for (i = 0; i < sp->nprev; i++) {
		struct prev_ent *p;

		s = (h + i) & (sp->nprev - 1);
		p = sp->prev[s];
		if (!p) {
			*slot = first_dead < sp->nprev ? first_dead : s;
			return NULL;
		}
		if (p->dead) {
			if (first_dead == sp->nprev)
				first_dead = s;
			continue;
		}
		if (!memcmp(&p->key, key, sizeof(*key)))
			return p;
	}
	*slot = first_dead;
	return NULL;
}

/* Append the overflow row: text keys "(other)", numeric ones 0, and no
 * holder detail. */
static union cell *other_row(struct frame *f)
{
	static const int text[] = {LC_LOCK, LC_KIND, LC_SYM, LC_PROCESS, LC_COMM,
				   LC_HOLDER_COMM, LC_HOLDER_FN, LC_HOLDER_FNS, LC_CGROUP,
				   LC_UNIT, LC_CONTAINER};
	union cell *r = frame_add_row(f);
	size_t i;

	for (i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		cell_set_str(&r[text[i]], "(other)");
	r[LC_PID].u = 0;
	r[LC_HOLDER].u = 0;
	r[LC_WAITERS].u = 0;
	r[LC_HOLDER_OFFCPU].u = 0;
	r[LC_SAMPLES].u = 0;
	return r;
}

/* Append one locks row for key's waits since last tick (p == &sp->ovf: the
 * overflow row). */
static uint64_t add_row(struct locks_priv *sp, struct frame *f, struct prev_ent *p,
			const struct lk_stats *cur)
{
	const struct lk_key *k = &p->key;
	uint64_t n = sp->sample_n > 1 ? sp->sample_n : 1;
	uint64_t count = delta(cur->count, p->st.count), samples = 0, off = 0;
	uint32_t lock_tgid = lkt_kind_is_kernel(k->kind) ? 0 : k->tgid;
	char buf[64], comm[LK_COMM_LEN + 1], fns[256];
	/* Keyed without its holder: the lock's row, every holder's. */
	uint32_t holder = sp->noholder && !k->holder ? LKT_ANY_HOLDER : k->holder;
	union cell *r;

	if (p == &sp->ovf) {
		r = other_row(f);
		goto figures;
	}
	r = frame_add_row(f);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)k->addr);
	cell_set_str(&r[LC_LOCK], buf);
	cell_set_str(&r[LC_KIND], lkt_kind_label(&sp->tl, k->tgid, k->addr, k->kind));
	cell_set_str(&r[LC_SYM], p->sym ? p->sym : "");
	r[LC_PID].u = k->tgid;
	lkt_comm_copy(comm, cur->process);
	cell_set_str(&r[LC_PROCESS], comm);
	lkt_comm_copy(comm, cur->comm);
	cell_set_str(&r[LC_COMM], comm);
	r[LC_HOLDER].u = k->holder;
	comm[0] = 0;
	if (holder != LKT_ANY_HOLDER)
		lkt_comm_copy(comm, cur->holder_comm);
	if (!comm[0] && k->holder && lock_tgid)
		lkt_thread_comm(k->tgid, k->holder, comm, sizeof(comm));
	cell_set_str(&r[LC_HOLDER_COMM], comm);
	cell_set_str(&r[LC_HOLDER_FN], lkt_holder_fn(&sp->tl, lock_tgid, k->addr, k->holder));
	lkt_top_fns(&sp->tl, lock_tgid, k->addr, fns, sizeof(fns));
	cell_set_str(&r[LC_HOLDER_FNS], fns);
	r[LC_WAITERS].u = lkt_waiters(&sp->tl, &(struct lk_key){k->addr, k->tgid, holder, k->kind,
								k->flags, k->cgroup});
	samples = lkt_lock_samples(&sp->tl, lock_tgid, k->addr, holder);
	if (holder)
		off = lkt_lock_offcpu(&sp->tl, holder, k->addr);
	r[LC_HOLDER_OFFCPU].u = off;
	r[LC_SAMPLES].u = samples;
	probe_cgroup_cells(r + LC_CGROUP, k->cgroup);
figures:
	r[LC_COUNT].u = count * n;
	r[LC_BELOW].u = delta(cur->below, p->st.below) * n;
	probe_cell_hist(&r[LC_WAIT], cur->hist, p->st.hist, delta(cur->wait_sum, p->st.wait_sum),
			 &(struct probe_extremes){.has_max = true, .max = cur->wait_max,
				 .max_moved = cur->wait_max > p->st.wait_max || !p->st.count}, n);
	probe_cell_hist(&r[LC_HOLD], cur->hold_hist, p->st.hold_hist,
			 delta(cur->hold_sum, p->st.hold_sum),
			 &(struct probe_extremes){.has_max = true, .max = cur->hold_max,
				 .max_moved = cur->hold_max > p->st.hold_max || !p->st.count}, n);
	r[LC_TIME].u = delta(cur->wait_sum, p->st.wait_sum) * n;
	return count;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct lk_key));
}

/* Add the totals of src, the same key's in the reserve hash, to dst. */
static void stats_add(struct lk_stats *dst, const struct lk_stats *src)
{
	size_t i;

	if (!dst->count) {
		dst->kstack = src->kstack;
		memcpy(dst->comm, src->comm, sizeof(dst->comm));
		memcpy(dst->process, src->process, sizeof(dst->process));
		memcpy(dst->holder_comm, src->holder_comm, sizeof(dst->holder_comm));
	}
	dst->count += src->count;
	dst->below += src->below;
	dst->wait_sum += src->wait_sum;
	dst->hold_sum += src->hold_sum;
	dst->wait_max = dst->wait_max > src->wait_max ? dst->wait_max : src->wait_max;
	dst->hold_max = dst->hold_max > src->hold_max ? dst->hold_max : src->hold_max;
	for (i = 0; i < LH_NBUCKETS; i++) {
		dst->hist[i] += src->hist[i];
		dst->hold_hist[i] += src->hold_hist[i];
	}
}

/* Read key's totals into cur: the stats hash's and the reserve's (where
 * two CPUs made it at once, one in each), summed.  Return -1 when neither
 * has it. */
static int stats_read(struct locks_priv *sp, const struct lk_key *key, struct lk_stats *cur)
{
	struct lk_stats *r = NULL;
	int found;

	found = !bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.stats), key, cur);
	if (!sp->rkeys.n || !bsearch(key, sp->rkeys.v, sp->rkeys.n, sizeof(*key), key_cmp))
		return found ? 0 : -1;
	r = xmalloc(sizeof(*r));
	if (!bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.reserve), key, r)) {
		if (!found)
			memset(cur, 0, sizeof(*cur));
		stats_add(cur, r);
		found = 1;
	}
	free(r);
	return found ? 0 : -1;
}

/* Fold every key of the stats hash and of its reserve into f; evict keys
 * idle IDLE_TICKS. */
static uint64_t read_stats(struct locks_priv *sp, struct frame *f)
{
	int fd = bpf_map__fd(sp->skel->maps.stats), rfd = bpf_map__fd(sp->skel->maps.reserve);
	struct lk_key key, next, *kp = NULL;
	struct lk_stats *cur = xmalloc(sizeof(*cur));
	uint64_t events = 0;
	size_t i, k;

	for (i = 0; i < sp->nprev; i++)
		if (sp->prev[i] && !sp->prev[i]->dead)
			sp->prev[i]->used = false;
	sp->keys.n = sp->rkeys.n = 0;
	while (!bpf_map_get_next_key(rfd, kp, &next)) {
		key = next;
		kp = &key;
		*VEC_PUSH(sp->rkeys) = key;
	}
	if (sp->rkeys.n)
		qsort(sp->rkeys.v, sp->rkeys.n, sizeof(key), key_cmp);
	kp = NULL;
	while (!bpf_map_get_next_key(fd, kp, &next)) {
		key = next;
		kp = &key;
		*VEC_PUSH(sp->keys) = key;
		lkt_mutex_learn(&sp->tl, key.tgid, key.addr, key.kind);
	}
	/* A reserve key the stats hash has too is read with it, once. */
	for (i = 0; i < sp->rkeys.n; i++) {
		key = sp->rkeys.v[i];
		if (!bpf_map_lookup_elem(fd, &key, cur))
			continue;
		*VEC_PUSH(sp->keys) = key;
		lkt_mutex_learn(&sp->tl, key.tgid, key.addr, key.kind);
	}
	for (i = 0; i < sp->tl.waits.n; i++)
		lkt_mutex_learn(&sp->tl, sp->tl.waits.v[i].r.tgid, sp->tl.waits.v[i].r.addr,
				sp->tl.waits.v[i].r.kind);
	for (k = 0; k < sp->keys.n; k++) {
		struct prev_ent *p;
		size_t slot;

		key = sp->keys.v[k];
		if (stats_read(sp, &key, cur))
			continue;
		p = prev_find(sp, &key, &slot);
		if (!p) {
			if (slot >= sp->nprev)
				continue;
			free(sp->prev[slot]);
			p = sp->prev[slot] = xcalloc(1, sizeof(*p));
			p->key = key;
			p->sym = lock_sym(sp, key.addr, key.tgid, key.kind, key.flags, cur->kstack);
		} else if (!p->sym[0] && lkt_kind_is_kernel(key.kind) && p->st.kstack < 0 &&
			   cur->kstack >= 0) {
			/* A kernel lock first seen without its caller's stack
			 * (its bucket was another's): a wait since took it. */
			free(p->sym);
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
	for (i = 0; i < sp->nprev; i++) {
		struct prev_ent *p = sp->prev[i];

		if (!p || p->dead || (p->used && p->idle < IDLE_TICKS))
			continue;
		if (p->used) {
			bpf_map_delete_elem(fd, &p->key);
			bpf_map_delete_elem(rfd, &p->key);
		}
		free(p->sym);
		p->sym = NULL;
		p->dead = true;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.overflow), &(uint32_t){0}, cur) &&
	    cur->count != sp->ovf.st.count) {
		events += add_row(sp, f, &sp->ovf, cur);
		sp->ovf.st = *cur;
	}
	free(cur);
	return events;
}

/*
 * Drop last tick's buffered records; this tick's become last tick's.  A
 * stack not handed out since this tick's ring was read is deleted: every
 * record that names it has been read (the rest are named by records read
 * next tick).  Between the test and the deletion (two calls) a program may
 * hand one out again, and its record lose its stack.
 */
static void buffers_age(struct locks_priv *sp)
{
	int fd = bpf_map__fd(sp->skel->maps.stacks);
	int tfd = bpf_map__fd(sp->skel->maps.stack_ticks);
	__u32 id, stamp;
	size_t i;

	lkt_age(&sp->tl);
	/* All ids first: a stack map's next key after a deleted one is its first. */
	sp->stack_ids.n = 0;
	for (int err = bpf_map_get_next_key(fd, NULL, &id); !err;
	     err = bpf_map_get_next_key(fd, &sp->stack_ids.v[sp->stack_ids.n - 1], &id))
		*VEC_PUSH(sp->stack_ids) = id;
	for (i = 0; i < sp->stack_ids.n; i++) {
		id = sp->stack_ids.v[i];
		if (bpf_map_lookup_elem(tfd, &id, &stamp) || lkt_stack_stale(stamp, sp->stack_tick))
			bpf_map_delete_elem(fd, &id);
	}
}

/* A wait of a thread that exited: stale (locks.h).  Notes the lock of
 * every other wait in sp->waited. */
static bool uwait_stale(const void *key, const void *value, void *arg)
{
	struct locks_priv *sp = arg;
	const struct lk_uwait *w = value;
	pid_t tid = (pid_t)*(const __u32 *)key;

	if (kill(tid, 0) && errno == ESRCH)
		return true;
	*VEC_PUSH(sp->waited) = (struct lkstate_key){.addr = w->addr, .tgid = w->tgid};
	return false;
}

static int lkstate_key_cmp(const void *a, const void *b)
{
	const struct lkstate_key *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* The state of a user lock no wait is left on, untouched LK_STALE_NS: stale. */
static bool lkstate_stale(const void *key, const void *value, void *arg)
{
	struct locks_priv *sp = arg;
	const struct lkstate_key *k = key;
	const struct lkstate *st = value;
	uint64_t now = mono_ns(), last = st->since_ns;
	struct lkstate_key want = {.addr = k->addr, .tgid = k->tgid};
	size_t i;

	for (i = 0; i < LK_RELS; i++)
		if (st->rels[i].end_ns > last)
			last = st->rels[i].end_ns;
	if (!k->tgid || last + LK_STALE_NS > now)
		return false;
	return !sp->waited.n ||
	       !bsearch(&want, sp->waited.v, sp->waited.n, sizeof(want), lkstate_key_cmp);
}

/* A holder whose lock has no state (nobody waits for it any more): stale. */
static bool holder_stale(const void *key, const void *value, void *arg)
{
	struct locks_priv *sp = arg;
	const struct lk_holder *h = value;
	struct lkstate_key k = {.addr = h->addr, .tgid = h->lock_tgid};
	struct lkstate st;

	(void)key;
	return h->since_ns + LK_STALE_NS <= mono_ns() &&
	       bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.lkstates), &k, &st);
}

/* An early wake older than LK_STALE_NS (its use is within 1 ms): stale. */
static bool early_wake_stale(const void *key, const void *value, void *arg)
{
	const struct lk_early_wake *ew = value;

	(void)key;
	(void)arg;
	return ew->ts_ns + LK_STALE_NS <= mono_ns();
}

/*
 * Clear the matching tables of what will never be matched (locks.h): the
 * waits of threads that exited, returned (they are not counted: evicted),
 * then the lock states, holders and early wakes they leave behind.
 */
static uint64_t sweep_tables(struct locks_priv *sp)
{
	struct locks_bpf *o = sp->skel;
	uint64_t gone;

	sp->waited.n = 0;
	gone = probe_sweep_hash(bpf_map__fd(o->maps.uwaits), sizeof(__u32),
				sizeof(struct lk_uwait), uwait_stale, sp);
	if (sp->waited.n)
		qsort(sp->waited.v, sp->waited.n, sizeof(*sp->waited.v), lkstate_key_cmp);
	probe_sweep_hash(bpf_map__fd(o->maps.lkstates), sizeof(struct lkstate_key),
			 sizeof(struct lkstate), lkstate_stale, sp);
	probe_sweep_hash(bpf_map__fd(o->maps.holders), sizeof(__u32), sizeof(struct lk_holder),
			 holder_stale, sp);
	probe_sweep_hash(bpf_map__fd(o->maps.early_wakes), sizeof(__u32),
			 sizeof(struct lk_early_wake), early_wake_stale, sp);
	return gone;
}

/* Name the lock of wait we: its key's symbol when known, else looked up. */
static void wait_name(struct locks_priv *sp, struct lkt_wait *we)
{
	const struct lk_wait_rec *w = &we->r;
	struct lk_key k = {w->addr, w->tgid, sp->noholder ? 0 : w->holder, w->kind, w->flags,
			   sp->nocgroup ? 0 : w->cgroup};
	struct prev_ent *p;
	size_t slot;

	if (we->sym)
		return;
	p = prev_find(sp, &k, &slot);
	we->sym = p && p->sym ? xstrdup(p->sym) :
		  lock_sym(sp, w->addr, w->tgid, w->kind, w->flags, w->kstack);
}

/* Read and fold this tick's totals and records into three frames of t. */
static int locks_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			 char **cause)
{
	struct locks_priv *sp = p->priv;
	struct frame *f = frame_new(&locks_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&lock_events_schema, t_ns, dt_ns);
	struct frame *spans = frame_new(&lock_spans_schema, t_ns, dt_ns);
	size_t i;
	int err;

	/* The ring is read and its processes' maps noted at the collector's
	 * priority, so a process that exits soon after is still named;
	 * symbolizing and unwinding holder stacks is slow (a process's first
	 * read takes tens to hundreds of ms): there the workload goes first. */
	/* Stacks handed out from here on are named by records read next tick. */
	__atomic_store_n(&sp->skel->bss->stack_tick, ++sp->stack_tick, __ATOMIC_RELEASE);
	err = ring_buffer__consume(sp->rb);
	probe_priority_yield();
	samples_symbolize(sp);
	probe_priority_restore();
	sp->skel->bss->events_used = 0;
	sp->skel->bss->copies_used = 0;
	if (err < 0) {
		*cause = xasprintf("locks: reading the events ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(ev);
		frame_free(spans);
		return -1;
	}
	f->stats.events = read_stats(sp, f);
	/* Locks were contended this tick: sample holders faster in the next. */
	if (bpf_program__autoload(sp->skel->progs.holder_sample))
		sampler_fast(sp, f->stats.events > 0);
	for (i = sp->tl.waits_old; i < sp->tl.waits.n; i++)
		wait_name(sp, &sp->tl.waits.v[i]);
	unwind_forget_exited(sp->unw);
	lkt_rows(&sp->tl, ev, spans);
	probe_health_tick(&sp->health, &f->stats);
	if (++sp->ticks % IDLE_TICKS == 0)
		f->stats.evicted += sweep_tables(sp);
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
	for (i = 0; i < f->n; i++) {
		if (f->e[i].term == FTERM_COMM)
			need |= LK_NEED_COMM;
		else if (f->e[i].term == FTERM_CGROUP)
			need |= LK_NEED_CGROUP;
	}
	next = (sp->skel->bss->filter_idx + 1) & 1;
	sp->skel->bss->filters[next] = *f;
	sp->skel->bss->filter_need[next] = need;
	/* The locks table (0) keys by what the query reads of it. */
	sp->nocgroup = !filter_reads_any_of(f, 0, FILTER_FIELD(LC_CGROUP) | FILTER_FIELD(LC_UNIT) |
						  FILTER_FIELD(LC_CONTAINER));
	sp->skel->bss->filter_nocgroup[next] = sp->nocgroup;
	sp->noholder = !filter_reads_any_of(f, 0, FILTER_FIELD(LC_HOLDER) |
						  FILTER_FIELD(LC_HOLDER_COMM) |
						  FILTER_FIELD(LC_HOLDER_FN) |
						  FILTER_FIELD(LC_HOLDER_FNS));
	sp->skel->bss->filter_noholder[next] = sp->noholder;
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

	sp->perf_fds = xcalloc(2 * (size_t)sp->ncpus, sizeof(*sp->perf_fds));
	sp->perf_links = xcalloc(2 * (size_t)sp->ncpus, sizeof(*sp->perf_links));
	for (cpu = 0; cpu < sp->ncpus; cpu++) {
		sp->perf_fds[cpu] = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
						 PERF_FLAG_FD_CLOEXEC);
		if (sp->perf_fds[cpu] >= 0)
			nopen++;
		else if (!err && errno != ENODEV)
			err = errno;
	}
	/* The faster sampler, enabled only after a tick with waits (best effort). */
	attr.sample_freq = LK_FAST_HZ;
	attr.disabled = 1;
	for (cpu = 0; cpu < sp->ncpus; cpu++)
		sp->perf_fds[sp->ncpus + cpu] = sp->perf_fds[cpu] < 0 ? -1 :
			(int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (!nopen) {
		snprintf(why, len, "perf_event_open(cpu-clock, %d Hz): %s", LK_SAMPLE_HZ,
			 strerror(err ? err : ENODEV));
		return -1;
	}
	return 0;
}

/* Enable or disable the LK_FAST_HZ sampler on every CPU. */
static void sampler_fast(struct locks_priv *sp, bool on)
{
	int c;

	if (on == sp->fast || !sp->perf_fds)
		return;
	for (c = sp->ncpus; c < 2 * sp->ncpus; c++)
		if (sp->perf_fds[c] >= 0)
			ioctl(sp->perf_fds[c], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	sp->fast = on;
}

/* Free everything locks_open made. */
static void locks_close(struct probe *p)
{
	struct locks_priv *sp = p->priv;
	size_t i;
	int c;

	if (!sp)
		return;
	for (c = 0; sp->perf_links && c < 2 * sp->ncpus; c++)
		bpf_link__destroy(sp->perf_links[c]);
	for (c = 0; sp->perf_fds && c < 2 * sp->ncpus; c++)
		if (sp->perf_fds[c] >= 0)
			close(sp->perf_fds[c]);
	free(sp->perf_links);
	free(sp->perf_fds);
	ring_buffer__free(sp->rb);
	ring_buffer__free(sp->notices);
	locks_bpf__destroy(sp->skel);
	for (i = 0; sp->prev && i < sp->nprev; i++) {
		if (sp->prev[i])
			free(sp->prev[i]->sym);
		free(sp->prev[i]);
	}
	free(sp->prev);
	lkt_free(&sp->tl);
	free(sp->stack_ids.v);
	free(sp->keys.v);
	free(sp->rkeys.v);
	for (i = 0; i < sp->pending.n; i++)
		free(sp->pending.v[i]);
	free(sp->pending.v);
	free(sp->waited.v);
	symbols_free(sp->syms);
	unwinder_free(sp->unw);
	free(sp->ips);
	free(sp->uips);
	free(sp->uret);
	free(sp);
	p->priv = NULL;
}

/* Fill c with the holder sampler's line, as when it opens. */
static void sampler_choice(struct hook_choice *c)
{
	c->stage = "holder stacks (sampled while others wait)";
	c->hook = unwind_available() ?
		  "perf_event/cpu-clock " LATOP_STR(LK_SAMPLE_HZ) " Hz (+" LATOP_STR(LK_FAST_HZ)
		  " Hz after a tick with waits), and at the holder's switch-out or release; "
		  "user stacks unwound by DWARF (libdw)" :
		  "perf_event/cpu-clock " LATOP_STR(LK_SAMPLE_HZ) " Hz (+" LATOP_STR(LK_FAST_HZ)
		  " Hz after a tick with waits), and at the holder's switch-out or release; "
		  "user stacks by frame pointers";
	c->first = true;
	c->why[0] = 0;
}

/* A stats hash entry: its key and value, and the element header and the
 * allocator's share, about 64 bytes on 6.1. */
#define LK_KEY_BYTES (sizeof(struct lk_key) + sizeof(struct lk_stats) + 64)
/* A thread's entries in the five matching tables (a wait, its lock's state,
 * a holder, an early wake, its process's last contended mutex), each with
 * its element header. */
#define LK_WAIT_BYTES (sizeof(struct lk_uwait) + sizeof(struct lkstate) + \
		       sizeof(struct lk_holder) + sizeof(struct lk_early_wake) + \
		       sizeof(struct lk_proclock) + 4 * sizeof(__u32) + \
		       sizeof(struct lkstate_key) + 5 * 64)

/* Return latoprc's lock_max, or the default that fits this machine (said,
 * when it is bad). */
static uint32_t read_max_keys(void)
{
	return probe_size_option("lock_max", LK_KEYS_MIN, LK_KEYS_MAX,
				 probe_size_fit(LK_DEFAULT_KEYS, LK_KEYS_DEFAULT_MIN, LK_KEY_BYTES),
				 false, "keys");
}

/* Return latoprc's lock_wait_max, or the default that fits this machine. */
static uint32_t read_max_waits(void)
{
	return probe_size_option("lock_wait_max", LK_WAITS_MIN, LK_WAITS_MAX,
				 probe_size_fit(LK_DEFAULT_WAITS, LK_WAITS_DEFAULT_MIN,
						LK_WAIT_BYTES),
				 false, "waits");
}

/* Return latoprc's lock_stack_copies: holder samples a tick that copy their
 * stack, at most (and by default) LK_STACK_COPIES. */
static uint32_t read_stack_copies(void)
{
	return probe_size_option("lock_stack_copies", 0, LK_STACK_COPIES, LK_STACK_COPIES, false,
				 "stack copies");
}

/* Fill c[0] and c[1] with the stats hash's and the matching tables'
 * capacity and what happens when each is full. */
static void capacity_choices(struct hook_choice *c, uint32_t max_keys, uint32_t max_waits)
{
	probe_capacity(&c[0], "lock keys counted at once (latoprc lock_max)", max_keys, "keys",
		       LK_KEY_BYTES, false, "more are counted in the (other) row (overflow)");
	probe_capacity(&c[1], "waits followed at once (latoprc lock_wait_max)", max_waits,
		       "waits", LK_WAIT_BYTES, true,
		       "more are not counted (evicted), or counted without their holder (lost)");
}

/*
 * Size the stack map from LATOP_LOCK_STACKS (1 to LK_STACKS, default
 * LK_STACKS): a small one makes stacks share buckets, as a busy host's do
 * now and then (the tests' way to reach a stack taken again after its
 * bucket was another's).  -1 with *cause for a value out of range.
 */
static int stacks_size(struct locks_priv *sp, char **cause)
{
	const char *v = getenv("LATOP_LOCK_STACKS");
	char *end;
	unsigned long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > LK_STACKS) {
		*cause = xasprintf("locks: LATOP_LOCK_STACKS=%s: not a number of stacks from 1 to %d",
				   v, LK_STACKS);
		return -1;
	}
	if (bpf_map__set_max_entries(sp->skel->maps.stacks, (uint32_t)n)) {
		*cause = xasprintf("locks: sizing the stack map to %lu: %s", n, strerror(errno));
		return -1;
	}
	return 0;
}

/* Choose hooks and load; locks_attach starts counting. */
static int locks_open(struct probe *p, char **cause)
{
	struct locks_priv *sp = xcalloc(1, sizeof(*sp));
	struct hook_choice *c;
	int used[NSPECS], err;
	char why[160];

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
	if (hook_choose_all("locks", sp->skel->obj, hook_specs, NSPECS, p->hooks, used, 0, cause))
		goto fail;
	sp->skel->rodata->futex_by_sched = used[FUTEX_STAGE] == 1;
	c = &p->hooks[NSPECS];
	sampler_choice(c);
	if (open_sampler(sp, why, sizeof(why))) {
		c->hook = NULL;
		c->first = false;
		snprintf(c->why, sizeof(c->why), "refused: %.140s", why);
		bpf_program__set_autoload(sp->skel->progs.holder_sample, false);
	}
	sp->max_keys = read_max_keys();
	sp->max_waits = read_max_waits();
	capacity_choices(&p->hooks[NSPECS + 1], sp->max_keys, sp->max_waits);
	p->nhooks = NCHOICES;
	if (bpf_map__set_max_entries(sp->skel->maps.stats, sp->max_keys)) {
		*cause = xasprintf("locks: sizing the stats map to %u: %s", sp->max_keys,
				   strerror(errno));
		goto fail;
	}
	if (bpf_map__set_max_entries(sp->skel->maps.uwaits, sp->max_waits) ||
	    bpf_map__set_max_entries(sp->skel->maps.lkstates, sp->max_waits) ||
	    bpf_map__set_max_entries(sp->skel->maps.holders, sp->max_waits) ||
	    bpf_map__set_max_entries(sp->skel->maps.early_wakes, sp->max_waits) ||
	    bpf_map__set_max_entries(sp->skel->maps.proc_locks, sp->max_waits)) {
		*cause = xasprintf("locks: sizing the matching tables to %u: %s", sp->max_waits,
				   strerror(errno));
		goto fail;
	}
	if (stacks_size(sp, cause))
		goto fail;
	for (sp->nprev = 64; sp->nprev < 2 * (size_t)sp->max_keys; sp->nprev *= 2)
		;
	sp->prev = xcalloc(sp->nprev, sizeof(*sp->prev));
	sp->skel->rodata->self_tgid = getpid();
	sp->skel->rodata->stack_copies = read_stack_copies();
	err = locks_bpf__load(sp->skel);
	if (err) {
		*cause = hook_load_cause("locks", err);
		goto fail;
	}
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.events), on_record, sp, NULL);
	if (!sp->rb) {
		*cause = xasprintf("locks: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	sp->notices = ring_buffer__new(bpf_map__fd(sp->skel->maps.notices), on_notice, sp, NULL);
	if (!sp->notices) {
		*cause = xasprintf("locks: opening the notices ring buffer: %s", strerror(errno));
		goto fail;
	}
	/* Ids distinct across runs, and exact as a JSON number (< 2^53). */
	lkt_init(&sp->tl, boot_offset_ns(), (uint64_t)time(NULL) * 1000000ULL);
	sp->syms = symbols_new();
	sp->ips = xcalloc(STACK_DEPTH, sizeof(*sp->ips));
	sp->unw = unwinder_new();
	sp->uips = xcalloc(STACK_DEPTH, sizeof(*sp->uips));
	sp->uret = xcalloc(STACK_DEPTH, sizeof(*sp->uret));
	probe_health_init(&sp->health, bpf_map__fd(sp->skel->maps.health), sp->ncpus, health_to,
			  LH_N);
	return 0;
fail:
	locks_close(p);
	return -1;
}

/* Attach the loaded programs and the sampler. */
static int locks_attach(struct probe *p, char **cause)
{
	struct locks_priv *sp = p->priv;
	int c;

	if (probe_attach_skel("locks", sp->skel->skeleton, cause))
		return -1;
	if (!bpf_program__autoload(sp->skel->progs.holder_sample))
		return 0;
	for (c = 0; c < 2 * sp->ncpus; c++) {
		if (sp->perf_fds[c] < 0)
			continue;
		sp->perf_links[c] = bpf_program__attach_perf_event(sp->skel->progs.holder_sample,
								   sp->perf_fds[c]);
		if (!sp->perf_links[c]) {
			*cause = xasprintf("locks: attaching the holder sampler on CPU %d: %s",
					   c % sp->ncpus, strerror(errno));
			return -1;
		}
	}
	/* Attaching enabled them: the faster ones wait for waits. */
	sp->fast = true;
	sampler_fast(sp, false);
	return 0;
}

/* What each stage would use here, every alternative tried. */
static size_t locks_hooks(struct hook_choice *out, size_t max)
{
	if (max < NCHOICES)
		return 0;
	hook_choose_all("locks", NULL, hook_specs, NSPECS, out, NULL, HOOK_CHECK_ALL, NULL);
	sampler_choice(&out[NSPECS]);
	capacity_choices(&out[NSPECS + 1], read_max_keys(), read_max_waits());
	return NCHOICES;
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

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"lock_max", "lock_wait_max", "lock_stack_copies",
					 NULL};

const struct probe_ops locks_probe_ops = {
	.name = "locks",
	.config_keys = rc_keys,
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
	.wake_fd = locks_wake_fd,
	.wake = locks_wake,
};
