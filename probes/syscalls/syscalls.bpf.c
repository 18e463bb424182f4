// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The syscalls probe: per (tgid, tid, syscall) counts, latency histograms and
 * an exact split of each call's time into the states it passed through.
 *
 * The call running on a CPU keeps its state in that CPU's slot of a per-CPU
 * array, so sys_enter, sys_exit and the hooks in between find it without a
 * task lookup.  When a thread leaves the CPU inside a call, sched_switch
 * moves its state to task-local storage, and moves it back into the slot of
 * whichever CPU the thread next runs on.  Every hook that changes what the
 * thread is doing charges the time since the last change to the current
 * state and switches state, so the components of a call telescope from entry
 * to exit and sum to its latency exactly.
 *
 * A call is counted at its exit under the name its thread has then (so a
 * successful execve under the new program's, and from a thread other than
 * the first under the process's id, which the exec gave it), except exit and
 * exit_group, which never return: they are counted at entry, without a
 * latency.  The name is part of the key (tgid, tid, nr, comm), read from the
 * task at each call: two loads, and no hook on exec or rename, which would
 * have to reach the per-thread caches below on every CPU to make a renamed
 * thread miss.
 *
 * A key's totals live in a slot of the mmapable stats_arr array; the
 * stats_idx hash maps the key to its slot and is read only when the small
 * per-thread cache in struct sys_task misses.  User space hands out free slot
 * indices through the stats_free stack, lowest on top, so the array is used
 * (and read, up to slot_hiwater) from its start, and gives them back when it
 * evicts a key (idle for ten ticks, or its thread or process exited:
 * dead_tids).  A slot carries its key, so a cached index whose key was
 * evicted (and whose slot may serve another key now) is seen as stale and
 * not used.
 *
 * The key is a thread's (tgid, tid, nr, comm), or at process grain (when the
 * query reads no thread id) the process's on one CPU, so a process of 2,000
 * threads takes a key per syscall and CPU, and only one CPU writes a slot.
 * A thread's call whose key gets no slot (the array is full, or the key was
 * just evicted) is counted under its process's key on its CPU (tid 0, the
 * process's overflow row), which takes its slot from a spare stack of the
 * array's last slots (from spare_first on) that only process keys draw on;
 * a call that finds no slot even so is counted in its CPU's overflow slot,
 * the first ovf_slots ones.  Every total stays exact, and a table full of a
 * few processes' threads keeps each process's counts whole.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syscalls.h"
#include "../filter.bpf.h"
#include "../bits.bpf.h"

#define S_IFMT 00170000
#define S_IFSOCK 0140000

/* Softirq vectors (include/linux/interrupt.h). */
#define VEC_NET_TX 2
#define VEC_NET_RX 3
#define VEC_BLOCK 4

#if defined(__TARGET_ARCH_x86)
#define NR_READ 0
#define NR_WRITE 1
#define NR_PREAD64 17
#define NR_PWRITE64 18
#define NR_READV 19
#define NR_WRITEV 20
#define NR_SENDFILE 40
#define NR_CONNECT 42
#define NR_ACCEPT 43
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define NR_SHUTDOWN 48
#define NR_FUTEX 202
#define NR_SPLICE 275
#define NR_ACCEPT4 288
#define NR_RECVMMSG 299
#define NR_SENDMMSG 307
#define NR_EXECVE 59
#define NR_EXECVEAT 322
#define NR_EXIT 60
#define NR_EXIT_GROUP 231
#elif defined(__TARGET_ARCH_arm64)
#define NR_READ 63
#define NR_WRITE 64
#define NR_PREAD64 67
#define NR_PWRITE64 68
#define NR_READV 65
#define NR_WRITEV 66
#define NR_SENDFILE 71
#define NR_CONNECT 203
#define NR_ACCEPT 202
#define NR_SENDTO 206
#define NR_RECVFROM 207
#define NR_SENDMSG 211
#define NR_RECVMSG 212
#define NR_SHUTDOWN 210
#define NR_FUTEX 98
#define NR_SPLICE 76
#define NR_ACCEPT4 242
#define NR_RECVMMSG 243
#define NR_SENDMMSG 269
#define NR_EXECVE 221
#define NR_EXECVEAT 281
#define NR_EXIT 93
#define NR_EXIT_GROUP 94
#else
#error "latop: syscall numbers for this architecture are missing"
#endif
#define NR_FUTEX_WAITV 449

