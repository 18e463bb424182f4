/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Snapshot files: round trips, killed recorders, damage, versions, replay. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "core/snapshot.h"
#include "core/source.h"
#include "core/wire.h"
#include "tap.h"

static const struct field a_fields[] = {
	{"pid", FT_U64, FF_KEY | FF_PUSH, "", "process id"},
	{"comm", FT_STR, FF_KEY, "", "thread name"},
	{"lat", FT_HIST, FF_PUSH, "ns", "latency of each call"},
	{"time", FT_DUR, FF_SUM, "ns", "total time"},
	{"bytes", FT_SIZE, FF_SUM | FF_HIDDEN, "B", "bytes moved"},
	{"peer", FT_IP, FF_KEY, "", "remote address"},
};
static const struct schema a_schema = {"calls", "calls by process", 6, a_fields};
static const struct field b_fields[] = {
	{"dev", FT_STR, FF_KEY, "", "device"},
	{"count", FT_U64, FF_SUM, "", "I/Os"},
};
static const struct schema b_schema = {"disks", "I/O per device", 2, b_fields};

static char dir[64];

/* Write the path of name in the test directory into buf (256 bytes); return buf. */
static char *path_of(char *buf, const char *name)
{
	snprintf(buf, 256, "%s/%s", dir, name);
	return buf;
}

/* Build tick i: table calls every tick, table disks from tick 2 on. */
static void make_tick(struct tick *t, unsigned i)
{
	uint64_t t_ns = 1700000000000000000ull + i * 1000000000ull;
	struct frame *f = frame_new(&a_schema, t_ns, 1000000000ull);
	struct ipaddr ip = {.a = {[10] = 0xff, [11] = 0xff, 192, 168, 0, 0}, .prefix = 32, .v4 = 1};
	struct hist h;
	unsigned r, k;
	char comm[40];

	tick_init(t, t_ns);
	f->stats = (struct frame_stats){.events = 1000 + i, .lost = i, .dropped = 2 * i,
					.evicted = 3, .overflow = 5 + i, .bpf_ns = 123456789,
					.bpf_runs = 77};
	hist_init(&h);
	for (r = 0; r < 20 + i; r++) {
		union cell *c = frame_add_row(f);

		for (k = 0; k < 50; k++)
			hist_add(&h, (r + 1) * 1000 + k * k * 37 + i);
		c[0].u = 1000 + r;
		if (r % 5) {
			snprintf(comm, sizeof(comm), "worker/%u:%u \xc3\xa9", r, i);
			cell_set_str(&c[1], comm);	/* row 0, 5, ...: NULL string */
		}
		if (r % 7)
			cell_set_hist(&c[2], &h);
		c[3].u = UINT64_MAX - r;
		c[4].u = r * 4096;
		if (r % 3) {
			ip.a[15] = (uint8_t)r;
			cell_set_ip(&c[5], &ip);
		}
	}
	tick_add(t, f);
	if (i >= 2) {
		f = frame_new(&b_schema, t_ns, 1000000000ull);
		cell_set_str(&frame_add_row(f)[0], "nvme0n1");
		frame_row(f, 0)[1].u = i;
		tick_add(t, f);
	}
}

/* Return whether two cells of type ty hold the same thing. */
static int cell_eq(const union cell *a, const union cell *b, enum ftype ty)
{
	switch (ty) {
	case FT_STR:
		return (!a->s && !b->s) || (a->s && b->s && !strcmp(a->s, b->s));
	case FT_HIST:
		return (!a->h && !b->h) || (a->h && b->h && shist_equal(a->h, b->h));
	case FT_IP:
		return (!a->ip && !b->ip) || (a->ip && b->ip && !memcmp(a->ip, b->ip, sizeof(*a->ip)));
	default:
		return a->u == b->u;
	}
}

/* Return whether two schemas describe the same table. */
static int schema_eq(const struct schema *a, const struct schema *b)
{
	size_t i;

	if (strcmp(a->table, b->table) || strcmp(a->help, b->help) || a->nfields != b->nfields)
		return 0;
	for (i = 0; i < a->nfields; i++)
		if (strcmp(a->fields[i].name, b->fields[i].name) || a->fields[i].type != b->fields[i].type ||
		    a->fields[i].flags != b->fields[i].flags || strcmp(a->fields[i].unit, b->fields[i].unit) ||
		    strcmp(a->fields[i].help, b->fields[i].help))
			return 0;
	return 1;
}

/* Return whether two ticks hold the same frames and cells. */
static int tick_eq(const struct tick *a, const struct tick *b)
{
	size_t i, r, k;

	if (a->t_ns != b->t_ns || a->nframes != b->nframes)
		return 0;
	for (i = 0; i < a->nframes; i++) {
		const struct frame *fa = a->frames[i], *fb = b->frames[i];

		if (!schema_eq(fa->schema, fb->schema) || fa->t_ns != fb->t_ns || fa->dt_ns != fb->dt_ns ||
		    memcmp(&fa->stats, &fb->stats, sizeof(fa->stats)) || fa->nrows != fb->nrows)
			return 0;
		for (r = 0; r < fa->nrows; r++)
			for (k = 0; k < fa->schema->nfields; k++)
				if (!cell_eq(&frame_row(fa, r)[k], &frame_row(fb, r)[k],
					     fa->schema->fields[k].type))
					return 0;
	}
	return 1;
}

/* Record n ticks into path; close it unless abandon. */
static void record(const char *path, unsigned n, int abandon)
{
	struct source_info info = {.host = "testhost", .kernel = "6.18.0-test",
				   .boot_offset_ns = 1699990000000000000ull, .status = "syscalls: tp",
				   .interval_ns = 250000000};
	struct snap_writer *w;
	char *cause = NULL;
	unsigned i;

	w = snap_create(path, &info, &cause);
	if (!w) {
		printf("# snap_create: %s\n", cause);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		struct tick t;

		make_tick(&t, i);
		if (snap_write_tick(w, &t, &cause)) {
			printf("# snap_write_tick: %s\n", cause);
			exit(1);
		}
		tick_done(&t);
	}
	if (abandon) {
		snap_abandon(w);
	} else if (snap_close(w, &cause)) {
		printf("# snap_close: %s\n", cause);
		exit(1);
	}
}

/* Return how many of r's ticks read back equal to the ticks recorded. */
static unsigned ticks_matching(struct snap_reader *r)
{
	unsigned i, same = 0;
	char *cause = NULL;

	for (i = 0; i < snap_nticks(r); i++) {
		struct tick want, got;

		make_tick(&want, i);
		if (snap_read_tick(r, i, &got, &cause) == 0) {
			same += tick_eq(&want, &got);
			tick_done(&got);
		} else {
			printf("# tick %u: %s\n", i, cause);
			free(cause);
			cause = NULL;
		}
		tick_done(&want);
	}
	return same;
}

