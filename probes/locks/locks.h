/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The locks probe: structs shared by locks.bpf.c and locks.c (__u32/__u64
 * only).  Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 */
#ifndef LATOP_LOCKS_H
#define LATOP_LOCKS_H

#include "../../core/lhist.h"

#define LK_COMM_LEN 16
/* (lock, process, holder, kind) keys the stats hash holds: latoprc lock_max,
 * from LK_KEYS_MIN to LK_KEYS_MAX; the hash's entries are allocated as keys
 * come, and a wait whose key finds it full is counted in the overflow entry. */
#define LK_DEFAULT_KEYS 65536
#define LK_KEYS_MIN 1
#define LK_KEYS_MAX 1048576
/* Keys kept ready, preallocated, for when the stats hash has room but the
 * kernel's allocator has no element ready (LK_RESERVE_KEYS in the reserve
 * hash; user space reads both as one). */
#define LK_RESERVE_KEYS 256
/* The matching tables (threads waiting, locks with waiters, their holders,
 * early wakes), preallocated hashes of latoprc lock_wait_max entries each,
 * from LK_WAITS_MIN to LK_WAITS_MAX, by default LK_DEFAULT_WAITS or what fits
 * the machine's memory.  A wait that finds its table full is not followed
 * (LH_EVICTED); a lock or holder that finds its own full leaves the wait
 * counted with its holder unknown (LH_UNHELD); a thread's wait still open
 * when it starts another (its end unseen), or when it exits, is given up
 * (LH_EVICTED).  User space clears the waits of threads that exited where
 * no exit program ran (evicted), and the states
 * of user locks no wait is left on (LK_STALE_NS), and the holders of locks
 * without a state. */
#define LK_DEFAULT_WAITS 16384
#define LK_WAITS_DEFAULT_MIN 1024
#define LK_WAITS_MIN 1
#define LK_WAITS_MAX 1048576
#define LK_KEYS_DEFAULT_MIN 1024	/* lock_max's default fits memory down to this */
#define LK_STALE_NS 1000000000ULL	/* a lock state or early wake this old may go */
#define LK_STACKS 16384		/* stack traces kept between ticks */
#define LK_RINGBUF_BYTES (8 << 20)
#define LK_DEFAULT_MAX_EVENTS 4096	/* ring records per tick when BUFFER is 0 */
#define LK_SAMPLE_HZ 997	/* holder stack samples per second per CPU */
#define LK_FAST_HZ 3989		/* ... and more, in a tick after one with contended waits */
/* A holder sample copies the user stack from its stack pointer up, this
 * much (or what is readable), for user space to unwind with the DWARF call
 * frame information (libdw): code without frame pointers unwinds too. */
#define LK_NOTICE_BYTES 65536	/* the notices ring: about 2,700 new keys between reads */
#define LK_STACK_BYTES 8192
#define LK_STACK_CHUNK 1024	/* read in chunks when the whole does not fit the mapping */
#define LK_STACK_COPIES 512	/* samples per tick that copy their stack; the rest copy
				 * its top only (LK_STACK_SHORT) */
#define LK_STACK_SHORT 512	/* a sample's copy past those: enough for the holder's
				 * own function above a short library call (an unlock,
				 * a write) */
#define LK_NREGS 17		/* user registers sent: x86-64's DWARF registers 0-16 */
#define LK_RELS 4		/* releases of a lock remembered for the waits they end */
#define LK_MAX_TID 4194304	/* PID_MAX_LIMIT: larger owner words are not thread ids */

/* What kind of lock a wait was on.  Order matches lock_kind_names in locks_schema.c. */
enum lk_kind {
	LK_FUTEX,	/* a futex wait that is not a known lock (condvar, semaphore, custom) */
	LK_MUTEX,	/* glibc pthread mutex: word 2 and the owner's tid beside it */
	LK_LLL,		/* glibc low-level lock (word 2, no owner recorded) */
	LK_PI,		/* priority-inheritance futex: the word holds the owner's tid */
	LK_KSPIN,	/* kernel spinlock */
	LK_KRWLOCK_R,	/* kernel rwlock, read */
	LK_KRWLOCK_W,	/* kernel rwlock, write */
	LK_KMUTEX,	/* kernel mutex */
	LK_KRWSEM_R,	/* kernel rw_semaphore, read */
	LK_KRWSEM_W,	/* kernel rw_semaphore, write */
	LK_KRTMUTEX,	/* kernel rt_mutex */
	LK_KPERCPU,	/* kernel percpu rw_semaphore */
	LK_KOTHER,	/* kernel, flags not recognised */
	LK_NKINDS,
};

