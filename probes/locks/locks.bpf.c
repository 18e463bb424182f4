// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The locks probe: contended user-space locks seen at the futex syscalls,
 * kernel lock contention seen at lock:contention_begin/end, and what the
 * thread holding a lock does while others wait for it.
 *
 * An uncontended lock never enters the kernel, so it costs nothing here.  A
 * contended one does: the waiter calls futex(WAIT) and the holder, when it
 * releases, futex(WAKE).  Where the syscalls:sys_enter_futex/sys_exit_futex
 * tracepoints can be attached, only those two syscalls are hooked (not
 * raw_syscalls), so no other syscall pays.  Where they cannot (no tracefs),
 * the same waits are found by the scheduler: a thread that goes to sleep
 * inside futex(WAIT) (its saved user registers say so, and hold the futex
 * address) starts a wait, running again ends it, and the thread that wakes
 * it (sched_waking, in the waker's context) released the lock.  That mode
 * misses waits that never slept, and counts run-queue delay after the wake
 * as part of the wait, as a lock's waiter sees it.
 *
 * The holder of a glibc pthread mutex is in the mutex itself (__owner, the
 * int 8 bytes after the futex word), and the waiter sees it at its wait.  A
 * PI futex holds its owner's tid in the word.  For any lock, the thread that
 * wakes the waiter released it: the wake confirms (or names) the holder and
 * ends its contended hold.  Kernel mutexes and write-held rw_semaphores
 * record their owner task in the lock.
 *
 * While a lock has waiters, its holder is in the holders map.  A cpu-clock
 * perf event samples every CPU; its program records a stack only when the
 * running thread is in that map, or is named owner by its process's last
 * contended glibc mutex while others wait (a thread that took the lock
 * between a release and the woken waiter's return, which no wait saw).
 * A hold of a user lock that no tick sampled is sampled when its holder
 * leaves the CPU (where it blocked) or, failing that, when it releases the
 * lock (the unlock's caller): every contended hold gets a sample, however
 * short.  A sample is taken in the holder's own context and
 * copies its user registers and stack, which user space unwinds with the
 * DWARF call frame information (code without frame pointers too).
 * sched_switch records when such a holder leaves the CPU and why
 * (preempted, I/O, other sleep), and sends the span when it comes back.
 * User space joins waits, samples and spans.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "locks.h"
#include "../filter.bpf.h"

/* futex(2) commands (include/uapi/linux/futex.h). */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_LOCK_PI2 13
#define FUTEX_CMD_MASK 127
#define FUTEX_TID_MASK 0x3fffffff

/* lock:contention_begin flags (include/trace/events/lock.h). */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)
#define LCB_F_WRITE (1U << 2)
#define LCB_F_RT (1U << 3)
#define LCB_F_PERCPU (1U << 4)
#define LCB_F_MUTEX (1U << 5)

#define MUTEX_FLAGS 0x07UL		/* low bits of struct mutex.owner */
#define RWSEM_READER_OWNED (1UL << 0)
#define RWSEM_OWNER_FLAGS 0x07UL

#define KWAIT_SLOTS 2			/* a kernel wait and one nested inside it */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 self_tgid = 0;
/* Futex waits found at sched_switch (no futex syscall tracepoints here). */
const volatile bool futex_by_sched = false;

#define PROBE_HEALTH_N LH_N
#define PROBE_HEALTH_BUDGET LH_BUDGET
#define PROBE_MAX_EVENTS LK_DEFAULT_MAX_EVENTS
#include "../probe.bpf.h"

__u32 filter_need[2] = {};
__u32 filter_nocgroup[2] = {};	/* 1: stats keys leave out the cgroup (the query reads none) */
__u32 filter_noholder[2] = {};	/* 1: stats keys leave out the holder (holder 0) */
static const struct lk_stats zero_stats;

/* kwait's kstack: the key is new, its caller's stack is taken at the wait's end. */
#define KSTACK_AT_END -2

/* A thread waiting on kernel locks (the outer one and one nested). */
struct kwait {
	struct {
		__u64 lock;
		__u64 start_ns;
		__s64 kstack;
		__u32 owner;
		__u32 kind;
		__u32 kflags;		/* LKF_* */
		__u8 sampled;
		char owner_comm[LK_COMM_LEN];
	} s[KWAIT_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LK_DEFAULT_KEYS);	/* set at load: latoprc lock_max */
	__type(key, struct lk_key);
	__type(value, struct lk_stats);
} stats SEC(".maps");

/* Keys made when the stats hash has room but the kernel's allocator has no
 * element ready for it (probe.bpf.h, stats_or_reserve): preallocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LK_RESERVE_KEYS);
	__type(key, struct lk_key);
	__type(value, struct lk_stats);
} reserve SEC(".maps");

/* The totals of the waits whose key found the stats hash full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lk_stats);
} overflow SEC(".maps");

/*
 * The matching tables: preallocated hashes (a wait starts in the scheduler
 * and under spinlocks, where the allocator must not be waited on), sized at
 * load to latoprc lock_wait_max.  A full one refuses the new entry, counted;
 * it never drops an old one unseen (locks.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LK_DEFAULT_WAITS);
	__type(key, __u32);
	__type(value, struct lk_uwait);
} uwaits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kwait);
} kwaits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LK_DEFAULT_WAITS);
	__type(key, struct lkstate_key);
	__type(value, struct lkstate);
} lkstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LK_DEFAULT_WAITS);
	__type(key, __u32);
	__type(value, struct lk_holder);
} holders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LK_DEFAULT_WAITS);
	__type(key, __u32);
	__type(value, struct lk_early_wake);
} early_wakes SEC(".maps");

/*
 * Each process's last contended glibc mutex, for the sampler: a thread
 * that took it with no kernel event (between a release and the return of
 * the waiter it woke: it barged in) is its holder from its first sample,
 * not from the next wait.  LRU: the processes gone make room.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LK_DEFAULT_WAITS);
	__type(key, __u32);
	__type(value, struct lk_proclock);
} proc_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, LK_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

/*
 * The tick in which each stack id was last handed out (stack_tick, user
 * space's count, set before it reads the ring): user space deletes a
 * stack only when it was not handed out since, so that every record that
 * names it has been read.  An id is its stack's hash bucket: a record
 * taken after the ring was read may name a stack read in it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LK_STACKS);
	__type(key, __u32);
	__type(value, __u32);
} stack_ticks SEC(".maps");

volatile __u32 stack_tick = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LK_RINGBUF_BYTES);
} events SEC(".maps");

/* The process of each new user lock key, sent at once (woken): user space
 * notes its maps to name the lock before the process can exit. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LK_NOTICE_BYTES);
} notices SEC(".maps");

/* Where a stack sample is built before it is sent at its length: slot 0 for
 * the perf event program, 1 for the tracepoints it may interrupt. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct lk_sample_rec);
} sample_buf SEC(".maps");

/*
 * Set while lock_begin or lock_end runs on the CPU.  A contention seen then
 * is latop's own (a map's bucket lock, a ring buffer's spinlock, taken by
 * the program) or an interrupt's that came in the middle of it, and its
 * contention_end may never reach lock_end: the kernel does not run a
 * program inside itself.  Taken as the thread's own, it would hold one of
 * its two slots until its exit gave it up, counted as evicted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_lock_prog SEC(".maps");

/* Samples that copied their stack this tick; user space zeroes it every tick. */
volatile __u64 copies_used = 0;
/* Samples a tick that copy their stack (latoprc lock_stack_copies, at most
 * LK_STACK_COPIES): the rest send only the frame-pointer stack id. */
const volatile __u64 stack_copies = LK_STACK_COPIES;

/* What the filter tests of a wait (a global function's argument: no pointers inside). */
struct lk_filter_args {
	__u64 pid;
	__u64 tid;
	__u64 wait;
	__u32 cg_given;		/* 1: the cgroup tests are cg_bits, not the current task's */
	__u32 cg_bits;		/* bit i: entry i's cgroup test (lk_cgroup_bits) */
	char comm[LK_COMM_LEN];
};

/* The installed filter with its cgroup tests made constants (lk_filter). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct filter_prog);
} filter_fixed SEC(".maps");

/*
 * Run the installed filter on a.  A global function: the verifier checks its
 * bounded loop once, not again in every program and branch that calls it
 * (inlined, that took seconds at load).  The interpreter tests FTERM_CGROUP
 * on the current task: a wait that ends in another task's context passes
 * the results of its tests at its start (cg_given), and runs on a copy of
 * the filter whose cgroup tests are those constants (by entry: a filter
 * installed during the wait takes the tests of the one before for it).
 */
__noinline int lk_filter(struct lk_filter_args *a)
{
	struct filter_input in = {};
	const struct filter_prog *f = filter_cur();
	struct filter_prog *fx;
	__u32 i, zero = 0;

	if (!a)
		return 1;
	in.pid = a->pid;
	in.tid = a->tid;
	in.lat = a->wait;
	in.comm = a->comm;
	if (!a->cg_given)
		return filter_match(f, &in);
	fx = bpf_map_lookup_elem(&filter_fixed, &zero);
	if (!fx || bpf_probe_read_kernel(fx, sizeof(*fx), f))
		return 1;
	for (i = 0; i < FILTER_MAX_ENTRIES; i++) {
		if (fx->e[i].term != FTERM_CGROUP)
			continue;
		/* No term, read as 0: EQ 0 is true, EQ 1 false. */
		fx->e[i].op = FOP_EQ;
		fx->e[i].term = FTERM_NONE;
		fx->e[i].value = (a->cg_bits >> i) & 1 ? 0 : 1;
	}
	return filter_match(fx, &in);
}

/*
 * Return the installed filter's cgroup tests on the current task, bit i for
 * entry i.  A global function, as lk_filter.
 */
__noinline int lk_cgroup_bits(__u32 unused)
{
	const struct filter_prog *f = filter_cur();
	struct filter_input in = {};
	__u32 i, n = f->n, bits = 0;

	for (i = 0; i < FILTER_MAX_ENTRIES; i++) {
		if (i >= n)
			break;
		if (f->e[i].term == FTERM_CGROUP && filter_eval_term(f, &f->e[i], &in))
			bits |= 1U << i;
	}
	(void)unused;
	return (int)bits;
}

/*
 * Run f on the wait of thread task; fetch comm only when f tests it.
 * cg_bits: the cgroup tests' results when task is not the current task
 * (lk_cgroup_bits at the wait's start), -1 when it is.
 */
static __always_inline bool filter_wait(const struct filter_prog *f, struct task_struct *task,
					__u32 tgid, __u32 tid, __u64 wait, __s64 cg_bits)
{
	struct lk_filter_args a = {.pid = tgid, .tid = tid, .wait = wait};

	if (filter_need[filter_idx & 1] & LK_NEED_COMM)
		BPF_CORE_READ_STR_INTO(&a.comm, task, comm);
	if (cg_bits >= 0) {
		a.cg_given = 1;
		a.cg_bits = (__u32)cg_bits;
	}
	return lk_filter(&a);
}

/* Decide at a wait's start whether to follow it (SAMPLE, and the id filters). */
static __always_inline bool wait_wanted(struct task_struct *task, __u32 tgid, __u32 tid,
					bool *sampled)
{
	const struct filter_prog *f = filter_cur();

	*sampled = false;
	if (f->sample_n > 1) {
		if (bpf_get_prandom_u32() % f->sample_n)
			goto drop;
		*sampled = true;
	}
	if (f->n && !f->needs_lat && !filter_wait(f, task, tgid, tid, 0, -1))
		goto drop;
	return true;
drop:
	health_inc(LH_DROPPED);
	return false;
}

/* Mark thread tid as holding addr while others wait; note if it is off CPU
 * now.  fresh: a hold that begins now (an entry left from before is replaced). */
static __always_inline void holder_set(__u32 tid, __u64 addr, __u32 lock_tgid, __u32 kind,
				       bool fresh)
{
	struct lk_holder h = {.addr = addr, .lock_tgid = lock_tgid, .kind = kind,
			      .since_ns = bpf_ktime_get_ns()};
	struct lk_holder *cur = bpf_map_lookup_elem(&holders, &tid);

	if (cur && fresh) {
		bpf_map_update_elem(&holders, &tid, &h, BPF_ANY);
		return;
	}
	if (cur) {
		if (cur->addr != addr || cur->lock_tgid != lock_tgid)
			cur->nsamples = 0;
		cur->addr = addr;
		cur->lock_tgid = lock_tgid;
		cur->kind = kind;
		return;
	}
	if (bpf_map_update_elem(&holders, &tid, &h, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&holders, &tid))	/* full, not made meanwhile */
		health_inc(LH_UNHELD);
}

/* Thread tid holds lock (addr, lock_tgid) no more (if it was its holder). */
static __always_inline void holder_drop(__u32 tid, __u64 addr, __u32 lock_tgid)
{
	struct lk_holder *h = bpf_map_lookup_elem(&holders, &tid);

	if (h && h->addr == addr && h->lock_tgid == lock_tgid)
		bpf_map_delete_elem(&holders, &tid);
}

/*
 * Whether the current thread tid, holder h, holds h's lock now and others
 * wait for it: the lock has waiters, and a lock that records its owner (a
 * glibc mutex, a PI futex: readable here, in the holder's own process)
 * names tid (when owner: at its release it names nobody already).  The
 * entry of a holder whose lock has no waiters is dropped.
 */
static __always_inline bool holder_holds(struct lk_holder *h, __u32 tid, bool owner)
{
	struct lkstate_key k = {.addr = h->addr, .tgid = h->lock_tgid};
	struct lkstate *st = bpf_map_lookup_elem(&lkstates, &k);
	__u32 v = 0;

	if (!st || (__s32)st->nwait <= 0) {
		bpf_map_delete_elem(&holders, &tid);
		return false;
	}
	if (!owner)
		return true;
	if (h->kind == LK_MUTEX)
		return bpf_probe_read_user(&v, sizeof(v), (void *)(h->addr + 8)) || v == tid;
	if (h->kind == LK_PI)
		return bpf_probe_read_user(&v, sizeof(v), (void *)h->addr) ||
		       (v & FUTEX_TID_MASK) == tid;
	return true;
}

#if defined(__TARGET_ARCH_x86)
/*
 * How many bytes of task's user stack from sp up hold frames, at most
 * LK_STACK_BYTES: a thread's frames end below its thread pointer (glibc
 * puts the thread's control block at the top of its stack's mapping), the
 * main thread's below where its stack began.  A read past the mapping
 * would fault, and a fault in a probe costs more than the copy.
 */
static __always_inline __u64 stack_extent(struct task_struct *task, __u64 sp)
{
	__u64 tp = BPF_CORE_READ(task, thread.fsbase);
	__u64 start = BPF_CORE_READ(task, mm, start_stack);

	if (tp > sp && tp - sp < LK_STACK_BYTES)
		return (tp - sp) & ~(__u64)7;
	if (start > sp && start - sp < LK_STACK_BYTES)
		return (start - sp) & ~(__u64)7;
	return LK_STACK_BYTES;
}

/* Copy the current thread's user registers and at most max bytes of its
 * stack into e; return the stack's bytes copied (0: none, as in a kernel
 * thread). */
static __always_inline __u64 stack_copy(struct lk_sample_rec *e, __u64 max)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(task), r;
	__u64 sp, len, ext, i;

	if (!uregs || bpf_probe_read_kernel(&r, sizeof(r), uregs) || (r.cs & 3) != 3)
		return 0;
	e->regs[0] = r.ax;
	e->regs[1] = r.dx;
	e->regs[2] = r.cx;
	e->regs[3] = r.bx;
	e->regs[4] = r.si;
	e->regs[5] = r.di;
	e->regs[6] = r.bp;
	e->regs[7] = r.sp;
	e->regs[8] = r.r8;
	e->regs[9] = r.r9;
	e->regs[10] = r.r10;
	e->regs[11] = r.r11;
	e->regs[12] = r.r12;
	e->regs[13] = r.r13;
	e->regs[14] = r.r14;
	e->regs[15] = r.r15;
	e->regs[16] = r.ip;
	sp = r.sp;
	ext = stack_extent(task, sp);
	if (ext > max)
		ext = max;
	if (ext > LK_STACK_BYTES)
		ext = LK_STACK_BYTES;
	len = ext;
	if (bpf_probe_read_user(e->stack, len, (void *)sp)) {
		/* Not all readable after all: the whole chunks that are. */
		len = 0;
		for (i = 0; i < LK_STACK_BYTES / LK_STACK_CHUNK; i++) {
			if ((i + 1) * LK_STACK_CHUNK > ext ||
			    bpf_probe_read_user(&e->stack[i * LK_STACK_CHUNK], LK_STACK_CHUNK,
						(void *)(sp + i * LK_STACK_CHUNK)))
				break;
			len += LK_STACK_CHUNK;
		}
	}
	e->stack_len = len;
	return len;
}
#else
static __always_inline __u64 stack_copy(struct lk_sample_rec *e, __u64 max)
{
	(void)e;
	(void)max;
	return 0;
}
#endif

/* bpf_get_stackid, the id stamped with this tick (stack_ticks).  Never
 * BPF_F_REUSE_STACKID: a stack that replaced another in its bucket would be
 * read for the samples that named the other.  A bucket taken by another
 * stack this tick gives none (-EEXIST): that sample has no such stack. */
static __always_inline __s64 stack_id(void *ctx, __u64 flags)
{
	__s64 id = bpf_get_stackid(ctx, &stacks, flags);
	__u32 k = (__u32)id, *t;

	if (id >= 0) {
		t = bpf_map_lookup_elem(&stack_ticks, &k);
		if (t)
			*t = stack_tick;
	}
	return id;
}

/*
 * Whether a tick's sample may take a record of this tick's budget: ticks
 * take half of it at most, the rest is kept for the waits and for the one
 * sample each hold gets where it blocks or ends unsampled (a busy lock's
 * holders, sampled at every tick on every CPU, would take it all).
 */
static __always_inline bool tick_share(void)
{
	return events_used < budget_max() / 2;
}

/*
 * Send a stack sample of the current thread tid of tgid, holder h: its
 * user registers and, within this tick's share of stack_copies (by why:
 * see below), up to LK_STACK_BYTES of its user stack, past it the top
 * LK_STACK_SHORT bytes (none at all with stack_copies 0); its
 * frame-pointer user stack id when nothing was copied; and at a tick
 * its kernel stack id (at a switch-out it costs tens of microseconds: the
 * off-CPU span says why it left).  slot: sample_buf's slot of this program
 * (0: the perf event's).  About 3 us with the copy on a 2-CPU VM.
 */
static __always_inline void holder_sample_send(void *ctx, struct lk_holder *h, __u32 tgid,
					       __u32 tid, __u32 why, __u32 slot)
{
	struct lk_sample_rec *e;
	__u64 len = 0;

	h->seen = 1;
	health_inc(LH_SAMPLES);
	if (why == LS_TICK && !tick_share()) {
		health_inc(LH_BUDGET);
		return;
	}
	if (!budget_take())
		return;
	/* Only a sample sent spares the hold its one at a switch-out or
	 * release. */
	h->nsamples++;
	e = bpf_map_lookup_elem(&sample_buf, &slot);
	if (!e)
		return;
	e->type = LR_SAMPLE;
	e->tgid = tgid;
	e->tid = tid;
	e->lock_tgid = h->lock_tgid;
	e->addr = h->addr;
	e->why = why;
	e->ts_ns = bpf_ktime_get_ns();
	e->ustack = -1;
	e->kstack = why != LS_TICK ? -1 : stack_id(ctx, 0);
	e->stack_len = 0;
	e->flags = 0;
	/* Releases (the one sample of a hold no tick caught: a short one)
	 * take half the tick's copies at most, ticks three quarters: the rest
	 * are kept for holders that block (or are preempted) holding a lock
	 * others wait for, the holds behind the longest waits, so that one
	 * late in a busy tick still names its callers through code without
	 * frame pointers.  The samples past them copy the stack's top: the
	 * frame-pointer stack from inside the C library names no caller. */
	if (copies_used < stack_copies * (why == LS_SWITCH ? 4 : why == LS_TICK ? 3 : 2) / 4) {
		len = stack_copy(e, LK_STACK_BYTES);
		if (len)
			__sync_fetch_and_add(&copies_used, 1);
	} else if (stack_copies) {
		len = stack_copy(e, LK_STACK_SHORT);
		e->flags = LKS_SHORT;
	}
	if (!len)
		e->ustack = stack_id(ctx, BPF_F_USER_STACK);
	if (e->ustack < 0 && e->kstack < 0 && !len)
		health_inc(LH_STACK);
	if (len > LK_STACK_BYTES)
		len = LK_STACK_BYTES;
	if (bpf_ringbuf_output(&events, e, LK_SAMPLE_HDR + len, BPF_RB_NO_WAKEUP))
		health_inc(LH_LOST);
}

/*
 * The current thread tid of tgid releases the lock at uaddr: if it is that
 * lock's holder and no sample caught this hold yet, sample it now (its
 * stack is the unlock's).
 */
static __always_inline void release_sample(void *ctx, __u32 tgid, __u32 tid, __u64 uaddr)
{
	struct lk_holder *h = bpf_map_lookup_elem(&holders, &tid);

	if (h && !h->nsamples && h->addr == uaddr && h->lock_tgid == tgid && holder_holds(h, tid, false))
		holder_sample_send(ctx, h, tgid, tid, LS_RELEASE, 1);
}

/* Note glibc mutex addr as process tgid's last contended one. */
static __always_inline void proc_lock_note(__u32 tgid, __u64 addr)
{
	struct lk_proclock *pl = bpf_map_lookup_elem(&proc_locks, &tgid);
	struct lk_proclock v = {.addr = addr};

	if (!pl || pl->addr != addr)
		bpf_map_update_elem(&proc_locks, &tgid, &v, BPF_ANY);
}

/* A waiter arrives at lock (addr, tgid) whose holder is owner (0: unknown). */
static __always_inline void lock_arrive(__u64 addr, __u32 tgid, __u32 owner, __u32 kind,
					__u64 now)
{
	struct lkstate_key k = {.addr = addr, .tgid = tgid};
	struct lkstate *st = bpf_map_lookup_elem(&lkstates, &k);

	if (!st) {
		struct lkstate init = {.holder = owner, .since_ns = now};

		bpf_map_update_elem(&lkstates, &k, &init, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&lkstates, &k);
		if (!st) {
			health_inc(LH_UNHELD);
			return;
		}
	}
	__sync_fetch_and_add(&st->nwait, 1);
	if (!owner)
		return;
	if (kind == LK_MUTEX)
		proc_lock_note(tgid, addr);
	if (st->holder != owner) {
		st->holder = owner;
		st->since_ns = now;
		holder_set(owner, addr, tgid, kind, true);
	} else {
		holder_set(owner, addr, tgid, kind, false);
	}
}

/* Fill sk with key as the stats hash keys it: without what the query does
 * not read (filter_nocgroup, filter_noholder). */
static __always_inline void stats_key(const struct lk_key *key, struct lk_key *sk)
{
	__u32 idx = filter_idx & 1;

	*sk = *key;
	if (filter_nocgroup[idx])
		sk->cgroup = 0;
	if (filter_noholder[idx])
		sk->holder = 0;
}

/* Return the stats slot of key, created when new (in the reserve when the
 * allocator had no element ready), or the overflow entry when the stats
 * hash (or the reserve) is full (probe.bpf.h). */
static __always_inline struct lk_stats *stats_get(const struct lk_key *key, bool *over)
{
	struct lk_key sk;

	stats_key(key, &sk);
	return stats_or_reserve(&stats, &reserve, &overflow, &sk, &zero_stats, over);
}

/*
 * Count v in a histogram several CPUs update at once (waiters of one lock).
 * The empty asm hides idx's range from clang so the bound check stays for
 * the verifier (6.1's loses it otherwise), as lh_add in bits.bpf.h.
 */
static __always_inline void lh_add_atomic(__u32 *hist, __u64 v)
{
	__u32 idx = lh_bucket(v);

	asm volatile("" : "+r"(idx));
	if (idx >= LH_NBUCKETS)
		return;
	__sync_fetch_and_add(&hist[idx], 1);
}

/* Add one finished wait to its key's totals. */
static __always_inline void account_wait(struct task_struct *task, const struct lk_key *key,
					 __u64 wait, __u64 hold, __u64 threshold, __s64 kstack,
					 const char *holder_comm)
{
	bool over, first;
	struct lk_stats *v = stats_get(key, &over);

	if (!v)
		return;
	if (over)
		health_inc(LH_OVERFLOW);
	/* The wait that took the count from 0 is the key's first, even when
	 * waiters on other CPUs count at once (a re-read of count may see 2
	 * on both, and the key would go unnoticed). */
	first = __sync_fetch_and_add(&v->count, 1) == 0;
	if (threshold && wait < threshold)
		__sync_fetch_and_add(&v->below, 1);
	__sync_fetch_and_add(&v->wait_sum, wait);
	__sync_fetch_and_add(&v->hold_sum, hold);
	if (wait > v->wait_max)
		v->wait_max = wait;
	if (hold > v->hold_max)
		v->hold_max = hold;
	lh_add_atomic(v->hist, wait);
	lh_add_atomic(v->hold_hist, hold);
	if (over)
		return;		/* names are the keys': the overflow row has none */
	if (first && key->tgid) {
		struct lk_notice n = {.tgid = key->tgid, .addr = key->addr};

		bpf_ringbuf_output(&notices, &n, sizeof(n), BPF_RB_FORCE_WAKEUP);
	}
	if (kstack >= 0)
		v->kstack = kstack;
	else if (first)
		v->kstack = -1;
	BPF_CORE_READ_STR_INTO(&v->comm, task, comm);
	BPF_CORE_READ_STR_INTO(&v->process, task, group_leader, comm);
	if (holder_comm)
		bpf_probe_read_kernel(v->holder_comm, sizeof(v->holder_comm), holder_comm);
}

/* Send one wait to the ring buffer. */
static __always_inline void emit_wait(struct task_struct *task, const struct lk_key *key,
				      __u32 tid, __u64 start, __u64 end, __u64 hold_start,
				      __u64 hold_end, __s64 kstack, const char *holder_comm,
				      const struct lkstate *rels)
{
	__u32 i;

	struct lk_wait_rec *e;

	if (!budget_take())
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		health_inc(LH_LOST);
		return;
	}
	e->type = LR_WAIT;
	e->tgid = key->tgid;
	e->tid = tid;
	e->holder = key->holder;
	e->addr = key->addr;
	e->start_ns = start;
	e->end_ns = end;
	e->hold_start_ns = hold_start;
	e->hold_end_ns = hold_end;
	e->kind = key->kind;
	e->flags = key->flags;
	e->kstack = kstack;
	e->cgroup = key->cgroup;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	BPF_CORE_READ_STR_INTO(&e->process, task, group_leader, comm);
	e->holder_comm[0] = 0;
	if (holder_comm)
		bpf_probe_read_kernel(e->holder_comm, sizeof(e->holder_comm), holder_comm);
	for (i = 0; i < LK_RELS; i++) {
		if (rels) {
			e->rels[i] = rels->rels[i];
			__builtin_memcpy(e->rel_comms[i], rels->comms[i], LK_COMM_LEN);
		} else {
			e->rels[i].tid = 0;
			e->rel_comms[i][0] = 0;
		}
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/*
 * Finish one wait: the WAIT filter, the totals, and the event when it
 * qualifies.  cg_bits: as filter_wait's.
 */
static __always_inline void wait_done(struct task_struct *task, const struct lk_key *key,
				      __u32 tid, __u64 start, __u64 now, __u64 hold_start,
				      __u64 hold_end, bool sampled, __s64 kstack,
				      const char *holder_comm, const struct lkstate *rels,
				      __s64 cg_bits)
{
	const struct filter_prog *f = filter_cur();
	__u64 wait = now - start;
	__u64 hold = hold_start && hold_end > hold_start ? hold_end - hold_start : 0;

	if (f->n && f->needs_lat && !filter_wait(f, task, key->tgid, tid, wait, cg_bits)) {
		health_inc(LH_DROPPED);
		return;
	}
	account_wait(task, key, wait, hold, f->threshold_ns, kstack, holder_comm);
	if (sampled || (f->threshold_ns && wait >= f->threshold_ns))
		emit_wait(task, key, tid, start, now, hold_start, hold_end, kstack, holder_comm,
			  rels);
}

/* Read the holder of a futex word at uaddr waited on with value val; set *kind. */
static __always_inline __u32 futex_owner(__u64 uaddr, __u32 cmd, __u32 val, __u32 tid,
					 __u32 *kind)
{
	__u32 word = 0, owner = 0;

	if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2) {
		*kind = LK_PI;
		bpf_probe_read_user(&word, sizeof(word), (void *)uaddr);
		owner = word & FUTEX_TID_MASK;
		return owner != tid ? owner : 0;
	}
	if (val != 2) {
		*kind = LK_FUTEX;
		return 0;
	}
	/* glibc: struct __pthread_mutex_s { int __lock; unsigned __count; int __owner; } */
	if (bpf_probe_read_user(&owner, sizeof(owner), (void *)(uaddr + 8)) ||
	    owner == 0 || owner == tid || owner > LK_MAX_TID) {
		*kind = LK_LLL;
		return 0;
	}
	*kind = LK_MUTEX;
	return owner;
}

/*
 * A wait on the lock whose state is st (key sk) is over: one waiter less,
 * and the state deleted with the last.  Return true when others still wait.
 */
static __always_inline bool lkstate_leave(struct lkstate *st, const struct lkstate_key *sk)
{
	/* clang-14 (BPF v1) cannot use an atomic's result: read it after. */
	__sync_fetch_and_add(&st->nwait, -1);
	if ((__s32)st->nwait > 0)
		return true;
	bpf_map_delete_elem(&lkstates, sk);
	return false;
}

/*
 * Give up thread tid's open user wait, if any: its end was never seen, so
 * it is counted in evicted, not silently replaced or left behind, and its
 * lock has one waiter less.
 */
static __always_inline void wait_give_up(__u32 tid)
{
	struct lk_uwait *wp = bpf_map_lookup_elem(&uwaits, &tid);
	struct lkstate_key sk = {};
	struct lkstate *st;

	if (!wp)
		return;
	sk.addr = wp->addr;
	sk.tgid = wp->tgid;
	if (bpf_map_delete_elem(&uwaits, &tid))
		return;		/* ended meanwhile */
	health_inc(LH_EVICTED);
	st = bpf_map_lookup_elem(&lkstates, &sk);
	if (st)
		lkstate_leave(st, &sk);
}

/* futex(WAIT / LOCK_PI): thread tid of tgid (task) starts waiting for a lock. */
static __always_inline void futex_wait_begin(struct task_struct *task, __u32 tgid, __u32 tid,
					     __u64 uaddr, __u32 cmd, __u32 val)
{
	struct lk_uwait w = {.addr = uaddr, .tgid = tgid};
	const struct filter_prog *f;
	bool sampled;
	__u64 now;
	long err;

	if (!wait_wanted(task, tgid, tid, &sampled))
		return;
	/* The waiter is the current task here (at its futex call, or as it
	 * leaves the CPU), not always where its wait ends. */
	w.cgroup = bpf_get_current_cgroup_id();
	f = filter_cur();
	if (futex_by_sched && f->needs_lat && (filter_need[filter_idx & 1] & LK_NEED_CGROUP))
		w.cg_bits = (__u32)lk_cgroup_bits(0);
	w.owner = futex_owner(uaddr, cmd, val, tid, &w.kind);
	w.sampled = sampled;
	now = bpf_ktime_get_ns();
	w.start_ns = now;
	err = bpf_map_update_elem(&uwaits, &tid, &w, BPF_NOEXIST);
	if (err == -PROBE_EEXIST) {
		/* A wait of this thread still open: its end was never seen
		 * (the switch that ran the thread again ran no program). */
		wait_give_up(tid);
		err = bpf_map_update_elem(&uwaits, &tid, &w, BPF_NOEXIST);
	}
	if (err) {
		health_inc(LH_EVICTED);
		return;
	}
	/* Woken as the next holder but another thread took it first: it
	 * waits again, and holds nothing. */
	holder_drop(tid, uaddr, tgid);
	lock_arrive(uaddr, tgid, w.owner, w.kind, now);
}

/*
 * Thread tid of tgid released the lock at uaddr that others wait on, at
 * now; comm is its name (NULL: the current thread's).
 */
static __always_inline void futex_release(__u64 uaddr, __u32 tgid, __u32 tid,
					  const char *comm, __u64 now)
{
	struct lkstate_key k = {.addr = uaddr, .tgid = tgid};
	struct lkstate *st = bpf_map_lookup_elem(&lkstates, &k);
	__u32 i;

	/* Its hold is over, waiters or not (a stale entry would take its
	 * later samples, outside the lock, as the lock's). */
	holder_drop(tid, uaddr, tgid);
	if (!st)
		return;
	i = st->nrel++ & (LK_RELS - 1);
	st->rels[i].tid = tid;
	/* A releaser no wait saw take it (it barged in): its hold is unknown. */
	st->rels[i].since_ns = st->holder == tid ? st->since_ns : now;
	st->rels[i].end_ns = now;
	if (comm)
		__builtin_memcpy(st->comms[i], comm, LK_COMM_LEN);
	else
		bpf_get_current_comm(st->comms[i], LK_COMM_LEN);
	st->holder = 0;
	st->since_ns = now;
}

/*
 * Return the index of the release of st that overlaps [start, end] the most
 * (the holder that kept the waiter waiting longest), LK_RELS if none did.
 * Of equal ones (holds whose start no wait saw overlap by 0) the latest.
 */
static __always_inline __u32 release_during(const struct lkstate *st, __u32 self, __u64 start,
					    __u64 end)
{
	__u64 best_ns = 0, best_end = 0, a, b;
	__u32 i, best = LK_RELS;

	for (i = 0; i < LK_RELS; i++) {
		const struct lk_rel *r = &st->rels[i];

		if (!r->tid || r->tid == self || r->end_ns < start || r->end_ns > end)
			continue;
		a = lk_rel_since(st->rels, i, start);
		a = a > start ? a : start;
		b = r->end_ns;
		if (b - a > best_ns || (b - a == best_ns && b >= best_end)) {
			best_ns = b - a;
			best_end = b;
			best = i;
		}
	}
	return best;
}

/* Thread tid (task) stops waiting: its lock's state, totals and event. */
static __always_inline void futex_wait_end(struct task_struct *task, __u32 tgid, __u32 tid,
					   bool woken)
{
	__u64 now, hold_start = 0, hold_end = 0;
	struct lk_key key = {.tgid = tgid};
	struct lkstate_key sk = {.tgid = tgid};
	const char *holder_comm = NULL;
	struct lkstate *st;
	struct lk_uwait *wp, w;
	__u32 best = LK_RELS;

	wp = bpf_map_lookup_elem(&uwaits, &tid);
	if (!wp)
		return;
	w = *wp;
	bpf_map_delete_elem(&uwaits, &tid);
	/* Whatever it held of this lock before is over; below it takes it anew. */
	holder_drop(tid, w.addr, tgid);
	now = bpf_ktime_get_ns();
	key.addr = sk.addr = w.addr;
	key.kind = w.kind;
	key.holder = w.owner;
	key.cgroup = w.cgroup;
	st = bpf_map_lookup_elem(&lkstates, &sk);
	if (st) {
		best = release_during(st, tid, w.start_ns, now);
		if (best < LK_RELS) {
			key.holder = st->rels[best].tid;
			hold_start = lk_rel_since(st->rels, best, w.start_ns);
			hold_end = st->rels[best].end_ns;
			holder_comm = st->comms[best];
		} else if (w.owner) {
			hold_start = st->since_ns;
		}
	}
	/* Before the state may be deleted below: the event copies its releases. */
	wait_done(task, &key, tid, w.start_ns, now, hold_start, hold_end, w.sampled, -1,
		  holder_comm, best < LK_RELS ? st : NULL,
		  futex_by_sched && (filter_need[filter_idx & 1] & LK_NEED_CGROUP) ? (__s64)w.cg_bits : -1);
	if (st && lkstate_leave(st, &sk) && woken && (w.kind == LK_MUTEX || w.kind == LK_PI) &&
	    !st->holder) {
		/* Woken with others still waiting: it takes the lock next,
		 * unless a holder was found since the release (a thread that
		 * barged in while this one was slow to run, sampled). */
		st->holder = tid;
		st->since_ns = now;
		holder_set(tid, w.addr, tgid, w.kind, true);
	}
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 uaddr = ctx->args[0], id = bpf_get_current_pid_tgid();
	__u32 cmd = (__u32)ctx->args[1] & FUTEX_CMD_MASK;
	__u32 tgid = id >> 32, tid = (__u32)id;

	if (tgid == self_tgid)
		return 0;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
		futex_wait_begin((struct task_struct *)bpf_get_current_task(), tgid, tid, uaddr,
				 cmd, (__u32)ctx->args[2]);
		break;
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_UNLOCK_PI:
		release_sample(ctx, tgid, tid, uaddr);
		futex_release(uaddr, tgid, tid, NULL, bpf_ktime_get_ns());
		break;
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	futex_wait_end((struct task_struct *)bpf_get_current_task(), id >> 32, (__u32)id,
		       ctx->ret == 0);
	return 0;
}

#if defined(__TARGET_ARCH_x86)
#define NR_FUTEX 202
#define SYSCALL_NR(regs) BPF_CORE_READ((regs), orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_FUTEX 98
#define SYSCALL_NR(regs) BPF_CORE_READ((regs), syscallno)
#else
#error "latop: the futex syscall number for this architecture is missing"
#endif

/* Return the futex command task is sleeping or about to sleep in, or -1. */
static __always_inline int futex_cmd_of(struct task_struct *task, struct pt_regs **regsp)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u32 cmd;

	if (!regs || SYSCALL_NR(regs) != NR_FUTEX)
		return -1;
	cmd = (__u32)PT_REGS_PARM2_CORE_SYSCALL(regs) & FUTEX_CMD_MASK;
	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_LOCK_PI &&
	    cmd != FUTEX_LOCK_PI2)
		return -1;
	*regsp = regs;
	return (int)cmd;
}

