/*
 * Golden query tests (jq.test style): the .test files in tests/golden hold blocks of
 *
 *   query: TEXT
 *   format: csv | json | text       (optional, csv by default)
 *   expect:                         (then the output lines)
 * or
 *   error: column N: MESSAGE        (the first line of query_error_format)
 *
 * separated by blank lines; lines starting with # are comments.  Every query
 * runs over tests/unit/fixture.h written with the snapshot writer and read
 * back through the replay source, as `latop report` would.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/snapshot.h"
#include "core/source.h"
#include "queries/query.h"
#include "fixture.h"
#include "tap.h"

/* Write the fixture to a snapshot file and read it back into a window. */
static struct source *load_window(const char *path, struct window *w)
{
	struct source_info info = {.host = "golden", .kernel = "test"};
	const struct schema *schemas[] = {&syscalls_schema};
	struct snap_writer *sw;
	struct source *src;
	struct tick t;
	char *cause = NULL;
	unsigned k;

	info.nschemas = 1;
	info.schemas = schemas;
	sw = snap_create(path, &info, &cause);
	if (!sw) {
		printf("# snap_create: %s\n", cause);
		return NULL;
	}
	for (k = 0; k < FIXTURE_TICKS; k++) {
		fixture_tick(&t, k);
		if (snap_write_tick(sw, &t, &cause))
			printf("# snap_write_tick: %s\n", cause);
		tick_done(&t);
	}
	if (snap_close(sw, &cause)) {
		printf("# snap_close: %s\n", cause);
		return NULL;
	}
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

/* Run one query; return the output (or the error line) as a new string. */
static char *run_query(struct source *src, const struct window *w, const char *text,
		       enum result_format fmt, bool *is_error)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	struct result *r = NULL;
	char *buf = NULL, msg[1024];
	size_t n = 0;
	FILE *m;

	*is_error = true;
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
	result_print(m, r, fmt);
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
static void run_file(struct source *src, const struct window *w, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[2048], query[2048] = "", expect[16384] = "", name[64];
	enum result_format fmt = RF_CSV;
	int lineno = 0, qline = 0, mode = 0;	/* 1 expect, 2 error */
	bool is_error, eof = false;

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
		if (!eof && line[0] == '#')
			continue;
		if (!eof && n) {
			if (!strncmp(line, "query: ", 7)) {
				snprintf(query, sizeof(query), "%s", line + 7);
				qline = lineno;
			} else if (!strncmp(line, "format: ", 8)) {
				fmt = !strcmp(line + 8, "json") ? RF_JSON :
				      !strcmp(line + 8, "text") ? RF_TEXT : RF_CSV;
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
			char *got = run_query(src, w, query, fmt, &is_error);
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
	char dir[1024], path[1400], snap[] = "/tmp/latop-golden-XXXXXX";
	struct dirent **ents;
	struct window w;
	struct source *src;
	int i, n, fd;

	snprintf(dir, sizeof(dir), "%s/tests/golden", top ? top : ".");
	fd = mkstemp(snap);
	if (fd >= 0)
		close(fd);
	src = load_window(snap, &w);
	ok(src != NULL, "the fixture survives a snapshot round trip");
	if (!src)
		tap_done();
	ok(w.nticks == FIXTURE_TICKS, "the window holds %d ticks (got %zu)", FIXTURE_TICKS, w.nticks);
	n = scandir(dir, &ents, NULL, by_name);
	ok(n > 0, "golden files in %s", dir);
	for (i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);

		if (l > 5 && !strcmp(ents[i]->d_name + l - 5, ".test")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			run_file(src, &w, path);
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	window_done(&w);
	source_close(src);
	unlink(snap);
	tap_done();
}