#define SYS_CACHE 4	/* (nr, slot) pairs each thread remembers, a power of 2 */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 self_tgid = 0;
const volatile bool ctr_enabled[CTR_N] = {};
const volatile __u32 slot_mask = SYS_DEFAULT_KEYS - 1;	/* slots - 1, set at load */
const volatile __u32 ovf_slots = 1;	/* overflow slots, one a CPU, set at load */
const volatile __u32 spare_first = SYS_DEFAULT_KEYS;	/* the spare stack's slots: from here on */

#define PROBE_HEALTH_N H_N
#define PROBE_HEALTH_BUDGET H_BUDGET
#define PROBE_MAX_EVENTS SYS_DEFAULT_MAX_EVENTS
#include "../probe.bpf.h"

__u32 filter_need[2] = {};	/* FILTER_NEED_* of each slot */
__u32 filter_grain[2] = {};	/* enum sys_grain of each slot */
__u32 filter_nocgroup[2] = {};	/* 1: keys leave out the cgroup id (the query does not read it) */
__u64 slot_hiwater = 0;		/* slots below it were ever taken */
static const struct sys_stats zero_stats;

/* What a thread inside a syscall is doing now (in a CPU slot or task storage). */
struct sys_task {
	__u64 pid_tgid;
	__u64 enter_ns;
	__u64 state_ns;		/* when the current state began */
	__u64 off_ns;		/* when the thread last left the CPU */
	__u64 offcpu;
	__u64 comp[ST_NSTATES];
	__u64 ctr_last[CTR_N];
	__u64 ctr_acc[CTR_N];
	__u32 nr;
	__u32 faults;
	__u32 cswitch;
	__u8 active;		/* holds a call we count */
	__u8 sampled;		/* picked by SAMPLE 1/N: also send as an event */
	__u8 state;		/* enum sys_state */
	__u8 resume;		/* state to return to when back on a CPU */
	__u8 irq_saved;		/* state before the running softirq */
	__u8 lock_saved, mm_saved, net_saved;
	__u8 lock_depth, mm_depth, net_depth;
	__u8 cache_next;	/* cache entry to replace next */
	__u32 drop_tid;		/* the thread whose call was dropped last here (slot only) */
	__u64 cache_owner;	/* the thread whose slots cache holds */
	struct {
		__u32 nr;
		__u32 idx;
	} cache[SYS_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sys_task);
} running SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sys_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SYS_DEFAULT_KEYS);	/* set at load: latoprc syscall_max */
	__type(key, __u32);
	__type(value, struct sys_stats);
} stats_arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);	/* preallocated: a burst of new keys
						 * must not wait on the allocator */
	__uint(max_entries, SYS_DEFAULT_KEYS);
	__type(key, struct sys_key);
	__type(value, __u32);
} stats_idx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, SYS_DEFAULT_KEYS);
	__type(value, __u32);
} stats_free SEC(".maps");

/* Free slots for process keys only, when stats_free has none: a call of a
 * thread whose own key finds no slot then still has its process's. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, SYS_DEFAULT_KEYS);	/* set at load: syscall_max / SYS_SPARE_PART */
	__type(value, __u32);
} stats_spare SEC(".maps");