/*
 * prev goes to sleep: if inside futex(WAIT / LOCK_PI), a wait starts.  If
 * the lock was released while prev was still getting off the CPU (a short
 * hold often is), that release is applied now, so it ends this wait.
 */
static __always_inline void futex_sleep(struct task_struct *prev)
{
	struct pt_regs *regs = NULL;
	struct lk_early_wake *ew;
	__u32 tgid, tid;
	__u64 uaddr;
	int cmd = futex_cmd_of(prev, &regs);

	if (cmd < 0 || !regs)
		return;
	tgid = BPF_CORE_READ(prev, tgid);
	tid = BPF_CORE_READ(prev, pid);
	if (tgid == self_tgid)
		return;
	uaddr = PT_REGS_PARM1_CORE_SYSCALL(regs);
	futex_wait_begin(prev, tgid, tid, uaddr, (__u32)cmd,
			 (__u32)PT_REGS_PARM3_CORE_SYSCALL(regs));
	ew = bpf_map_lookup_elem(&early_wakes, &tid);
	if (!ew)
		return;
	if (ew->tgid == tgid && ew->addr == uaddr && bpf_ktime_get_ns() - ew->ts_ns < 1000000)
		futex_release(uaddr, tgid, ew->waker, ew->comm, bpf_ktime_get_ns());
	bpf_map_delete_elem(&early_wakes, &tid);
}

