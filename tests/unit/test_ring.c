/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core/ring: option values, names, what --keep deletes, rotation, and a ring read as one. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/ring.h"
#include "core/snapshot.h"
#include "core/xalloc.h"
#include "tap.h"

#define SEC 1000000000ull
#define T0 (1795000000ull * SEC)	/* a real time on a 10 s boundary */

static const struct field msg_fields[] = {
	{"conn", FT_U64, FF_KEY, "", "connection"},
	{"n", FT_U64, FF_SUM, "", "messages"},
	{"note", FT_STR, FF_KEY, "", "some text, to give a tick a size"},
};
static const struct schema msg_schema = {"msgs", "test messages", 3, msg_fields};

/* Tick i at t_ns: one row per conn 0..rows-1, n = i + 1 each. */
static void make_tick(struct tick *t, uint64_t t_ns, unsigned i, unsigned rows)
{
	struct frame *f = frame_new(&msg_schema, t_ns, SEC);
	char note[64];

	for (unsigned c = 0; c < rows; c++) {
		union cell *r = frame_add_row(f);

		r[0].u = c;
		r[1].u = i + 1;
		snprintf(note, sizeof(note), "row %u of tick %u: %08x", c, i, (c + 1) * 2654435761u);
		r[2].s = xstrdup(note);
	}
	tick_init(t, t_ns);
	tick_add(t, f);
}

/* Sum of n over every tick src gives, and how many ticks; checks t_ns only grows. */
static uint64_t read_all(struct source *src, size_t *nticks, bool *ordered)
{
	uint64_t sum = 0, last = 0;
	char *cause = NULL;
	struct tick t;
	int r;

	*nticks = 0;
	*ordered = true;
	while ((r = source_read(src, &t, 0, &cause)) != 2) {
		if (r != 1) {
			free(cause);
			cause = NULL;
			continue;
		}
		const struct frame *f = tick_frame(&t, "msgs");

		for (size_t k = 0; f && k < f->nrows; k++)
			sum += frame_row(f, k)[1].u;
		if (t.t_ns <= last)
			*ordered = false;
		last = t.t_ns;
		(*nticks)++;
		tick_done(&t);
	}
	return sum;
}

static void test_parse(void)
{
	struct ring_limit l;
	char *cause = NULL;

	ok(ring_parse_limit("1h", false, &l, &cause) == 0 && l.kind == RING_TIME &&
	   l.v == 3600 * SEC, "--rotate 1h is an hour");
	ok(ring_parse_limit("1.5m", false, &l, &cause) == 0 && l.kind == RING_TIME &&
	   l.v == 90 * SEC, "--rotate 1.5m is 90 s");
	ok(ring_parse_limit("100M", false, &l, &cause) == 0 && l.kind == RING_SIZE &&
	   l.v == 100ull << 20, "--rotate 100M is 100 MiB");
	ok(ring_parse_limit("2GiB", true, &l, &cause) == 0 && l.kind == RING_SIZE &&
	   l.v == 2ull << 30, "--keep 2GiB");
	ok(ring_parse_limit("7d", true, &l, &cause) == 0 && l.kind == RING_TIME &&
	   l.v == 7 * 86400 * SEC, "--keep 7d");
	ok(ring_parse_limit("24", true, &l, &cause) == 0 && l.kind == RING_COUNT && l.v == 24,
	   "--keep 24 is a count of files");
#define BAD(s, count, want) do { \
	cause = NULL; \
	ok(ring_parse_limit(s, count, &l, &cause) < 0 && cause && strstr(cause, want), \
	   "'%s' refused: %s", s, cause ? cause : "(accepted)"); \
	free(cause); \
} while (0)
	BAD("0", false, "needs a unit");
	BAD("3", false, "needs a unit");
	BAD("abc", false, "is not a duration (1h, 30s) or a size (100M)");
	BAD("0s", false, "shorter than the 1s minimum");
	BAD("500ms", false, "unknown unit 'ms'");
	BAD("1k", false, "unknown unit 'k'");
	BAD("100", false, "needs a unit");
	BAD("1K", true, "smaller than the 4096-byte minimum");
	BAD("0", true, "whole number from 1");
	BAD("2.5", true, "whole number from 1");
	BAD("-1h", true, "is not a duration");
	BAD("1e300h", true, "too large");
	BAD("", false, "is not a duration");
#undef BAD
}

