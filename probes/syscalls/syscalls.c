/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The syscalls probe, user side: choose hooks, load and attach
 * syscalls.bpf.c, and turn its monotonic per-key totals into one frame of
 * syscalls and one of syscall_events per tick.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../../core/clock.h"
#include "../../core/xalloc.h"
#include "systbl.h"
#include "../../core/hist.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "../perf_event.h"
#include "syscalls.h"
#include "syscalls_schema.h"
#include "syscalls.skel.h"

#define IDLE_TICKS 10		/* a key idle this many ticks leaves the map */
#define SWEEP_NS 250000000ULL	/* how often exited threads' slots are freed between ticks */

/* The stages and the hooks that serve them, in order of preference. */
static const struct hook_spec hook_specs[] = {
	{"syscall entry", true, NULL, {HOOK_TP_BTF("sys_enter", "sys_enter")}},
	{"syscall exit", true, NULL, {HOOK_TP_BTF("sys_exit", "sys_exit")}},
	{"off-CPU split (runq, block, lock, net, sleep)", true, NULL,
	 {HOOK_TP_BTF("sched_switch", "sched_switch")}},
	{"keys freed when their thread exits", false, "keys freed after 10 idle ticks only",
	 {HOOK_TP_BTF("sched_process_exit", "sys_task_exit")}},
	{"softirq time (net, block, softirq)", false, NULL,
	 {{"tp_btf", NULL, {"softirq_entry", "softirq_exit"}, {"softirq_entry", "softirq_exit"},
	   "tp_btf/softirq_entry+softirq_exit"}}},
	{"kernel lock waits", false, NULL,
	 {{"tp_btf", NULL, {"contention_begin", "contention_end"}, {"lock_begin", "lock_end"},
	   "tp_btf/contention_begin+contention_end"}}},
	{"mmap lock waits", false, NULL,
	 {{"tp_btf", NULL, {"mmap_lock_start_locking", "mmap_lock_acquire_returned"},
	   {"mmap_lock_begin", "mmap_lock_end"},
	   "tp_btf/mmap_lock_start_locking+mmap_lock_acquire_returned"}}},
	{"direct reclaim", false, NULL,
	 {{"tp_btf", NULL, {"mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end"},
	   {"reclaim_begin", "reclaim_end"},
	   "tp_btf/mm_vmscan_direct_reclaim_begin+mm_vmscan_direct_reclaim_end"}}},
	{"transmit on CPU", false, NULL,
	 {{"tp_btf", NULL, {"net_dev_start_xmit", "net_dev_xmit"}, {"xmit_begin", "xmit_end"},
	   "tp_btf/net_dev_start_xmit+net_dev_xmit"}}},
	{"page faults (count)", false, NULL, {HOOK_TP_BTF("page_fault_kernel", "fault_kernel")}},
	{"socket send/recv time", false,
	 "tp_btf/sched_switch (socket found by the fd's inode at switch-out)",
	 {{"fentry", NULL, {"security_socket_sendmsg", "sock_recvmsg"},
	   {"sock_send_begin", "sock_recv_begin", "sock_recv_end"},
	   "fentry/security_socket_sendmsg, fentry+fexit/sock_recvmsg"}}},
	{"page fault handling time", false,
	 "tp_btf/page_fault_kernel (faults counted, their time stays in other)",
	 {{"fentry", NULL, {"handle_mm_fault"}, {"mm_fault_begin", "mm_fault_end"},
	   "fentry+fexit/handle_mm_fault"}}},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))

/* The optional counters: option name, perf event, BPF map. */
static const struct {
	const char *option;
	const char *perf_name;
	const char *stage;
} counter_specs[CTR_N] = {
	[CTR_TASKCLOCK] = {"taskclock", "cpu-clock", "counter taskclock"},
	[CTR_CYCLES] = {"cycles", "cycles", "counter cycles"},
	[CTR_INSTRUCTIONS] = {"instructions", "instructions", "counter instructions"},
};
#define NCHOICES (NSPECS + CTR_N)

/* Where each health counter goes in the frames' stats: single events over
 * the per-tick budget (BUFFER) are left out by design, dropped, not lost. */
static const enum probe_stat health_to[H_N] = {
	[H_DROPPED] = PSTAT_DROPPED, [H_BUDGET] = PSTAT_DROPPED, [H_LOST] = PSTAT_LOST,
	[H_UNSAVED] = PSTAT_LOST,
	[H_OVERFLOW] = PSTAT_OVERFLOW,
};

/* What the user side remembers of one slot's key: its totals last tick. */
struct prev_ent {
	struct sys_stats st;	/* st.key is the key they belong to */
	uint32_t idle;		/* ticks in a row without a new call */
};

/* Where one process key's row is in this tick's frame (process grain sums a
 * key's CPUs into one row). */
