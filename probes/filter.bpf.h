/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pushdown filter interpreter (the ABI is probes/filter.h).  A probe
 * fills a struct filter_input with what it knows about the event and calls
 * filter_match(); terms a probe does not know stay 0.  FTERM_CGROUP reads the
 * current task's cgroup: a probe whose filter runs outside the task an event
 * belongs to does not mark its cgroup fields FF_PUSH.
 */
#ifndef LATOP_FILTER_BPF_H
#define LATOP_FILTER_BPF_H

#include "filter.h"

struct filter_input {
	__u64 pid;
	__u64 tid;
	__u64 uid;
	__u64 syscall;
	__u64 lat;
	__u64 lport;
	__u64 rport;
	__u64 dev;
	__u64 op;
	__u64 size;
	__u64 laddr[2];		/* the filter.h address form */
	__u64 raddr[2];
	__u64 qid;
	__u64 side;
	const char *comm;	/* SYS_COMM_LEN bytes, or NULL */
};

/* Return the numeric value of term for in (0 when unknown). */
static __always_inline __u64 filter_term_value(const struct filter_input *in, __u32 term)
{
	switch (term) {
	case FTERM_PID: return in->pid;
	case FTERM_TID: return in->tid;
	case FTERM_UID: return in->uid;
	case FTERM_SYSCALL: return in->syscall;
	case FTERM_LAT: return in->lat;
	case FTERM_LPORT: return in->lport;
	case FTERM_RPORT: return in->rport;
	case FTERM_DEV: return in->dev;
	case FTERM_OP: return in->op;
	case FTERM_SIZE: return in->size;
	case FTERM_QID: return in->qid;
	case FTERM_SIDE: return in->side;
	default: return 0;
	}
}

/* Compare comm with strs[idx]: whole string (prefix == 0) or as a prefix. */
static __always_inline bool filter_comm_match(const struct filter_prog *f,
					      const char *comm, __u64 idx, bool prefix)
{
	const char *want = f->strs[idx & (FILTER_MAX_STRS - 1)];
	int i;

	if (!comm)
		return false;
	for (i = 0; i < FILTER_STR_LEN; i++) {
		char w = want[i], c = comm[i];

		if (w == 0)
			return prefix || c == 0;
		if (w != c)
			return false;
	}
	return true;
}

/* Evaluate one term entry to a bit. */
static __always_inline bool filter_eval_term(const struct filter_prog *f,
					     const struct filter_entry *e,
					     const struct filter_input *in)
{
	__u64 v;

	if (e->term == FTERM_COMM) {
		bool m = filter_comm_match(f, in->comm, e->value, e->op == FOP_PREFIX);

		return e->op == FOP_NE ? !m : m;
	}
	if (e->term == FTERM_CGROUP) {
		bool m = e->op == FOP_PREFIX ?
			 bpf_get_current_ancestor_cgroup_id(FILTER_CGROUP_LEVEL(e->value)) ==
			 FILTER_CGROUP_ID(e->value) :
			 bpf_get_current_cgroup_id() == e->value;

		return e->op == FOP_NE ? !m : m;
	}
	if (e->term == FTERM_LADDR || e->term == FTERM_RADDR) {
		bool m = filter_addr_match(e->term == FTERM_LADDR ? in->laddr : in->raddr,
					   f->addrs[FILTER_ADDR_IDX(e->value)],
					   FILTER_ADDR_BITS(e->value));

		return e->op == FOP_NE ? !m : m;
	}
	v = filter_term_value(in, e->term);
	switch (e->op) {
	case FOP_EQ: return v == e->value;
	case FOP_NE: return v != e->value;
	case FOP_LT: return v < e->value;
	case FOP_LE: return v <= e->value;
	case FOP_GT: return v > e->value;
	case FOP_GE: return v >= e->value;
	default: return false;
	}
}

/*
 * The bit stack lives in a per-CPU map slot, not a register: the verifier
 * does not track map memory, so each step leaves the stack an unknown
 * scalar and the loop's states prune instead of doubling with every term.
 * (A probe whose programs can nest on one CPU needs a slot per level.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} filter_stack SEC(".maps");

/* Return true when in passes f (an empty program passes everything). */
static __always_inline bool filter_match(const struct filter_prog *f,
					 const struct filter_input *in)
{
	volatile __u64 *stack;
	__u32 i, n = f->n, zero = 0;
	__u64 s, bit;

	if (n == 0)
		return true;
	stack = bpf_map_lookup_elem(&filter_stack, &zero);
	if (!stack)
		return true;
	*stack = 0;
	for (i = 0; i < FILTER_MAX_ENTRIES; i++) {
		const struct filter_entry *e;

		if (i >= n)
			break;
		e = &f->e[i];
		s = *stack;
		switch (e->op) {
		case FOP_AND:
			bit = s & (s >> 1) & 1;
			s = ((s >> 2) << 1) | bit;
			break;
		case FOP_OR:
			bit = (s | (s >> 1)) & 1;
			s = ((s >> 2) << 1) | bit;
			break;
		case FOP_NOT:
			s ^= 1;
			break;
		default:
			s = (s << 1) | filter_eval_term(f, e, in);
			break;
		}
		*stack = s;
	}
	return *stack & 1;
}

#endif