/* Each slot's thread (the process's first for a process key), written as
 * the slot is taken: the sweep between ticks looks for exited threads'
 * slots in these 8 bytes a slot (an array's values are 8-byte aligned, so a
 * __u64), not in each slot's 2.5 KB. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SYS_DEFAULT_KEYS);	/* set at load: latoprc syscall_max */
	__type(key, __u32);
	__type(value, __u64);
} slot_tid SEC(".maps");

/* Threads that exited since user space last looked (their tids). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SYS_DEAD_MAX);
	__type(value, __u32);
} dead_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SYS_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} ctr_taskclock SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} ctr_cycles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} ctr_instructions SEC(".maps");

/* Run f on the current task's call; fetch comm and uid only when f tests them. */
static __always_inline bool filter_task(const struct filter_prog *f, __u32 tgid, __u32 tid,
					__u32 nr, __u64 lat)
{
	__u32 need = filter_need[filter_idx & 1];
	struct filter_input in = {};
	char comm[SYS_COMM_LEN];

	in.pid = tgid;
	in.tid = tid;
	in.syscall = nr;
	in.lat = lat;
	if (need & FILTER_NEED_COMM) {
		bpf_get_current_comm(comm, sizeof(comm));
		in.comm = comm;
	}
	if (need & FILTER_NEED_UID)
		in.uid = (__u32)bpf_get_current_uid_gid();
	return filter_match(f, &in);
}

/* Read counter k on this CPU into *val; false when it is not readable. */
static __always_inline bool ctr_read(__u32 k, __u64 *val)
{
	struct bpf_perf_event_value v;
	void *map = k == CTR_TASKCLOCK ? (void *)&ctr_taskclock :
		    k == CTR_CYCLES ? (void *)&ctr_cycles : (void *)&ctr_instructions;

	if (bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v)))
		return false;
	*val = v.counter;
	return true;
}

/* Start an on-CPU segment: remember the enabled counters' values. */
static __always_inline void ctr_start(struct sys_task *t)
{
	__u32 k;

	for (k = 0; k < CTR_N; k++)
		if (ctr_enabled[k] && !ctr_read(k, &t->ctr_last[k]))
			t->ctr_last[k] = 0;
}

/* End an on-CPU segment: add what the enabled counters advanced. */
static __always_inline void ctr_stop(struct sys_task *t)
{
	__u64 now;
	__u32 k;

	for (k = 0; k < CTR_N; k++)
		if (ctr_enabled[k] && t->ctr_last[k] && ctr_read(k, &now) &&
		    now > t->ctr_last[k])
			t->ctr_acc[k] += now - t->ctr_last[k];
}

/* Charge the time since the last change to the current state. */
static __always_inline void charge(struct sys_task *t, __u64 now)
{
	t->comp[t->state & (ST_NSTATES - 1)] += now - t->state_ns;
	t->state_ns = now;
}

/* Return this CPU's slot. */
static __always_inline struct sys_task *cpu_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&running, &zero);
}

/* Return the call of the task on this CPU, when it is inside a counted one. */
static __always_inline struct sys_task *cpu_call(void)
{
	struct sys_task *t = cpu_slot();

	return t && t->active ? t : NULL;
}

/*
 * Return true when the first argument of task's syscall is a socket.  Read
 * lazily at switch-out, from the saved user registers, to keep sys_enter lean.
 */
