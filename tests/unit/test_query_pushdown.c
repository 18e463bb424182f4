/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The pushdown planner: the exact filter programs it writes for the kernel,
 * and a reference interpreter of them (the semantics probes/filter.bpf.h
 * must have) checked against query_exec's residual on random rows.
 */
#include <stdlib.h>
#include <string.h>
#include "probes/syscalls/systbl.h"
#include "probes/syscalls/syscalls_schema.h"
#include "queries/query.h"
#include "tap.h"

/* What the kernel knows about one event. */
struct filter_input {
	uint64_t pid, tid, uid, syscall, lat;
	char comm[FILTER_STR_LEN];
};

/* Return the value of a term for an event. */
static uint64_t term_value(const struct filter_input *in, uint32_t term)
{
	switch (term) {
	case FTERM_PID: return in->pid;
	case FTERM_TID: return in->tid;
	case FTERM_UID: return in->uid;
	case FTERM_SYSCALL: return in->syscall;
	case FTERM_LAT: return in->lat;
	default: return 0;
	}
}

/* Interpret a postfix filter program on a bit stack; 1 keeps the event. */
static int filter_eval(const struct filter_prog *f, const struct filter_input *in)
{
	uint64_t st = 0;
	uint32_t i, depth = 0;

	if (!f->n)
		return 1;
	for (i = 0; i < f->n && i < FILTER_MAX_ENTRIES; i++) {
		const struct filter_entry *e = &f->e[i];
		uint64_t v = term_value(in, e->term);
		int bit = 0;

		if (e->op == FOP_AND || e->op == FOP_OR) {
			uint64_t a = st & 1, b = (st >> 1) & 1;

			st >>= 2;
			st = st << 1 | (e->op == FOP_AND ? (a & b) : (a | b));
			depth--;
			continue;
		}
		if (e->op == FOP_NOT) {
			st ^= 1;
			continue;
		}
		if (e->term == FTERM_COMM) {
			const char *s = f->strs[e->value % FILTER_MAX_STRS];

			bit = e->op == FOP_PREFIX ? !strncmp(in->comm, s, strnlen(s, FILTER_STR_LEN)) :
			      (strncmp(in->comm, s, FILTER_STR_LEN) == 0) == (e->op == FOP_EQ);
		} else {
			switch (e->op) {
			case FOP_EQ: bit = v == e->value; break;
			case FOP_NE: bit = v != e->value; break;
			case FOP_LT: bit = v < e->value; break;
			case FOP_LE: bit = v <= e->value; break;
			case FOP_GT: bit = v > e->value; break;
			case FOP_GE: bit = v >= e->value; break;
			}
		}
		st = st << 1 | (uint64_t)bit;
		depth++;
	}
	return depth == 1 && (st & 1);
}

/* Parse, bind to syscalls and push down; NULL on error. */
static struct query *plan(const char *text, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);

	if (!q || query_bind(q, &syscalls_schema, &err)) {
		printf("# %s: %s\n", text, err.msg);
		query_free(q);
		return NULL;
	}
	query_pushdown(q, f);
	return q;
}

#define E(op, term, v) {op, term, v}

struct expect {
	const char *query;
	uint32_t n;
	struct filter_entry e[12];
	const char *strs[FILTER_MAX_STRS];
	uint32_t needs_lat;
};