/*
 * next comes back on the CPU: the end of its futex wait, if it has one.
 * Back outside futex(WAIT), the switch that ended the wait ran no program
 * (the thread has run since): the wait is given up, not counted as lasting
 * until now.
 */
static __always_inline void futex_switch_in(struct task_struct *next)
{
	struct pt_regs *regs = NULL;
	__u32 tid = next->pid;

	if (!bpf_map_lookup_elem(&uwaits, &tid))
		return;
	if (futex_cmd_of(next, &regs) < 0) {
		wait_give_up(tid);
		return;
	}
	futex_wait_end(next, next->tgid, tid, true);
}

/* A futex waiter is woken: the current thread (of its process) released the lock. */
SEC("tp_btf/sched_waking")
int BPF_PROG(futex_waking, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = p->pid;
	struct lk_uwait *w;
	struct lk_early_wake ew = {};
	struct pt_regs *regs = NULL;

	/* A timeout or signal wakes from another context: not a release. */
	if (p->tgid != (__u32)(id >> 32) || (__u32)id == tid)
		return 0;
	w = bpf_map_lookup_elem(&uwaits, &tid);
	if (w) {
		__u64 addr = w->addr;

		release_sample(ctx, id >> 32, (__u32)id, addr);
		futex_release(addr, id >> 32, (__u32)id, NULL, bpf_ktime_get_ns());
		return 0;
	}
	/* Not asleep yet: remember the wake for its switch-out, where it ends
	 * the wait that begins there.  The waker's hold is over now: a waiter
	 * woken this early often never leaves the CPU, and an entry left
	 * would take the waker's later samples, outside the lock, as the
	 * lock's. */
	if (futex_cmd_of(p, &regs) < 0 || !regs)
		return 0;
	ew.addr = PT_REGS_PARM1_CORE_SYSCALL(regs);
	holder_drop((__u32)id, ew.addr, id >> 32);
	ew.ts_ns = bpf_ktime_get_ns();
	ew.waker = (__u32)id;
	ew.tgid = id >> 32;
	bpf_get_current_comm(ew.comm, sizeof(ew.comm));
	if (bpf_map_update_elem(&early_wakes, &tid, &ew, BPF_ANY))
		health_inc(LH_UNHELD);
	return 0;
}

