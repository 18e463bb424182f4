/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The locks view's timeline, in user space: no libbpf here, so the logic is
 * unit-tested on synthetic records.
 *
 * Input: the locks probe's ring records (struct lk_wait_rec, lk_sample_rec
 * with its stacks already symbolized, lk_off_rec) of one tick.  Samples and
 * off-CPU spans come before the wait they explain ends, so a tick first
 * feeds every record, then turns this tick's waits into rows: one
 * lock_events row each, and for the worst and newest waits of each lock
 * their timeline in lock_spans (the waiter, other waiters of the lock, and
 * every holder that released the lock during the wait with its contended
 * hold, the functions its samples ran and its off-CPU spans while holding).
 * A wait gets the samples and spans of its holder that fall inside it, from
 * this tick or the one before.  Across ticks it remembers, bounded, the
 * functions sampled per (lock, holder), each lock's sticky holder_fns set
 * and which glibc locks are pthread mutexes.
 */
#ifndef LATOP_LOCKS_TIMELINE_H
#define LATOP_LOCKS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>
#include "../../core/table.h"
#include "../../core/xalloc.h"
#include "locks.h"

#define LKT_SPAN_PER_LOCK 4	/* worst waits per lock and tick whose timeline goes to lock_spans */
#define LKT_SPAN_NEWEST 32	/* ... and newest (what the detail pane lists) */
#define LKT_SPAN_WAITS 1024	/* ... at most this many per tick */
#define LKT_SPAN_OTHERS 6	/* other waiters drawn on a timeline */
#define LKT_MAX_FNS 8		/* functions counted per (lock, holder) */
#define LKT_MAX_REMEMBERED 4096	/* (lock, holder) function counts, sticky sets, known mutexes */

/* A growing array of T. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec) \
	((vec).n == (vec).cap ? \
	 ((vec).v = xreallocarray((vec).v, (vec).cap = (vec).cap ? (vec).cap * 2 : 64, \
				  sizeof(*(vec).v))) : 0, &(vec).v[(vec).n++])
/* Drop the first k entries of vec. */
#define VEC_DROP(vec, k) do { \
	if ((k) && (vec).v) \
		memmove((vec).v, (vec).v + (k), ((vec).n - (k)) * sizeof(*(vec).v)); \
	(vec).n -= (k); \
} while (0)

/* Functions sampled on one holder of one lock (cumulative). */
struct lkt_fncount {
	uint64_t addr;
	uint32_t lock_tgid, holder;
	size_t n;
	struct {
		char *fn;
		uint64_t count;
	} fns[LKT_MAX_FNS];
};

/* One holder stack sample, symbolized. */
struct lkt_sample {
	uint64_t ts_ns;
	uint64_t addr;
	uint32_t tgid, tid, lock_tgid;
	char *fn;
	char *stack;
};

struct lkt_offspan {
	uint64_t start_ns, end_ns, addr;
	uint32_t tid, state;
};

struct lkt_wait {
	struct lk_wait_rec r;
	uint64_t id;
	char *sym;		/* the lock's name (the probe sets it before lkt_rows) */
	bool drawn;		/* its timeline went to lock_spans */
};

/* The text of a lock's holder_fns, kept while the set of functions stays. */
struct lkt_topfns {
	uint64_t addr;
	uint32_t lock_tgid;
	size_t n;
	char *names[3];
	char *text;
};

/* The records of this tick and the last, and what is remembered across ticks. */
struct lk_timeline {
	uint64_t boot_offset_ns;	/* added to CLOCK_MONOTONIC times in rows */
	uint64_t next_id;		/* the next wait's id */
	VEC(struct lkt_fncount) fncounts;
	VEC(struct lkt_sample) samples;	/* this tick's and the last */
	VEC(struct lkt_offspan) offs;
	VEC(struct lkt_wait) waits;
	VEC(struct lk_key) mutexes;	/* (addr, tgid) of locks seen with a mutex's owner */
	VEC(struct lkt_topfns) topfns;
	size_t samples_old, offs_old, waits_old;	/* entries before these are last tick's */
};