static void test_names(void)
{
	char name[RING_NAME_MAX];
	uint64_t ns = 0;
	bool tmp = true;

	ring_name(1795745700123456789ull, name, sizeof(name));
	ok(!strcmp(name, "latop-20261127T021500.123Z.snap"), "a name is the UTC start to the ms (%s)",
	   name);
	ok(ring_name_parse(name, &ns, &tmp) && ns == 1795745700123000000ull && !tmp,
	   "the name gives its start back");
	ok(ring_name_parse("latop-20261127T021500.123Z.snap.tmp", &ns, &tmp) && tmp,
	   "a file being written is one of the ring when asked");
	ok(!ring_name_parse("latop-20261127T021500.123Z.snap.tmp", &ns, NULL),
	   "... and not when only finished files are");
	ok(!ring_name_parse("latop-20261327T021500.123Z.snap", &ns, NULL), "month 13 is no name");
	ok(!ring_name_parse("latop-20260231T021500.123Z.snap", &ns, NULL), "31 February is no name");
	ok(!ring_name_parse("latop-20261127T021500Z.snap", &ns, NULL), "no milliseconds, no name");
	ok(!ring_name_parse("latop-20261127T021500.12xZ.snap", &ns, NULL), "a letter in it, no name");
	ok(!ring_name_parse("run.snap", &ns, NULL) && !ring_name_parse("latop-x.snap", &ns, NULL),
	   "other recordings are not the ring's");
	ok(strcmp("latop-20261127T021459.999Z.snap", "latop-20261127T021500.000Z.snap") < 0,
	   "names sort in time order");
	ok(ring_next_boundary(3601 * SEC, 3600 * SEC) == 7200 * SEC &&
	   ring_next_boundary(7200 * SEC, 3600 * SEC) == 10800 * SEC,
	   "time boundaries fall on multiples of the period");
}

static void test_prune(void)
{
	struct ring_file f[5];
	struct ring_limit k;

	for (int i = 0; i < 5; i++)
		f[i] = (struct ring_file){NULL, T0 + (uint64_t)i * 3600 * SEC, 100, false};
	k = (struct ring_limit){RING_COUNT, 3};
	ok(ring_prune_count(f, 5, &k, T0 + 5 * 3600 * SEC) == 2, "count 3 of 5: the 2 oldest go");
	k.v = 5;
	ok(ring_prune_count(f, 5, &k, T0 + 5 * 3600 * SEC) == 0, "count 5 of 5: none go");
	k.v = 1;
	ok(ring_prune_count(f, 5, &k, T0) == 4, "count 1: all but the newest");
	k = (struct ring_limit){RING_SIZE, 250};
	ok(ring_prune_count(f, 5, &k, T0) == 3, "250 bytes of 5 x 100: the 3 oldest go");
	k.v = 50;
	ok(ring_prune_count(f, 5, &k, T0) == 4, "a size below one file keeps the newest");
	/* Ends: file i at T0 + (i+1)h, the last at now = T0 + 5h. */
	k = (struct ring_limit){RING_TIME, 2 * 3600 * SEC};
	ok(ring_prune_count(f, 5, &k, T0 + 5 * 3600 * SEC) == 2,
	   "age 2h at 5h: the files that ended at 1h and 2h go, the one ending at 3h stays");
	ok(ring_prune_count(f, 5, &k, T0 + 4 * 3600 * SEC) == 1, "at 4h, only the one that ended at 1h");
	ok(ring_prune_count(f, 5, &k, T0 + 100 * 3600 * SEC) == 4, "age: the newest always stays");
	ok(ring_prune_count(f, 1, &k, T0 + 100 * 3600 * SEC) == 0, "a lone file stays");
}

/* The ring files of dir into *files: how many. */
static size_t list(const char *dir, struct ring_file **files)
{
	size_t n = 0;
	char *cause = NULL;

	if (ring_list(dir, true, files, &n, &cause) < 0) {
		printf("# %s\n", cause);
		free(cause);
		return 0;
	}
	return n;
}

/* Open files[0..n) as replay sources, then chain them. */
static struct source *open_chain(struct ring_file *files, size_t n, char **warning)
{
	struct source **s = xcalloc(n, sizeof(*s)), *c;
	char *cause = NULL;

	*warning = NULL;
	for (size_t i = 0; i < n; i++) {
		s[i] = replay_open(files[i].path, &cause);
		if (!s[i]) {
			printf("# %s\n", cause);
			exit(1);
		}
	}
	c = chain_open(s, n, &cause);
	free(s);
	if (c && c->ops->info(c)->warning)
		*warning = xstrdup(c->ops->info(c)->warning);
	return c;
}