static __always_inline bool arg0_is_socket(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	__u64 fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
	__u32 max_fds;
	umode_t mode;

	if (!fdt)
		return false;
	max_fds = BPF_CORE_READ(fdt, max_fds);
	if (fd >= max_fds)
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return false;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

/* Return true for syscalls that only ever wait on sockets. */
static __always_inline bool is_socket_syscall(__u32 nr)
{
	switch (nr) {
	case NR_CONNECT: case NR_ACCEPT: case NR_ACCEPT4: case NR_SENDTO:
	case NR_RECVFROM: case NR_SENDMSG: case NR_RECVMSG: case NR_SHUTDOWN:
	case NR_RECVMMSG: case NR_SENDMMSG:
		return true;
	default:
		return false;
	}
}

/* Return true for syscalls whose first argument is a file that may be a socket. */
static __always_inline bool is_fd_syscall(__u32 nr)
{
	switch (nr) {
	case NR_READ: case NR_WRITE: case NR_PREAD64: case NR_PWRITE64:
	case NR_READV: case NR_WRITEV: case NR_SPLICE: case NR_SENDFILE:
		return true;
	default:
		return false;
	}
}

/*
 * Return true when t's call is an exec that gave its thread the id of the
 * process's first thread (pid_tgid is the thread's now): an exec from any
 * other thread ends with it taking that id, so its slot still names the old.
 */
static __always_inline bool exec_took_id(const struct sys_task *t, __u64 pid_tgid)
{
	return (t->nr == NR_EXECVE || t->nr == NR_EXECVEAT) &&
	       t->pid_tgid >> 32 == pid_tgid >> 32 && (__u32)pid_tgid == pid_tgid >> 32;
}

/* Decide why prev left the CPU. */
static __always_inline __u8 offcpu_state(struct sys_task *t, struct task_struct *prev,
					 bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return ST_RUNQ;
	if (BPF_CORE_READ_BITFIELD(prev, in_iowait))
		return ST_BLOCK;
	if (t->lock_depth || t->nr == NR_FUTEX || t->nr == NR_FUTEX_WAITV)
		return ST_LOCK;
	if (t->mm_depth)
		return ST_MM;
	if (t->net_depth || is_socket_syscall(t->nr) ||
	    (is_fd_syscall(t->nr) && arg0_is_socket(prev)))
		return ST_NET;
	return ST_SLEEP;
}

/* Send one call to the ring buffer, within the per-tick budget. */
static __always_inline void emit_event(const struct sys_task *t, __u64 now, __u64 lat,
				       long ret)
{
	struct sys_event *e;

	if (!budget_take())
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		health_inc(H_LOST);
		return;
	}
	e->ts_ns = now;
	e->tgid = t->pid_tgid >> 32;
	e->tid = (__u32)t->pid_tgid;
	e->nr = t->nr;
	e->pad = 0;
	e->ret = ret;
	e->lat = lat;
	e->offcpu = t->offcpu;
	__builtin_memcpy(e->comp, t->comp, sizeof(e->comp));
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->cgroup = bpf_get_current_cgroup_id();
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Return stats slot idx when it holds key, else NULL. */
static __always_inline struct sys_stats *slot_of(__u32 idx, const struct sys_key *key)
{
	struct sys_stats *v;

	idx &= slot_mask;
	v = bpf_map_lookup_elem(&stats_arr, &idx);
	if (!v || v->key.tid != key->tid || v->key.nr != key->nr || v->key.tgid != key->tgid ||
	    v->key.owner != key->owner || v->key.comm[0] != key->comm[0] ||
	    v->key.comm[1] != key->comm[1] || v->key.cgroup != key->cgroup)
		return NULL;
	return v;
}

/* Return this CPU's overflow slot, counting a call in it. */
static __always_inline struct sys_stats *slot_overflow(void)
{
	__u32 idx = bpf_get_smp_processor_id();

	if (idx >= ovf_slots)
		return NULL;
	health_inc(H_OVERFLOW);
	return bpf_map_lookup_elem(&stats_arr, &idx);
}

/* Give free slot idx back to the stack it came from. */
static __always_inline void slot_push(__u32 *idx)
{
	if (*idx >= spare_first)
		bpf_map_push_elem(&stats_spare, idx, 0);
	else
		bpf_map_push_elem(&stats_free, idx, 0);
}

/* Take a free slot for key (a process key from the spare stack when the
 * free one is empty), zero its totals and record it in stats_idx. */
static __always_inline struct sys_stats *slot_new(const struct sys_key *key, __u32 *idxp)
{
	struct sys_stats *v;
	__u32 idx, i;
	__u64 *owner;

	if (bpf_map_pop_elem(&stats_free, &idx) &&
	    (key->owner < SYS_OWNER_CPU0 || bpf_map_pop_elem(&stats_spare, &idx)))
		return NULL;
	idx &= slot_mask;
	if (idx < ovf_slots)
		return NULL;	/* never handed out: not to be reused */
	if (bpf_map_update_elem(&stats_arr, &idx, &zero_stats, BPF_ANY) ||
	    bpf_map_update_elem(&stats_idx, key, &idx, BPF_NOEXIST)) {
		slot_push(&idx);
		return NULL;
	}
	v = bpf_map_lookup_elem(&stats_arr, &idx);
	if (!v)
		return NULL;
	owner = bpf_map_lookup_elem(&slot_tid, &idx);
	if (owner)
		*owner = key->tid ? key->tid : key->tgid;
	for (i = 0; i < 8; i++) {	/* raise slot_hiwater to idx + 1 */
		__u64 hw = slot_hiwater;

		if (hw > idx || __sync_val_compare_and_swap(&slot_hiwater, hw, (__u64)idx + 1) == hw)
			break;
	}
	/* The key last: a reader never sees it over the slot's old totals. */
	v->key = *key;
	*idxp = idx;
	return v;
}

/* Make key its process's key on this CPU (tid 0). */
static __always_inline void key_to_process(struct sys_key *key)
{
	key->tid = 0;
	key->owner = SYS_OWNER_CPU0 + bpf_get_smp_processor_id();
}

/*
 * Return the slot of a thread key's process (its process's overflow row on
 * this CPU), taking one if it is new, counting the call in overflow; else
 * the CPU's overflow slot.
 */
static __always_inline struct sys_stats *slot_process(const struct sys_key *tkey)
{
	struct sys_key key = *tkey;
	struct sys_stats *v;
	__u32 idx, *pidx;

	key_to_process(&key);
	pidx = bpf_map_lookup_elem(&stats_idx, &key);
	v = pidx ? slot_of(*pidx, &key) : slot_new(&key, &idx);
	if (!v)
		return slot_overflow();
	health_inc(H_OVERFLOW);
	return v;
}

/*
 * Return key's stats slot: through t's cache, else through stats_idx (taking
 * a new slot for a new key) and remember it in the cache; else, for a
 * thread's key, its process's overflow row, else the overflow slot.
 */
static __always_inline struct sys_stats *slot_get(struct sys_task *t, const struct sys_key *key)
{
	__u32 i, idx, way = SYS_CACHE;
	struct sys_stats *v;
	__u32 *pidx;

	if (t->cache_owner != t->pid_tgid) {
		__builtin_memset(t->cache, 0, sizeof(t->cache));
		t->cache_owner = t->pid_tgid;
	} else {
		for (i = 0; i < SYS_CACHE; i++) {
			if (t->cache[i].nr != key->nr)
				continue;
			v = slot_of(t->cache[i].idx, key);
			if (v)
				return v;
			way = i;	/* stale: refill this entry */
			break;
		}
	}
	pidx = bpf_map_lookup_elem(&stats_idx, key);
	if (pidx) {
		idx = *pidx;
		v = slot_of(idx, key);
	} else {
		v = slot_new(key, &idx);
	}
	if (!v)
		return key->owner == SYS_OWNER_THREAD ? slot_process(key) : slot_overflow();
	if (way >= SYS_CACHE)
		way = t->cache_next++;
	way &= SYS_CACHE - 1;
	t->cache[way].nr = key->nr;
	t->cache[way].idx = idx;
	return v;
}

/*
 * Return the stats slot of t's call under the current name of its thread
 * (the current task), taking a slot if the key is new.  The kernel pads a
 * name with zeros, so two loads read it whole.
 */
static __always_inline struct sys_stats *call_slot(struct sys_task *t)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const __u64 *comm = (const __u64 *)task->comm;
	struct sys_key key = {
		.tgid = t->pid_tgid >> 32, .tid = (__u32)t->pid_tgid, .nr = t->nr,
		.owner = SYS_OWNER_THREAD,
	};

	if (filter_grain[filter_idx & 1] == GRAIN_PROCESS)
		key_to_process(&key);
	key.comm[0] = comm[0];
	key.comm[1] = comm[1];
	if (!filter_nocgroup[filter_idx & 1])
		key.cgroup = task_cgroup_id(task);
	return slot_get(t, &key);
}