/* Read a whole file. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;

	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	p = malloc(*len);
	if (fread(p, 1, *len, f) != *len)
		*len = 0;
	fclose(f);
	return p;
}

/* Write bytes to a file. */
static void spit(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	fwrite(p, 1, len, f);
	fclose(f);
}

/* Return the little-endian u32 at p. */
static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

struct chunk {
	uint32_t type, len;
	size_t off;
};

/* Store v little-endian at p. */
static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Recompute the CRCs of the chunk at off whose payload has len bytes. */
static void set_crcs(uint8_t *p, size_t off, uint32_t len)
{
	put_le32(p + off + 12, (uint32_t)crc32(0, p + off + 20, len));
	put_le32(p + off + 16, (uint32_t)crc32(0, p + off, 16));
}

/* List the chunks of a well-formed file: 20-byte heads (sync, type, len, 2 CRCs). */
static size_t chunks_of(const uint8_t *p, size_t len, struct chunk *out, size_t max)
{
	size_t off = 20 + le32(p + 12), n = 0;

	while (off + 20 <= len && n < max) {
		out[n] = (struct chunk){le32(p + off + 4), le32(p + off + 8), off};
		off += 20 + out[n].len;
		n++;
	}
	return n;
}

/* Return the index of the k-th chunk (from 0) of type in ch, or n. */
static size_t nth_chunk(const struct chunk *ch, size_t n, uint32_t type, size_t k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ch[i].type == type && k-- == 0)
			return i;
	return n;
}

/* Append a chunk with correct CRCs to a file. */
static void append_chunk(const char *path, uint32_t type, const uint8_t *payload, uint32_t len)
{
	FILE *f = fopen(path, "ab");
	uint32_t hdr[5] = {0x4b48434c, type, len, (uint32_t)crc32(0, payload, len)};

	hdr[4] = (uint32_t)crc32(0, (const uint8_t *)hdr, 16);	/* x86_64 is little-endian */
	fwrite(hdr, 4, 5, f);
	fwrite(payload, 1, len, f);
	fclose(f);
}

/* Return whether s contains the formatted text. */
static int has(const char *s, const char *fmt, ...)
{
	char want[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	return s && strstr(s, want);
}

/* Check a full recording reads back identically, with its schemas and mode. */
static void test_round_trip(void)
{
	char path[256], tmp[256];
	char *cause = NULL, *warning = NULL;
	const struct source_info *info;
	struct snap_reader *r;
	struct stat st;
	mode_t old = umask(0);

	record(path_of(path, "full.snap"), 6, 0);
	umask(old);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
	   "a recording is mode 0600 even with umask 0 (%o)", st.st_mode & 0777);
	ok(stat(path_of(tmp, "full.snap.tmp"), &st) < 0, "close renamed PATH.tmp away");
	r = snap_open(path, &cause, &warning);
	ok(r && !warning, "a closed recording opens without warning");
	if (!r) {
		printf("# %s\n", cause);
		exit(1);
	}
	info = snap_info(r);
	ok(snap_nticks(r) == 6 && info->nticks == 6, "6 ticks recorded, 6 found");
	ok(!strcmp(info->host, "testhost") && !strcmp(info->kernel, "6.18.0-test") &&
	   info->boot_offset_ns == 1699990000000000000ull && !strcmp(info->status, "syscalls: tp"),
	   "host, kernel, boot offset and status come back from the header");
	ok(info->interval_ns == 250000000, "so does the tick interval (%llu ns)",
	   (unsigned long long)info->interval_ns);
	ok(info->t_first_ns == 1700000000000000000ull && info->t_last_ns == 1700000005000000000ull,
	   "the time range is the first and last tick");
	ok(info->nschemas == 2 && schema_eq(info->schemas[0], &a_schema) &&
	   schema_eq(info->schemas[1], &b_schema) && info->schemas[0] != &a_schema,
	   "both schemas are rebuilt (names, types, flags, units, help) and owned by the reader");
	ok(ticks_matching(r) == 6, "every tick reads back equal: numbers, strings, NULLs, hists, addresses");
	{
		struct tick t;
		int rc;

		snap_read_tick(r, 3, &t, &cause);
		ok(t.frames[0]->schema == info->schemas[0] && t.frames[1]->schema == info->schemas[1],
		   "frames read back point at the reader's schemas");
		tick_done(&t);
		rc = snap_read_tick(r, 6, &t, &cause);
		ok(rc == -1 && has(cause, "tick 6 out of range"), "reading past the end is an error: %s",
		   cause);
		free(cause);
		cause = NULL;
	}
	snap_free(r);
}

