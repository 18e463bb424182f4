/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Golden query tests (jq.test style): the .test files in tests/golden hold blocks of
 *
 *   query: TEXT
 *   format: csv | json | text | prometheus | openmetrics
 *                                   (optional, csv by default; the last two as
 *                                   queries/expose.h writes them, NAME the table)
 *   series: N                       (optional: expose's max_series)
 *   recording: odd.snap             (optional: the query runs over odd.snap,
 *                                   odd_tick below, instead of the fixture)
 *   expect:                         (then the output lines)
 * or
 *   error: column N: MESSAGE        (the first line of query_error_format)
 *
 * separated by blank lines; lines starting with # are comments (but for the
 * expected output of the metric formats, its # HELP, TYPE, UNIT and EOF lines).  Every query
 * runs over tests/unit/fixture.h written with the snapshot writer and read
 * back through the replay source, as `latop report` would; a block with the
 * line "over: series" runs over the fixture's time series (series_tick)
 * instead.  Times print in TZ=UTC.  The queries run
 * in a temporary directory that also holds recordings for BASELINE:
 * base.snap (fixture_base_tick), other.snap (a table that is not syscalls)
 * and junk.snap (not a recording).  A query FROM a table the fixture lacks
 * runs over tests/data/nvme-vm/all.snap when that recording holds it (whole:
 * a window of an hour).
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/snapshot.h"
#include "core/source.h"
#include "queries/expose.h"
#include "queries/query.h"
#include "fixture.h"
#include "tap.h"

/* A table that is not syscalls, for a baseline without it. */
static const struct field other_fields[] = {
	{"pid", FT_U64, FF_KEY, "", "the process"},
	{"count", FT_U64, FF_SUM, "", "events"},
};
static const struct schema other_schema = {"locks", "not syscalls", 2, other_fields};

/* Build tick k of other.snap: one row of other_schema. */
static void other_tick(struct tick *t, unsigned k)
{
	uint64_t t_ns = FIXTURE_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f = frame_new(&other_schema, t_ns, FIXTURE_DT);
	union cell *r = frame_add_row(f);

	tick_init(t, t_ns);
	r[0].u = 1;
	r[1].u = 1;
	tick_add(t, f);
}

/* Build tick k of odd.snap: syscalls rows whose comm needs escaping as a
 * label value (quote, backslash, newline, a byte that is not UTF-8), two
 * ticks so counters add up. */
static void odd_tick(struct tick *t, unsigned k)
{
	static const char *const comms[] = {"say \"hi\"", "back\\slash", "two\nlines",
					    "bad\xff\xc3(", "caf\xc3\xa9"};
	uint64_t t_ns = FIXTURE_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f = frame_new(&syscalls_schema, t_ns, FIXTURE_DT);
	size_t i;

	tick_init(t, t_ns);
	for (i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
		struct fixture_call c = {1 + (unsigned)i, 1 + (unsigned)i, comms[i], "read",
					 2 + (unsigned)i, 1000 << i, SC_NET};

		fixture_row(f, &c, k, 1);
	}
	tick_add(t, f);
}

/* Record nticks ticks of table s, built by make_tick, into path (those
 * has(k) keeps, every one when has is NULL); 0 or -1. */
static int write_snap_some(const char *path, const struct schema *s, unsigned nticks,
			   void (*make_tick)(struct tick *, unsigned), bool (*has)(unsigned))
{
	struct source_info info = {.host = "golden", .kernel = "test"};
	const struct schema *schemas[] = {s};
	struct snap_writer *sw;
	struct tick t;
	char *cause = NULL;
	unsigned k;

	info.nschemas = 1;
	info.schemas = schemas;
	sw = snap_create(path, &info, &cause);
	if (!sw) {
		printf("# snap_create: %s\n", cause);
		return -1;
	}
	for (k = 0; k < nticks; k++) {
		if (has && !has(k))
			continue;
		make_tick(&t, k);
		if (snap_write_tick(sw, &t, &cause))
			printf("# snap_write_tick: %s\n", cause);
		tick_done(&t);
	}
	if (snap_close(sw, &cause)) {
		printf("# snap_close: %s\n", cause);
		return -1;
	}
	return 0;
}

/* Record every one of nticks ticks (see write_snap_some). */
static int write_snap(const char *path, const struct schema *s, unsigned nticks,
		      void (*make_tick)(struct tick *, unsigned))
{
	return write_snap_some(path, s, nticks, make_tick, NULL);
}

/* Write the fixture to a snapshot file and read it back into a window. */
static struct source *load_window(const char *path, struct window *w)
{
	struct source *src;
	struct tick t;
	char *cause = NULL;

	if (write_snap(path, &syscalls_schema, FIXTURE_TICKS, fixture_tick))
		return NULL;
	src = replay_open(path, &cause);
	if (!src) {
		printf("# replay_open: %s\n", cause);
		return NULL;
	}
	window_init(w, 60 * FIXTURE_DT);
	while (source_read(src, &t, 0, &cause) == 1)
		window_push(w, &t);
	return src;
}

/* Write the recordings BASELINE refers to into the current directory. */
static bool write_baselines(void)
{
	FILE *junk = fopen("junk.snap", "w");

	if (junk) {
		fputs("this is not a recording\n", junk);
		fclose(junk);
	}
	return junk && !write_snap("base.snap", &syscalls_schema, FIXTURE_BASE_TICKS,
				   fixture_base_tick) &&
	       !write_snap("other.snap", &other_schema, 1, other_tick) &&
	       !write_snap("odd.snap", &syscalls_schema, 2, odd_tick);
}

/* Return the schema of table name among the source's, or the first. */
static const struct schema *find_schema(struct source *src, const char *name)
{
	const struct source_info *info = src->ops->info(src);
	size_t i;

	for (i = 0; name && i < info->nschemas; i++)
		if (!strcmp(info->schemas[i]->table, name))
			return info->schemas[i];
	return info->nschemas ? info->schemas[0] : NULL;
}

/* Return whether src's recording holds table name. */
static bool has_table(struct source *src, const char *name)
{
	const struct source_info *info = src->ops->info(src);
	size_t i;

	for (i = 0; name && i < info->nschemas; i++)
		if (!strcmp(info->schemas[i]->table, name))
			return true;
	return false;
}

/* Open recording path into a window of an hour; NULL if it cannot be read. */
static struct source *load_recording(const char *path, struct window *w)
{
	struct source *src;
	struct tick t;
	char *cause = NULL;

	src = replay_open(path, &cause);
	if (!src) {
		printf("# replay_open: %s\n", cause);
		return NULL;
	}
	window_init(w, 3600000000000ULL);
	while (source_read(src, &t, 0, &cause) == 1)
		window_push(w, &t);
	return src;
}

/* The time series recording and its window, for "over: series" blocks. */
static struct source *series_src;
static struct window series_win;

/* The metric formats, beside enum result_format's. */
enum { FMT_PROMETHEUS = 100, FMT_OPENMETRICS };

/* Run one query; return the output (or the error line) as a new string.
 * max_series caps a metrics format's series (0: the default). */
static char *run_query(struct source *src, const struct window *w, struct source *nvme,
		       const struct window *nw, const char *text, int fmt, bool series,
		       size_t max_series, bool *is_error)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct result *r = NULL;
	char *buf = NULL, msg[1024];
	size_t n = 0;
	FILE *m;

	*is_error = true;
	if (series) {
		src = series_src;
		w = &series_win;
	}
	if (q && !series && !has_table(src, query_table(q)) && nvme && has_table(nvme, query_table(q))) {
		src = nvme;
		w = nw;
	}
	if (q && !query_bind(q, find_schema(src, query_table(q)), &err) &&
	    (r = query_exec(q, w, &err)))
		*is_error = false;
	if (*is_error) {
		query_error_format(text, &err, msg, sizeof(msg));
		*strchr(msg, '\n') = 0;
		query_free(q);
		return strdup(msg);
	}
	m = open_memstream(&buf, &n);
	if (fmt == FMT_PROMETHEUS || fmt == FMT_OPENMETRICS) {
		struct expose_opts o = {.help = text, .max_series = max_series,
					.openmetrics = fmt == FMT_OPENMETRICS};

		expose_result(m, r, &o, NULL);
		expose_end(m, o.openmetrics);
	} else {
		result_print(m, r, (enum result_format)fmt);
	}
	fclose(m);
	result_free(r);
	query_free(q);
	return buf;
}

