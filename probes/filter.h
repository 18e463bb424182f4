/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pushdown ABI: a predicate flattened by queries/planner.c into a small
 * program that probes/filter.bpf.h interprets in a bounded loop (perf's
 * sample filter is the model).  Shared by BPF and user space: __u32/__u64 only.
 *
 * Entries are in postfix order.  A term entry (op EQ..PREFIX) pushes one bit,
 * AND/OR pop two and push one, NOT flips the top.  The stack is a u64 used as
 * a bit stack, so depth is bounded by 64 and no array is indexed by a variable.
 * An empty program (n == 0) passes everything.
 */
#ifndef LATOP_FILTER_H
#define LATOP_FILTER_H

#define FILTER_MAX_ENTRIES 32
#define FILTER_MAX_STRS 4
#define FILTER_STR_LEN 16
#define FILTER_MAX_ADDRS 4

enum filter_term {
	FTERM_NONE = 0,
	FTERM_PID,		/* tgid */
	FTERM_TID,
	FTERM_COMM,		/* value: index into strs[] */
	FTERM_SYSCALL,		/* syscall number */
	FTERM_LAT,		/* the event's latency in ns (known at its end) */
	FTERM_UID,
	FTERM_LPORT,		/* flows, paths: local port */
	FTERM_RPORT,		/* remote port */
	FTERM_DEV,		/* block, nvme: device number (dev_t as the kernel keeps it,
				 * major << 20 | minor; the planner resolves 'loop0') */
	FTERM_OP,		/* block, nvme: the block layer's REQ_OP_* code (read 0,
				 * write 1, flush 2, discard 3; probes/block/blkdev.c names them) */
	FTERM_SIZE,		/* block, nvme: bytes */
	FTERM_LADDR,		/* flows, paths: local address in a prefix (FILTER_ADDR_VALUE) */
	FTERM_RADDR,		/* remote address in a prefix */
	FTERM_KIND,		/* locks: lock kind */
	FTERM_QID,		/* nvme: queue id */
	FTERM_SIDE,		/* nvme: initiator or target (strs[] index; the probe maps it) */
	FTERM_CGROUP,		/* the current task's cgroup v2 id (bpf_get_current_cgroup_id);
				 * FOP_PREFIX: value FILTER_CGROUP_VALUE(level, id), the task
				 * is in cgroup id (at that level) or below it.  Read by the
				 * interpreter itself: only for filters run in the task's context */
	FTERM_MAX,
};

enum filter_opcode {
	FOP_EQ = 1,
	FOP_NE,
	FOP_LT,
	FOP_LE,
	FOP_GT,
	FOP_GE,
	FOP_PREFIX,		/* FTERM_COMM: comm starts with strs[value]; FTERM_CGROUP:
				 * in the subtree of a cgroup */
				/* FTERM_LADDR/RADDR take EQ (in the prefix) and NE only */
	FOP_AND,
	FOP_OR,
	FOP_NOT,
};

struct filter_entry {
	__u32 op;		/* enum filter_opcode */
	__u32 term;		/* enum filter_term, 0 for AND/OR/NOT */
	__u64 value;
};

struct filter_prog {
	__u32 n;		/* entries used */
	__u32 sample_n;		/* keep 1 in sample_n events (0 or 1: all) */
	__u32 needs_lat;	/* some entry tests FTERM_LAT: evaluate at the event's end */
	__u32 max_events;	/* BUFFER: single events sent per tick, 0 = default */
	__u64 threshold_ns;	/* THRESHOLD: events at least this long go to the ring buffer; 0 = off */
	__u32 fields_known;	/* 1: fields_used says which of the table's fields the query
				 * reads, so a probe may key coarser; 0: it may read any */
	__u32 fields_table;	/* the table whose fields fields_used numbers: its index in
				 * the probe's tables (probe.h), set by the source installing f */
	__u64 fields_used;	/* bit i: field i (bit 63: field 63 or later) */
	struct filter_entry e[FILTER_MAX_ENTRIES];
	char strs[FILTER_MAX_STRS][FILTER_STR_LEN];
	__u64 addrs[FILTER_MAX_ADDRS][2];	/* prefixes of FTERM_LADDR/RADDR tests */
};

/* A cgroup subtree test's value: the cgroup's level (the root is 0) and id
 * (ids are inode numbers, far below 2^56). */
#define FILTER_CGROUP_LEVEL_SHIFT 56
#define FILTER_CGROUP_VALUE(level, id) ((__u64)(level) << FILTER_CGROUP_LEVEL_SHIFT | (id))
#define FILTER_CGROUP_LEVEL(value) ((int)((value) >> FILTER_CGROUP_LEVEL_SHIFT))
#define FILTER_CGROUP_ID(value) ((value) & ((1ULL << FILTER_CGROUP_LEVEL_SHIFT) - 1))

/* Return true when the query behind f may read field idx of its table. */
static __always_inline int filter_reads(const struct filter_prog *f, __u32 idx)
{
	return !f->fields_known || (f->fields_used >> (idx < 63 ? idx : 63)) & 1;
}

/* Return true when the query behind f may read field idx of the probe's
 * table number table (probe.h's tables): a filter installed for another of
 * its tables numbers that table's fields, and says nothing of this one's. */
static __always_inline int filter_reads_of(const struct filter_prog *f, __u32 table, __u32 idx)
{
	return f->fields_table != table || filter_reads(f, idx);
}

/* Field idx as a bit of fields_used, for filter_reads_any_of. */
#define FILTER_FIELD(idx) (1ULL << ((idx) < 63 ? (idx) : 63))

/* Return true when the query behind f may read any of fields (FILTER_FIELD
 * bits) of the probe's table number table, as filter_reads_of. */
static __always_inline int filter_reads_any_of(const struct filter_prog *f, __u32 table,
					       __u64 fields)
{
	return f->fields_table != table || !f->fields_known || (f->fields_used & fields) != 0;
}

/*
 * Addresses: the 16 bytes of an IPv6 address, IPv4 as ::ffff:a.b.c.d, read
 * as two big-endian u64 halves and kept in host order, so a prefix test is
 * two masked compares.  An entry's value holds the index of the prefix in
 * addrs[] and its length in bits over those 16 bytes (an IPv4 /8 is 104).
 */
#define FILTER_ADDR_VALUE(idx, bits) ((__u64)(idx) | ((__u64)(bits) << 8))
#define FILTER_ADDR_IDX(value) ((__u32)(value) & (FILTER_MAX_ADDRS - 1))
#define FILTER_ADDR_BITS(value) ((__u32)((value) >> 8) & 0xff)

/* Return true when the first bits of have and want agree. */
static __always_inline int filter_addr_match(const __u64 have[2], const __u64 want[2],
					     __u32 bits)
{
	__u64 mhi, mlo;

	if (bits > 128)
		bits = 128;
	mhi = bits >= 64 ? ~0ULL : bits == 0 ? 0 : ~0ULL << (64 - bits);
	mlo = bits <= 64 ? 0 : bits >= 128 ? ~0ULL : ~0ULL << (128 - bits);
	return ((have[0] ^ want[0]) & mhi) == 0 && ((have[1] ^ want[1]) & mlo) == 0;
}

#endif
