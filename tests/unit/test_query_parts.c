/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The subsystem pseudo-key: unpivoting FF_PART fields on a per-event table,
 * exact splits, rows without a breakdown, pushdown, completion, and the
 * part flags surviving a snapshot.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/snapshot.h"
#include "core/source.h"
#include "probes/syscalls/syscalls_schema.h"
#include "queries/query.h"
#include "tap.h"
#include "complete.h"

/* Add one syscall_events row: lat = the sum of the given parts. */
static void event(struct frame *f, uint64_t ts, const char *sc, uint64_t runq, uint64_t block,
		  uint64_t net, uint64_t other)
{
	union cell *r = frame_add_row(f);

	r[SE_TS].u = ts;
	r[SE_PID].u = 1;
	r[SE_TID].u = 1;
	cell_set_str(&r[SE_COMM], "app");
	cell_set_str(&r[SE_SYSCALL], sc);
	r[SE_RUNQ].u = runq;
	r[SE_BLOCK].u = block;
	r[SE_NET].u = net;
	r[SE_OTHER].u = other;
	r[SE_LAT].u = runq + block + net + other;
	r[SE_OFFCPU].u = runq + block + net;
	r[SE_ONCPU].u = other;
}

/* Run text over w against schema s; return the CSV output or the error. */
static char *run(const struct schema *s, const struct window *w, const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct result *r = NULL;
	char *buf = NULL;
	size_t n = 0;
	FILE *m;

	if (!q || query_bind(q, s, &err) || !(r = query_exec(q, w, &err))) {
		query_free(q);
		return strdup(err.msg);
	}
	m = open_memstream(&buf, &n);
	result_print(m, r, RF_CSV);
	fclose(m);
	result_free(r);
	query_free(q);
	return buf;
}

/* Check that text over w prints want. */
static void check(const struct schema *s, const struct window *w, const char *text,
		  const char *want, const char *what)
{
	char *got = run(s, w, text);

	ok(!strcmp(got, want), "%s: %s", what, text);
	if (strcmp(got, want))
		printf("#   want:\n%s#   got:\n%s\n", want, got);
	free(got);
}

/* Build a window of one syscall_events frame. */
static void events_window(struct window *w)
{
	struct frame *f = frame_new(&syscall_events_schema, 2000000000ULL, 1000000000ULL);
	struct tick t;

	event(f, 1, "read", 0, 7000000, 0, 3000000);	/* mostly block */
	event(f, 2, "read", 1000, 0, 1000, 1000);	/* a three-way tie */
	event(f, 3, "read", 0, 0, 0, 0);		/* no breakdown at all */
	event(f, 4, "write", 0, 0, 2000000, 500000);	/* mostly net */
	tick_init(&t, 2000000000ULL);
	tick_add(&t, f);
	window_init(w, 10000000000ULL);
	window_push(w, &t);
}

/* Return whether field name of s has every bit of flags. */
static bool has_flags(const struct schema *s, const char *name, unsigned flags)
{
	int i = schema_field(s, name);

	return i >= 0 && (s->fields[i].flags & flags) == flags;
}

/* Write a tick with both syscalls tables (schemas are written with their first
 * frame) and check that the part flags come back. */
static void snapshot_flags(void)
{
	const struct schema *schemas[] = {&syscalls_schema, &syscall_events_schema};
	struct source_info info = {.host = "parts", .kernel = "test", .nschemas = 2,
				   .schemas = schemas};
	char path[] = "/tmp/latop-parts-XXXXXX", *cause = NULL;
	const struct source_info *back;
	struct snap_writer *sw;
	struct source *src;
	struct tick t;
	int fd = mkstemp(path), rc = -1;

	if (fd >= 0)
		close(fd);
	tick_init(&t, 2000000000ULL);
	tick_add(&t, frame_new(&syscalls_schema, 2000000000ULL, 1000000000ULL));
	tick_add(&t, frame_new(&syscall_events_schema, 2000000000ULL, 1000000000ULL));
	sw = snap_create(path, &info, &cause);
	if (sw && !snap_write_tick(sw, &t, &cause))
		rc = snap_close(sw, &cause);
	tick_done(&t);
	ok(rc == 0, "a snapshot with both tables is written (%s)", cause ? cause : "ok");
	src = replay_open(path, &cause);
	ok(src != NULL, "and read back (%s)", cause ? cause : "ok");
	if (src) {
		back = src->ops->info(src);
		ok(back->nschemas == 2 && has_flags(back->schemas[0], "block", FF_SUM | FF_PART) &&
		   has_flags(back->schemas[0], "other", FF_PART) &&
		   has_flags(back->schemas[0], "time", FF_SUM | FF_TOTAL) &&
		   !has_flags(back->schemas[0], "oncpu", FF_PART) &&
		   has_flags(back->schemas[1], "lat", FF_PUSH | FF_TOTAL) &&
		   has_flags(back->schemas[1], "sleep", FF_PART),
		   "FF_PART and FF_TOTAL survive the snapshot");
		source_close(src);
	}
	unlink(path);
}