static void test_time_ring(const char *dir)
{
	struct ring_limit rot = {RING_TIME, 2 * SEC}, keep = {RING_NONE, 0};
	const struct schema *sc[] = {&msg_schema};
	struct source_info info = {.host = "h1", .nschemas = 1, .schemas = sc};
	struct ring_writer *rw;
	struct ring_file *files;
	struct source *c;
	char *cause = NULL, *warn;
	uint64_t sum, want = 0;
	size_t n, nt, i;
	bool ordered, alone = true;
	char notes[256];
	int fd;

	/* Other files in the directory must stay. */
	snprintf(notes, sizeof(notes), "%s/notes.txt", dir);
	fd = open(notes, O_CREAT | O_WRONLY, 0600);
	close(fd);
	rw = ring_open(dir, &rot, &keep, &info, T0 + SEC / 2, &cause);
	ok(rw != NULL, "a time ring opens");
	/* Ticks every 0.5 s for 9 s: boundaries at 2, 4, 6, 8 s. */
	for (i = 0; i < 18; i++) {
		struct tick t;
		uint64_t now = T0 + SEC / 2 + i * SEC / 2;

		make_tick(&t, now, (unsigned)i, 3);
		want += 3 * (i + 1);
		if (ring_write_tick(rw, &t, now, &cause) < 0)
			printf("# %s\n", cause);
		tick_done(&t);
	}
	ok(ring_files_started(rw) == 5 && ring_ticks_written(rw) == 18,
	   "5 files over 0.5 s .. 9 s with 2 s rotation (%zu), 18 ticks", ring_files_started(rw));
	ok(ring_close(rw, T0 + 10 * SEC, &cause) == 0, "the ring closes");
	n = list(dir, &files);
	ok(n == 5, "5 finished files in the directory (%zu)", n);
	for (i = 0; i < n; i++) {
		struct source *s = replay_open(files[i].path, &cause);
		/* File k (k >= 1) starts at the first tick at or after 2k s. */
		uint64_t first = i ? T0 + 2 * i * SEC : T0 + SEC / 2;

		if (!s || files[i].tmp || s->ops->info(s)->warning ||
		    s->ops->info(s)->t_first_ns != first)
			alone = false;
		source_close(s);
	}
	ok(alone, "each file reads alone, whole, and starts at its boundary");
	c = open_chain(files, n, &warn);
	ok(c && c->ops->info(c)->nticks == 18, "the chain holds every tick");
	sum = read_all(c, &nt, &ordered);
	ok(sum == want && nt == 18 && ordered, "read as one: every tick once, in order (%llu of %llu)",
	   (unsigned long long)sum, (unsigned long long)want);
	/* Seek backward across files: tick 3 (file 0) then tick 12 (file 3), then back. */
	{
		struct tick t;
		int r = 0;

		ok(c->ops->seek(c, 12, &cause) == 0 && c->ops->tell(c) == 12 &&
		   (r = source_read(c, &t, 0, &cause)) == 1 && t.t_ns == T0 + SEC / 2 + 6 * SEC &&
		   c->ops->tell(c) == 13, "seek forward into a later file reads that tick");
		if (r == 1)
			tick_done(&t);
		ok(c->ops->seek(c, 3, &cause) == 0 && (r = source_read(c, &t, 0, &cause)) == 1 &&
		   t.t_ns == T0 + 2 * SEC && c->ops->tell(c) == 4, "seek back into the first file");
		if (r == 1)
			tick_done(&t);
		sum = read_all(c, &nt, &ordered);
		ok(nt == 14 && ordered, "and reading on crosses every boundary (%zu ticks)", nt);
		ok(c->ops->seek(c, 18, &cause) == 0 && source_read(c, &t, 0, &cause) == 2,
		   "seek to the end: no more ticks");
		ok(c->ops->seek(c, 19, &cause) < 0, "seek past the end is refused");
		free(cause);
		cause = NULL;
	}
	source_close(c);
	free(warn);

	/* A cut file in the middle: its complete ticks still read, a warning names it. */
	{
		struct stat st;

		stat(files[2].path, &st);
		ok(truncate(files[2].path, st.st_size - 40) == 0, "the middle file is cut short");
		c = open_chain(files, n, &warn);
		ok(c && warn && strstr(warn, files[2].path), "the warning names the cut file (%s)",
		   warn ? warn : "none");
		sum = read_all(c, &nt, &ordered);
		/* Cut inside its closing index: its ticks are all whole. */
		ok(nt == 18 && sum == want, "every tick still reads (%zu ticks)", nt);
		source_close(c);
		free(warn);
	}
	/* --keep 2: the oldest finished files go, nothing else. */
	keep = (struct ring_limit){RING_COUNT, 2};
	ok(ring_prune(dir, &keep, false, T0 + 20 * SEC, &cause) == 3, "--keep 2 deletes the 3 oldest");
	ring_files_free(files, n);
	n = list(dir, &files);
	ok(n == 2 && access(notes, F_OK) == 0,
	   "2 files are left, and the file not of the ring stays");
	for (i = 0; i < n; i++)
		unlink(files[i].path);
	ring_files_free(files, n);
}