/* Add one finished call to its key's totals. */
static __always_inline void account_call(struct sys_task *t, __u64 lat, long ret)
{
	struct sys_stats *v = call_slot(t);
	__u32 k, i;

	if (!v)
		return;
	/* One thread, or one CPU, owns a key, so plain adds cannot race. */
	if (v->count == 0 || lat < v->lat_min)
		v->lat_min = lat;
	if (lat > v->lat_max)
		v->lat_max = lat;
	v->count++;
	v->errors += ret < 0 && ret >= -4095;
	v->lat_sum += lat;
	v->offcpu += t->offcpu;
	for (i = 0; i < ST_NSTATES; i++)
		v->comp[i] += t->comp[i];
	v->faults += t->faults;
	v->cswitch += t->cswitch;
	for (k = 0; k < CTR_N; k++)
		if (ctr_enabled[k])
			v->ctr[k] += t->ctr_acc[k];
	lh_add(v->hist, lat);
}

/* Count a call that never returns (exit, exit_group): no latency, no time. */
static __always_inline void account_exit(struct sys_task *t)
{
	struct sys_stats *v = call_slot(t);

	if (v)
		v->count++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	const struct filter_prog *f = filter_cur();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sys_task *t = cpu_slot();
	bool sampled = false;

	if (!t || tgid == self_tgid)
		return 0;
	if (f->sample_n > 1) {
		if (bpf_get_prandom_u32() % f->sample_n)
			goto drop;
		sampled = true;
	}
	if (f->n && !f->needs_lat && !filter_task(f, tgid, tid, id, 0))
		goto drop;
	if (id == NR_EXIT || id == NR_EXIT_GROUP) {
		/* No exit to count it at: count it now.  It has no latency,
		 * so a test of lat drops it, as it does in user space. */
		t->active = 0;
		if (f->n && f->needs_lat)
			goto drop;
		t->pid_tgid = pid_tgid;
		t->nr = id;
		account_exit(t);
		return 0;
	}
	__builtin_memset(t->comp, 0, sizeof(t->comp));
	__builtin_memset(t->ctr_acc, 0, sizeof(t->ctr_acc));
	t->pid_tgid = pid_tgid;
	t->nr = id;
	t->offcpu = 0;
	t->faults = 0;
	t->cswitch = 0;
	t->sampled = sampled;
	t->state = ST_OTHER;
	t->lock_depth = t->mm_depth = t->net_depth = 0;
	t->drop_tid = 0;
	/* Counters read inside the clock window, so they never exceed it. */
	t->enter_ns = t->state_ns = bpf_ktime_get_ns();
	ctr_start(t);
	t->active = 1;
	return 0;
drop:
	t->active = 0;
	t->drop_tid = tid;
	health_inc(H_DROPPED);
	return 0;
}

