/*
 * The locks view without root: what its queries push down to the kernel,
 * the shape of its tables (tui/detail.h's contract), and core/symbols on
 * this very program (functions, data, file:line) and on kallsyms.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "core/symbols.h"
#include "probes/locks/locks.h"
#include "probes/locks/locks_schema.h"
#include "queries/query.h"
#include "tap.h"

/* A data object and a function for the symbolizer to find. */
int locks_test_object[64];

__attribute__((noinline)) int locks_test_function(int x)
{
	return x * 3 + locks_test_object[x & 63];
}

/* Parse, bind to schema s and push down into f; false on error. */
static bool plan(const char *text, const struct schema *s, struct filter_prog *f)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	bool good = q && !query_bind(q, s, &err);

	if (!good)
		printf("# %s: %s\n", text, err.msg);
	else
		query_pushdown(q, f);
	query_free(q);
	return good;
}

/* The pushdown of locks queries: pid, comm and wait go down, kind stays. */
static void test_pushdown(void)
{
	struct filter_prog f;

	ok(plan("from locks where pid == 42 and wait > 1ms threshold 1us sample 1/10",
		&locks_schema, &f) && f.n == 3 && f.e[0].op == FOP_EQ && f.e[0].term == FTERM_PID &&
	   f.e[0].value == 42 && f.e[1].op == FOP_GT && f.e[1].term == FTERM_LAT &&
	   f.e[1].value == 1000000 && f.e[2].op == FOP_AND && f.needs_lat &&
	   f.threshold_ns == 1000 && f.sample_n == 10,
	   "pid == 42 and wait > 1ms: two pushed terms, THRESHOLD 1us and SAMPLE 1/10");
	ok(plan("from locks where comm ~ 'req*'", &locks_schema, &f) && f.n == 1 &&
	   f.e[0].op == FOP_PREFIX && f.e[0].term == FTERM_COMM && !strcmp(f.strs[0], "req"),
	   "comm ~ 'req*' goes down as a prefix test");
	ok(plan("from locks where kind == 'mutex' and holder_comm == 'bgsnap'", &locks_schema, &f) &&
	   f.n == 0, "kind and holder_comm stay in user space (nothing pushed)");
	ok(plan("from lock_events where tid == 7 and wait >= 10us", &lock_events_schema, &f) &&
	   f.n == 3 && f.e[0].term == FTERM_TID && f.e[1].term == FTERM_LAT && f.needs_lat,
	   "lock_events: tid and wait go down");
}

/* Check that table t has field name of type ft with flags including fl. */
static bool has_field(const struct schema *t, const char *name, enum ftype ft, unsigned fl)
{
	int i = schema_field(t, name);

	return i >= 0 && t->fields[i].type == ft && (t->fields[i].flags & fl) == fl;
}

/* The tables follow tui/detail.h: T_events with ts and id, T_spans keyed by id and row. */
static void test_schemas(void)
{
	ok(!strcmp(lock_events_schema.table, "lock_events") &&
	   !strcmp(lock_spans_schema.table, "lock_spans"),
	   "locks' events and spans tables are named lock_events and lock_spans");
	ok(has_field(&lock_events_schema, "ts", FT_U64, FF_KEY) &&
	   has_field(&lock_events_schema, "id", FT_U64, 0),
	   "lock_events has ts and id (FT_U64)");
	ok(has_field(&lock_spans_schema, "id", FT_U64, FF_KEY) &&
	   has_field(&lock_spans_schema, "row", FT_STR, FF_KEY) &&
	   has_field(&lock_spans_schema, "start", FT_U64, 0) &&
	   has_field(&lock_spans_schema, "dur", FT_DUR, 0) &&
	   has_field(&lock_spans_schema, "kind", FT_STR, 0) &&
	   has_field(&lock_spans_schema, "label", FT_STR, 0),
	   "lock_spans has id, row, start, dur, kind, label as tui/detail.h says");
	ok(has_field(&locks_schema, "lock", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "kind", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "pid", FT_U64, FF_KEY | FF_PUSH) &&
	   has_field(&locks_schema, "comm", FT_STR, FF_KEY | FF_PUSH) &&
	   has_field(&locks_schema, "holder", FT_U64, FF_KEY) &&
	   has_field(&locks_schema, "holder_comm", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "holder_fn", FT_STR, FF_KEY) &&
	   has_field(&locks_schema, "count", FT_U64, FF_SUM) &&
	   has_field(&locks_schema, "wait", FT_HIST, FF_PUSH) &&
	   has_field(&locks_schema, "hold", FT_HIST, 0),
	   "locks has the fields the view and its queries use");
}