/* Return the kind of a kernel lock from its contention flags. */
static __always_inline __u32 kernel_kind(__u32 flags)
{
	if (flags & LCB_F_PERCPU)
		return LK_KPERCPU;
	if (flags & LCB_F_RT)
		return LK_KRTMUTEX;
	if (flags & LCB_F_MUTEX)
		return LK_KMUTEX;
	if (flags & LCB_F_SPIN)
		return flags & LCB_F_READ ? LK_KRWLOCK_R :
		       flags & LCB_F_WRITE ? LK_KRWLOCK_W : LK_KSPIN;
	if (flags & LCB_F_READ)
		return LK_KRWSEM_R;
	if (flags & LCB_F_WRITE)
		return LK_KRWSEM_W;
	return LK_KOTHER;
}

/* Return the task that owns a kernel mutex or write-held rw_semaphore, or NULL. */
static __always_inline struct task_struct *kernel_owner(void *lock, __u32 kind)
{
	unsigned long owner;

	if (kind == LK_KMUTEX) {
		owner = BPF_CORE_READ((struct mutex *)lock, owner.counter);
		return (struct task_struct *)(owner & ~MUTEX_FLAGS);
	}
	if (kind == LK_KRWSEM_R || kind == LK_KRWSEM_W) {
		owner = BPF_CORE_READ((struct rw_semaphore *)lock, owner.counter);
		if (owner & RWSEM_READER_OWNED)
			return NULL;
		return (struct task_struct *)(owner & ~RWSEM_OWNER_FLAGS);
	}
	return NULL;
}