/*
 * Put the call saved at its thread's switch-out back into slot t at now:
 * the time since counts as off the CPU, and the call goes on in the state
 * it had.
 */
static __always_inline void call_restore(struct sys_task *t, struct sys_task *saved, __u64 now)
{
	saved->active = 0;
	charge(saved, now);
	saved->offcpu += now - saved->off_ns;
	saved->state = saved->resume;
	__builtin_memcpy(t, saved, sizeof(*t));
	ctr_start(t);
	t->active = 1;
}

/*
 * Take the current thread's call back into its slot t from its task
 * storage when the switch that brought the thread back on this CPU did not
 * restore it (seen on 6.18 under load, 3 fsyncs in 500: the slot still
 * holds the call as it was switched out, the storage the saved state);
 * return t, or NULL when there is none.  The time since the switch-out
 * counts as off the CPU.  Only a slot whose last counted call was this
 * thread's, and not one of its dropped calls, is worth the lookup.
 */
static __always_inline struct sys_task *call_unrestored(struct sys_task *t, __u64 pid_tgid)
{
	struct sys_task *saved;

	if (t->pid_tgid != pid_tgid || t->drop_tid == (__u32)pid_tgid)
		return NULL;
	saved = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!saved || !saved->active || saved->pid_tgid != pid_tgid)
		return NULL;
	call_restore(t, saved, bpf_ktime_get_ns());
	return t;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	struct sys_task *t = cpu_slot();
	const struct filter_prog *f;
	__u64 pid_tgid, now, lat;

	if (!t)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!t->active && !call_unrestored(t, pid_tgid))
		return 0;
	t->active = 0;
	if (t->pid_tgid != pid_tgid) {
		/* A slot left by a call whose exit was never seen is not this call. */
		if (!exec_took_id(t, pid_tgid))
			return 0;
		t->pid_tgid = pid_tgid;
	}
	ctr_stop(t);
	now = bpf_ktime_get_ns();
	charge(t, now);
	lat = now - t->enter_ns;
	f = filter_cur();
	if (f->n && f->needs_lat &&
	    !filter_task(f, t->pid_tgid >> 32, (__u32)t->pid_tgid, t->nr, lat)) {
		health_inc(H_DROPPED);
		return 0;
	}
	account_call(t, lat, ret);
	if (t->sampled || (f->threshold_ns && lat >= f->threshold_ns))
		emit_event(t, now, lat, ret);
	return 0;
}