struct row_ref {
	struct sys_key key;	/* owner 0: an empty entry */
	size_t row;
};

struct syscalls_priv {
	struct syscalls_bpf *skel;
	struct ring_buffer *rb;
	struct perf_counters *ctr[CTR_N];
	uint32_t nslots;		/* slots of the stats array (a power of 2) */
	uint32_t novf;			/* the first novf are the overflow row's, one a CPU */
	uint32_t spare_first;		/* from here on, the spare stack's (process keys') */
	struct prev_ent **prev;		/* by stats slot */
	/* The stats array, mapped from its start up to the slots ever taken
	 * (slot_hiwater), rounded up: a BPF array's mapping is resident from
	 * the start, and the array is used from its start, so latop's RSS
	 * follows the keys there have been, not the array's size.  slots_len
	 * is the address range reserved for the whole array, mapped_len the
	 * part mapped. */
	struct sys_stats *slots;
	size_t slots_len, mapped_len;
	/* Each slot's thread (slot_tid), mapped whole, read-only: what the
	 * sweep scans.  A slot's own key stays the truth; this only says
	 * which slots to read. */
	const uint64_t *owners;
	size_t owners_len;
	struct row_ref *refs;		/* process rows of this tick, open addressing */
	size_t nrefs;			/* a power of 2 */
	size_t refs_for;		/* slots this tick reads, while refs still holds the
					 * last tick's (0: cleared, at its first process key) */
	uint32_t sample_n;	/* SAMPLE 1/N in effect: counts scale by it */
	int ncpus;
	struct probe_health health;
	uint64_t boot_offset_ns;
	struct frame *ev_frame;	/* the events frame being filled by the ring callback */
	struct {
		struct sys_key key;
		uint32_t idx;
	} *rel;				/* slots evicted this tick, for slots_release */
	size_t nrel;
	bool release_prog;		/* release_slots runs here */
	uint32_t dead[SYS_DEAD_MAX];	/* tids that exited before this read, sorted */
	size_t ndead;
	/* Between ticks, every SWEEP_NS (sweep_fd), the slots of threads that
	 * exited are read into pend, the next tick's frame, and freed: under
	 * a fork storm the table then holds a quarter of a tick's short-lived
	 * keys, not all of them. */
	int sweep_fd;
	struct frame *pend;
	uint64_t pend_events;		/* calls counted into pend so far */
	struct sys_stats cur;	/* one slot's totals, copied out */
	struct sys_stats ovf_prev;	/* the overflow slots' totals last tick, summed */
};