/* Start tl empty; ids start at next_id. */
void lkt_init(struct lk_timeline *tl, uint64_t boot_offset_ns, uint64_t next_id);
/* Free everything tl holds. */
void lkt_free(struct lk_timeline *tl);

/* Feed one wait record; return its entry (valid until the next feed). */
struct lkt_wait *lkt_add_wait(struct lk_timeline *tl, const struct lk_wait_rec *r);
/* Feed one holder sample whose function and stack text are fn and stack (tl owns them). */
void lkt_add_sample(struct lk_timeline *tl, const struct lk_sample_rec *r, char *fn,
		    char *stack);
/* Feed one holder off-CPU span. */
void lkt_add_off(struct lk_timeline *tl, const struct lk_off_rec *r);

/*
 * Append a lock_events row to ev for each of this tick's waits, and to spans
 * the timelines of the LKT_SPAN_PER_LOCK longest waits of each lock, then of
 * its LKT_SPAN_NEWEST newest, at most LKT_SPAN_WAITS in all.
 */
void lkt_rows(struct lk_timeline *tl, struct frame *ev, struct frame *spans);
/*
 * End the tick: drop last tick's records (this tick's become last tick's)
 * and, past LKT_MAX_REMEMBERED entries, forget the function counts, the
 * sticky holder_fns sets and the known mutexes.
 */
void lkt_age(struct lk_timeline *tl);
/*
 * Whether a stack last handed out in tick stamp (stack_ticks) may be
 * deleted at the end of tick tick, whose ring was read after stack_tick
 * was set to it: handed out before, every record that names it has been
 * read (the ticks counted modulo 2^32).
 */
bool lkt_stack_stale(uint32_t stamp, uint32_t tick);

/* Remember that (tgid, addr) is a pthread mutex when kind is LK_MUTEX. */
void lkt_mutex_learn(struct lk_timeline *tl, uint32_t tgid, uint64_t addr, uint32_t kind);
/*
 * The kind of a wait as shown: a glibc lock whose owner field read 0 (it
 * was being released) is a mutex if any other wait on it saw the owner.
 */
const char *lkt_kind_label(const struct lk_timeline *tl, uint32_t tgid, uint64_t addr,
			   uint32_t kind);
/* Return whether kind is a kernel lock. */
bool lkt_kind_is_kernel(uint32_t kind);
/* Copy a fixed-size kernel string into dst (LK_COMM_LEN + 1 bytes). */
void lkt_comm_copy(char *dst, const char *src);
/* Read the thread name of tid in process tgid into buf ("" when gone). */
void lkt_thread_comm(uint32_t tgid, uint32_t tid, char *buf, size_t len);
/* The most sampled function of holder on (lock_tgid, addr) ("" when none). */
const char *lkt_holder_fn(const struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr,
			  uint32_t holder);
/*
 * Write the lock's three most sampled holder functions over all its holders
 * into buf, most first ("?", a stack that could not be read, is no
 * function and is left out).  The set is sticky, so a lock's rows stay one group
 * over a window: a function enters a full set only with twice the samples
 * of the one it replaces (and 4 more), and the text changes only with the set.
 */
void lkt_top_fns(struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr, char *buf,
		 size_t len);
/* A holder argument below: every holder of the lock (a locks row keyed
 * without its holder, the query reading none of its fields). */
#define LKT_ANY_HOLDER UINT32_MAX
/* This tick's samples of holder on (lock_tgid, addr). */
uint64_t lkt_lock_samples(const struct lk_timeline *tl, uint32_t lock_tgid, uint64_t addr,
			  uint32_t holder);
/* The time this tick's off-CPU spans of holder tid (or LKT_ANY_HOLDER) on
 * lock addr add up to. */
uint64_t lkt_lock_offcpu(const struct lk_timeline *tl, uint32_t tid, uint64_t addr);
/* How many threads (at most 64) this tick's waits of key k were (a key
 * without a cgroup, 0, takes the waits of every cgroup; one whose holder is
 * LKT_ANY_HOLDER, those of every holder). */
uint64_t lkt_waiters(const struct lk_timeline *tl, const struct lk_key *k);

#endif