/* Return whether the key of a kernel wait of the current task has totals
 * with its caller's stack already (one whose stack was not taken, its
 * bucket held by another this tick, takes it at its next wait). */
static __always_inline bool key_known(__u64 lock, __u32 tgid, __u32 holder, __u32 kind,
				      __u32 flags)
{
	struct lk_key key = {.addr = lock, .tgid = tgid, .holder = holder, .kind = kind,
			     .flags = flags, .cgroup = bpf_get_current_cgroup_id()}, sk;
	struct lk_stats *v;

	stats_key(&key, &sk);
	v = bpf_map_lookup_elem(&stats, &sk);
	return v && v->kstack >= 0;
}

/* Open a kernel wait of the current thread on lock (lock_begin). */
static __always_inline void kwait_open(void *ctx, void *lock, unsigned int flags)
{
	struct task_struct *cur = bpf_get_current_task_btf(), *owner;
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, tid = (__u32)id, kind = kernel_kind(flags), i, slot;
	struct mm_struct *mm;
	struct kwait *kw;
	bool sampled;

	if (tgid == self_tgid || !tid)
		return;
	kw = bpf_task_storage_get(&kwaits, cur, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!kw)
		return;
	/* A mutex waits twice (spinning, then sleeping): keep the first start. */
	for (i = 0; i < KWAIT_SLOTS; i++) {
		if (kw->s[i].lock == (__u64)lock) {
			kw->s[i].kind = kind;
			return;
		}
	}
	if (!wait_wanted(cur, tgid, tid, &sampled))
		return;
	/* Two waits open already (a third nested in them, or ends unseen):
	 * one the query wants goes untracked, and is said so. */
	slot = kw->s[0].lock ? 1 : 0;
	if (kw->s[slot].lock) {
		health_inc(LH_EVICTED);
		return;
	}
	now = bpf_ktime_get_ns();
	kw->s[slot].lock = (__u64)lock;
	kw->s[slot].start_ns = now;
	kw->s[slot].kind = kind;
	kw->s[slot].sampled = sampled;
	kw->s[slot].owner = 0;
	kw->s[slot].owner_comm[0] = 0;
	owner = kernel_owner(lock, kind);
	if (owner) {
		kw->s[slot].owner = BPF_CORE_READ(owner, pid);
		BPF_CORE_READ_STR_INTO(&kw->s[slot].owner_comm, owner, comm);
	}
	mm = cur->mm;
	kw->s[slot].kflags = mm && (void *)lock == (void *)&mm->mmap_lock ? LKF_MMAP_LOCK : 0;
	/* The caller names the lock: its stack is taken once per key (stacks
	 * cost ~1 us), at the wait's end, where the same caller has the lock
	 * and the record that names the stack is sent (a stack id taken here
	 * could be deleted before a long wait ends: stack_ticks). */
	kw->s[slot].kstack = key_known((__u64)lock, tgid, kw->s[slot].owner, kind,
				       kw->s[slot].kflags) ? -1 : KSTACK_AT_END;
	lock_arrive((__u64)lock, 0, kw->s[slot].owner, kind, now);
}