/* lk_key.flags */
#define LKF_MMAP_LOCK 1	/* the lock is the waiter's mm->mmap_lock */

/* Health counters, one per-CPU array slot each. */
enum lk_health {
	LH_DROPPED,	/* waits the pushdown filter or sampling dropped */
	LH_LOST,	/* ring buffer full */
	LH_EVICTED,	/* a map was full: a wait or lock could not be tracked */
	LH_BUDGET,	/* records over the per-tick budget (BUFFER) */
	LH_STACK,	/* stack samples whose stack could not be stored */
	LH_SAMPLES,	/* holder stack samples taken */
	LH_OVERFLOW,	/* stats hash full: a wait counted in the overflow entry */
	LH_UNHELD,	/* lock state or holder table full: a wait's holder not known */
	LH_N,
};

/* What the installed filter reads beyond ids (user space sets, BPF fetches). */
#define LK_NEED_COMM 1
#define LK_NEED_CGROUP 2	/* it tests the waiter's cgroup */

/* A new user lock key, sent on the notices ring as its first wait ends. */
struct lk_notice {
	__u32 tgid;		/* its process */
	__u32 pad;
	__u64 addr;		/* its lock word */
};

/*
 * The stats key: one lock of one process, as released by one holder, waited
 * on from one cgroup.  The holder is part of it only when the query reads
 * one of the holder's fields (filter_noholder: holder 0 otherwise, one key
 * per lock), the cgroup only when it reads one of the cgroup fields
 * (filter_nocgroup), as in syscalls.
 */
struct lk_key {
	__u64 addr;		/* user address of the futex word, or kernel lock address */
	__u32 tgid;		/* the waiters' process */
	__u32 holder;		/* thread that released it to the waiter (0: unknown) */
	__u32 kind;		/* enum lk_kind */
	__u32 flags;		/* LKF_* */
	__u64 cgroup;		/* the waiters' cgroup v2 id, 0 when the query reads none */
};

/* Monotonic totals of one key; user space computes per-tick deltas. */
struct lk_stats {
	__u64 count;		/* contended waits */
	__u64 below;		/* of which shorter than THRESHOLD */
	__u64 wait_sum;
	__u64 wait_max;
	__u64 hold_sum;
	__u64 hold_max;
	__s64 kstack;		/* kernel stack of the last waiter (kernel locks), or -1 */
	char comm[LK_COMM_LEN];		/* the last waiter's thread name */
	char process[LK_COMM_LEN];	/* its process (group leader) name */
	char holder_comm[LK_COMM_LEN];
	__u32 hist[LH_NBUCKETS];	/* wait */
	__u32 hold_hist[LH_NBUCKETS];	/* contended hold of the releasing holder */
};

/* Ring buffer record types. */
enum lk_rec {
	LR_WAIT = 1,	/* a wait at or above THRESHOLD, or sampled */
	LR_SAMPLE,	/* a stack sample of a thread that holds a lock someone waits on */
	LR_OFFCPU,	/* such a holder was off CPU from start to end */
};

/* Why a holder was off CPU (LR_OFFCPU.state). */
enum lk_off {
	LO_RUNQ,	/* preempted, runnable */
	LO_IO,		/* blocked in iowait */
	LO_SLEEP,	/* other voluntary sleep */
};

/* One release of a lock: who held it, from when (its contended part) to when. */
struct lk_rel {
	__u32 tid;
	__u32 pad;
	__u64 since_ns;
	__u64 end_ns;
};

/*
 * When the contended hold of release i of rels began, for a wait that began
 * at start.  A holder whose taking of the lock no wait saw (it took the lock
 * without waiting: since_ns == end_ns) is known to have held it from start
 * when no other release came between start and its own and the release
 * before it is older than start (an empty slot, or one ending before start:
 * the slots hold the newest releases): the waiter slept on a held lock and
 * nobody let go of it until this holder did.  Otherwise since_ns.
 */
static __always_inline __u64 lk_rel_since(const struct lk_rel *rels, __u32 i, __u64 start)
{
	__u64 end = rels[i].end_ns;
	int older = 0;
	__u32 j;

	if (rels[i].since_ns < end || end < start)
		return rels[i].since_ns;
	for (j = 0; j < LK_RELS; j++) {
		if (j == i)
			continue;
		if (!rels[j].tid || rels[j].end_ns < start)
			older = 1;
		else if (rels[j].end_ns < end)
			return rels[i].since_ns;
	}
	return older ? start : rels[i].since_ns;
}

/* The matching tables' values (keys: the thread id, or struct lkstate_key). */