/* Return the address of name in /proc/kallsyms (0 if unreadable or hidden). */
static uint64_t kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long addr = 0, a;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) &&
		    !strchr(line, '[')) {
			addr = a;
			break;
		}
	fclose(f);
	return addr;
}

static void test_symbols(void)
{
	struct symbols *s = symbols_new();
	uint64_t fn = (uint64_t)(uintptr_t)&locks_test_function;
	uint64_t obj = (uint64_t)(uintptr_t)&locks_test_object[10];
	uint64_t k = kallsyms_addr("schedule");
	struct sym_loc loc;
	char buf[256];

	ok(symbols_user(s, (uint32_t)getpid(), fn + 4, false, &loc) && loc.func &&
	   !strcmp(loc.func, "locks_test_function") && loc.off == 4 && loc.main,
	   "a function of this program: name, offset, and in the main object (%s)",
	   loc.func ? loc.func : "none");
	if (symbols_have_lines())
		ok(loc.file && !strcmp(loc.file, "test_locks.c") && loc.line >= 19 && loc.line <= 23,
		   "its file:line from DWARF (%s:%d)", loc.file ? loc.file : "none", loc.line);
	else
		skip("built without libdw: no file:line");
	ok(!strcmp(sym_format(&loc, fn + 4, true, buf, sizeof(buf)), "locks_test_function+0x4") ||
	   !strncmp(buf, "locks_test_function+0x4 (test_locks.c:", 38),
	   "formatted as function+offset (file:line) (%s)", buf);
	ok(symbols_user(s, (uint32_t)getpid(), obj, false, &loc) && loc.func &&
	   !strcmp(loc.func, "locks_test_object") && loc.off == 40,
	   "a data object (a lock's symbol): name and offset (%s+%llu)",
	   loc.func ? loc.func : "none", (unsigned long long)loc.off);
	ok(!symbols_user(s, (uint32_t)getpid(), 8, false, &loc), "an unmapped address resolves to nothing");
	if (k) {
		ok(symbols_kernel(s, k + 1, false, &loc) && loc.func && !strcmp(loc.func, "schedule") &&
		   loc.off == 1, "a kernel function through kallsyms (%s)", loc.func ? loc.func : "none");
	} else {
		skip("kallsyms addresses are hidden here (kptr_restrict)");
	}
	symbols_free(s);
}

/* rels from (tid, since, end) triples; tid 0 leaves a slot empty. */
static void set_rels(struct lk_rel *rels, const uint64_t (*v)[3])
{
	for (int i = 0; i < LK_RELS; i++)
		rels[i] = (struct lk_rel){.tid = (__u32)v[i][0], .since_ns = v[i][1], .end_ns = v[i][2]};
}

/*
 * When a holder's contended hold began, for a wait from 100 to 1000: its own
 * taking of the lock when seen; from the wait's start when it took the lock
 * unseen but nobody else let go of it since; unknown (empty) otherwise.
 */
static void test_rel_since(void)
{
	struct lk_rel r[LK_RELS];

	set_rels(r, (const uint64_t[][3]){{7, 50, 900}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 50, "a seen taking of the lock is the hold's start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 100, "taken unseen, the only release: held from the wait's start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 20, 60}, {9, 60, 80}, {5, 80, 95}});
	ok(lk_rel_since(r, 0, 100) == 100, "taken unseen, every other release before the wait: from its start");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 20, 300}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 900, "taken unseen after another release in the wait: unknown");
	set_rels(r, (const uint64_t[][3]){{7, 900, 900}, {8, 200, 950}, {9, 950, 960}, {5, 960, 970}});
	ok(lk_rel_since(r, 0, 100) == 900,
	   "taken unseen, the oldest of four full slots: an older release may be in the wait, unknown");
	set_rels(r, (const uint64_t[][3]){{7, 40, 40}, {0}, {0}, {0}});
	ok(lk_rel_since(r, 0, 100) == 40, "a release before the wait is left as it is");
}

int main(void)
{
	test_rel_since();
	test_pushdown();
	test_schemas();
	test_symbols();
	tap_done();
}