/* Close the current thread's kernel wait on lock, if it has one open (lock_end). */
static __always_inline void kwait_close(void *ctx, void *lock)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct lkstate_key sk = {.addr = (__u64)lock};
	__u64 id = bpf_get_current_pid_tgid(), now, hold_start = 0;
	struct lk_key key = {.addr = (__u64)lock, .tgid = id >> 32};
	struct kwait *kw;
	struct lkstate *st;
	__u32 i, slot = KWAIT_SLOTS;

	kw = bpf_task_storage_get(&kwaits, cur, 0, 0);
	if (!kw)
		return;
	for (i = 0; i < KWAIT_SLOTS; i++)
		if (kw->s[i].lock == (__u64)lock)
			slot = i;
	if (slot >= KWAIT_SLOTS)
		return;
	now = bpf_ktime_get_ns();
	key.kind = kw->s[slot].kind;
	key.holder = kw->s[slot].owner;
	key.flags = kw->s[slot].kflags;
	key.cgroup = bpf_get_current_cgroup_id();	/* the waiter's: current */
	st = bpf_map_lookup_elem(&lkstates, &sk);
	if (st) {
		if (key.holder && st->holder == key.holder)
			hold_start = st->since_ns;
		if (lkstate_leave(st, &sk)) {
			st->holder = (__u32)id;
			st->since_ns = now;
			holder_set((__u32)id, (__u64)lock, 0, key.kind, true);
		}
	}
	if (key.holder)
		bpf_map_delete_elem(&holders, &key.holder);
	wait_done(cur, &key, (__u32)id, kw->s[slot].start_ns, now, hold_start, hold_start ? now : 0,
		  kw->s[slot].sampled,
		  kw->s[slot].kstack == KSTACK_AT_END ? stack_id(ctx, 0) : -1,
		  key.holder ? kw->s[slot].owner_comm : NULL, NULL, -1);
	kw->s[slot].lock = 0;
}