static const struct expect cases[] = {
	{"from syscalls where pid == 1234", 1, {E(FOP_EQ, FTERM_PID, 1234)}},
	{"from syscalls where pid == 1 and tid != 2", 3,
	 {E(FOP_EQ, FTERM_PID, 1), E(FOP_NE, FTERM_TID, 2), E(FOP_AND, 0, 0)}},
	{"from syscalls where pid in (1, 2, 3)", 5,
	 {E(FOP_EQ, FTERM_PID, 1), E(FOP_EQ, FTERM_PID, 2), E(FOP_OR, 0, 0),
	  E(FOP_EQ, FTERM_PID, 3), E(FOP_OR, 0, 0)}},
	{"from syscalls where lat > 100us", 1, {E(FOP_GT, FTERM_LAT, 100000)}, {0}, 1},
	{"from syscalls where lat >= 1ms and lat < 1s", 3,
	 {E(FOP_GE, FTERM_LAT, 1000000), E(FOP_LT, FTERM_LAT, 1000000000), E(FOP_AND, 0, 0)}, {0}, 1},
	{"from syscalls where comm == 'nginx' or comm == memcached", 3,
	 {E(FOP_EQ, FTERM_COMM, 0), E(FOP_EQ, FTERM_COMM, 1), E(FOP_OR, 0, 0)},
	 {"nginx", "memcached"}},
	{"from syscalls where comm ~ 'mem*'", 1, {E(FOP_PREFIX, FTERM_COMM, 0)}, {"mem"}},
	{"from syscalls where comm in ('a', 'b', 'a')", 5,
	 {E(FOP_EQ, FTERM_COMM, 0), E(FOP_EQ, FTERM_COMM, 1), E(FOP_OR, 0, 0),
	  E(FOP_EQ, FTERM_COMM, 0), E(FOP_OR, 0, 0)}, {"a", "b"}},
	{"from syscalls where syscall == read and not syscall in (write, futex)", 6,
	 {E(FOP_EQ, FTERM_SYSCALL, 0), E(FOP_EQ, FTERM_SYSCALL, 1), E(FOP_EQ, FTERM_SYSCALL, 202),
	  E(FOP_OR, 0, 0), E(FOP_NOT, 0, 0), E(FOP_AND, 0, 0)}},
	/* errors is not pushable: its conjunct stays residual, the rest is pushed */
	{"from syscalls where errors > 0 and pid == 7", 1, {E(FOP_EQ, FTERM_PID, 7)}},
	{"from syscalls where (errors > 0 or pid == 7) and tid == 8", 1, {E(FOP_EQ, FTERM_TID, 8)}},
	/* residual only */
	{"from syscalls where errors > 0", 0, {{0}}},
	{"from syscalls where comm ~ '/^mem/'", 0, {{0}}},
	{"from syscalls where comm ~ 'm?m*'", 0, {{0}}},
	{"from syscalls where comm ~ '*'", 0, {{0}}},
	{"from syscalls where comm == 'a-name-longer-than-15'", 0, {{0}}},
	{"from syscalls where pid == 1 or errors > 0", 0, {{0}}},
	{"from syscalls where time > 1ms", 0, {{0}}},
	{"from syscalls show count", 0, {{0}}},
	/* five distinct strings: the fifth conjunct does not fit and stays residual */
	{"from syscalls where comm != 'a' and comm != 'b' and comm != 'c' and comm != 'd' "
	 "and comm != 'e'", 7,
	 {E(FOP_NE, FTERM_COMM, 0), E(FOP_NE, FTERM_COMM, 1), E(FOP_AND, 0, 0),
	  E(FOP_NE, FTERM_COMM, 2), E(FOP_AND, 0, 0), E(FOP_NE, FTERM_COMM, 3), E(FOP_AND, 0, 0)},
	 {"a", "b", "c", "d"}},
};

/* Check the program for one case entry by entry. */
static void check_case(const struct expect *c)
{
	struct filter_prog f;
	struct query *q = plan(c->query, &f);
	bool same;
	uint32_t i;

	if (!q) {
		ok(0, "plan %s", c->query);
		return;
	}
	same = f.n == c->n && f.needs_lat == c->needs_lat;
	for (i = 0; same && i < c->n; i++)
		same = f.e[i].op == c->e[i].op && f.e[i].term == c->e[i].term &&
		       f.e[i].value == c->e[i].value;
	for (i = 0; same && i < FILTER_MAX_STRS; i++)
		same = !strcmp(f.strs[i], c->strs[i] ? c->strs[i] : "");
	ok(same, "%s -> %u entries", c->query, c->n);
	if (!same)
		for (i = 0; i < f.n; i++)
			printf("#   got {%u, %u, %llu}\n", f.e[i].op, f.e[i].term,
			       (unsigned long long)f.e[i].value);
	query_free(q);
}