/* Print expected and actual output side by side as a diff. */
static void show_diff(const char *want, const char *got)
{
	printf("#   --- expected\n");
	for (const char *p = want; *p;) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);

		printf("#   -%.*s\n", n, p);
		p += n + (e != NULL);
	}
	printf("#   +++ actual\n");
	for (const char *p = got; *p;) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);

		printf("#   +%.*s\n", n, p);
		p += n + (e != NULL);
	}
}

/* Run every block of one golden file. */
static void run_file(struct source *src, const struct window *w, struct source *nvme,
		     const struct window *nw, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[2048], query[2048] = "", expect[65536] = "", name[64];
	int fmt = RF_CSV;
	size_t max_series = 0;
	bool odd = false;
	int lineno = 0, qline = 0, mode = 0;	/* 1 expect, 2 error */
	bool is_error, eof = false, series = false;

	ok(f != NULL, "open %s", path);
	if (!f)
		return;
	while (!eof) {
		size_t n;

		eof = !fgets(line, sizeof(line), f);
		lineno++;
		n = eof ? 0 : strlen(line);
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		/* In the expected metrics, # HELP, TYPE, UNIT and EOF lines are output. */
		if (!eof && line[0] == '#' &&
		    !(mode == 1 && fmt >= FMT_PROMETHEUS &&
		      (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7) ||
		       !strncmp(line, "# UNIT ", 7) || !strcmp(line, "# EOF"))))
			continue;
		if (!eof && n) {
			if (!strncmp(line, "query: ", 7)) {
				snprintf(query, sizeof(query), "%s", line + 7);
				qline = lineno;
			} else if (!strncmp(line, "format: ", 8)) {
				fmt = !strcmp(line + 8, "json") ? RF_JSON :
				      !strcmp(line + 8, "text") ? RF_TEXT :
				      !strcmp(line + 8, "prometheus") ? FMT_PROMETHEUS :
				      !strcmp(line + 8, "openmetrics") ? FMT_OPENMETRICS : RF_CSV;
			} else if (!strcmp(line, "over: series")) {
				series = true;
			} else if (!strncmp(line, "series: ", 8)) {
				max_series = strtoul(line + 8, NULL, 10);
			} else if (!strcmp(line, "recording: odd.snap")) {
				odd = true;
			} else if (!strcmp(line, "expect:")) {
				mode = 1;
			} else if (!strncmp(line, "error: ", 7)) {
				mode = 2;
				snprintf(expect, sizeof(expect), "%s", line + 7);
			} else if (mode == 1) {
				strncat(expect, line, sizeof(expect) - strlen(expect) - 2);
				strcat(expect, "\n");
			} else {
				ok(0, "%s:%d: stray line '%s'", path, lineno, line);
			}
			continue;
		}
		if (query[0] || mode) {
			struct window ow;
			struct source *osrc = odd ? load_recording("odd.snap", &ow) : NULL;
			char *got = osrc ? run_query(osrc, &ow, NULL, NULL, query, fmt, series,
						     max_series, &is_error) :
				    run_query(src, w, nvme, nw, query, fmt, series, max_series,
					      &is_error);

			if (osrc) {
				window_done(&ow);
				source_close(osrc);
			}
			bool good = (mode == 2) == is_error && !strcmp(got, expect);

			snprintf(name, sizeof(name), "%s", strrchr(path, '/') + 1);
			ok(good, "%s:%d: %s", name, qline, query);
			if (!good)
				show_diff(expect, got);
			free(got);
		}
		query[0] = expect[0] = 0;
		mode = 0;
		fmt = RF_CSV;
		series = false;
		max_series = 0;
		odd = false;
	}
	fclose(f);
}