/* A file started just before a boundary, whose first tick comes after it,
 * keeps the next period instead of holding no tick. */
static void test_empty_at_boundary(const char *dir)
{
	struct ring_limit rot = {RING_TIME, 2 * SEC}, keep = {RING_NONE, 0};
	const struct schema *sc[] = {&msg_schema};
	struct source_info info = {.host = "h1", .nschemas = 1, .schemas = sc};
	uint64_t at[] = {T0 + 2500 * SEC / 1000, T0 + 3500 * SEC / 1000, T0 + 4100 * SEC / 1000};
	struct ring_writer *rw;
	struct ring_file *files;
	char *cause = NULL;
	size_t n, i;

	rw = ring_open(dir, &rot, &keep, &info, T0 + 1900 * SEC / 1000, &cause);
	for (i = 0; i < 3; i++) {
		struct tick t;

		make_tick(&t, at[i], (unsigned)i, 1);
		if (ring_write_tick(rw, &t, at[i], &cause) < 0)
			printf("# %s\n", cause);
		tick_done(&t);
		if (i == 1)
			ok(ring_files_started(rw) == 1, "a file with no tick at its boundary keeps the "
			   "next period (%zu files)", ring_files_started(rw));
	}
	ok(ring_files_started(rw) == 2, "and rotates at the boundary after (%zu files)",
	   ring_files_started(rw));
	ring_close(rw, T0 + 5 * SEC, &cause);
	n = list(dir, &files);
	for (i = 0; i < n; i++)
		unlink(files[i].path);
	ring_files_free(files, n);
}

static void test_size_ring(const char *dir)
{
	struct ring_limit rot = {RING_SIZE, 6000}, keep = {RING_COUNT, 100};
	const struct schema *sc[] = {&msg_schema};
	struct source_info info = {.host = "h1", .nschemas = 1, .schemas = sc};
	struct ring_writer *rw;
	struct ring_file *files;
	struct source *c;
	char *cause = NULL, *warn;
	uint64_t want = 0, sum;
	size_t n, nt, i;
	bool ordered, small = true;

	rw = ring_open(dir, &rot, &keep, &info, T0, &cause);
	for (i = 0; i < 40; i++) {
		struct tick t;

		make_tick(&t, T0 + i * SEC, (unsigned)i, 40);
		want += 40 * (i + 1);
		if (ring_write_tick(rw, &t, T0 + i * SEC / 1000, &cause) < 0)
			printf("# %s\n", cause);
		tick_done(&t);
	}
	ok(ring_close(rw, T0 + SEC, &cause) == 0, "a size ring closes");
	n = list(dir, &files);
	ok(n > 3, "6000-byte files: %zu of them", n);
	for (i = 0; i < n; i++)
		if (files[i].bytes > 6000)
			small = false;
	ok(small, "none passes the size");
	c = open_chain(files, n, &warn);
	sum = read_all(c, &nt, &ordered);
	ok(!warn && nt == 40 && sum == want && ordered, "read as one: %zu ticks, every one once", nt);
	source_close(c);
	free(warn);
	for (i = 0; i < n; i++)
		unlink(files[i].path);
	ring_files_free(files, n);
}