/*
 * Slots user space hands back, forgetting their keys: it fills rel_keys,
 * rel_idx and rel_n, then runs release_slots (BPF_PROG_RUN), one system call
 * for up to SYS_RELEASE_MAX slots instead of two for each.
 */
struct sys_key rel_keys[SYS_RELEASE_MAX];
__u32 rel_idx[SYS_RELEASE_MAX];
__u32 rel_n;

SEC("raw_tp")
int release_slots(void *ctx)
{
	__u32 i, n = rel_n;

	for (i = 0; i < SYS_RELEASE_MAX && i < n; i++) {
		bpf_map_delete_elem(&stats_idx, &rel_keys[i]);
		slot_push(&rel_idx[i]);
	}
	rel_n = 0;
	return 0;
}

/*
 * A thread that exits makes no more calls: name it to user space, which frees
 * its keys' slots (and, for a process's first thread, the process's keys) as
 * soon as it has read their last totals instead of after ten idle ticks.  A
 * full queue only leaves the idle timeout to do it.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sys_task_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	if (pid_tgid >> 32 != self_tgid)
		bpf_map_push_elem(&dead_tids, &tid, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct sys_task *t = cpu_slot(), *saved;
	__u64 now = 0;

	if (!t)
		return 0;
	if (t->active) {
		t->active = 0;
		if ((__u32)t->pid_tgid == prev->pid ||
		    exec_took_id(t, (__u64)prev->tgid << 32 | (__u32)prev->pid)) {
			ctr_stop(t);
			now = bpf_ktime_get_ns();
			charge(t, now);
			t->resume = t->state;
			t->state = offcpu_state(t, prev, preempt, prev_state);
			t->off_ns = now;
			t->cswitch++;
			saved = bpf_task_storage_get(&tasks, prev, 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (saved) {
				__builtin_memcpy(saved, t, sizeof(*t));
				saved->active = 1;
			} else {
				/* Its exit will find no state: the call is lost. */
				health_inc(H_UNSAVED);
			}
		}
	}
	saved = bpf_task_storage_get(&tasks, next, 0, 0);
	if (saved && saved->active)
		call_restore(t, saved, now ? now : bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec)
{
	struct sys_task *t = cpu_call();

	if (!t)
		return 0;
	charge(t, bpf_ktime_get_ns());
	t->irq_saved = t->state;
	t->state = vec == VEC_NET_TX || vec == VEC_NET_RX ? ST_NET :
		   vec == VEC_BLOCK ? ST_BLOCK : ST_SOFTIRQ;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec)
{
	struct sys_task *t = cpu_call();

	if (!t)
		return 0;
	charge(t, bpf_ktime_get_ns());
	t->state = t->irq_saved;
	return 0;
}