/* Return true when the counter option name is in the comma list names. */
static bool counter_wanted(const char *names, const char *name)
{
	size_t n = strlen(name);
	const char *p = names;

	while ((p = strstr(p, name))) {
		if ((p == names || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

/* Open the requested counters; record in choice why others are off. */
static void open_counters(struct syscalls_priv *sp, struct hook_choice *choices, bool keep)
{
	const char *want = probe_counters();
	int k, err;

	for (k = 0; k < CTR_N; k++) {
		struct hook_choice *c = &choices[k];
		struct perf_counters *pc;
		char *cause = NULL;

		c->stage = counter_specs[k].stage;
		c->hook = NULL;
		c->first = false;
		c->why[0] = 0;
		pc = perf_counters_open(counter_specs[k].perf_name, &err, &cause);
		if (!pc) {
			snprintf(c->why, sizeof(c->why), "%s", cause);
			free(cause);
			continue;
		}
		if (!counter_wanted(want, counter_specs[k].option)) {
			snprintf(c->why, sizeof(c->why), "perf %s available, not enabled "
				 "(probe_set_counters)", counter_specs[k].perf_name);
			perf_counters_free(pc);
			continue;
		}
		c->hook = counter_specs[k].perf_name;
		c->first = true;
		if (keep)
			sp->ctr[k] = pc;
		else
			perf_counters_free(pc);
	}
}

/* Return the map that holds counter k's per-CPU fds. */
static struct bpf_map *counter_map(struct syscalls_bpf *skel, int k)
{
	return k == CTR_TASKCLOCK ? skel->maps.ctr_taskclock :
	       k == CTR_CYCLES ? skel->maps.ctr_cycles : skel->maps.ctr_instructions;
}

/* Return the name of syscall nr into buf. */
static const char *syscall_label(uint32_t nr, char *buf, size_t len)
{
	const char *name = syscall_name(nr);

	if (name)
		return name;
	snprintf(buf, len, "sys_%u", nr);
	return buf;
}

/* Append one ring buffer record to the events frame of this tick. */
static int on_event(void *ctx, void *data, size_t size)
{
	struct syscalls_priv *sp = ctx;
	const struct sys_event *e = data;
	char comm[SYS_COMM_LEN + 1], buf[24];
	union cell *r;
	int i;

	if (size < sizeof(*e) || !sp->ev_frame)
		return 0;
	r = frame_add_row(sp->ev_frame);
	r[SE_TS].u = e->ts_ns + sp->boot_offset_ns;
	r[SE_PID].u = e->tgid;
	r[SE_TID].u = e->tid;
	memcpy(comm, e->comm, SYS_COMM_LEN);
	comm[SYS_COMM_LEN] = 0;
	cell_set_str(&r[SE_COMM], comm);
	cell_set_str(&r[SE_SYSCALL], syscall_label(e->nr, buf, sizeof(buf)));
	probe_cgroup_cells(r + SE_CGROUP, e->cgroup);
	r[SE_LAT].u = e->lat;
	r[SE_RET].u = e->ret;
	r[SE_OFFCPU].u = e->offcpu;
	r[SE_ONCPU].u = e->lat - e->offcpu;
	for (i = 0; i < ST_NSTATES; i++)
		r[SE_RUNQ + i].u = e->comp[i];
	return 0;
}

/* Return true when a and b name the same (tgid, tid, nr, owner, comm, cgroup). */
static bool key_eq(const struct sys_key *a, const struct sys_key *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->nr == b->nr && a->owner == b->owner &&
	       a->comm[0] == b->comm[0] && a->comm[1] == b->comm[1] && a->cgroup == b->cgroup;
}

/* Read the key of stats slot s; owner 0 means the slot is free. */
static void slot_key(const struct sys_stats *s, struct sys_key *k)
{
	k->tgid = __atomic_load_n(&s->key.tgid, __ATOMIC_ACQUIRE);
	k->tid = __atomic_load_n(&s->key.tid, __ATOMIC_ACQUIRE);
	k->nr = __atomic_load_n(&s->key.nr, __ATOMIC_ACQUIRE);
	k->owner = __atomic_load_n(&s->key.owner, __ATOMIC_ACQUIRE);
	k->comm[0] = __atomic_load_n(&s->key.comm[0], __ATOMIC_ACQUIRE);
	k->comm[1] = __atomic_load_n(&s->key.comm[1], __ATOMIC_ACQUIRE);
	k->cgroup = __atomic_load_n(&s->key.cgroup, __ATOMIC_ACQUIRE);
}

/*
 * Evict key k from slot i: clear the slot's key so indices threads cached
 * miss, and queue the slot for slots_release, which forgets k in stats_idx
 * and hands the slot back.  A call that passed its key check just before may
 * still add to the slot: that one call is lost, or counted to the slot's
 * next key (as deleting a hash entry under a running update lost it before).
 * Until the release, a call of k finds the slot not its own and is counted in
 * the overflow row; only idle keys and exited threads' keys are evicted.
 */
static void slot_evict(struct syscalls_priv *sp, uint32_t i, const struct sys_key *k)
{
	struct sys_stats *s = &sp->slots[i];

	__atomic_store_n(&s->key.owner, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->key.tid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->key.tgid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->key.nr, 0, __ATOMIC_RELEASE);
	sp->rel[sp->nrel].key = *k;
	sp->rel[sp->nrel++].idx = i;
	free(sp->prev[i]);
	sp->prev[i] = NULL;
}

/* The stack free slot idx goes back to (as slot_push does in BPF): the
 * spare one for the array's last slots, process keys' only. */
static int slot_stack_fd(const struct syscalls_priv *sp, uint32_t idx)
{
	return bpf_map__fd(idx >= sp->spare_first ? sp->skel->maps.stats_spare :
						    sp->skel->maps.stats_free);
}

/* Hand the evicted slots back: SYS_RELEASE_MAX a run of release_slots, or
 * two system calls a slot where the kernel cannot run it. */
static void slots_release(struct syscalls_priv *sp)
{
	int idx_fd = bpf_map__fd(sp->skel->maps.stats_idx);
	int prog_fd = bpf_program__fd(sp->skel->progs.release_slots);
	size_t done = 0, n, j;

	while (done < sp->nrel) {
		n = sp->nrel - done < SYS_RELEASE_MAX ? sp->nrel - done : SYS_RELEASE_MAX;
		if (sp->release_prog) {
			LIBBPF_OPTS(bpf_test_run_opts, opts);

			for (j = 0; j < n; j++) {
				sp->skel->bss->rel_keys[j] = sp->rel[done + j].key;
				sp->skel->bss->rel_idx[j] = sp->rel[done + j].idx;
			}
			sp->skel->bss->rel_n = (uint32_t)n;
			if (!bpf_prog_test_run_opts(prog_fd, &opts) && !sp->skel->bss->rel_n) {
				done += n;
				continue;
			}
			sp->release_prog = false;	/* e.g. no raw_tp test runs before 5.10 */
			sp->skel->bss->rel_n = 0;
		}
		for (j = done; j < done + n; j++) {
			bpf_map_delete_elem(idx_fd, &sp->rel[j].key);
			bpf_map_update_elem(slot_stack_fd(sp, sp->rel[j].idx), NULL, &sp->rel[j].idx,
					    BPF_ANY);
		}
		done += n;
	}
	sp->nrel = 0;
}

/* Fill row r with the totals cur - prev. */
static void fill_row(struct syscalls_priv *sp, union cell *r, const struct sys_stats *cur,
		     const struct sys_stats *prev)
{
	uint64_t n = sp->sample_n > 1 ? sp->sample_n : 1;
	uint64_t time_ns = delta(cur->lat_sum, prev->lat_sum);
	uint64_t off = delta(cur->offcpu, prev->offcpu);
	int i;

	r[SC_COUNT].u = delta(cur->count, prev->count) * n;
	r[SC_ERRORS].u = delta(cur->errors, prev->errors) * n;
	const struct probe_extremes ex =
		probe_extremes_minmax(cur->lat_min, cur->lat_max, prev->lat_min, prev->lat_max,
				      prev->count);
	probe_cell_hist(&r[SC_LAT], cur->hist, prev->hist, time_ns, &ex, n);
	r[SC_TIME].u = time_ns * n;
	r[SC_OFFCPU].u = off * n;
	r[SC_ONCPU].u = (time_ns - off) * n;
	for (i = 0; i < ST_NSTATES; i++)
		r[SC_RUNQ + i].u = delta(cur->comp[i], prev->comp[i]) * n;
	r[SC_FAULTS].u = delta(cur->faults, prev->faults) * n;
	r[SC_CSWITCH].u = delta(cur->cswitch, prev->cswitch) * n;
	for (i = 0; i < CTR_N; i++)
		r[SC_TASKCLOCK + i].u = delta(cur->ctr[i], prev->ctr[i]) * n;
}

/* Add the figures of row src into row dst (the same key's, another CPU's). */
static void sum_rows(union cell *dst, const union cell *src)
{
	int i;

	for (i = SC_COUNT; i < SC_NCOLS; i++) {
		if (i == SC_LAT)
			dst[i].h = shist_merge(dst[i].h, src[i].h);
		else
			dst[i].u += src[i].u;
	}
}

/* Set r's key cells to k's (pid, tid, comm, syscall), or with k NULL the
 * overflow row's. */
static void key_cells(union cell *r, const struct sys_key *k)
{
	char comm[SYS_COMM_LEN + 1], buf[24];

	if (!k) {
		cell_set_str(&r[SC_COMM], TABLE_OTHER);
		cell_set_str(&r[SC_SYSCALL], TABLE_OTHER);
		cell_set_str(&r[SC_CGROUP], TABLE_OTHER);
		cell_set_str(&r[SC_UNIT], TABLE_OTHER);
		cell_set_str(&r[SC_CONTAINER], TABLE_OTHER);
		return;
	}
	r[SC_PID].u = k->tgid;
	r[SC_TID].u = k->tid;
	memcpy(comm, k->comm, SYS_COMM_LEN);
	comm[SYS_COMM_LEN] = 0;
	cell_set_str(&r[SC_COMM], comm);
	cell_set_str(&r[SC_SYSCALL], syscall_label(k->nr, buf, sizeof(buf)));
	probe_cgroup_cells(r + SC_CGROUP, k->cgroup);
}

/* Make room in refs for the process rows of a tick of up to n used slots. */
static void refs_reset(struct syscalls_priv *sp, size_t n)
{
	size_t want = 64;

	while (want < 2 * n)
		want *= 2;
	if (want != sp->nrefs) {
		free(sp->refs);
		sp->refs = xcalloc(want, sizeof(*sp->refs));
		sp->nrefs = want;
	} else {
		memset(sp->refs, 0, want * sizeof(*sp->refs));
	}
}

/* Hash of a process key without its CPU. */
static size_t ref_hash(const struct sys_key *k)
{
	uint64_t h = (uint64_t)k->tgid * 0x9e3779b97f4a7c15ull ^ k->nr ^
		     k->comm[0] * 0xff51afd7ed558ccdull ^ k->comm[1] ^ k->cgroup << 17;

	return (size_t)(h ^ h >> 29);
}

/* Return the refs entry of process key k (empty when it has no row yet). */
static struct row_ref *ref_find(struct syscalls_priv *sp, const struct sys_key *k)
{
	size_t i = ref_hash(k) & (sp->nrefs - 1);

	for (;; i = (i + 1) & (sp->nrefs - 1)) {
		struct row_ref *e = &sp->refs[i];

		if (!e->key.owner || (e->key.tgid == k->tgid && e->key.nr == k->nr &&
				      e->key.comm[0] == k->comm[0] && e->key.comm[1] == k->comm[1] &&
				      e->key.cgroup == k->cgroup))
			return e;
	}
}

/*
 * Add key's calls since last tick to f: a row of its own, or at process
 * grain summed into the row of the same process key on another CPU.
 * Return the calls counted.
 */
static uint64_t add_row(struct syscalls_priv *sp, struct frame *f, const struct sys_key *k,
			const struct sys_stats *cur, const struct sys_stats *prev)
{
	struct row_ref *e = NULL;
	union cell *r;

	if (k->owner >= SYS_OWNER_CPU0) {
		if (sp->refs_for) {
			refs_reset(sp, sp->refs_for);
			sp->refs_for = 0;
		}
		e = ref_find(sp, k);
		if (e->key.owner) {
			union cell tmp[SC_NCOLS];

			memset(tmp, 0, sizeof(tmp));
			fill_row(sp, tmp, cur, prev);
			sum_rows(frame_row(f, e->row), tmp);
			shist_free(tmp[SC_LAT].h);
			return delta(cur->count, prev->count);
		}
	}
	r = frame_add_row(f);
	key_cells(r, k);
	fill_row(sp, r, cur, prev);
	if (e) {
		e->key = *k;
		e->row = f->nrows - 1;
	}
	return delta(cur->count, prev->count);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Take the tids of threads that exited since the last tick (before reading
 * the slots, so what is read of them is final). */
static void take_dead(struct syscalls_priv *sp)
{
	int fd = bpf_map__fd(sp->skel->maps.dead_tids);

	sp->ndead = 0;
	while (sp->ndead < SYS_DEAD_MAX &&
	       !bpf_map_lookup_and_delete_elem(fd, NULL, &sp->dead[sp->ndead]))
		sp->ndead++;
	qsort(sp->dead, sp->ndead, sizeof(sp->dead[0]), cmp_u32);
}

/* True when thread tid exited before this tick's read. */
static bool exited(const struct syscalls_priv *sp, uint32_t tid)
{
	return sp->ndead && bsearch(&tid, sp->dead, sp->ndead, sizeof(tid), cmp_u32);
}

/* True when key k's calls are over: its thread exited, or for a process
 * key, the process's first thread did. */
static bool key_over(const struct syscalls_priv *sp, const struct sys_key *k)
{
	return exited(sp, k->tid ? k->tid : k->tgid);
}

/* Sum the overflow slots, one a CPU, into cur. */
static void overflow_sum(struct syscalls_priv *sp, struct sys_stats *cur)
{
	uint32_t i, b;
	int k;

	memset(cur, 0, sizeof(*cur));
	for (i = 0; i < sp->novf; i++) {
		const struct sys_stats *s = &sp->slots[i];

		if (!s->count)
			continue;
		if (!cur->count || s->lat_min < cur->lat_min)
			cur->lat_min = s->lat_min;
		if (s->lat_max > cur->lat_max)
			cur->lat_max = s->lat_max;
		cur->count += s->count;
		cur->errors += s->errors;
		cur->lat_sum += s->lat_sum;
		cur->offcpu += s->offcpu;
		for (k = 0; k < ST_NSTATES; k++)
			cur->comp[k] += s->comp[k];
		cur->faults += s->faults;
		cur->cswitch += s->cswitch;
		for (k = 0; k < CTR_N; k++)
			cur->ctr[k] += s->ctr[k];
		for (b = 0; b < LH_NBUCKETS; b++)
			cur->hist[b] += s->hist[b];
	}
}

/* Return n rounded up to whole pages. */
static size_t page_round(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/*
 * Map the stats array's first n slots at least (within the range reserved
 * at sp->slots): a quarter more than asked, in whole pages, so a growing
 * key count maps again seldom.  0, or -1 (with errno) leaving the mapping
 * as it was.
 */
static int map_to(struct syscalls_priv *sp, uint64_t n)
{
	size_t len;
	void *m;

	if (n * sizeof(struct sys_stats) <= sp->mapped_len)
		return 0;
	len = page_round((size_t)(n + n / 4) * sizeof(struct sys_stats));
	if (len > sp->slots_len)
		len = sp->slots_len;
	m = mmap(sp->slots, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 bpf_map__fd(sp->skel->maps.stats_arr), 0);
	if (m == MAP_FAILED)
		return -1;
	sp->mapped_len = len;
	return 0;
}

/* Fold every used slot of the stats array into f, and the overflow slots
 * into one "(other)" row (with all false: only the slots of threads that
 * exited, freeing them); return the calls counted. */
static uint64_t fold_slots(struct syscalls_priv *sp, struct frame *f, bool all)
{
	struct sys_stats *cur = &sp->cur;
	uint64_t events = 0;
	uint64_t hiwater = __atomic_load_n(&sp->skel->bss->slot_hiwater, __ATOMIC_ACQUIRE);
	struct sys_key k, again;
	uint32_t i;

	if (hiwater > sp->nslots)
		hiwater = sp->nslots;
	if (map_to(sp, hiwater) < 0)
		hiwater = sp->mapped_len / sizeof(struct sys_stats);	/* read what is mapped */
	if (all) {
		overflow_sum(sp, cur);
		if (cur->count != sp->ovf_prev.count) {
			union cell *r = frame_add_row(f);

			key_cells(r, NULL);
			fill_row(sp, r, cur, &sp->ovf_prev);
			events += delta(cur->count, sp->ovf_prev.count);
			sp->ovf_prev = *cur;
		}
	}
	sp->refs_for = (size_t)hiwater;	/* refs are cleared at the first process key */
	for (i = sp->novf; i < hiwater; i++) {
		const struct sys_stats *s = &sp->slots[i];
		struct prev_ent *p;

		if (!all && sp->owners) {
			uint32_t tid = (uint32_t)__atomic_load_n(&sp->owners[i], __ATOMIC_ACQUIRE);

			if (!tid || !exited(sp, tid))
				continue;	/* not an exited thread's: the tick reads it */
		}
		p = sp->prev[i];
		slot_key(s, &k);
		if (p && (!k.owner || !key_eq(&k, &p->st.key))) {
			free(p);
			sp->prev[i] = p = NULL;
		}
		if (!k.owner || (!all && !key_over(sp, &k)))
			continue;
		memcpy(cur, s, sizeof(*cur));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		slot_key(s, &again);
		if (!key_eq(&k, &again))
			continue;	/* the slot changed hands while read */
		cur->key = k;
		if (!p) {
			p = sp->prev[i] = xcalloc(1, sizeof(*p));
			p->st.key = k;
		}
		if (cur->count == p->st.count) {
			if (++p->idle >= IDLE_TICKS || key_over(sp, &k))
				slot_evict(sp, i, &k);
			continue;
		}
		events += add_row(sp, f, &k, cur, &p->st);
		p->st = *cur;
		p->idle = 0;
		if (key_over(sp, &k))
			slot_evict(sp, i, &k);	/* its last totals are in f */
	}
	slots_release(sp);
	return events;
}

/* Between ticks: fold the slots of threads that exited into the next
 * tick's frame, and free them. */
static void syscalls_sweep(struct probe *p)
{
	struct syscalls_priv *sp = p->priv;
	uint64_t expirations;

	if (read(sp->sweep_fd, &expirations, sizeof(expirations)) < 0)
		return;
	take_dead(sp);
	if (!sp->ndead)
		return;
	if (!sp->pend)
		sp->pend = frame_new(&syscalls_schema, 0, 0);
	sp->pend_events += fold_slots(sp, sp->pend, false);
}

/* The timer that wakes syscalls_sweep. */
static int syscalls_sweep_fd(struct probe *p)
{
	struct syscalls_priv *sp = p->priv;

	return sp ? sp->sweep_fd : -1;
}

/* Read and fold this tick's totals and events into two frames of t. */
static int syscalls_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			    char **cause)
{
	struct syscalls_priv *sp = p->priv;
	struct frame *f = sp->pend ? sp->pend : frame_new(&syscalls_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&syscall_events_schema, t_ns, dt_ns);
	uint64_t events = sp->pend_events;
	int err;

	sp->pend = NULL;
	sp->pend_events = 0;
	f->t_ns = t_ns;
	f->dt_ns = dt_ns;

	sp->ev_frame = ev;
	err = ring_buffer__consume(sp->rb);
	sp->ev_frame = NULL;
	sp->skel->bss->events_used = 0;
	if (err < 0) {
		*cause = xasprintf("syscalls: reading the events ring buffer: %s", strerror(-err));
		goto fail;
	}
	take_dead(sp);
	f->stats.events = events + fold_slots(sp, f, true);
	probe_health_tick(&sp->health, &f->stats);
	ev->stats = f->stats;
	ev->stats.events = ev->nrows;
	tick_add(t, f);
	tick_add(t, ev);
	return 0;
fail:
	frame_free(f);
	frame_free(ev);
	return -1;
}

/* Return the FILTER_NEED_* bits of what f tests beyond ids. */
static uint32_t filter_needs(const struct filter_prog *f)
{
	uint32_t i, need = 0;

	for (i = 0; i < f->n; i++) {
		if (f->e[i].term == FTERM_COMM)
			need |= FILTER_NEED_COMM;
		else if (f->e[i].term == FTERM_UID)
			need |= FILTER_NEED_UID;
	}
	return need;
}

/* Install f in the idle slot, then make it current. */
static int syscalls_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct syscalls_priv *sp = p->priv;
	uint32_t next;

	if (probe_filter_check("syscalls", f, probe_filter_leaf, cause))
		return -1;
	next = (sp->skel->bss->filter_idx + 1) & 1;
	sp->skel->bss->filters[next] = *f;
	sp->skel->bss->filter_need[next] = filter_needs(f);
	/* The syscalls table (0) keys by what the query reads of it. */
	sp->skel->bss->filter_grain[next] = filter_reads_of(f, 0, SC_TID) ? GRAIN_THREAD :
									  GRAIN_PROCESS;
	sp->skel->bss->filter_nocgroup[next] =
		!filter_reads_any_of(f, 0, FILTER_FIELD(SC_CGROUP) | FILTER_FIELD(SC_UNIT) |
					   FILTER_FIELD(SC_CONTAINER));
	__atomic_store_n(&sp->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	sp->sample_n = f->sample_n;
	return 0;
}

/* Free everything syscalls_open made. */
static void syscalls_close(struct probe *p)
{
	struct syscalls_priv *sp = p->priv;
	size_t i;
	int k;

	if (!sp)
		return;
	ring_buffer__free(sp->rb);
	if (sp->sweep_fd >= 0)
		close(sp->sweep_fd);
	frame_free(sp->pend);
	if (sp->slots)
		munmap(sp->slots, sp->slots_len);
	if (sp->owners)
		munmap((void *)sp->owners, sp->owners_len);
	syscalls_bpf__destroy(sp->skel);
	for (k = 0; k < CTR_N; k++)
		perf_counters_free(sp->ctr[k]);
	for (i = 0; sp->prev && i < sp->nslots; i++)
		free(sp->prev[i]);
	free(sp->prev);
	free(sp->rel);
	free(sp->refs);
	free(sp);
	p->priv = NULL;
}

/* Map the stats array's start and give BPF every slot but the overflow
 * row's through the free stack, lowest on top, but the last ones, which go
 * to the spare stack. */
static int map_slots(struct syscalls_priv *sp, char **cause)
{
	size_t len = (size_t)bpf_map__value_size(sp->skel->maps.stats_arr) * sp->nslots;
	void *m;
	uint32_t i;

	if (bpf_map__value_size(sp->skel->maps.stats_arr) != sizeof(struct sys_stats)) {
		*cause = xasprintf("syscalls: the stats array's values are not struct sys_stats");
		return -1;
	}
	/* The whole array's range, reserved; map_to maps the used part. */
	m = mmap(NULL, page_round(len), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED) {
		*cause = xasprintf("syscalls: reserving room to map the stats array: %s",
				   strerror(errno));
		return -1;
	}
	sp->slots = m;
	sp->slots_len = page_round(len);
	if (map_to(sp, sp->novf + 1) < 0) {
		*cause = xasprintf("syscalls: mapping the stats array: %s", strerror(errno));
		return -1;
	}
	/* Without it (it cannot be mapped), the sweep reads every slot's key. */
	m = mmap(NULL, page_round((size_t)sp->nslots * sizeof(uint64_t)), PROT_READ, MAP_SHARED,
		 bpf_map__fd(sp->skel->maps.slot_tid), 0);
	if (m != MAP_FAILED) {
		sp->owners = m;
		sp->owners_len = page_round((size_t)sp->nslots * sizeof(uint64_t));
	}
	sp->prev = xcalloc(sp->nslots, sizeof(*sp->prev));
	sp->rel = xcalloc(sp->nslots, sizeof(*sp->rel));
	for (i = sp->nslots; i-- > sp->novf;) {
		if (bpf_map_update_elem(slot_stack_fd(sp, i), NULL, &i, BPF_ANY)) {
			*cause = xasprintf("syscalls: filling the free slot stack: %s",
					   strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Return the stats array's size: latoprc syscall_max, else what fits here. */
static uint32_t read_nslots(void)
{
	return probe_size_option("syscall_max", SYS_KEYS_MIN, SYS_KEYS_MAX,
				 probe_size_fit(SYS_DEFAULT_KEYS, SYS_KEYS_MIN,
						sizeof(struct sys_stats)),
				 true, "keys");
}

/* Fill c with the stats array's capacity and what it costs. */
static void capacity_choice(struct hook_choice *c, uint32_t nslots)
{
	probe_capacity(c, "keys held at once (latoprc syscall_max)", nslots, "keys",
		       sizeof(struct sys_stats), true,
		       "a thread's call whose key finds none free is counted in its process's "
		       "overflow row (tid 0, from the last sixteenth of the keys), else in the "
		       "overflow row");
}

/* Choose hooks and load; syscalls_attach starts counting. */
static int syscalls_open(struct probe *p, char **cause)
{
	struct syscalls_priv *sp = xcalloc(1, sizeof(*sp));
	char why[160];
	int k, err;

	p->priv = sp;
	sp->sweep_fd = -1;
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("syscalls: %s", why);
		goto fail;
	}
	sp->skel = syscalls_bpf__open();
	if (!sp->skel) {
		*cause = xasprintf("syscalls: opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	if (hook_choose_all("syscalls", sp->skel->obj, hook_specs, NSPECS, p->hooks, NULL, 0, cause))
		goto fail;
	open_counters(sp, p->hooks + NSPECS, true);
	sp->ncpus = libbpf_num_possible_cpus();
	sp->nslots = read_nslots();
	sp->novf = (uint32_t)sp->ncpus;
	if (sp->novf > sp->nslots / 2) {
		*cause = xasprintf("syscalls: latoprc syscall_max %u leaves too few keys for %d "
				   "CPUs (at least %u)", sp->nslots, sp->ncpus, 2 * sp->novf);
		goto fail;
	}
	capacity_choice(&p->hooks[NCHOICES], sp->nslots);
	p->nhooks = NCHOICES + 1;
	sp->skel->rodata->self_tgid = getpid();
	sp->skel->rodata->slot_mask = sp->nslots - 1;
	sp->skel->rodata->ovf_slots = sp->novf;
	sp->spare_first = sp->nslots - sp->nslots / SYS_SPARE_PART;
	sp->skel->rodata->spare_first = sp->spare_first;
	if (bpf_map__set_max_entries(sp->skel->maps.stats_arr, sp->nslots) ||
	    bpf_map__set_max_entries(sp->skel->maps.slot_tid, sp->nslots) ||
	    bpf_map__set_max_entries(sp->skel->maps.stats_idx, sp->nslots) ||
	    bpf_map__set_max_entries(sp->skel->maps.stats_free, sp->nslots) ||
	    bpf_map__set_max_entries(sp->skel->maps.stats_spare, sp->nslots / SYS_SPARE_PART)) {
		*cause = xasprintf("syscalls: sizing the stats maps: %s", strerror(errno));
		goto fail;
	}
	bpf_program__set_autoattach(sp->skel->progs.release_slots, false);
	for (k = 0; k < CTR_N; k++)
		sp->skel->rodata->ctr_enabled[k] = sp->ctr[k] != NULL;
	err = syscalls_bpf__load(sp->skel);
	if (err) {
		*cause = hook_load_cause("syscalls", err);
		goto fail;
	}
	for (k = 0; k < CTR_N; k++)
		if (sp->ctr[k] && perf_counters_to_map(sp->ctr[k],
				bpf_map__fd(counter_map(sp->skel, k)), cause))
			goto fail;
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.events), on_event, sp, NULL);
	if (!sp->rb) {
		*cause = xasprintf("syscalls: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	sp->release_prog = true;
	sp->boot_offset_ns = boot_offset_ns();
	if (map_slots(sp, cause))
		goto fail;
	sp->sweep_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sp->sweep_fd < 0 ||
	    timerfd_settime(sp->sweep_fd, 0, &(struct itimerspec){
		    .it_interval = {0, SWEEP_NS}, .it_value = {0, SWEEP_NS}}, NULL)) {
		*cause = xasprintf("syscalls: the timer that frees exited threads' keys: %s",
				   strerror(errno));
		goto fail;
	}
	probe_health_init(&sp->health, bpf_map__fd(sp->skel->maps.health), sp->ncpus, health_to,
			  H_N);
	return 0;
fail:
	syscalls_close(p);
	return -1;
}

/* Attach the loaded programs. */
static int syscalls_attach(struct probe *p, char **cause)
{
	struct syscalls_priv *sp = p->priv;

	return probe_attach_skel("syscalls", sp->skel->skeleton, cause);
}

/* What each stage would use here, every alternative tried. */
static size_t syscalls_hooks(struct hook_choice *out, size_t max)
{
	if (max < NCHOICES + 1)
		return 0;
	hook_choose_all("syscalls", NULL, hook_specs, NSPECS, out, NULL, HOOK_CHECK_ALL, NULL);
	open_counters(NULL, out + NSPECS, false);
	capacity_choice(&out[NCHOICES], read_nslots());
	return NCHOICES + 1;
}

/* List the fds of the loaded programs. */
static size_t syscalls_prog_fds(struct probe *p, int *out, size_t max)
{
	struct syscalls_priv *sp = p->priv;

	return sp ? probe_prog_fds(sp->skel->obj, out, max) : 0;
}

static const struct schema *const syscalls_tables[] = {
	&syscalls_schema, &syscall_events_schema,
};

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"syscall_max", NULL};

const struct probe_ops syscalls_probe_ops = {
	.name = "syscalls",
	.config_keys = rc_keys,
	.help = "per-syscall cost by thread, split into runq, block, net, mm, lock, "
		"softirq, sleep and other time",
	.ntables = 2,
	.tables = syscalls_tables,
	.open = syscalls_open,
	.attach = syscalls_attach,
	.set_filter = syscalls_set_filter,
	.collect = syscalls_collect,
	.hooks = syscalls_hooks,
	.close = syscalls_close,
	.prog_fds = syscalls_prog_fds,
	.wake_fd = syscalls_sweep_fd,
	.wake = syscalls_sweep,
};