static void test_chains(void)
{
	struct source_info a[6] = {0};
	const struct source_info *in[6];
	size_t chain[6], order[6];

	/* a0 a1 a2 of host x one after another (given out of order), b of host
	 * y at the same time, c of host x overlapping a1, d of x after all. */
	const char *host[6] = {"x", "x", "y", "x", "x", "x"};
	uint64_t from[6] = {20, 0, 0, 10, 15, 40}, to[6] = {29, 9, 50, 19, 16, 49};

	for (int i = 0; i < 6; i++) {
		snprintf(a[i].host, sizeof(a[i].host), "%s", host[i]);
		a[i].nticks = 1;
		a[i].t_first_ns = from[i] * SEC;
		a[i].t_last_ns = to[i] * SEC;
		in[i] = &a[i];
	}
	ok(ring_chains(in, 6, chain, order) == 3, "three chains");
	ok(chain[0] == 0 && chain[1] == 0 && chain[3] == 0 && chain[5] == 0,
	   "one host's files that follow each other are one chain");
	ok(chain[2] == 1, "another host's file is another chain");
	ok(chain[4] == 2, "a file of the host overlapping the chain is another");
	ok(order[0] == 1 && order[1] == 3 && order[2] == 0 && order[3] == 5 && order[4] == 2 &&
	   order[5] == 4, "chains list their files in time order");
}

/* A ring holds its directory: a second one there is refused, and --keep
 * deletes what a killed recorder left unfinished (NAME.snap.tmp). */
static void test_stale_tmp(const char *dir)
{
	struct ring_limit rot = {RING_TIME, 2 * SEC}, keep = {RING_COUNT, 2};
	const struct schema *sc[] = {&msg_schema};
	struct source_info info = {.host = "h1", .nschemas = 1, .schemas = sc};
	struct ring_writer *rw, *second;
	struct ring_file *files;
	char name[RING_NAME_MAX], stale[512], *cause = NULL;
	size_t n, i, ntmp = 0;
	int fd;

	ring_name(T0 - 100 * SEC, name, sizeof(name));
	snprintf(stale, sizeof(stale), "%s/%s.tmp", dir, name);
	fd = open(stale, O_CREAT | O_WRONLY, 0600);
	ok(fd >= 0 && write(fd, "LATOPSNP", 8) == 8, "a killed recorder's %s.tmp", name);
	close(fd);
	rw = ring_open(dir, &rot, &keep, &info, T0 + SEC / 2, &cause);
	ok(rw != NULL, "a ring opens beside it");
	second = ring_open(dir, &rot, &keep, &info, T0 + SEC / 2, &cause);
	ok(!second && cause && strstr(cause, "another latop record is writing a ring") &&
	   strstr(cause, dir), "a second ring in the directory is refused (%s)",
	   cause ? cause : "opened");
	free(cause);
	cause = NULL;
	ok(access(stale, F_OK) == 0, "the unfinished file stays while fewer than --keep are finished");
	for (i = 0; i < 10 && rw; i++) {
		struct tick t;
		uint64_t now = T0 + SEC / 2 + i * SEC / 2;

		make_tick(&t, now, (unsigned)i, 1);
		if (ring_write_tick(rw, &t, now, &cause) < 0)
			printf("# %s\n", cause);
		tick_done(&t);
	}
	ok(rw && ring_close(rw, T0 + 6 * SEC, &cause) == 0, "the ring closes");
	n = list(dir, &files);
	for (i = 0; i < n; i++)
		ntmp += files[i].tmp;
	ok(n == 2 && !ntmp && access(stale, F_OK) != 0,
	   "--keep 2 left the 2 newest finished files, and deleted the unfinished one (%zu files, "
	   "%zu unfinished)", n, ntmp);
	for (i = 0; i < n; i++)
		unlink(files[i].path);
	ring_files_free(files, n);
	rw = ring_open(dir, &rot, &keep, &info, T0, &cause);
	ok(rw != NULL, "closed, the ring leaves the directory to the next one");
	if (rw)
		ring_abandon(rw);
	n = list(dir, &files);
	for (i = 0; i < n; i++)
		unlink(files[i].path);
	ring_files_free(files, n);
}

int main(void)
{
	char dir[] = "/tmp/latop-ring-XXXXXX";

	if (!mkdtemp(dir)) {
		printf("not ok 1 - mkdtemp\n");
		return 1;
	}
	test_parse();
	test_names();
	test_prune();
	test_time_ring(dir);
	test_empty_at_boundary(dir);
	test_size_ring(dir);
	test_stale_tmp(dir);
	test_chains();
	{
		char notes[256];

		snprintf(notes, sizeof(notes), "%s/notes.txt", dir);
		unlink(notes);
	}
	ok(rmdir(dir) == 0, "nothing else was left in the directory");
	tap_done();
}
