/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Split WHERE into what the kernel can test (probes/filter.h) and the rest.
 *
 * Only whole top-level AND conjuncts are pushed, and only when every leaf
 * in them is pushable: a field with FF_PUSH that maps to a filter term,
 * with an operator and value the kernel can evaluate.  Pushed conjuncts stay
 * in the residual too (query_exec re-checks everything), so pushdown only
 * saves work and never changes results.  A conjunct that would overflow the
 * entry or string tables is left to the residual.
 */
#include <stdlib.h>
#include <string.h>
#include "ast.h"
#include "../core/cgroup.h"

/* Append one entry; false when the table is full. */
static bool planner_emit(struct filter_prog *f, enum filter_opcode op, enum filter_term term,
			 uint64_t value)
{
	if (f->n >= FILTER_MAX_ENTRIES)
		return false;
	f->e[f->n++] = (struct filter_entry){op, term, value};
	return true;
}

/* Return the strs[] index of s, adding it; -1 when full. */
static int planner_str(struct filter_prog *f, const char *s, int *nstrs)
{
	int i;

	for (i = 0; i < *nstrs; i++)
		if (!strncmp(f->strs[i], s, FILTER_STR_LEN))
			return i;
	if (*nstrs >= FILTER_MAX_STRS)
		return -1;
	memset(f->strs[*nstrs], 0, FILTER_STR_LEN);
	memcpy(f->strs[*nstrs], s, strlen(s));
	return (*nstrs)++;
}

/* Return the length of the prefix if pattern is 'prefix*' with a plain prefix, else 0. */
static size_t planner_prefix(const char *pat)
{
	size_t n = strcspn(pat, "*?[\\");

	return n && pat[n] == '*' && !pat[n + 1] && n < FILTER_STR_LEN ? n : 0;
}

/* Return 8 address bytes read big-endian, as a host-order u64. */
static uint64_t planner_half(const uint8_t *a)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | a[i];
	return v;
}

/*
 * Emit an address-in-prefix test (EQ) or its negation (NE).  The kernel
 * compares the 16-byte form (IPv4 as ::ffff:a.b.c.d), so an IPv4 /n is
 * 96 + n bits of it.  An IPv6 prefix that also covers ::ffff:0:0/96 would
 * match IPv4 addresses the residual (which never mixes families) does
 * not: such prefixes stay in the residual.
 */
static bool planner_addr(struct filter_prog *f, int *naddrs, enum filter_term term,
			 enum filter_opcode op, const struct ipaddr *ip)
{
	static const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff};
	unsigned bits = ip->v4 ? 96u + ip->prefix : ip->prefix, i;
	__u64 want[2] = {planner_half(ip->a), planner_half(ip->a + 8)};
	__u64 m4[2] = {planner_half(mapped), planner_half(mapped + 8)};
	int idx;

	if ((op != FOP_EQ && op != FOP_NE) || bits > 128)
		return false;
	if (!ip->v4 && filter_addr_match(want, m4, bits < 96 ? bits : 96))
		return false;
	for (idx = 0; idx < *naddrs; idx++)
		if (f->addrs[idx][0] == want[0] && f->addrs[idx][1] == want[1])
			break;
	if (idx == *naddrs) {
		if (*naddrs >= FILTER_MAX_ADDRS)
			return false;
		for (i = 0; i < 2; i++)
			f->addrs[idx][i] = want[i];
		(*naddrs)++;
	}
	return planner_emit(f, op, term, FILTER_ADDR_VALUE(idx, bits));
}

/*
 * Emit one value test of field fd (its term: fd->pushdown) for a leaf
 * (nstrs: strs[], addrs[] used); false if it cannot be pushed.  Numbers go
 * as they are, addresses as prefixes; text goes as the kernel value its
 * domain gives, or as text in strs[].
 */
static bool planner_test(struct filter_prog *f, int *nstrs, const struct field *fd,
			 enum filter_opcode op, const struct value *v)
{
	enum filter_term term = (enum filter_term)fd->pushdown;
	int64_t kv;
	int idx;

	if (fd->type == FT_IP)
		return v->kind == V_IP && planner_addr(f, nstrs + 1, term, op, &v->ip);
	if (fd->type != FT_STR)
		return v->kind == V_NUM && planner_emit(f, op, term, v->u);
	if (v->kind != V_STR || (op != FOP_EQ && op != FOP_NE))
		return false;
	if (fd->domain && fd->domain->value) {
		kv = domain_valid(fd->domain, v->s) && strcmp(v->s, TABLE_OTHER) ?
		     fd->domain->value(v->s) : -1;
		return kv >= 0 && planner_emit(f, op, term, (uint64_t)kv);
	}
	if (strlen(v->s) >= FILTER_STR_LEN || (idx = planner_str(f, v->s, nstrs)) < 0)
		return false;
	return planner_emit(f, op, term, (uint64_t)idx);
}

/*
 * Emit a cgroup subtree test for glob pat when it is PATH/ then * with a plain
 * PATH that names a cgroup here: the kernel passes PATH and everything
 * below it, which holds every match of the glob.  False otherwise.
 */
static bool planner_cgroup_glob(struct filter_prog *f, const char *pat)
{
	size_t n = strcspn(pat, "*?[\\");
	char path[CGROUP_PATH_MAX], *cause = NULL;
	uint64_t id;
	unsigned level;

	if (!n || n >= sizeof(path) || pat[n] != '*' || pat[n + 1] || pat[n - 1] != '/')
		return false;
	memcpy(path, pat, n);
	path[n] = 0;
	if (cgroup_lookup(path, &id, &level, &cause)) {
		free(cause);
		return false;
	}
	if (id >> FILTER_CGROUP_LEVEL_SHIFT || level >= 1u << (64 - FILTER_CGROUP_LEVEL_SHIFT))
		return false;
	return planner_emit(f, FOP_PREFIX, FTERM_CGROUP, FILTER_CGROUP_VALUE(level, id));
}