/* The flag of this CPU's in_lock_prog, NULL should the lookup fail. */
static __always_inline __u32 *lock_prog_flag(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&in_lock_prog, &zero);
}

SEC("tp_btf/contention_begin")
int BPF_PROG(lock_begin, void *lock, unsigned int flags)
{
	__u32 *busy = lock_prog_flag();

	if (!busy || *busy)
		return 0;
	*busy = 1;
	kwait_open(ctx, lock, flags);
	*busy = 0;
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(lock_end, void *lock, int ret)
{
	__u32 *busy = lock_prog_flag();

	if (!busy || *busy)
		return 0;
	*busy = 1;
	kwait_close(ctx, lock);
	*busy = 0;
	return 0;
}

/*
 * A thread that exits waits no more.  A wait of it still open (the switch
 * that ended it ran no program) is given up at once, not at user space's
 * next sweep of exited threads, so a recording that stops soon after still
 * says so; a kernel wait too (its contention_end unseen).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(locks_exit)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct kwait *kw;
	__u32 i;

	wait_give_up((__u32)bpf_get_current_pid_tgid());
	kw = bpf_task_storage_get(&kwaits, cur, 0, 0);
	if (!kw)
		return 0;
	for (i = 0; i < KWAIT_SLOTS; i++) {
		struct lkstate_key sk = {.addr = kw->s[i].lock};
		struct lkstate *st;

		if (!sk.addr)
			continue;
		kw->s[i].lock = 0;
		health_inc(LH_EVICTED);
		/* Its lock has one waiter less (user space sweeps no kernel
		 * lock's state). */
		st = bpf_map_lookup_elem(&lkstates, &sk);
		if (st)
			lkstate_leave(st, &sk);
	}
	return 0;
}