/* Compare two directory entries by name (alphabetical file order). */
static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(void)
{
	const char *top = getenv("LATOP_TOP");
	char dir[PATH_MAX + 16], path[PATH_MAX + 300], root[PATH_MAX];
	char tmp[] = "/tmp/latop-golden-XXXXXX";
	static const char *const files[] = {"fixture.snap", "base.snap", "other.snap", "junk.snap",
					    "series.snap", "odd.snap"};
	struct dirent **ents;
	struct window w, nw;
	struct source *src, *nvme;
	size_t f;
	int i, n;

	setenv("TZ", "UTC", 1);
	tzset();
	if (!realpath(top ? top : ".", root) || !mkdtemp(tmp) || chdir(tmp)) {
		printf("Bail out! cannot set up a directory for the recordings\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/tests/golden", root);
	src = load_window("fixture.snap", &w);
	ok(src != NULL, "the fixture survives a snapshot round trip");
	if (!src)
		tap_done();
	ok(w.nticks == FIXTURE_TICKS, "the window holds %d ticks (got %zu)", FIXTURE_TICKS, w.nticks);
	ok(write_baselines(), "the baseline recordings are written");
	ok(!write_snap_some("series.snap", &syscalls_schema, SERIES_TICKS, series_tick, series_has) &&
	   (series_src = load_recording("series.snap", &series_win)) != NULL,
	   "the time series recording is written and read back");
	snprintf(path, sizeof(path), "%s/tests/data/nvme-vm/all.snap", root);
	nvme = load_recording(path, &nw);
	ok(nvme != NULL, "the nvme recording %s opens", path);
	n = scandir(dir, &ents, NULL, by_name);
	ok(n > 0, "golden files in %s", dir);
	for (i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);

		if (l > 5 && !strcmp(ents[i]->d_name + l - 5, ".test")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			run_file(src, &w, nvme, &nw, path);
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	window_done(&w);
	source_close(src);
	if (series_src) {
		window_done(&series_win);
		source_close(series_src);
	}
	if (nvme) {
		window_done(&nw);
		source_close(nvme);
	}
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		unlink(files[f]);
	if (chdir("/") || rmdir(tmp))
		printf("# cannot remove %s\n", tmp);
	tap_done();
}