/* Emit a leaf in postfix; false if it cannot be pushed. */
static bool planner_leaf(const struct schema *s, const struct pred *p, struct filter_prog *f,
			 int *nstrs)
{
	const struct field *fd = &s->fields[p->f.idx];
	size_t i;
	int idx;

	if (!(fd->flags & FF_PUSH) || !fd->pushdown || fd->pushdown >= FTERM_MAX)
		return false;
	if (fd->pushdown == FTERM_LAT)
		f->needs_lat = 1;
	switch (p->kind) {
	case P_CMP:
		return planner_test(f, nstrs, fd, (enum filter_opcode)(FOP_EQ + p->op),
				    &p->vals[0]);
	case P_IN:
		for (i = 0; i < p->nvals; i++) {
			if (!planner_test(f, nstrs, fd, FOP_EQ, &p->vals[i]))
				return false;
			if (i && !planner_emit(f, FOP_OR, FTERM_NONE, 0))
				return false;
		}
		return true;
	default:
		if (fd->pushdown == FTERM_CGROUP && !p->regex)
			return planner_cgroup_glob(f, p->vals[0].s);
		if (fd->pushdown != FTERM_COMM || p->regex ||
		    !planner_prefix(p->vals[0].s))
			return false;
		{
			char pre[FILTER_STR_LEN] = {0};

			memcpy(pre, p->vals[0].s, planner_prefix(p->vals[0].s));
			idx = planner_str(f, pre, nstrs);
		}
		return idx >= 0 && planner_emit(f, FOP_PREFIX, FTERM_COMM, (uint64_t)idx);
	}
}

/* Emit a predicate in postfix; false if any part cannot be pushed. */
static bool planner_pred(const struct schema *s, const struct pred *p, struct filter_prog *f,
			 int *nstrs)
{
	switch (p->kind) {
	case P_AND:
	case P_OR:
		return planner_pred(s, p->l, f, nstrs) && planner_pred(s, p->r, f, nstrs) &&
		       planner_emit(f, p->kind == P_AND ? FOP_AND : FOP_OR, FTERM_NONE, 0);
	case P_NOT:
		return planner_pred(s, p->l, f, nstrs) && planner_emit(f, FOP_NOT, FTERM_NONE, 0);
	default:
		return planner_leaf(s, p, f, nstrs);
	}
}

/* Try each top-level AND conjunct, keeping those that fit whole. */
static void planner_conjuncts(const struct schema *s, const struct pred *p,
			      struct filter_prog *f, int *nstrs)
{
	struct filter_prog try;
	int ntry[2];

	if (p->kind == P_AND) {
		planner_conjuncts(s, p->l, f, nstrs);
		planner_conjuncts(s, p->r, f, nstrs);
		return;
	}
	try = *f;
	ntry[0] = nstrs[0];
	ntry[1] = nstrs[1];
	if (!planner_pred(s, p, &try, ntry))
		return;
	if (f->n && !planner_emit(&try, FOP_AND, FTERM_NONE, 0))
		return;
	*f = try;
	nstrs[0] = ntry[0];
	nstrs[1] = ntry[1];
}

/* Mark field idx in *used (fields past 62 share bit 63). */
static void planner_use(uint64_t *used, int idx)
{
	if (idx >= 0)
		*used |= 1ull << (idx < 63 ? idx : 63);
}

/* Mark every field predicate p tests. */
static void planner_pred_fields(const struct pred *p, uint64_t *used)
{
	if (!p)
		return;
	if (p->kind == P_AND || p->kind == P_OR || p->kind == P_NOT) {
		planner_pred_fields(p->l, used);
		planner_pred_fields(p->r, used);
		return;
	}
	planner_use(used, p->f.idx);
}

/* Mark every field q (bound) reads: its keys, columns and tests. */
static uint64_t planner_fields(const struct query *q)
{
	const struct plan *pl = &q->plan;
	uint64_t used = 0;
	size_t i;

	for (i = 0; i < pl->nkeys; i++)
		planner_use(&used, pl->keys[i]);
	for (i = 0; i < pl->ncols; i++)
		planner_use(&used, pl->cols[i].field);
	planner_use(&used, pl->hist_field);
	planner_use(&used, pl->count_field);
	for (i = 0; i < pl->nparts; i++)
		planner_use(&used, pl->parts[i]);
	planner_pred_fields(q->where, &used);
	/* The bytes pseudo-field is size times count: size is read when it is. */
	if (pl->bytes_field >= 0 && (used >> (pl->bytes_field < 63 ? pl->bytes_field : 63)) & 1)
		planner_use(&used, pl->size_field);
	return used;
}

void query_pushdown(const struct query *q, struct filter_prog *f)
{
	int nstrs[2] = {0, 0};	/* strs[] and addrs[] entries used */

	memset(f, 0, sizeof(*f));
	f->sample_n = q->opts.sample_n;
	f->threshold_ns = q->opts.threshold_ns;
	f->max_events = q->opts.buffer > UINT32_MAX ? UINT32_MAX : (__u32)q->opts.buffer;
	if (q->schema && q->where)
		planner_conjuncts(q->schema, q->where, f, nstrs);
	if (q->schema && q->has_group) {	/* a grain the query states */
		f->fields_known = 1;
		f->fields_used = planner_fields(q);
	}
}