int main(void)
{
	const struct schema *es = &syscall_events_schema;
	struct query_error err;
	struct filter_prog fp;
	struct window w;
	struct query *q;
	char *s;

	events_window(&w);
	check(es, &w, "group by subsystem show count, sum(lat), max(lat) order by subsystem",
	      "subsystem,count,sum(lat),max(lat)\n"
	      "block,1,7000000,7000000\n"
	      "net,1,2001000,2000000\n"
	      "other,1,3501000,3000000\n"
	      "runq,1,1000,1000\n",
	      "a single event counts once, in its largest part (ties: the earlier one)");
	check(es, &w, "show count, sum(lat)", "count,sum(lat)\n4,12503000\n",
	      "the same totals without the pseudo-key");
	check(es, &w, "where ts == 3 group by subsystem show count, sum(lat), sum(oncpu)",
	      "subsystem,count,sum(lat),sum(oncpu)\nother,1,0,0\n",
	      "a row without a breakdown goes whole to the last part");
	check(es, &w, "where lat > 5ms group by syscall, subsystem show sum(lat), sum(oncpu)",
	      "syscall,subsystem,sum(lat),sum(oncpu)\nread,block,7000000,2100000\n"
	      "read,other,3000000,900000\n",
	      "WHERE reads the total as recorded; other sums split by time share");
	check(es, &w, "where subsystem == net show sum(lat), sum(net), sum(other)",
	      "sum(lat),sum(net),sum(other)\n2001000,2001000,0\n",
	      "a part's row keeps only its own part column");
	check(es, &w, "where subsystem == 'bloc'",
	      "unknown subsystem 'bloc' (did you mean 'block'?)", "part names are checked");
	window_done(&w);

	q = query_parse("from syscalls where subsystem == block and pid == 7 and "
			"(subsystem == net or comm == 'x') group by subsystem show count", &err);
	ok(q && !query_bind(q, &syscalls_schema, &err), "subsystem binds on syscalls");
	if (q) {
		query_pushdown(q, &fp);
		ok(fp.n == 1 && fp.e[0].term == FTERM_PID,
		   "only the pid conjunct is pushed, none naming subsystem (%u entries)", fp.n);
	}
	query_free(q);

	s = complete("from syscalls group by sub");
	ok(!strcmp(s, "subsystem"), "completion offers subsystem for syscalls (%s)", s);
	free(s);
	s = complete("from syscall_events where su");
	ok(!strcmp(s, "subsystem sum("), "and for syscall_events (%s)", s);
	free(s);
	{
		static const struct field plain_fields[] = {
			{"pid", FT_U64, FF_KEY, "", "process"},
			{"time", FT_DUR, FF_SUM, "ns", "time"},
		};
		static const struct schema plain = {"plain", "no parts", 2, plain_fields};
		const struct schema *one[] = {&plain};
		char *out[8];
		size_t n = query_complete("from plain show su", 18, one, 1, out, 8), i;

		ok(n == 1 && !strcmp(out[0], "sum("), "a table without parts has no subsystem");
		for (i = 0; i < n; i++)
			free(out[i]);
		q = query_parse("from plain group by subsystem", &err);
		ok(q && query_bind(q, &plain, &err) &&
		   !strcmp(err.msg, "unknown field 'subsystem'"), "and cannot group by it (%s)",
		   err.msg);
		query_free(q);
	}
	snapshot_flags();
	tap_done();
}