/* Note a holder leaving the CPU (prev) and send its span when it comes back (next). */
static __always_inline void holder_switch(void *ctx, bool preempt, struct task_struct *prev,
					  struct task_struct *next, unsigned int prev_state)
{
	__u32 prev_tid = prev->pid, next_tid = next->pid;
	struct lk_off_rec *e;
	struct lk_holder *h;
	__u64 now = 0;

	h = bpf_map_lookup_elem(&holders, &prev_tid);
	if (h) {
		/* prev is still current: where it blocks, or was preempted (user
		 * locks: a kernel lock's holder has no user stack to show). */
		if (!h->nsamples && h->lock_tgid && holder_holds(h, prev_tid, true))
			holder_sample_send(ctx, h, prev->tgid, prev_tid, LS_SWITCH, 1);
		/* holder_holds may have dropped it. */
		h = bpf_map_lookup_elem(&holders, &prev_tid);
	}
	if (h) {
		now = bpf_ktime_get_ns();
		h->seen = 1;
		h->off_ns = now;
		h->off_state = preempt || prev_state == 0 ? LO_RUNQ :
			       BPF_CORE_READ_BITFIELD(prev, in_iowait) ? LO_IO : LO_SLEEP;
	}
	h = bpf_map_lookup_elem(&holders, &next_tid);
	if (!h)
		return;
	/* Off CPU already when it became a holder: off since then, at least
	 * (in_iowait is still set while it switches back in). */
	if (!h->seen) {
		h->seen = 1;
		h->off_ns = h->since_ns;
		h->off_state = BPF_CORE_READ_BITFIELD(next, in_iowait) ? LO_IO : LO_SLEEP;
	}
	if (!h->off_ns)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	if (budget_take()) {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->type = LR_OFFCPU;
			e->tid = next_tid;
			e->tgid = next->tgid;
			e->state = h->off_state;
			e->addr = h->addr;
			e->start_ns = h->off_ns;
			e->end_ns = now;
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		} else {
			health_inc(LH_LOST);
		}
	}
	h->off_ns = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	holder_switch(ctx, preempt, prev, next, prev_state);
	/* After the holders: a waiter that takes the lock now is on CPU. */
	if (futex_by_sched) {
		if (prev_state != 0 && !preempt)
			futex_sleep(prev);
		futex_switch_in(next);
	}
	return 0;
}

/*
 * The current thread tid of tgid as the holder of its process's last
 * contended glibc mutex, when the mutex names it its owner and others wait
 * for it: it took the lock with no kernel event (after a release, before
 * the waiter that release woke came back), and no wait has seen it yet.
 * Its hold counts from now: when it took the lock is not known, and the
 * release before may be long before (its woken waiter slow to run).  NULL
 * when it holds none.
 */
static __always_inline struct lk_holder *holder_barged(__u32 tgid, __u32 tid)
{
	struct lk_proclock *pl = bpf_map_lookup_elem(&proc_locks, &tgid);
	struct lkstate_key k = {};
	struct lkstate *st;
	__u32 owner = 0;

	if (!pl)
		return NULL;
	k.addr = pl->addr;
	k.tgid = tgid;
	if (bpf_probe_read_user(&owner, sizeof(owner), (void *)(k.addr + 8)) || owner != tid)
		return NULL;
	st = bpf_map_lookup_elem(&lkstates, &k);
	if (!st || (__s32)st->nwait <= 0)
		return NULL;
	if (st->holder != tid) {
		st->holder = tid;
		st->since_ns = bpf_ktime_get_ns();
	}
	holder_set(tid, k.addr, tgid, LK_MUTEX, true);
	return bpf_map_lookup_elem(&holders, &tid);
}

SEC("perf_event")
int holder_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct lk_holder *h;

	if (!tid)
		return 0;
	h = bpf_map_lookup_elem(&holders, &tid);
	if (!h)
		h = holder_barged(id >> 32, tid);
	else if (!holder_holds(h, tid, true))
		return 0;
	if (!h)
		return 0;
	holder_sample_send(ctx, h, id >> 32, tid, LS_TICK, 0);
	return 0;
}