/* A thread waiting on a futex. */
struct lk_uwait {
	__u64 addr;
	__u64 start_ns;
	__u32 owner;		/* holder read at the wait, 0 if unknown */
	__u32 kind;
	__u8 sampled;
	__u8 pad[7];
	__u32 tgid;		/* the waiter's process */
	__u32 cg_bits;		/* futex_by_sched: the filter's cgroup tests at the start */
	__u64 cgroup;		/* the waiter's cgroup v2 id */
};

/* A lock with waiters: who holds it now and who released it last. */
struct lkstate_key {
	__u64 addr;
	__u32 tgid;		/* 0 for kernel locks */
	__u32 pad;
};

struct lkstate {
	__s32 nwait;
	__u32 holder;		/* current holder, 0 if unknown */
	__u64 since_ns;		/* when its contended hold began */
	__u32 nrel;		/* releases seen (rels[nrel % LK_RELS] is next) */
	__u32 pad;
	struct lk_rel rels[LK_RELS];
	char comms[LK_RELS][LK_COMM_LEN];	/* the releasers' names */
};

/* A thread that holds a lock someone waits on. */
struct lk_holder {
	__u64 addr;
	__u32 lock_tgid;
	__u32 kind;		/* the lock's enum lk_kind */
	__u32 off_state;
	__u32 pad;
	__u64 off_ns;		/* when it left the CPU, 0 while on it */
	__u64 since_ns;		/* when it became a holder others wait for */
	__u32 nsamples;		/* stack samples of this hold */
	__u8 seen;		/* seen on a CPU or leaving one since then */
	__u8 pad2[3];
};

/* A process's last contended glibc mutex (the sampler's proc_locks). */
struct lk_proclock {
	__u64 addr;
};

/* A futex waiter woken before it got off the CPU (found at its switch-out). */
struct lk_early_wake {
	__u64 ts_ns;
	__u64 addr;		/* the futex it was about to wait on */
	__u32 waker;
	__u32 tgid;
	char comm[LK_COMM_LEN];
};

struct lk_wait_rec {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 holder;		/* the holder that kept the lock longest during the wait */
	__u64 addr;
	__u64 start_ns;		/* CLOCK_MONOTONIC */
	__u64 end_ns;
	__u64 hold_start_ns;	/* when the holder's contended hold began, 0 if unknown */
	__u64 hold_end_ns;	/* when it released (woke the waiter), 0 if unknown */
	__u32 kind;
	__u32 flags;
	__s64 kstack;
	char comm[LK_COMM_LEN];
	char process[LK_COMM_LEN];
	char holder_comm[LK_COMM_LEN];
	struct lk_rel rels[LK_RELS];	/* the lock's last releases (tid 0: none) */
	char rel_comms[LK_RELS][LK_COMM_LEN];	/* their releasers' names */
	__u64 cgroup;		/* the waiter's cgroup v2 id */
};

/* When a holder sample was taken (lk_sample_rec.why). */
enum lk_sample_why {
	LS_TICK,	/* the cpu-clock sampler found it running */
	LS_SWITCH,	/* it left the CPU (blocked or preempted) with no sample yet */
	LS_RELEASE,	/* it released the lock (futex wake) with no sample yet */
};

/*
 * A stack sample of a thread that holds a lock someone waits on, taken in
 * its own context.  Sent with stack_len bytes of stack only: the record is
 * LK_SAMPLE_HDR + stack_len bytes long.
 */
struct lk_sample_rec {
	__u32 type;
	__u32 tgid;		/* the holder's process */
	__u32 tid;		/* the holder */
	__u32 lock_tgid;	/* the waiters' process (0 for kernel locks) */
	__u64 addr;		/* the lock it holds */
	__u64 ts_ns;
	__s64 ustack;		/* frame-pointer user stack id, or < 0 */
	__s64 kstack;
	__u16 why;		/* enum lk_sample_why */
	__u16 flags;		/* LKS_SHORT */
	__u32 stack_len;	/* bytes of stack copied from regs[7] (sp) up; 0: none */
	__u64 regs[LK_NREGS];	/* user registers in DWARF order (x86-64: ax dx cx bx si
				 * di bp sp r8-r15 ip), valid when stack_len > 0 */
	__u8 stack[LK_STACK_BYTES];
};
#define LK_SAMPLE_HDR ((unsigned long)&((struct lk_sample_rec *)0)->stack)

/* lk_sample_rec.flags: the copy is the stack's top only (LK_STACK_SHORT
 * bytes at most, past the tick's full copies): unwound no further. */
#define LKS_SHORT 1

struct lk_off_rec {
	__u32 type;
	__u32 tid;
	__u32 tgid;
	__u32 state;		/* enum lk_off */
	__u64 addr;
	__u64 start_ns;
	__u64 end_ns;
};

#endif