/* Build a one-row window for an event. */
static void one_row(struct window *w, const struct filter_input *in)
{
	struct frame *f = frame_new(&syscalls_schema, 2000000000ULL, 1000000000ULL);
	union cell *r = frame_add_row(f);
	struct hist h;
	struct tick t;

	hist_init(&h);
	hist_add(&h, in->lat);
	r[SC_PID].u = in->pid;
	r[SC_TID].u = in->tid;
	cell_set_str(&r[SC_COMM], in->comm);
	cell_set_str(&r[SC_SYSCALL], syscall_name((unsigned)in->syscall));
	r[SC_COUNT].u = 1;
	r[SC_ERRORS].u = in->tid / 50 % 2;
	cell_set_hist(&r[SC_LAT], &h);
	r[SC_TIME].u = in->lat;
	window_clear(w);
	tick_init(&t, f->t_ns);
	tick_add(&t, f);
	window_push(w, &t);
}

/* Return whether query_exec keeps the event (count(lat) is 1). */
static int residual(const struct query *q, const struct window *w)
{
	struct query_error err;
	struct result *r = query_exec(q, w, &err);
	int keep = r && r->nrows == 1 && result_row(r, 0)[0].u == 1;

	result_free(r);
	return keep;
}

static const char *const preds[] = {
	"pid == 100", "pid != 200 and lat > 100us", "pid in (100, 300) or tid >= 250",
	"comm == 'nginx' or comm ~ 'mem*'", "not (syscall in (read, futex) and lat <= 1ms)",
	"syscall != write and (pid < 250 or comm != 'postgres')", "lat >= 4096 and lat < 1048576",
	"not comm ~ 'post*' and not pid == 100", "tid > 150 and tid <= 300 and lat != 102400",
	/* partly residual: pushed part must keep a superset */
	"errors == 1 and comm == 'nginx'", "comm ~ '/^m.*d$/' and lat > 2ms",
	"errors == 0 or pid == 100",
};

int main(void)
{
	static const char *const comms[] = {"nginx", "memcached", "postgres", "mem"};
	static const char *const sys[] = {"read", "write", "futex", "fsync"};
	static const uint64_t lats[] = {1000, 4096, 102400, 1000000, 1048576, 4194304};
	struct filter_prog f;
	struct window w;
	struct query *q;
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	q = plan("from syscalls where pid == 1 sample 1/100 threshold 2ms buffer 512", &f);
	ok(q && f.sample_n == 100 && f.threshold_ns == 2000000 && f.max_events == 512 && f.n == 1,
	   "options go to the program");
	query_free(q);
	q = plan("from syscalls", &f);
	ok(q && f.sample_n == 1 && !f.threshold_ns && !f.max_events && !f.n && !f.needs_lat,
	   "no WHERE, no options: an empty program that passes everything");
	query_free(q);

	srand(42);
	window_init(&w, 10000000000ULL);
	for (k = 0; k < sizeof(preds) / sizeof(preds[0]); k++) {
		char text[512];
		int same = 0, superset = 1, total = 400;
		bool full = k < 9;

		snprintf(text, sizeof(text), "from syscalls where %s show count(lat)", preds[k]);
		q = plan(text, &f);
		if (!q) {
			ok(0, "plan %s", text);
			continue;
		}
		for (i = 0; i < (size_t)total; i++) {
			struct filter_input in = {0};
			int kern, user;

			in.pid = 100 * (1 + rand() % 4);
			in.tid = in.pid + rand() % 3 * 50;
			snprintf(in.comm, sizeof(in.comm), "%s", comms[rand() % 4]);
			in.syscall = (uint64_t)syscall_nr(sys[rand() % 4]);
			in.lat = lats[rand() % 6];
			one_row(&w, &in);
			kern = filter_eval(&f, &in);
			user = residual(q, &w);
			same += kern == user;
			superset &= kern || !user;
		}
		if (full)
			ok(f.n > 0 && same == total, "kernel program == residual for '%s' (%d/%d)",
			   preds[k], same, total);
		else
			ok(superset && same < total,
			   "kernel program keeps a superset of the residual for '%s'", preds[k]);
		query_free(q);
	}
	window_done(&w);
	tap_done();
}