/* Check a recorder killed mid-run leaves a readable PATH.tmp. */
static void test_killed(void)
{
	char path[256], tmp[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	int status;
	pid_t pid;

	record(path_of(path, "abandoned.snap"), 3, 1);
	r = snap_open(path_of(tmp, "abandoned.snap.tmp"), &cause, &warning);
	ok(r && snap_nticks(r) == 3 && ticks_matching(r) == 3 &&
	   has(warning, "the recording was cut short") && has(warning, "kept 3 of 3 ticks"),
	   "an abandoned recording's PATH.tmp opens with all 3 ticks, and says it was cut short: %s",
	   warning);
	snap_free(r);
	free(warning);
	ok(access(path, F_OK) < 0, "an abandoned recording is not renamed");

	pid = fork();
	if (pid == 0) {
		struct snap_writer *w = snap_create(path_of(path, "killed.snap"), NULL, &cause);
		unsigned i;

		for (i = 0; i < 4; i++) {
			struct tick t;

			make_tick(&t, i);
			snap_write_tick(w, &t, &cause);
			tick_done(&t);
		}
		kill(getpid(), SIGKILL);
	}
	waitpid(pid, &status, 0);
	r = snap_open(path_of(tmp, "killed.snap.tmp"), &cause, &warning);
	ok(WIFSIGNALED(status) && r && snap_nticks(r) == 4 && ticks_matching(r) == 4 &&
	   has(warning, "cut short"),
	   "a SIGKILLed recorder's PATH.tmp holds all 4 ticks it wrote, and says it was cut short");
	snap_free(r);
	free(warning);
}

/* Check truncation keeps the complete ticks before the cut and names the offset. */
static void test_truncation(void)
{
	char path[256], cut[256];
	struct chunk ch[32];
	size_t len, n, i, frames_seen = 0;
	uint8_t *p;
	int all_ok = 1, checked = 0;

	record(path_of(path, "trunc.snap"), 5, 0);
	p = slurp(path, &len);
	n = chunks_of(p, len, ch, 32);
	ok(n == 11 && ch[0].type == 4 && ch[1].type == 1 && ch[2].type == 1 && ch[3].type == 2 &&
	   ch[n - 1].type == 3,
	   "the file is HEADER, SCHEMA twice, FRAMES, ..., INDEX (%zu chunks)", n);
	path_of(cut, "cut.snap");
	for (i = 0; i < n; i++) {
		size_t at[3] = {ch[i].off + 5, ch[i].off + 20 + ch[i].len / 2, ch[i].off + 20 + ch[i].len - 1};
		size_t k;

		for (k = 0; k < 3; k++) {
			char *cause = NULL, *warning = NULL;
			struct snap_reader *r;
			int good;

			spit(cut, p, at[k]);
			r = snap_open(cut, &cause, &warning);
			if (frames_seen == 0) {
				good = !r && has(cause, "%s: truncated chunk", cut) &&
				       has(cause, "at offset %zu", ch[i].off);
			} else {
				good = r && snap_nticks(r) == frames_seen &&
				       has(warning, "%s: truncated chunk", cut) &&
				       has(warning, "at offset %zu", ch[i].off) &&
				       has(warning, "kept %zu of %zu tick", frames_seen, frames_seen) &&
				       ticks_matching(r) == frames_seen;
			}
			if (!good) {
				all_ok = 0;
				printf("# cut at %zu: %s\n", at[k], r ? warning : cause);
			}
			if (i == 5 && k == 1)
				printf("# e.g. %s\n", warning);
			checked++;
			snap_free(r);
			free(cause);
			free(warning);
		}
		if (ch[i].type == 2)
			frames_seen++;
	}
	ok(all_ok, "%d cuts inside chunks keep the ticks before and name the chunk's offset", checked);
	{
		char *cause = NULL, *warning = NULL;
		struct snap_reader *r;

		spit(cut, p, ch[n - 1].off);
		r = snap_open(cut, &cause, &warning);
		ok(r && snap_nticks(r) == 5 && has(warning, "%s: the recording was cut short", cut) &&
		   has(warning, "kept 5 of 5 ticks"), "a file without its INDEX (cut at a chunk "
		   "boundary) opens with every tick, and says it was cut short: %s", warning);
		snap_free(r);
		free(warning);
		spit(cut, p, 13);
		r = snap_open(cut, &cause, &warning);
		ok(!r && has(cause, "truncated header"), "a cut inside the header is an error: %s", cause);
		free(cause);
	}
	free(p);
}

/* Check a flipped byte inside a FRAMES chunk costs that tick only, and is said. */
static void test_flip(void)
{
	char path[256], bad[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct chunk ch[32];
	size_t len, n, f0, f2;
	uint8_t *p;

	record(path_of(path, "flip.snap"), 5, 0);
	p = slurp(path, &len);
	n = chunks_of(p, len, ch, 32);
	f0 = nth_chunk(ch, n, 2, 0);
	f2 = nth_chunk(ch, n, 2, 2);
	p[ch[f2].off + 20 + ch[f2].len / 2] ^= 0x10;
	spit(path_of(bad, "flip-bad.snap"), p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 4 && has(warning, "%s: bad CRC in FRAMES chunk at offset %zu", bad,
					   ch[f2].off) && has(warning, "kept 4 of 5 ticks"),
	   "a flipped byte in tick 3 costs that tick: %s", warning);
	snap_free(r);
	free(warning);
	p[ch[f2].off + 20 + ch[f2].len / 2] ^= 0x10;
	p[ch[f0].off + 20 + 3] ^= 0x01;
	spit(bad, p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 4 && has(warning, "bad CRC in FRAMES chunk at offset %zu", ch[f0].off),
	   "a flipped byte in the first tick costs that tick only: %s", warning);
	snap_free(r);
	free(warning);
	p[ch[f0].off + 20 + 3] ^= 0x01;
	p[ch[f0].off + 6] ^= 0x40;	/* its type */
	spit(bad, p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 4 && has(warning, "damaged chunk head at offset %zu", ch[f0].off),
	   "a changed chunk type is caught by the head's CRC: %s", warning);
	snap_free(r);
	free(warning);
	free(p);
}

/* Read every tick of r into out (as many as fit); return how many read. */
static size_t read_all(struct snap_reader *r, struct tick *out, size_t max)
{
	size_t i, n = 0;
	char *cause = NULL;

	for (i = 0; i < snap_nticks(r) && n < max; i++) {
		if (snap_read_tick(r, i, &out[n], &cause) == 0) {
			n++;
		} else {
			free(cause);
			cause = NULL;
		}
	}
	return n;
}

/*
 * Flip one bit of each byte of the recording at path (bit k % 8 of byte k)
 * and check every flip costs at most one tick, is said, and
 * leaves every other tick exactly as recorded.  Return the failures.
 */
static unsigned sweep(const char *path, const char *scratch, unsigned *flips)
{
	struct tick want[16], got[16];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *orig = snap_open(path, &cause, &warning), *r;
	size_t len, nwant, k, i, j, n;
	uint8_t *p = slurp(path, &len), flipped;
	unsigned bad = 0;
	int fd, good;

	nwant = orig ? read_all(orig, want, 16) : 0;
	spit(scratch, p, len);
	fd = open(scratch, O_WRONLY);
	for (k = 0; k < len; k++) {
		/* The scratch copy differs from the recording in byte k only. */
		flipped = p[k] ^ (uint8_t)(1u << (k % 8));
		if (pwrite(fd, &flipped, 1, (off_t)k) != 1 ||
		    (k && pwrite(fd, &p[k - 1], 1, (off_t)k - 1) != 1))
			break;
		(*flips)++;
		r = snap_open(scratch, &cause, &warning);
		n = r ? read_all(r, got, 16) : 0;
		good = r && warning && n + 1 >= nwant && n == snap_nticks(r);
		/* Every tick read is the one recorded at its time, to the last cell. */
		for (i = 0, j = 0; good && i < n; i++) {
			while (j < nwant && want[j].t_ns != got[i].t_ns)
				j++;
			good = j < nwant && tick_eq(&want[j], &got[i]);
		}
		if (!good && bad++ < 5)
			printf("# flip at byte %zu: %zu of %zu ticks; %s\n", k, n, nwant,
			       r ? (warning ? warning : "no warning") : cause);
		for (i = 0; i < n; i++)
			tick_done(&got[i]);
		snap_free(r);
		free(cause);
		free(warning);
		cause = warning = NULL;
	}
	close(fd);
	for (i = 0; i < nwant; i++)
		tick_done(&want[i]);
	snap_free(orig);
	free(p);
	return nwant && *flips == len ? bad : bad + 1;
}

/* Check a flip anywhere in a recording costs at most the chunk it hits. */
static void test_flip_sweep(void)
{
	char path[256], scratch[256], real[512];
	const char *top = getenv("LATOP_TOP");
	unsigned flips = 0, bad;

	record(path_of(path, "sweep.snap"), 3, 0);
	bad = sweep(path, path_of(scratch, "sweep-flipped.snap"), &flips);
	ok(bad == 0, "%u flips, one in every byte of a 3-tick recording: each is said, costs at most "
	   "one tick, and the rest read back exact (%u failed)", flips, bad);
	snprintf(real, sizeof(real), "%s/tests/data/sweep/syscalls.snap", top ? top : ".");
	flips = 0;
	bad = sweep(real, scratch, &flips);
	ok(bad == 0, "%u flips, one in every byte of a real recording (tests/data/sweep): each is said, "
	   "costs at most one tick, and the rest read back exact (%u failed)", flips, bad);
}

/* Check a tick written twice is kept once, and ticks moved are read in order. */
static void test_order(void)
{
	char path[256], bad[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct chunk ch[32];
	size_t len, n, f0, f4, i;
	uint8_t *p, *q;

	record(path_of(path, "order.snap"), 5, 0);
	p = slurp(path, &len);
	n = chunks_of(p, len, ch, 32);
	f0 = nth_chunk(ch, n, 2, 1);
	spit(path_of(bad, "order-twice.snap"), p, len);
	append_chunk(bad, 2, p + ch[f0].off + 20, ch[f0].len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 5 && ticks_matching(r) == 5 &&
	   has(warning, "repeats tick 2 (offset %zu); skipped", ch[f0].off),
	   "a FRAMES chunk appended twice is counted once, and said: %s", warning);
	snap_free(r);
	free(warning);

	/* Swap the first and the last tick (the last is larger: pad the first's place). */
	f0 = nth_chunk(ch, n, 2, 0);
	f4 = nth_chunk(ch, n, 2, 4);
	q = malloc(len);
	memcpy(q, p, ch[f0].off);
	i = ch[f0].off;
	memcpy(q + i, p + ch[f4].off, 20 + ch[f4].len);
	i += 20 + ch[f4].len;
	memcpy(q + i, p + ch[f0].off + 20 + ch[f0].len, ch[f4].off - (ch[f0].off + 20 + ch[f0].len));
	i += ch[f4].off - (ch[f0].off + 20 + ch[f0].len);
	memcpy(q + i, p + ch[f0].off, 20 + ch[f0].len);
	i += 20 + ch[f0].len;
	memcpy(q + i, p + ch[f4].off + 20 + ch[f4].len, len - (ch[f4].off + 20 + ch[f4].len));
	spit(bad, q, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 5 && ticks_matching(r) == 5 &&
	   has(warning, "2 ticks were out of place in the file; read in the order written"),
	   "the first and last ticks swapped are read in the order written, and said: %s", warning);
	snap_free(r);
	free(warning);
	free(q);
	free(p);
}

/* Check files that are not snapshots, or from a future latop, are refused clearly. */
static void test_versions(void)
{
	char path[256], bad[256], want[512];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct chunk ch[16];
	size_t len;
	uint8_t *p;

	record(path_of(path, "ver.snap"), 2, 0);
	p = slurp(path, &len);
	chunks_of(p, len, ch, 16);
	p[8] = 3;
	spit(path_of(bad, "v3.snap"), p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 2 && has(warning, "unsupported snapshot version 3.%d", SNAP_MINOR) &&
	   has(warning, "took its copy at offset %zu", ch[0].off),
	   "a version byte changed by damage is mended from the header's copy: %s", warning);
	snap_free(r);
	free(warning);
	/* A real version 3 file says 3 in the copy too. */
	p[ch[0].off + 20] = 3;
	set_crcs(p, ch[0].off, ch[0].len);
	spit(bad, p, len);
	r = snap_open(bad, &cause, &warning);
	ok(!r, "major version 3 is refused");
	snprintf(want, sizeof(want), "%s: unsupported snapshot version 3.%d (this latop reads 1.x "
		 "and 2.x)", bad, SNAP_MINOR);
	ok(cause && !strcmp(cause, want), "the message says which versions: %s", cause);
	free(cause);
	p[8] = 2;
	p[ch[0].off + 20] = 2;
	p[10] = 7;
	p[ch[0].off + 22] = 7;
	set_crcs(p, ch[0].off, ch[0].len);
	spit(bad, p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 2 && !warning, "a newer minor version (2.7) still opens");
	snap_free(r);
	memcpy(p + 2, "XX", 2);
	spit(bad, p, len);
	r = snap_open(bad, &cause, &warning);
	ok(r && snap_nticks(r) == 2 && has(warning, "bad magic"),
	   "a damaged magic is mended from the header's copy: %s", warning);
	snap_free(r);
	free(warning);
	spit(path_of(bad, "magic.snap"), (const uint8_t *)"#!/bin/sh\necho hi\n", 18);
	snprintf(want, sizeof(want), "%s: not a latop snapshot (bad magic at offset 0)", bad);
	r = snap_open(bad, &cause, &warning);
	ok(!r && !strcmp(cause, want), "a shell script: %s", cause);
	free(cause);
	spit(bad, p, 0);
	r = snap_open(bad, &cause, &warning);
	ok(!r && has(cause, "bad magic"), "an empty file is not a snapshot");
	free(cause);
	r = snap_open(path_of(bad, "missing.snap"), &cause, &warning);
	ok(!r && has(cause, "%s: cannot open", bad), "a missing file names the path: %s", cause);
	free(cause);
	free(p);
}

/*
 * Open path and read its first tick in a child process; return what that
 * cost in peak resident memory (MiB), with the error in cause (malloc'd).
 */
static long open_measured(const char *path, char **cause)
{
	char buf[1024] = "";
	int fds[2];
	ssize_t got;
	long mib = -1;

	if (pipe(fds))
		return -1;
	if (fork() == 0) {
		struct rusage ru;
		long before;
		char *why = NULL, *warning = NULL;
		struct snap_reader *r;
		struct tick t;

		getrusage(RUSAGE_SELF, &ru);
		before = ru.ru_maxrss;
		r = snap_open(path, &why, &warning);
		if (r && snap_read_tick(r, 0, &t, &why) == 0)
			why = strdup("read");
		getrusage(RUSAGE_SELF, &ru);
		dprintf(fds[1], "%ld %s", (ru.ru_maxrss - before) / 1024, why ? why : "");
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	wait(NULL);
	buf[got > 0 ? got : 0] = '\0';
	sscanf(buf, "%ld", &mib);
	*cause = strdup(strchr(buf, ' ') ? strchr(buf, ' ') + 1 : buf);
	return mib;
}

static const struct field bomb_fields[] = {
	{"lat", FT_HIST, 0, "ns", "latency"},
};
static const struct schema bomb_schema = {"bomb", "one histogram a row", 1, bomb_fields};

/* Start path as a recording (HEADER copy only) whose table 0 is bomb_schema. */
static void bomb_file(const char *path)
{
	struct wbuf b;
	char tmp[300];

	record(path, 0, 1);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rename(tmp, path);
	wbuf_init(&b);
	wbuf_varint(&b, 0);
	wbuf_str(&b, "bomb", 64);
	wbuf_str(&b, "", 64);
	wbuf_varint(&b, 1);
	wbuf_str(&b, "lat", 64);
	wbuf_u8(&b, FT_HIST);
	wbuf_varint(&b, 0);
	wbuf_str(&b, "ns", 64);
	wbuf_str(&b, "", 64);
	append_chunk(path, 1, b.p, (uint32_t)b.len);
	wbuf_done(&b);
}

/*
 * Check a few KB cannot make a reader allocate gigabytes: a tick of a
 * million empty histograms (7 MB that zstd packs into a few KB, 4.5 GB as
 * histograms) is refused before its rows are allocated, and a chunk that
 * claims more than the format allows is never read into memory.
 */
static void test_bombs(void)
{
	char path[256];
	char *cause = NULL;
	struct wbuf raw, pay;
	struct hist h;
	uint8_t enc[64], *z;
	size_t n, zn, i;
	long mib;
	int fd;

	bomb_file(path_of(path, "bomb.snap"));
	hist_init(&h);
	n = hist_encode(&h, enc, sizeof(enc));
	wbuf_init(&raw);
	wbuf_varint(&raw, 1);
	wbuf_varint(&raw, 0);
	for (i = 0; i < 9; i++)
		wbuf_varint(&raw, 0);	/* t_ns, dt_ns, 7 stats */
	wbuf_varint(&raw, 1000000);
	for (i = 0; i < 1000000; i++) {
		wbuf_u8(&raw, 1);
		wbuf_bytes(&raw, enc, n);
	}
	z = malloc(ZSTD_compressBound(raw.len));
	zn = ZSTD_compress(z, ZSTD_compressBound(raw.len), raw.p, raw.len, 19);
	wbuf_init(&pay);
	wbuf_u64(&pay, 1700000000000000000ull);
	wbuf_u64(&pay, 0);
	wbuf_u32(&pay, (uint32_t)raw.len);
	wbuf_u8(&pay, 1);
	wbuf_bytes(&pay, z, zn);
	append_chunk(path, 2, pay.p, (uint32_t)pay.len);
	mib = open_measured(path, &cause);
	ok(mib >= 0 && mib < 128 && has(cause, "decoding needs more than"),
	   "a %zu-byte tick that decodes to 4.5 GB is refused, peak memory +%ld MiB: %s", zn, mib,
	   cause);
	free(cause);
	wbuf_done(&raw);
	wbuf_done(&pay);
	free(z);

	/* A chunk head claiming 300 MB in a sparse 400 MB file; one claiming 200 MB. */
	for (i = 0; i < 2; i++) {
		uint32_t hdr[5] = {0x4b48434c, 2, i ? 200u << 20 : 300u << 20, 0};
		struct stat st;

		bomb_file(path);
		stat(path, &st);
		hdr[4] = (uint32_t)crc32(0, (const uint8_t *)hdr, 16);
		fd = open(path, O_WRONLY);
		if (pwrite(fd, hdr, sizeof(hdr), st.st_size) != sizeof(hdr) ||
		    ftruncate(fd, 400 << 20))
			printf("# could not make the sparse file\n");
		close(fd);
		mib = open_measured(path, &cause);
		ok(mib >= 0 && mib < 32 &&
		   has(cause, i ? "bad CRC in FRAMES chunk at offset %lld" :
		       "FRAMES chunk at offset %lld has 314572800 bytes (the limit is",
		       (long long)st.st_size), "a sparse file whose chunk claims %u MB is refused, peak "
		   "memory +%ld MiB: %s", i ? 200 : 300, mib, cause);
		free(cause);
	}
}

/* Check a FIFO or a directory is refused at once, not read (or waited on). */
static void test_not_files(void)
{
	char path[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;

	mkfifo(path_of(path, "fifo.snap"), 0600);
	alarm(10);
	r = snap_open(path, &cause, &warning);
	alarm(0);
	ok(!r && has(cause, "%s: is a FIFO, not a regular file", path), "a FIFO: %s", cause);
	free(cause);
	r = snap_open(dir, &cause, &warning);
	ok(!r && has(cause, "is a directory, not a regular file"), "a directory: %s", cause);
	free(cause);
	r = snap_open("/dev/zero", &cause, &warning);
	ok(!r && has(cause, "is a character device, not a regular file"), "/dev/zero: %s", cause);
	free(cause);
}

/*
 * Check a tick that compresses too well to tell from a memory bomb is
 * stored, not compressed, and reads back whole.
 */
static void test_stored(void)
{
	char path[256];
	char *cause = NULL, *warning = NULL;
	struct snap_writer *w = snap_create(path_of(path, "stored.snap"), NULL, &cause);
	struct snap_reader *r;
	struct chunk ch[8];
	struct tick t, got;
	struct frame *f;
	struct hist h;
	size_t len, n, k;
	uint8_t *p;
	int rc;

	tick_init(&t, 1700000000000000000ull);
	f = frame_new(&bomb_schema, t.t_ns, 1000000000ull);
	hist_init(&h);
	hist_add(&h, 1000);
	for (k = 0; k < 20000; k++)
		cell_set_hist(&frame_add_row(f)[0], &h);
	tick_add(&t, f);
	rc = w ? snap_write_tick(w, &t, &cause) : -1;
	if (!rc)
		rc = snap_close(w, &cause);
	p = slurp(path, &len);
	n = chunks_of(p, len, ch, 8);
	k = nth_chunk(ch, n, 2, 0);
	ok(rc == 0 && k < n && p[ch[k].off + 20 + 20] == 0,
	   "20000 equal histograms (95 MB in memory) are stored uncompressed (%u bytes)",
	   k < n ? ch[k].len : 0);
	r = snap_open(path, &cause, &warning);
	rc = r ? snap_read_tick(r, 0, &got, &cause) : -1;
	ok(rc == 0 && got.nframes == 1 && got.frames[0]->nrows == 20000 &&
	   got.frames[0]->cells[19999].h->count == 1, "... and read back whole");
	if (!rc)
		tick_done(&got);
	tick_done(&t);
	snap_free(r);
	free(p);
}

/* Check sizes read from a file are limited, with the offset named. */
static void test_limits(void)
{
	char path[256], tmp[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct stat st;
	/* table id 0, table name of 100000 bytes (varint a0 8d 06) */
	static const uint8_t huge_name[] = {0, 0xa0, 0x8d, 0x06, 'x'};
	/* table id 0, "t", "", 300 fields */
	static const uint8_t many_fields[] = {0, 1, 't', 0, 0xac, 0x02};

	record(path_of(path, "empty.snap"), 0, 0);
	r = snap_open(path, &cause, &warning);
	ok(r && snap_nticks(r) == 0 && !warning, "a recording with no ticks opens empty");
	snap_free(r);

	record(path_of(path, "limits.snap"), 0, 1);
	path_of(tmp, "limits.snap.tmp");
	stat(tmp, &st);
	append_chunk(tmp, 1, huge_name, sizeof(huge_name));
	r = snap_open(tmp, &cause, &warning);
	ok(!r && has(cause, "corrupt SCHEMA chunk at offset %lld", (long long)st.st_size) &&
	   has(cause, "exceeds the limit of 4096"), "a 100000-byte table name is refused: %s", cause);
	free(cause);

	unlink(tmp);	/* the writer leaves an existing PATH.tmp alone */
	record(path, 0, 1);
	append_chunk(tmp, 1, many_fields, sizeof(many_fields));
	r = snap_open(tmp, &cause, &warning);
	ok(!r && has(cause, "field count 300 exceeds the limit of 256"), "300 fields are refused: %s",
	   cause);
	free(cause);
}

/* Append a FRAMES chunk (tick time, sequence number, declared length, zstd bytes). */
static void append_frames(const char *path, uint64_t t_ns, uint64_t seq, uint32_t raw_len,
			  const uint8_t *z, size_t zlen)
{
	uint8_t *payload = malloc(21 + zlen);

	memcpy(payload, &t_ns, 8);
	memcpy(payload + 8, &seq, 8);
	memcpy(payload + 16, &raw_len, 4);
	payload[20] = 1;	/* zstd */
	memcpy(payload + 21, z, zlen);
	append_chunk(path, 2, payload, (uint32_t)(21 + zlen));
	free(payload);
}

/*
 * Check FRAMES chunks whose CRC is right but whose content does not decode:
 * open keeps them (it only reads headers), reading one fails naming the tick
 * and its offset, and the ticks around them read fine.
 */
static void test_undecodable(void)
{
	char path[256], bad[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct source *s;
	struct chunk ch[32];
	struct tick t, want;
	struct stat st;
	size_t len, x1, x2, i;
	uint8_t *p, z[128];
	int rc, good;
	/* A zstd frame of 10 bytes whose one compressed block claims 31 literals in 4 bytes. */
	static const uint8_t bad_block[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 10,
					    (uint8_t)(1 | 2 << 1 | 4 << 3), 0, 0, 0xf8, 1, 2, 3};
	/* One frame of table id 5, which the file has no SCHEMA chunk for. */
	static const uint8_t later_table[] = {1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	size_t zn = ZSTD_compress(z, sizeof(z), later_table, sizeof(later_table), 3);

	/* chunks of 3 ticks: HEADER, SCHEMA calls twice, FRAMES 0, FRAMES 1,
	 * SCHEMA disks twice, FRAMES 2 */
	record(path_of(path, "undec.snap"), 3, 0);
	p = slurp(path, &len);
	chunks_of(p, len, ch, 32);
	path_of(bad, "undec-bad.snap");
	spit(bad, p, ch[5].off);
	stat(bad, &st);
	x1 = (size_t)st.st_size;
	append_frames(bad, 1700000001500000000ull, 2, 10, bad_block, sizeof(bad_block));
	stat(bad, &st);
	x2 = (size_t)st.st_size;
	append_frames(bad, 1700000001700000000ull, 3, sizeof(later_table), z, zn);
	append_chunk(bad, 1, p + ch[5].off + 20, ch[5].len);
	/* The last tick, now the fifth: its sequence number 4. */
	p[ch[7].off + 20 + 8] = 4;
	append_chunk(bad, 2, p + ch[7].off + 20, ch[7].len);
	append_chunk(bad, 3, (const uint8_t *)"\x05", 1);

	r = snap_open(bad, &cause, &warning);
	ok(r && !warning && snap_nticks(r) == 5 && snap_info(r)->t_last_ns == 1700000002000000000ull,
	   "undecodable FRAMES chunks with right CRCs open: 5 ticks, no warning (%s)",
	   r ? (warning ? warning : "opened") : cause);
	if (!r)
		exit(1);
	good = 1;
	for (i = 0; i < 2; i++) {
		make_tick(&want, (unsigned)i);
		rc = snap_read_tick(r, i, &t, &cause);
		good &= rc == 0 && tick_eq(&t, &want);
		if (rc == 0)
			tick_done(&t);
		tick_done(&want);
	}
	ok(good, "the ticks before them read back equal");
	rc = snap_read_tick(r, 2, &t, &cause);
	ok(rc == -1 && has(cause, "%s: tick 3 of 5 at offset %zu: bad zstd frame", bad, x1),
	   "a zstd frame that does not decompress fails on read: %s", cause);
	free(cause);
	rc = snap_read_tick(r, 3, &t, &cause);
	ok(rc == -1 && has(cause, "%s: tick 4 of 5 at offset %zu: corrupt FRAMES payload: ", bad, x2) &&
	   has(cause, "table id 5 has no SCHEMA chunk"),
	   "a table the file has no SCHEMA chunk for fails on read: %s", cause);
	free(cause);
	make_tick(&want, 2);
	rc = snap_read_tick(r, 4, &t, &cause);
	ok(rc == 0 && tick_eq(&t, &want), "the tick after them reads back equal, with the later table");
	if (rc == 0)
		tick_done(&t);
	tick_done(&want);
	snap_free(r);

	s = replay_open(bad, &cause);
	for (i = 0; s && (rc = source_read(s, &t, 0, &cause)) == 1; i++)
		tick_done(&t);
	ok(s && rc == -1 && i == 2 && has(cause, "tick 3 of 5 at offset %zu", x1),
	   "replay reads 2 ticks, then fails with the cause: %s", cause);
	free(cause);
	rc = s ? source_read(s, &t, 0, &cause) : 0;
	ok(rc == -1 && has(cause, "tick 4 of 5 at offset %zu", x2),
	   "reading on skips that tick and fails on the next bad one: %s", cause);
	free(cause);
	make_tick(&want, 2);
	rc = s ? source_read(s, &t, 0, &cause) : 0;
	ok(rc == 1 && tick_eq(&t, &want) && s->ops->tell(s) == 5,
	   "... then returns the good tick after them");
	if (rc == 1)
		tick_done(&t);
	tick_done(&want);
	ok(s && source_read(s, &t, 0, &cause) == 2, "... and then the end");
	source_close(s);

	/* A declared length the zstd frame header contradicts is caught before decompressing. */
	spit(bad, p, ch[4].off);
	append_frames(bad, 1700000001500000000ull, 1, 11, bad_block, sizeof(bad_block));
	r = snap_open(bad, &cause, &warning);
	rc = r ? snap_read_tick(r, 1, &t, &cause) : 0;
	ok(r && snap_nticks(r) == 2 && rc == -1 &&
	   has(cause, "%s: tick 2 of 2 at offset %zu: bad zstd frame (11 bytes declared, frame says 10",
	       bad, ch[4].off), "a FRAMES chunk whose zstd header disagrees fails on read: %s", cause);
	snap_free(r);
	free(cause);
	free(warning);
	free(p);
}

/* Check the replay source gives the same ticks, in order, and seeks. */
static void test_replay(void)
{
	char path[256], cut[256];
	char *cause = NULL;
	struct source *s;
	struct tick t, want;
	unsigned n = 0, same = 0;
	size_t len;
	uint8_t *p;
	int rc;

	record(path_of(path, "replay.snap"), 4, 0);
	s = replay_open(path, &cause);
	ok(s && !strcmp(s->ops->name, "replay") && s->ops->info(s)->nticks == 4 &&
	   s->ops->set_filter == NULL && s->ops->set_interval == NULL,
	   "replay opens as a source of 4 ticks without live-only operations");
	while ((rc = source_read(s, &t, 0, &cause)) == 1) {
		make_tick(&want, n++);
		same += tick_eq(&t, &want);
		tick_done(&want);
		tick_done(&t);
	}
	ok(rc == 2 && n == 4 && same == 4, "read returns the 4 recorded ticks in order, then 2 (end)");
	ok(s->ops->seek(s, 2, &cause) == 0 && s->ops->tell(s) == 2, "seek to tick 2, tell says 2");
	make_tick(&want, 2);
	rc = source_read(s, &t, 0, &cause);
	ok(rc == 1 && tick_eq(&t, &want) && s->ops->tell(s) == 3, "after the seek, read returns tick 2");
	tick_done(&t);
	tick_done(&want);
	rc = s->ops->seek(s, 9, &cause);
	ok(rc == -1 && has(cause, "out of range"), "seeking past the end fails: %s", cause);
	free(cause);
	source_close(s);

	p = slurp(path, &len);
	spit(path_of(cut, "replay-cut.snap"), p, len - 30);
	s = replay_open(cut, &cause);
	ok(s && s->ops->info(s)->nticks == 4 && has(s->ops->info(s)->status, "truncated chunk"),
	   "a damaged recording replays, its status says: %s", s ? s->ops->info(s)->status : cause);
	source_close(s);
	free(p);
	s = replay_open(path_of(cut, "none.snap"), &cause);
	ok(!s && has(cause, "cannot open"), "replay of a missing file fails with a cause");
	free(cause);
}

/* Return what snap_check_target says of path: 0, or -1 with the cause in why (freed by the caller). */
static int target(const char *path, char **why)
{
	*why = NULL;
	return snap_check_target(path, why);
}

/* Check the writer refuses every target it could not replace by a regular file. */
static void test_targets(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[256], other[256];
	char *why = NULL;
	struct stat st;
	int fd;

	ok(target(path_of(path, "new.snap"), &why) == 0, "a path with nothing there can take a recording");
	spit(path_of(path, "old.snap"), (const uint8_t *)"x", 1);
	ok(target(path, &why) == 0, "so can a regular file");
	ok(target("", &why) < 0 && has(why, "the output path is empty"), "an empty path: %s", why);
	free(why);
	ok(target(dir, &why) < 0 && has(why, "%s: is a directory", dir), "a directory: %s", why);
	free(why);
	path_of(path, "sub/");
	ok(target(path, &why) < 0 && has(why, "names a directory"), "a path ending in /: %s", why);
	free(why);
	ok(target("/dev/null", &why) < 0 && has(why, "/dev/null: is a character device"),
	   "a device: %s", why);
	free(why);
	mkfifo(path_of(path, "fifo"), 0600);
	ok(target(path, &why) < 0 && has(why, "%s: is a FIFO", path), "a FIFO: %s", why);
	free(why);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	ok(target(sa.sun_path, &why) < 0 && has(why, "is a socket"), "a socket: %s", why);
	free(why);
	close(fd);
	symlink(path_of(other, "old.snap"), path_of(path, "link.snap"));
	ok(target(path, &why) < 0 && has(why, "is a symbolic link") &&
	   has(why, "links are not followed"), "a link, even to a regular file: %s", why);
	free(why);
	symlink("/dev/null", path_of(path, "devlink.snap"));
	ok(target(path, &why) < 0 && has(why, "is a symbolic link"), "a link to a device: %s", why);
	free(why);
	ok(target(path_of(path, "nodir/x.snap"), &why) < 0 &&
	   has(why, "cannot write in directory %s/nodir: No such file or directory", dir),
	   "a directory that does not exist: %s", why);
	free(why);
	ok(!snap_create(path_of(path, "fifo"), NULL, &why) && has(why, "is a FIFO") &&
	   lstat(path, &st) == 0 && S_ISFIFO(st.st_mode) &&
	   access(path_of(other, "fifo.tmp"), F_OK) < 0,
	   "snap_create refuses a FIFO too, makes no file and leaves the FIFO: %s", why);
	free(why);
}

/* Check a link or a file already at PATH.tmp is neither followed nor truncated. */
static void test_planted_tmp(void)
{
	static const char precious[] = "precious bytes\n";
	char path[256], victim[256], tmp[256], stale[256];
	char *cause = NULL, *warning = NULL;
	struct snap_writer *w;
	struct snap_reader *r;
	struct stat st;
	const char *used;
	size_t len;
	uint8_t *p;
	unsigned i;

	spit(path_of(victim, "victim"), (const uint8_t *)precious, sizeof(precious) - 1);
	chmod(victim, 0644);
	symlink(victim, path_of(tmp, "planted.snap.tmp"));
	w = snap_create(path_of(path, "planted.snap"), NULL, &cause);
	used = w ? snap_tmp_path(w) : "";
	ok(w && strlen(used) == strlen(path) + 11 && !strncmp(used, path, strlen(path)) &&
	   used[strlen(path)] == '.' && !strcmp(used + strlen(path) + 7, ".tmp"),
	   "with a link at PATH.tmp the writer picks PATH.XXXXXX.tmp: %s", w ? used : cause);
	for (i = 0; w && i < 2; i++) {
		struct tick t;

		make_tick(&t, i);
		snap_write_tick(w, &t, &cause);
		tick_done(&t);
	}
	ok(w && snap_ticks_written(w) == 2, "it counts the ticks it wrote whole");
	ok(w && snap_close(w, &cause) == 0, "and closes onto PATH");
	p = slurp(victim, &len);
	ok(len == sizeof(precious) - 1 && !memcmp(p, precious, len) && stat(victim, &st) == 0 &&
	   (st.st_mode & 0777) == 0644, "the link's target keeps its bytes and its mode 0644 (%o)",
	   st.st_mode & 0777);
	free(p);
	ok(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode), "the planted link is left where it was");
	r = snap_open(path, &cause, &warning);
	ok(r && snap_nticks(r) == 2 && ticks_matching(r) == 2, "PATH holds the 2 ticks");
	snap_free(r);

	record(path_of(stale, "stale.snap"), 3, 1);
	w = snap_create(stale, NULL, &cause);
	ok(w && strcmp(snap_tmp_path(w), path_of(tmp, "stale.snap.tmp")),
	   "an earlier recording's PATH.tmp makes the next one pick another name");
	snap_abandon(w);
	r = snap_open(tmp, &cause, &warning);
	ok(r && snap_nticks(r) == 3 && ticks_matching(r) == 3 && has(warning, "kept 3 of 3 ticks") &&
	   !has(warning, "truncated"), "and keeps its 3 ticks: it is not truncated (%s)", warning);
	snap_free(r);
	free(warning);
}

/* Check close renames only its own file, and only onto nothing or a regular file. */
static void test_close_checks(void)
{
	char path[256], tmp[256], moved[256];
	char *cause = NULL, *warning = NULL;
	struct snap_writer *w;
	struct snap_reader *r;
	struct stat st;
	struct tick t;

	w = snap_create(path_of(path, "became-fifo.snap"), NULL, &cause);
	make_tick(&t, 0);
	snap_write_tick(w, &t, &cause);
	tick_done(&t);
	snprintf(tmp, sizeof(tmp), "%s", snap_tmp_path(w));
	mkfifo(path, 0600);
	ok(snap_close(w, &cause) < 0 && has(cause, "%s: is a FIFO now", path) &&
	   lstat(path, &st) == 0 && S_ISFIFO(st.st_mode),
	   "a FIFO made at PATH while recording is not replaced: %s", cause);
	free(cause);
	r = snap_open(tmp, &cause, &warning);
	ok(r && snap_nticks(r) == 1 && ticks_matching(r) == 1, "the recording stays in its .tmp");
	snap_free(r);

	w = snap_create(path_of(path, "swapped.snap"), NULL, &cause);
	snprintf(tmp, sizeof(tmp), "%s", snap_tmp_path(w));
	rename(tmp, path_of(moved, "swapped.moved"));
	spit(tmp, (const uint8_t *)"other", 5);
	ok(snap_close(w, &cause) < 0 && has(cause, "was removed or replaced while recording") &&
	   access(path, F_OK) < 0, "a .tmp replaced while recording is not renamed: %s", cause);
	free(cause);
}

/* Check a failed write keeps every whole tick, cut back to the last complete chunk. */
static void test_write_failure(void)
{
	char path[256], tmp[256];
	char *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	struct stat st;
	int status, fds[2];
	pid_t pid;

	if (pipe(fds) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {30000, 30000};
		struct snap_writer *w;
		unsigned i, n = 0;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &lim);
		w = snap_create(path_of(path, "full.snap"), NULL, &cause);
		for (i = 0; w && i < 200; i++) {
			struct tick t;
			int rc;

			make_tick(&t, i);
			rc = snap_write_tick(w, &t, &cause);
			tick_done(&t);
			if (rc < 0)
				break;
		}
		if (w && has(cause, "full.snap.tmp: write failed at offset"))
			n = (unsigned)snap_ticks_written(w);
		if (write(fds[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	{
		unsigned n = 0;

		if (read(fds[0], &n, sizeof(n)) != sizeof(n))
			n = 0;
		close(fds[0]);
		waitpid(pid, &status, 0);
		ok(n > 0 && n < 200, "a write over the file size limit fails, naming the offset, "
		   "after %u whole ticks", n);
		r = snap_open(path_of(tmp, "full.snap.tmp"), &cause, &warning);
		ok(r && snap_nticks(r) == n && ticks_matching(r) == n &&
		   has(warning, "the recording was cut short") && !has(warning, "truncated"),
		   "the file holds those %u ticks and nothing torn after them (%s)", n,
		   warning ? warning : "no warning");
		ok(stat(tmp, &st) == 0 && st.st_size <= 30000, "it is %lld bytes, within the limit",
		   (long long)st.st_size);
		snap_free(r);
		free(warning);
	}
}

/* Check the header's start time reads back, and a replay has no partial tick to flush. */
static void test_start_time(void)
{
	char path[256];
	char *cause = NULL;
	struct timespec a, b;
	struct source *s;
	struct tick t;
	uint64_t start, lo, hi;

	clock_gettime(CLOCK_REALTIME, &a);
	record(path_of(path, "start.snap"), 1, 0);
	clock_gettime(CLOCK_REALTIME, &b);
	lo = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
	hi = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
	s = replay_open(path, &cause);
	start = s ? s->ops->info(s)->start_ns : 0;
	ok(start >= lo && start <= hi, "the recording's start time comes back (%llu in [%llu, %llu])",
	   (unsigned long long)start, (unsigned long long)lo, (unsigned long long)hi);
	ok(s && source_flush(s, &t, &cause) == 0, "flushing a replay gives nothing: its ticks are whole");
	source_close(s);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/latop-snap-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_round_trip();
	test_killed();
	test_truncation();
	test_flip();
	test_flip_sweep();
	test_order();
	test_versions();
	test_limits();
	test_bombs();
	test_not_files();
	test_stored();
	test_undecodable();
	test_replay();
	test_targets();
	test_planted_tmp();
	test_close_checks();
	test_write_failure();
	test_start_time();
	if (fork() == 0)
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
	wait(NULL);
	tap_done();
}