/*
 * Spans that nest (a spinlock inside a mutex slow path, a lock inside
 * reclaim): the outermost begin switches state, the matching end restores it.
 */
#define SPAN_BEGIN(t, depth, saved, st) do {			\
	if ((t)->depth++ == 0) {				\
		charge((t), bpf_ktime_get_ns());		\
		(t)->saved = (t)->state;			\
		(t)->state = (st);				\
	}							\
} while (0)

#define SPAN_END(t, depth, saved) do {				\
	if ((t)->depth && --(t)->depth == 0) {			\
		charge((t), bpf_ktime_get_ns());		\
		(t)->state = (t)->saved;			\
	}							\
} while (0)

SEC("tp_btf/contention_begin")
int BPF_PROG(lock_begin, void *lock, unsigned int flags)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, lock_depth, lock_saved, ST_LOCK);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(lock_end, void *lock, int ret)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, lock_depth, lock_saved);
	return 0;
}

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(mmap_lock_begin, struct mm_struct *mm, bool write)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, mm_depth, mm_saved, ST_MM);
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mmap_lock_end, struct mm_struct *mm, bool write, bool success)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, mm_depth, mm_saved);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(reclaim_begin, int order, gfp_t gfp_flags)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, mm_depth, mm_saved, ST_MM);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(reclaim_end, unsigned long nr_reclaimed)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, mm_depth, mm_saved);
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(xmit_begin, const struct sk_buff *skb, const struct net_device *dev)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, net_depth, net_saved, ST_NET);
	return 0;
}

SEC("tp_btf/net_dev_xmit")
int BPF_PROG(xmit_end, struct sk_buff *skb, int rc, struct net_device *dev,
	     unsigned int len)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, net_depth, net_saved);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct sys_task *t = cpu_call();

	if (t)
		t->faults++;
	return 0;
}

/* Optional, where fentry loads: socket receives, sends and fault handling as spans. */
SEC("fentry/sock_recvmsg")
int BPF_PROG(sock_recv_begin)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, net_depth, net_saved, ST_NET);
	return 0;
}

SEC("fexit/sock_recvmsg")
int BPF_PROG(sock_recv_end)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, net_depth, net_saved);
	return 0;
}

/*
 * A send is net from its security check to the end of the call.  Every
 * socket send calls security_socket_sendmsg out of line on every kernel;
 * the function around it is no hook: since v6.6 (and 6.1.56, 5.15.134, ...)
 * send syscalls call __sock_sendmsg, which is static and often inlined, and
 * sock_sendmsg only serves senders inside the kernel.  Open the span once;
 * sys_exit closes it.
 */
SEC("fentry/security_socket_sendmsg")
int BPF_PROG(sock_send_begin)
{
	struct sys_task *t = cpu_call();

	if (t && !t->net_depth)
		SPAN_BEGIN(t, net_depth, net_saved, ST_NET);
	return 0;
}

SEC("fentry/handle_mm_fault")
int BPF_PROG(mm_fault_begin)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_BEGIN(t, mm_depth, mm_saved, ST_MM);
	return 0;
}

SEC("fexit/handle_mm_fault")
int BPF_PROG(mm_fault_end)
{
	struct sys_task *t = cpu_call();

	if (t)
		SPAN_END(t, mm_depth, mm_saved);
	return 0;
}
