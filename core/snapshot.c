/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Snapshot files: an append-only chunk stream (snapshot.h has the API).
 *
 *   0   "LATOPSNP"
 *   8   u16 major, u16 minor
 *   12  u32 header body length, u32 crc32(body)
 *   20  body: u64 start_ns, u64 boot_offset_ns, u32 clock id, str host,
 *       str kernel, str status, then in files written since 2.1 u64 tick
 *       interval (ns; 0 unknown) (minor versions may append; readers skip)
 *   ..  chunks: u32 sync "LCHK", u32 type, u32 len, u32 crc32(payload),
 *       u32 crc32(the 16 bytes before it), payload
 *
 * All integers little-endian; "str" and counts inside payloads are LEB128
 * varints.  HEADER: u16 major, u16 minor, then the header body again, written
 * right after the header.  SCHEMA: varint id, str table, str help, varint
 * nfields, then per field str name, u8 type, varint flags, str unit, str
 * help; every SCHEMA chunk is written twice in a row.  FRAMES: u64 t_ns, u64
 * sequence number (0, 1, 2, ... in the order written), u32 raw length, u8
 * codec (0 stored, 1 zstd), then the body: varint nframes, per frame varint
 * table id, t_ns, dt_ns, 6 stats (7 from minor version 1: overflow), nrows,
 * cells row by row.  INDEX: varint n,
 * then n (u64 t_ns, u64 offset of the FRAMES chunk); written at close.
 *
 * Every byte that changes meaning is under a CRC, and the sync word and the
 * head CRC let a reader find the next chunk after damage, so a flipped byte
 * costs at most the chunk it hits: the header and every schema have a second
 * copy, and the sequence numbers put ticks in order, find repeats and count
 * the ones lost.  Version 1 files (12-byte chunk heads with no sync word,
 * FRAMES without sequence number or codec) are still read, up to their first
 * damage.
 *
 * What a tick may cost to decode is bounded by its size in the file
 * (snap_decode_budget), and the writer keeps to the same bound, so a few
 * crafted bytes cannot make a reader allocate gigabytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "rfile.h"
#include "snapshot.h"
#include "wire.h"
#include "xalloc.h"

#define SNAP_MAGIC "LATOPSNP"
#define SNAP_SYNC 0x4b48434cu			/* "LCHK" little-endian */
#define SNAP_HDR_BYTES 20
#define SNAP_CHUNK_HDR 20			/* version 2 */
#define SNAP_CHUNK_HDR_V1 12
#define SNAP_MAX_HDR_BODY 65536
#define SNAP_MAX_RAW (256u << 20)		/* a tick, decompressed */
#define SNAP_FRAMES_HEAD 21			/* t_ns, seq, raw length, codec */
#define SNAP_MAX_META_CHUNK (4u << 20)		/* SCHEMA and HEADER payloads */
#define SNAP_MAX_TEXT 4096			/* schema text, host, kernel */
#define SNAP_MAX_CELL_STR 65536
#define SNAP_MAX_FIELDS 256
#define SNAP_MAX_SCHEMAS 1024
#define SNAP_MAX_FRAMES 1024			/* tables per tick */
#define SNAP_MAX_ROWS 10000000
#define SNAP_ZSTD_LEVEL 3
#define SNAP_HEADER_SEARCH (1u << 20)		/* where a damaged header's copy is looked for */
#define SNAP_SCAN_BLOCK (1u << 20)		/* bytes read at a time while scanning */
#define SNAP_MAX_PROBLEMS 3			/* damage named in a warning; the rest counted */
/*
 * Decoding a tick may allocate at most SNAP_DECODE_BASE plus
 * SNAP_DECODE_RATIO times its chunk's payload bytes, and never more than
 * SNAP_MAX_DECODE: the decompressed body, the cells, strings and histograms
 * together (snap_decode_budget).
 */
#define SNAP_DECODE_BASE (64ull << 20)
#define SNAP_DECODE_RATIO 4096ull
#define SNAP_MAX_DECODE (1ull << 30)
#define SNAP_ALLOC_OVERHEAD 16			/* what malloc keeps per block, charged too */

enum snap_chunk {
	SNAP_SCHEMA = 1,
	SNAP_FRAMES = 2,
	SNAP_INDEX = 3,
	SNAP_HEADER = 4,
};

enum snap_codec {
	SNAP_STORED = 0,
	SNAP_ZSTD = 1,
};

struct snap_index_ent {
	uint64_t t_ns;
	uint64_t seq;		/* sequence number (version 1: position in the file) */
	uint64_t off;		/* of the chunk header */
	uint32_t len;		/* payload bytes */
};

struct snap_writer {
	char *path, *tmp;
	int fd;
	dev_t dev;		/* of tmp, to know it is still ours at close */
	ino_t ino;
	uint64_t off;		/* bytes written whole */
	const struct schema **schemas;	/* index = table id */
	size_t nschemas;
	struct snap_index_ent *index;
	size_t nindex, capindex;
	struct wbuf raw, out;
	ZSTD_CCtx *zc;
};

struct snap_reader {
	char *path;
	FILE *f;
	uint16_t major;
	unsigned chunk_hdr;		/* bytes before a chunk's payload */
	struct source_info info;
	struct schema **schemas;	/* owned; index = table id; holes are NULL */
	size_t nschemas;		/* highest id + 1 */
	const struct schema **listed;	/* the schemas found, in id order, for info */
	size_t nlisted;
	struct snap_index_ent *ticks;
	size_t nticks, capticks;
	uint64_t index_n;		/* ticks the INDEX chunk lists */
	bool closed;			/* an INDEX chunk was found */
	bool cut;			/* the file ends inside a chunk */
	uint16_t minor;			/* the header's */
	uint32_t body_crc;		/* the header body's, to compare with its copy */
	char *problems[SNAP_MAX_PROBLEMS];
	size_t nproblems;
	ZSTD_DCtx *zd;
	struct wbuf payload, raw;
};

/* Return a chunk type's name for messages. */
static const char *snap_chunk_name(uint32_t type)
{
	switch (type) {
	case SNAP_SCHEMA:
		return "SCHEMA";
	case SNAP_FRAMES:
		return "FRAMES";
	case SNAP_INDEX:
		return "INDEX";
	case SNAP_HEADER:
		return "HEADER";
	default:
		return "unknown";
	}
}

/* Return crc32 of n bytes. */
static uint32_t snap_crc(const uint8_t *p, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);

	while (n) {
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;

		c = crc32(c, p, k);
		p += k;
		n -= k;
	}
	return (uint32_t)c;
}

/*
 * Write n bytes at the end of the file; -1 with *cause on failure, the file
 * then cut back to its last whole chunk so that every tick in it reads.
 */
static int snap_put(struct snap_writer *w, const void *p, size_t n, char **cause)
{
	const uint8_t *b = p;
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(w->fd, b + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = k < 0 ? errno : ENOSPC;

			if (ftruncate(w->fd, (off_t)w->off) == 0)
				lseek(w->fd, (off_t)w->off, SEEK_SET);
			*cause = xasprintf("%s: write failed at offset %llu: %s", w->tmp,
					   (unsigned long long)w->off, strerror(err));
			return -1;
		}
		done += (size_t)k;
	}
	w->off += n;
	return 0;
}

/* Append a chunk head for type and payload to c: sync, type, length, CRCs. */
static void snap_chunk_head(struct wbuf *c, uint32_t type, const uint8_t *p, size_t len)
{
	size_t at = c->len;

	wbuf_u32(c, SNAP_SYNC);
	wbuf_u32(c, type);
	wbuf_u32(c, (uint32_t)len);
	wbuf_u32(c, snap_crc(p, len));
	wbuf_u32(c, snap_crc(c->p + at, 16));
}

/* Write one chunk (head, then payload) as a single flushed write. */
static int snap_put_chunk(struct snap_writer *w, uint32_t type, const struct wbuf *payload,
			  char **cause)
{
	struct wbuf c;
	int rc;

	if (payload->len > UINT32_MAX - SNAP_CHUNK_HDR) {
		*cause = xasprintf("%s: %s chunk of %zu bytes is too large", w->tmp,
				   snap_chunk_name(type), payload->len);
		return -1;
	}
	wbuf_init(&c);
	snap_chunk_head(&c, type, payload->p, payload->len);
	wbuf_bytes(&c, payload->p, payload->len);
	rc = snap_put(w, c.p, c.len, cause);
	wbuf_done(&c);
	return rc;
}

/* Free a writer without touching its file further. */
static void snap_writer_free(struct snap_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w->tmp);
	free(w->schemas);
	free(w->index);
	wbuf_done(&w->raw);
	wbuf_done(&w->out);
	ZSTD_freeCCtx(w->zc);
	free(w);
}

/* Write the file header with body, then its copy as a HEADER chunk. */
static int snap_put_header(struct snap_writer *w, const struct wbuf *body, char **cause)
{
	struct wbuf hdr, copy;
	int rc;

	wbuf_init(&hdr);
	wbuf_bytes(&hdr, SNAP_MAGIC, 8);
	wbuf_u16(&hdr, SNAP_MAJOR);
	wbuf_u16(&hdr, SNAP_MINOR);
	wbuf_u32(&hdr, (uint32_t)body->len);
	wbuf_u32(&hdr, snap_crc(body->p, body->len));
	wbuf_bytes(&hdr, body->p, body->len);
	wbuf_init(&copy);
	wbuf_u16(&copy, SNAP_MAJOR);
	wbuf_u16(&copy, SNAP_MINOR);
	wbuf_bytes(&copy, body->p, body->len);
	rc = snap_put(w, hdr.p, hdr.len, cause);
	if (!rc)
		rc = snap_put_chunk(w, SNAP_HEADER, &copy, cause);
	wbuf_done(&hdr);
	wbuf_done(&copy);
	return rc;
}

int snap_check_target(const char *path, char **cause)
{
	size_t len = strlen(path);
	struct stat st;
	char *copy, *dir;
	int rc = 0;

	if (!len) {
		*cause = xstrdup("the output path is empty");
		return -1;
	}
	if (path[len - 1] == '/') {
		*cause = xasprintf("%s: names a directory; give a file name", path);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			*cause = xasprintf("%s: is %s; a recording replaces only a regular file%s",
					   path, rfile_kind(st.st_mode), S_ISLNK(st.st_mode) ?
					   " (links are not followed)" : "");
			return -1;
		}
	} else if (errno != ENOENT) {
		*cause = xasprintf("%s: cannot check: %s", path, strerror(errno));
		return -1;
	}
	copy = xstrdup(path);
	dir = dirname(copy);
	if (stat(dir, &st) < 0 || access(dir, W_OK | X_OK) < 0) {
		*cause = xasprintf("%s: cannot write in directory %s: %s", path, dir,
				   strerror(errno));
		rc = -1;
	}
	free(copy);
	return rc;
}

/*
 * Create the file the recording goes to until close, next to path: a new
 * PATH.tmp, or PATH.XXXXXX.tmp when something is at PATH.tmp already (an
 * earlier recording's partial file, or a planted link), which is left as
 * it is.  Return its descriptor, or -1 with *cause.
 */
static int snap_open_tmp(struct snap_writer *w, char **cause)
{
	struct stat st;
	int fd;

	w->tmp = xasprintf("%s.tmp", w->path);
	fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		free(w->tmp);
		w->tmp = xasprintf("%s.XXXXXX.tmp", w->path);
		fd = mkostemps(w->tmp, 4, O_CLOEXEC);
	}
	if (fd < 0) {
		*cause = xasprintf("%s: cannot create: %s", w->tmp, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0600) < 0 || fstat(fd, &st) < 0) {
		*cause = xasprintf("%s: cannot set up: %s", w->tmp, strerror(errno));
		close(fd);
		unlink(w->tmp);
		return -1;
	}
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	return fd;
}

struct snap_writer *snap_create(const char *path, const struct source_info *info,
				char **cause)
{
	struct snap_writer *w;
	struct timespec now;
	struct wbuf body;
	int rc;

	if (snap_check_target(path, cause) < 0)
		return NULL;
	w = xcalloc(1, sizeof(*w));
	w->path = xstrdup(path);
	wbuf_init(&w->raw);
	wbuf_init(&w->out);
	w->fd = snap_open_tmp(w, cause);
	if (w->fd < 0) {
		snap_writer_free(w);
		return NULL;
	}
	w->zc = ZSTD_createCCtx();
	if (!w->zc) {
		*cause = xasprintf("%s: cannot set up compression", w->tmp);
		unlink(w->tmp);
		snap_writer_free(w);
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	wbuf_init(&body);
	wbuf_u64(&body, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	wbuf_u64(&body, info ? info->boot_offset_ns : 0);
	wbuf_u32(&body, CLOCK_REALTIME);
	wbuf_str(&body, info ? info->host : "", SNAP_MAX_TEXT);
	wbuf_str(&body, info ? info->kernel : "", SNAP_MAX_TEXT);
	wbuf_str(&body, info ? info->status : "", SNAP_MAX_TEXT);
	wbuf_u64(&body, info ? info->interval_ns : 0);
	rc = snap_put_header(w, &body, cause);
	wbuf_done(&body);
	if (rc) {
		unlink(w->tmp);
		snap_writer_free(w);
		return NULL;
	}
	return w;
}

const char *snap_tmp_path(const struct snap_writer *w)
{
	return w->tmp;
}

size_t snap_ticks_written(const struct snap_writer *w)
{
	return w->nindex;
}

/* Return the table id of s, writing its SCHEMA chunk the first time. */
static long snap_schema_id(struct snap_writer *w, const struct schema *s, char **cause)
{
	struct wbuf b;
	size_t i;
	int rc;

	for (i = 0; i < w->nschemas; i++)
		if (w->schemas[i] == s)
			return (long)i;
	if (!s->nfields || s->nfields > SNAP_MAX_FIELDS) {
		*cause = xasprintf("%s: table %s has %zu fields (1 to %d can be recorded)", w->tmp,
				   s->table, s->nfields, SNAP_MAX_FIELDS);
		return -1;
	}
	if (w->nschemas >= SNAP_MAX_SCHEMAS) {
		*cause = xasprintf("%s: more than %d tables", w->tmp, SNAP_MAX_SCHEMAS);
		return -1;
	}
	wbuf_init(&b);
	wbuf_varint(&b, w->nschemas);
	wbuf_str(&b, s->table, SNAP_MAX_TEXT);
	wbuf_str(&b, s->help, SNAP_MAX_TEXT);
	wbuf_varint(&b, s->nfields);
	for (i = 0; i < s->nfields; i++) {
		const struct field *fl = &s->fields[i];

		wbuf_str(&b, fl->name, SNAP_MAX_TEXT);
		wbuf_u8(&b, (uint8_t)fl->type);
		wbuf_varint(&b, fl->flags);
		wbuf_str(&b, fl->unit, SNAP_MAX_TEXT);
		wbuf_str(&b, fl->help, SNAP_MAX_TEXT);
	}
	/* Twice: a reader that finds one copy damaged takes the other. */
	rc = snap_put_chunk(w, SNAP_SCHEMA, &b, cause);
	if (!rc)
		rc = snap_put_chunk(w, SNAP_SCHEMA, &b, cause);
	wbuf_done(&b);
	if (rc)
		return -1;
	w->schemas = xreallocarray(w->schemas, w->nschemas + 1, sizeof(*w->schemas));
	w->schemas[w->nschemas] = s;
	return (long)w->nschemas++;
}

/* Return what decoding a cell of type t allocates (n: a string's bytes). */
static uint64_t snap_cell_cost(enum ftype t, size_t n)
{
	switch (t) {
	case FT_STR:
		return n + 1 + SNAP_ALLOC_OVERHEAD;
	case FT_HIST:
		return sizeof(struct hist) + SNAP_ALLOC_OVERHEAD;
	case FT_IP:
		return sizeof(struct ipaddr) + SNAP_ALLOC_OVERHEAD;
	default:
		return 0;
	}
}

/* Return what a frame of nrows rows allocates besides its cells' contents. */
static uint64_t snap_rows_cost(uint64_t nrows, size_t nfields)
{
	/* frame_add_row doubles its array from 16 rows: up to twice as many. */
	return sizeof(struct frame) + 2 * SNAP_ALLOC_OVERHEAD +
	       2 * (nrows + 16) * nfields * sizeof(union cell);
}

/* Return what decoding a tick whose FRAMES payload has len bytes may allocate. */
static uint64_t snap_decode_budget(uint64_t len)
{
	uint64_t b = SNAP_DECODE_BASE + SNAP_DECODE_RATIO * len;

	return b < SNAP_MAX_DECODE ? b : SNAP_MAX_DECODE;
}

/* Serialize one cell of type t; return what decoding it will allocate. */
static uint64_t snap_put_cell(struct wbuf *b, const union cell *c, enum ftype t)
{
	switch (t) {
	case FT_STR:
		if (!c->s) {
			wbuf_varint(b, 0);
		} else {
			size_t n = strnlen(c->s, SNAP_MAX_CELL_STR);

			wbuf_varint(b, n + 1);
			wbuf_bytes(b, c->s, n);
			return snap_cell_cost(t, n);
		}
		break;
	case FT_HIST:
		wbuf_u8(b, c->h != NULL);
		if (c->h) {
			size_t need = shist_encode(c->h, wbuf_room(b, 64), 64);

			if (need > 64)
				need = shist_encode(c->h, wbuf_room(b, need), need);
			b->len += need;
			return snap_cell_cost(t, 0);
		}
		break;
	case FT_IP:
		wbuf_u8(b, c->ip != NULL);
		if (c->ip) {
			wbuf_bytes(b, c->ip->a, 16);
			wbuf_u8(b, c->ip->prefix);
			wbuf_u8(b, c->ip->v4);
			return snap_cell_cost(t, 0);
		}
		break;
	default:
		wbuf_varint(b, c->u);
		break;
	}
	return 0;
}

/*
 * Encode t's frames into w->raw (writing new schemas first); return what a
 * reader will allocate to decode them, or -1 with *cause.
 */
static int64_t snap_encode_tick(struct snap_writer *w, const struct tick *t, char **cause)
{
	struct wbuf *raw = &w->raw;
	uint64_t cost = 0;
	size_t i, r, k;

	wbuf_reset(raw);
	wbuf_varint(raw, t->nframes);
	for (i = 0; i < t->nframes; i++) {
		const struct frame *f = t->frames[i];
		const struct schema *s = f->schema;
		long id = snap_schema_id(w, s, cause);

		if (id < 0)
			return -1;
		wbuf_varint(raw, (uint64_t)id);
		wbuf_varint(raw, f->t_ns);
		wbuf_varint(raw, f->dt_ns);
		wbuf_varint(raw, f->stats.events);
		wbuf_varint(raw, f->stats.lost);
		wbuf_varint(raw, f->stats.dropped);
		wbuf_varint(raw, f->stats.evicted);
		wbuf_varint(raw, f->stats.bpf_ns);
		wbuf_varint(raw, f->stats.bpf_runs);
		wbuf_varint(raw, f->stats.overflow);
		wbuf_varint(raw, f->nrows);
		cost += snap_rows_cost(f->nrows, s->nfields);
		for (r = 0; r < f->nrows; r++) {
			const union cell *row = frame_row(f, r);

			for (k = 0; k < s->nfields; k++)
				cost += snap_put_cell(raw, &row[k], s->fields[k].type);
		}
	}
	cost += raw->len;
	if (t->nframes > SNAP_MAX_FRAMES || raw->len > SNAP_MAX_RAW || cost > SNAP_MAX_DECODE) {
		*cause = xasprintf("%s: tick too large to record (%zu tables, %zu bytes, %llu MiB "
				   "to read back; the limits are %d tables, %u MiB and %llu MiB)",
				   w->tmp, t->nframes, raw->len, (unsigned long long)(cost >> 20),
				   SNAP_MAX_FRAMES, SNAP_MAX_RAW >> 20, SNAP_MAX_DECODE >> 20);
		return -1;
	}
	return (int64_t)cost;
}

uint64_t snap_bytes(const struct snap_writer *w)
{
	return w->off;
}

/* The bytes of an INDEX chunk listing n ticks. */
static uint64_t snap_index_bytes(uint64_t n)
{
	uint64_t v = 1;

	while (n >> (7 * v))
		v++;
	return SNAP_CHUNK_HDR + v + 16 * n;
}

/*
 * Write tick t as one FRAMES chunk, new schemas first, unless max_bytes is
 * not 0, the file holds a tick and this one would take it past max_bytes
 * once closed: 1 then, nothing written (a schema it needed may be).
 */
static int snap_write_tick_within(struct snap_writer *w, const struct tick *t,
				  uint64_t max_bytes, char **cause)
{
	/*
	 * One FRAMES chunk, new schemas written first.  The body is compressed,
	 * or stored as it is when it compresses so well that a reader could not
	 * tell it from a memory bomb (snap_decode_budget).
	 */
	struct wbuf *raw = &w->raw, *out = &w->out;
	int64_t cost = snap_encode_tick(w, t, cause);
	size_t bound, zn;
	uint64_t off;

	if (cost < 0)
		return -1;
	bound = ZSTD_compressBound(raw->len);
	wbuf_reset(out);
	wbuf_u64(out, t->t_ns);
	wbuf_u64(out, w->nindex);
	wbuf_u32(out, (uint32_t)raw->len);
	wbuf_u8(out, SNAP_ZSTD);
	zn = ZSTD_compressCCtx(w->zc, wbuf_room(out, bound), bound, raw->p, raw->len,
			       SNAP_ZSTD_LEVEL);
	if (ZSTD_isError(zn)) {
		*cause = xasprintf("%s: compression failed: %s", w->tmp, ZSTD_getErrorName(zn));
		return -1;
	}
	out->len += zn;
	if ((uint64_t)cost > snap_decode_budget(out->len)) {
		out->len = SNAP_FRAMES_HEAD - 1;
		wbuf_u8(out, SNAP_STORED);
		wbuf_bytes(out, raw->p, raw->len);
	}
	if (max_bytes && w->nindex &&
	    w->off + SNAP_CHUNK_HDR + out->len + snap_index_bytes(w->nindex + 1) > max_bytes)
		return 1;
	off = w->off;
	if (snap_put_chunk(w, SNAP_FRAMES, out, cause))
		return -1;
	if (w->nindex == w->capindex) {
		w->capindex = w->capindex ? 2 * w->capindex : 64;
		w->index = xreallocarray(w->index, w->capindex, sizeof(*w->index));
	}
	w->index[w->nindex] = (struct snap_index_ent){.t_ns = t->t_ns, .seq = w->nindex,
						      .off = off, .len = (uint32_t)out->len};
	w->nindex++;
	return 0;
}

int snap_write_tick(struct snap_writer *w, const struct tick *t, char **cause)
{
	return snap_write_tick_within(w, t, 0, cause);
}

int snap_write_tick_max(struct snap_writer *w, const struct tick *t, uint64_t max_bytes,
			char **cause)
{
	return snap_write_tick_within(w, t, max_bytes, cause);
}

/* Flush the directory entry of path to disk. */
static void snap_sync_dir(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Check that the rename at close moves this writer's own file, onto nothing
 * or a regular file: what is at either name may have changed meanwhile.
 */
static int snap_check_rename(struct snap_writer *w, char **cause)
{
	struct stat st;

	if (lstat(w->tmp, &st) < 0 || st.st_dev != w->dev || st.st_ino != w->ino) {
		*cause = xasprintf("%s: was removed or replaced while recording; not renaming it "
				   "to %s", w->tmp, w->path);
		return -1;
	}
	if (lstat(w->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		*cause = xasprintf("%s: is %s now; a recording replaces only a regular file",
				   w->path, rfile_kind(st.st_mode));
		return -1;
	}
	return 0;
}

int snap_close(struct snap_writer *w, char **cause)
{
	struct wbuf b;
	size_t i;
	int rc;

	wbuf_init(&b);
	wbuf_varint(&b, w->nindex);
	for (i = 0; i < w->nindex; i++) {
		wbuf_u64(&b, w->index[i].t_ns);
		wbuf_u64(&b, w->index[i].off);
	}
	rc = snap_put_chunk(w, SNAP_INDEX, &b, cause);
	wbuf_done(&b);
	if (!rc && fsync(w->fd) < 0) {
		*cause = xasprintf("%s: fsync failed: %s", w->tmp, strerror(errno));
		rc = -1;
	}
	if (close(w->fd) && !rc) {
		*cause = xasprintf("%s: close failed: %s", w->tmp, strerror(errno));
		rc = -1;
	}
	w->fd = -1;
	if (!rc)
		rc = snap_check_rename(w, cause);
	if (!rc && rename(w->tmp, w->path) < 0) {
		*cause = xasprintf("%s: cannot rename to %s: %s", w->tmp, w->path, strerror(errno));
		rc = -1;
	}
	if (!rc)
		snap_sync_dir(w->path);
	snap_writer_free(w);
	return rc;
}

void snap_abandon(struct snap_writer *w)
{
	if (w)
		snap_writer_free(w);
}

/* Free a schema a reader built. */
static void snap_schema_free(struct schema *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfields; i++) {
		free((char *)s->fields[i].name);
		free((char *)s->fields[i].unit);
		free((char *)s->fields[i].help);
	}
	free((struct field *)s->fields);
	free((char *)s->table);
	free((char *)s->help);
	free(s);
}

/* Free a reader and the schemas it owns. */
void snap_free(struct snap_reader *r)
{
	size_t i;

	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	for (i = 0; i < r->nschemas; i++)
		snap_schema_free(r->schemas[i]);
	for (i = 0; i < r->nproblems && i < SNAP_MAX_PROBLEMS; i++)
		free(r->problems[i]);
	free(r->schemas);
	free(r->listed);
	free(r->ticks);
	free((char *)r->info.status);
	ZSTD_freeDCtx(r->zd);
	wbuf_done(&r->payload);
	wbuf_done(&r->raw);
	free(r->path);
	free(r);
}

/* Note damage found while opening: the first few are named, the rest counted. */
static void snap_problem(struct snap_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void snap_problem(struct snap_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nproblems < SNAP_MAX_PROBLEMS) {
		va_start(ap, fmt);
		if (vasprintf(&r->problems[r->nproblems], fmt, ap) < 0)
			r->problems[r->nproblems] = NULL;
		va_end(ap);
		if (!r->problems[r->nproblems])
			return;
	}
	r->nproblems++;
}

/* Read exactly n bytes at off into buf; return the count actually read. */
static size_t snap_pread(struct snap_reader *r, uint64_t off, void *buf, size_t n)
{
	if (fseeko(r->f, (off_t)off, SEEK_SET) < 0)
		return 0;
	return fread(buf, 1, n, r->f);
}

/* A chunk head as read from the file. */
struct snap_chunk_head {
	uint32_t type, len, crc;
	bool intact;		/* version 2: sync word and head CRC hold */
};

/* Parse the chunk head in hdr (r->chunk_hdr bytes). */
static void snap_parse_chunk_head(const struct snap_reader *r, const uint8_t *hdr,
				  struct snap_chunk_head *ch)
{
	uint32_t sync = SNAP_SYNC, hcrc = 0;
	struct rbuf rb;

	rbuf_init(&rb, hdr, r->chunk_hdr);
	if (r->major >= 2)
		rbuf_u32(&rb, &sync, "sync");
	rbuf_u32(&rb, &ch->type, "type");
	rbuf_u32(&rb, &ch->len, "length");
	rbuf_u32(&rb, &ch->crc, "crc");
	if (r->major >= 2)
		rbuf_u32(&rb, &hcrc, "head crc");
	ch->intact = r->major < 2 || (sync == SNAP_SYNC && hcrc == snap_crc(hdr, 16));
}

/* Return the largest payload a chunk of type may have in this version. */
static uint64_t snap_max_len(const struct snap_reader *r, uint32_t type, uint64_t file_bytes)
{
	switch (type) {
	case SNAP_FRAMES:
		return SNAP_FRAMES_HEAD + (uint64_t)ZSTD_compressBound(SNAP_MAX_RAW);
	case SNAP_SCHEMA:
	case SNAP_HEADER:
		return SNAP_MAX_META_CHUNK;
	default:
		/* An INDEX, or a chunk type a later minor version added. */
		return file_bytes;
	}
}

/* Read a chunk's payload at off into r->payload; return bytes read. */
static size_t snap_read_payload(struct snap_reader *r, uint64_t off, uint32_t len)
{
	wbuf_reset(&r->payload);
	/* One spare byte, so an empty payload still points into a buffer, not NULL. */
	r->payload.len = snap_pread(r, off + r->chunk_hdr, wbuf_room(&r->payload, (size_t)len + 1),
				    len);
	return r->payload.len;
}

/*
 * Check the CRC of the len-byte payload at off a block at a time, keeping
 * its first keep bytes in r->payload.  Return 0, or -1 if it cannot be read
 * whole or its CRC does not match.
 */
static int snap_check_payload(struct snap_reader *r, uint64_t off, uint32_t len, uint32_t crc,
			      size_t keep)
{
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t at = off + r->chunk_hdr, left = len;
	uint8_t *buf;

	if (keep >= len)
		return snap_read_payload(r, off, len) == len &&
		       snap_crc(r->payload.p, len) == crc ? 0 : -1;
	wbuf_reset(&r->payload);
	wbuf_reset(&r->raw);
	buf = wbuf_room(&r->raw, len < SNAP_SCAN_BLOCK ? len : SNAP_SCAN_BLOCK);
	while (left) {
		size_t n = left < SNAP_SCAN_BLOCK ? (size_t)left : SNAP_SCAN_BLOCK;

		if (snap_pread(r, at, buf, n) != n)
			return -1;
		if (at == off + r->chunk_hdr)
			wbuf_bytes(&r->payload, buf, keep);
		c = crc32(c, buf, (uInt)n);
		at += n;
		left -= n;
	}
	return (uint32_t)c == crc ? 0 : -1;
}

/*
 * Return the offset of the first intact chunk head in [from, end), or 0 if
 * there is none: the sync word, then a head whose CRC holds.
 */
static uint64_t snap_find_chunk(struct snap_reader *r, uint64_t from, uint64_t end)
{
	uint8_t *buf;

	if (from >= end)
		return 0;
	wbuf_reset(&r->raw);
	buf = wbuf_room(&r->raw, end - from < SNAP_SCAN_BLOCK + SNAP_CHUNK_HDR ? end - from :
				 SNAP_SCAN_BLOCK + SNAP_CHUNK_HDR);
	while (from < end && end - from >= SNAP_CHUNK_HDR) {
		uint64_t span = end - from;
		size_t want = span < SNAP_SCAN_BLOCK + SNAP_CHUNK_HDR ? (size_t)span :
			      SNAP_SCAN_BLOCK + SNAP_CHUNK_HDR;
		size_t got = snap_pread(r, from, buf, want), i = 0;
		const uint8_t *hit;

		if (got < SNAP_CHUNK_HDR)
			return 0;
		while ((hit = memmem(buf + i, got - i, "LCHK", 4))) {
			struct snap_chunk_head ch;

			i = (size_t)(hit - buf);
			if (got - i < SNAP_CHUNK_HDR)
				break;
			snap_parse_chunk_head(r, hit, &ch);
			if (ch.intact)
				return from + i;
			i++;
		}
		from += got - SNAP_CHUNK_HDR + 1;
	}
	return 0;
}

/* Parse a header body into r->info; -1 with rb->err. */
static int snap_parse_header_body(struct snap_reader *r, struct rbuf *rb)
{
	char *host = NULL, *kernel = NULL, *status = NULL;
	uint32_t clock_id;

	if (rbuf_u64(rb, &r->info.start_ns, "start time") ||
	    rbuf_u64(rb, &r->info.boot_offset_ns, "boot offset") ||
	    rbuf_u32(rb, &clock_id, "clock id") ||
	    rbuf_str(rb, &host, SNAP_MAX_TEXT, "host") ||
	    rbuf_str(rb, &kernel, SNAP_MAX_TEXT, "kernel") ||
	    rbuf_str(rb, &status, SNAP_MAX_TEXT, "status") ||
	    (rb->len - rb->pos >= 8 && rbuf_u64(rb, &r->info.interval_ns, "interval"))) {
		free(host);
		free(kernel);
		free(status);
		return -1;
	}
	snprintf(r->info.host, sizeof(r->info.host), "%s", host);
	snprintf(r->info.kernel, sizeof(r->info.kernel), "%s", kernel);
	free((char *)r->info.status);
	r->info.status = status;
	free(host);
	free(kernel);
	return 0;
}

/*
 * Take the header from its HEADER copy, the first chunk after the damaged
 * header: return the copy's offset (where chunks start), or 0.
 */
static uint64_t snap_header_copy(struct snap_reader *r, uint64_t file_bytes)
{
	uint64_t end = file_bytes < SNAP_HEADER_SEARCH ? file_bytes : SNAP_HEADER_SEARCH;
	uint64_t off = snap_find_chunk(r, 8, end);
	uint8_t hdr[SNAP_CHUNK_HDR];
	struct snap_chunk_head ch;
	uint16_t major, minor;
	struct rbuf rb;
	int bad;

	if (!off || snap_pread(r, off, hdr, sizeof(hdr)) != sizeof(hdr))
		return 0;
	snap_parse_chunk_head(r, hdr, &ch);
	if (ch.type != SNAP_HEADER || ch.len > SNAP_MAX_META_CHUNK ||
	    ch.len > file_bytes - off - SNAP_CHUNK_HDR ||
	    snap_check_payload(r, off, ch.len, ch.crc, ch.len))
		return 0;
	rbuf_init(&rb, r->payload.p, r->payload.len);
	bad = rbuf_u16(&rb, &major, "major") || rbuf_u16(&rb, &minor, "minor") ||
	      major != SNAP_MAJOR || snap_parse_header_body(r, &rb);
	rbuf_done(&rb);
	if (!bad)
		r->minor = minor;
	return bad ? 0 : off;
}

/*
 * Parse the header; return 0 with *first the offset of the first chunk, or
 * -1 with *cause.  A version 2 header that is damaged is taken from its copy.
 */
static int snap_read_header(struct snap_reader *r, uint64_t file_bytes, uint64_t *first,
			    char **cause)
{
	uint8_t fixed[SNAP_HDR_BYTES];
	uint16_t major = 0, minor = 0;
	uint32_t body_len = 0, body_crc = 0;
	size_t got = snap_pread(r, 0, fixed, sizeof(fixed));
	bool magic = got >= 8 && !memcmp(fixed, SNAP_MAGIC, 8);
	uint8_t *body = NULL;
	char *why = NULL;
	struct rbuf rb;
	uint64_t copy;

	if (got == sizeof(fixed)) {
		rbuf_init(&rb, fixed + 8, sizeof(fixed) - 8);
		rbuf_u16(&rb, &major, "major");
		rbuf_u16(&rb, &minor, "minor");
		rbuf_u32(&rb, &body_len, "header length");
		rbuf_u32(&rb, &body_crc, "header crc");
	}
	r->major = major == 1 ? 1 : SNAP_MAJOR;
	r->chunk_hdr = r->major == 1 ? SNAP_CHUNK_HDR_V1 : SNAP_CHUNK_HDR;
	if (!magic)
		why = xasprintf("%s: not a latop snapshot (bad magic at offset 0)", r->path);
	else if (got < sizeof(fixed))
		why = xasprintf("%s: truncated header at offset 8 (expected %d bytes, found %zu)",
				r->path, SNAP_HDR_BYTES, got);
	else if (major != 1 && major != SNAP_MAJOR)
		why = xasprintf("%s: unsupported snapshot version %u.%u (this latop reads 1.x and "
				"%d.x)", r->path, major, minor, SNAP_MAJOR);
	else if (body_len > SNAP_MAX_HDR_BODY || SNAP_HDR_BYTES + (uint64_t)body_len > file_bytes)
		why = xasprintf("%s: truncated header at offset %d (expected %u bytes, found %llu)",
				r->path, SNAP_HDR_BYTES, body_len,
				(unsigned long long)(file_bytes - SNAP_HDR_BYTES));
	if (!why) {
		body = xmalloc(body_len + 1);
		rbuf_init(&rb, body, body_len);
		if (snap_pread(r, SNAP_HDR_BYTES, body, body_len) != body_len ||
		    snap_crc(body, body_len) != body_crc)
			why = xasprintf("%s: corrupt header at offset %d (CRC mismatch)", r->path,
					SNAP_HDR_BYTES);
		else if (snap_parse_header_body(r, &rb))
			why = xasprintf("%s: corrupt header at offset %d: %s", r->path,
					SNAP_HDR_BYTES, rb.err);
		rbuf_done(&rb);
		free(body);
	}
	if (!why) {
		r->minor = minor;
		r->body_crc = body_crc;
		*first = SNAP_HDR_BYTES + (uint64_t)body_len;
		return 0;
	}
	/* A version 1 file has no copy; anything else may be a damaged version 2. */
	if (r->major == SNAP_MAJOR && (copy = snap_header_copy(r, file_bytes))) {
		snap_problem(r, "%s; took its copy at offset %llu", why + strlen(r->path) + 2,
			     (unsigned long long)copy);
		free(why);
		*first = copy;
		return 0;
	}
	*cause = why;
	return -1;
}

/* Read a SCHEMA payload: a new schema the reader keeps, or a copy it has. */
static int snap_parse_schema(struct snap_reader *r, struct rbuf *rb)
{
	struct schema *s;
	struct field *fl;
	uint64_t id, n, flags;
	char *table = NULL, *help = NULL;
	uint8_t type;
	size_t i;

	if (rbuf_count(rb, &id, SNAP_MAX_SCHEMAS - 1, "table id"))
		return -1;
	if (id < r->nschemas && r->schemas[id])
		return 0;	/* the second copy of one already read */
	if (rbuf_str(rb, &table, SNAP_MAX_TEXT, "table name") ||
	    rbuf_str(rb, &help, SNAP_MAX_TEXT, "table help") ||
	    rbuf_count(rb, &n, SNAP_MAX_FIELDS, "field count")) {
		free(table);
		free(help);
		return -1;
	}
	s = xcalloc(1, sizeof(*s));
	s->table = table;
	s->help = help;
	if (!n) {
		rbuf_fail(rb, "table %s has no fields", table);
		goto bad;
	}
	fl = xcalloc((size_t)n, sizeof(*fl));
	s->fields = fl;
	for (i = 0; i < n; i++) {
		char *name = NULL, *unit = NULL, *fhelp = NULL;

		if (rbuf_str(rb, &name, SNAP_MAX_TEXT, "field name"))
			goto bad;
		fl[i].name = name;
		s->nfields = i + 1;
		if (rbuf_u8(rb, &type, "field type"))
			goto bad;
		if (type > FT_HIST) {
			rbuf_fail(rb, "unknown type %u of field %s", type, name);
			goto bad;
		}
		fl[i].type = (enum ftype)type;
		if (rbuf_count(rb, &flags, UINT32_MAX, "field flags") ||
		    rbuf_str(rb, &unit, SNAP_MAX_TEXT, "field unit"))
			goto bad;
		fl[i].flags = (unsigned)flags;
		fl[i].unit = unit;
		if (rbuf_str(rb, &fhelp, SNAP_MAX_TEXT, "field help"))
			goto bad;
		fl[i].help = fhelp;
	}
	if (id >= r->nschemas) {
		r->schemas = xreallocarray(r->schemas, id + 1, sizeof(*r->schemas));
		memset(r->schemas + r->nschemas, 0, (id + 1 - r->nschemas) * sizeof(*r->schemas));
		r->nschemas = id + 1;
	}
	r->schemas[id] = s;
	return 0;
bad:
	snap_schema_free(s);
	return -1;
}

/* What the uncompressed head of a FRAMES payload says. */
struct snap_frames_head {
	uint64_t t_ns, seq;
	uint32_t raw_len;	/* the body's bytes, decoded */
	uint8_t codec;
};

/* Parse the head of the FRAMES payload in r->payload; -1 with *why. */
static int snap_parse_frames_head(struct snap_reader *r, uint64_t position,
				  struct snap_frames_head *h, char **why)
{
	struct rbuf rb;

	h->seq = position;
	h->codec = SNAP_ZSTD;
	rbuf_init(&rb, r->payload.p, r->payload.len);
	if (rbuf_u64(&rb, &h->t_ns, "tick time") ||
	    (r->major >= 2 && rbuf_u64(&rb, &h->seq, "sequence number")) ||
	    rbuf_u32(&rb, &h->raw_len, "tick length") ||
	    (r->major >= 2 && rbuf_u8(&rb, &h->codec, "codec"))) {
		*why = xasprintf("corrupt head (%s)", rb.err);
		rbuf_done(&rb);
		return -1;
	}
	if (h->raw_len > SNAP_MAX_RAW || h->codec > SNAP_ZSTD) {
		*why = xasprintf("bad head (%u bytes, limit %u MiB; codec %u)", h->raw_len,
				 SNAP_MAX_RAW >> 20, h->codec);
		return -1;
	}
	return 0;
}

/* Remember a tick the scan found. */
static void snap_add_tick(struct snap_reader *r, const struct snap_frames_head *h, uint64_t off,
			  uint32_t len)
{
	if (r->nticks == r->capticks) {
		r->capticks = r->capticks ? 2 * r->capticks : 64;
		r->ticks = xreallocarray(r->ticks, r->capticks, sizeof(*r->ticks));
	}
	r->ticks[r->nticks++] = (struct snap_index_ent){.t_ns = h->t_ns, .seq = h->seq,
							.off = off, .len = len};
}

/*
 * Compare the HEADER copy in r->payload with the header it follows: the
 * header's version bytes are under no CRC of their own.
 */
static void snap_check_copy(struct snap_reader *r, uint64_t off)
{
	uint16_t major = 0, minor = 0;
	struct rbuf rb;

	if (!r->body_crc)
		return;		/* the header was taken from this copy */
	rbuf_init(&rb, r->payload.p, r->payload.len);
	if (rbuf_u16(&rb, &major, "major") || rbuf_u16(&rb, &minor, "minor") ||
	    major != r->major || minor != r->minor ||
	    snap_crc(rb.p + rb.pos, rbuf_left(&rb)) != r->body_crc) {
		snap_problem(r, "the header (version %u.%u) differs from its copy at offset %llu "
			     "(version %u.%u)", r->major, r->minor, (unsigned long long)off, major,
			     minor);
		/* The copy's version is under its chunk's CRC, the header's is not:
		 * frames are laid out as the copy says. */
		if (major == r->major && snap_crc(rb.p + rb.pos, rbuf_left(&rb)) == r->body_crc)
			r->minor = minor;
	}
	rbuf_done(&rb);
}

/* Take in one chunk whose payload checked out: a tick, a schema or the index. */
static void snap_take_chunk(struct snap_reader *r, uint64_t off, const struct snap_chunk_head *ch,
			    uint64_t position)
{
	struct snap_frames_head h;
	char *why = NULL;
	struct rbuf rb;
	uint64_t n;

	switch (ch->type) {
	case SNAP_FRAMES:
		if (snap_parse_frames_head(r, position, &h, &why)) {
			snap_problem(r, "%s in FRAMES chunk at offset %llu", why,
				     (unsigned long long)off);
			free(why);
			return;
		}
		snap_add_tick(r, &h, off, ch->len);
		return;
	case SNAP_SCHEMA:
		rbuf_init(&rb, r->payload.p, r->payload.len);
		if (snap_parse_schema(r, &rb))
			snap_problem(r, "corrupt SCHEMA chunk at offset %llu: %s of its payload",
				     (unsigned long long)off, rb.err);
		rbuf_done(&rb);
		return;
	case SNAP_INDEX:
		rbuf_init(&rb, r->payload.p, r->payload.len);
		if (!rbuf_varint(&rb, &n, "count")) {
			r->index_n = n;
			r->closed = true;
		}
		rbuf_done(&rb);
		return;
	case SNAP_HEADER:
		snap_check_copy(r, off);
		return;
	default:
		return;	/* a chunk a later minor version added */
	}
}

/*
 * Walk every chunk after the header.  Damage is noted and passed: a chunk
 * whose head holds but whose payload does not is skipped by its length; a
 * head that does not hold is passed by looking for the next one (version 2;
 * a version 1 file is read up to its first damage).
 */
static void snap_scan(struct snap_reader *r, uint64_t off, uint64_t file_bytes)
{
	uint64_t position = 0;

	while (off < file_bytes) {
		uint8_t hdr[SNAP_CHUNK_HDR];
		uint64_t left = file_bytes - off, next;
		struct snap_chunk_head ch;

		if (left < r->chunk_hdr || snap_pread(r, off, hdr, r->chunk_hdr) != r->chunk_hdr) {
			snap_problem(r, "truncated chunk head at offset %llu (%llu of %u bytes)",
				     (unsigned long long)off, (unsigned long long)left,
				     r->chunk_hdr);
			r->cut = true;
			return;
		}
		snap_parse_chunk_head(r, hdr, &ch);
		if (!ch.intact || (r->major == 1 && ch.len > snap_max_len(r, ch.type, file_bytes))) {
			snap_problem(r, "damaged chunk head at offset %llu", (unsigned long long)off);
			if (r->major == 1 || !(next = snap_find_chunk(r, off + 1, file_bytes)))
				return;
			off = next;
			continue;
		}
		if (ch.len > left - r->chunk_hdr) {
			snap_problem(r, "truncated chunk at offset %llu (%s chunk of %u bytes, %llu "
				     "there)", (unsigned long long)off, snap_chunk_name(ch.type), ch.len,
				     (unsigned long long)(left - r->chunk_hdr));
			r->cut = true;
			return;
		}
		if (ch.len > snap_max_len(r, ch.type, file_bytes))
			snap_problem(r, "%s chunk at offset %llu has %u bytes (the limit is %llu)",
				     snap_chunk_name(ch.type), (unsigned long long)off, ch.len,
				     (unsigned long long)snap_max_len(r, ch.type, file_bytes));
		else if (snap_check_payload(r, off, ch.len, ch.crc,
					    ch.type == SNAP_FRAMES ? SNAP_FRAMES_HEAD : ch.len))
			snap_problem(r, "bad CRC in %s chunk at offset %llu",
				     snap_chunk_name(ch.type), (unsigned long long)off);
		else
			snap_take_chunk(r, off, &ch, position);
		if (r->major == 1 && r->nproblems)
			return;
		if (ch.type == SNAP_FRAMES)
			position++;
		off += r->chunk_hdr + (uint64_t)ch.len;
	}
}

/* Order ticks by sequence number, then file offset. */
static int snap_tick_cmp(const void *a, const void *b)
{
	const struct snap_index_ent *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Put the ticks in the order they were written and drop those that cannot
 * be trusted: a second copy of a tick, and a tick not later than the one
 * before it.  Return how many ticks the recording had (by sequence numbers
 * and the index), kept or not.
 */
static uint64_t snap_order_ticks(struct snap_reader *r)
{
	size_t i, kept = 0, moved = 0;
	uint64_t had;

	if (r->nticks)
		qsort(r->ticks, r->nticks, sizeof(*r->ticks), snap_tick_cmp);
	for (i = 0; i < r->nticks; i++) {
		const struct snap_index_ent *e = &r->ticks[i], *prev = kept ? &r->ticks[kept - 1] : NULL;

		if (prev && e->seq == prev->seq) {
			snap_problem(r, "FRAMES chunk at offset %llu repeats tick %llu (offset %llu); "
				     "skipped", (unsigned long long)e->off,
				     (unsigned long long)e->seq + 1, (unsigned long long)prev->off);
			continue;
		}
		if (prev && e->t_ns <= prev->t_ns) {
			snap_problem(r, "FRAMES chunk at offset %llu is not later than the tick "
				     "before it; skipped", (unsigned long long)e->off);
			continue;
		}
		if (prev && e->off < prev->off)
			moved++;
		r->ticks[kept++] = *e;
	}
	if (moved)
		snap_problem(r, "%zu tick%s out of place in the file; read in the order written",
			     moved, moved == 1 ? " was" : "s were");
	had = kept ? r->ticks[kept - 1].seq + 1 : 0;
	if (r->closed && r->index_n > had)
		had = r->index_n;
	r->nticks = kept;
	return had;
}

/*
 * Say what the scan found, or NULL for a whole recording: the damage (the
 * first few named), whether the file ends before its recorder closed it, and
 * how many ticks were kept of how many.
 */
static char *snap_summary(struct snap_reader *r, uint64_t had)
{
	struct wbuf b;
	size_t i;
	char *s;

	if (!r->nproblems && r->closed && had == r->nticks)
		return NULL;
	wbuf_init(&b);
	for (i = 0; i < r->nproblems && i < SNAP_MAX_PROBLEMS; i++) {
		if (i)
			wbuf_bytes(&b, "; ", 2);
		wbuf_bytes(&b, r->problems[i], strlen(r->problems[i]));
	}
	if (r->nproblems > SNAP_MAX_PROBLEMS) {
		s = xasprintf(" (and %zu more)", r->nproblems - SNAP_MAX_PROBLEMS);
		wbuf_bytes(&b, s, strlen(s));
		free(s);
	}
	/* A file cut inside a chunk says so above; one cut between chunks says it here. */
	if (!r->closed && !r->cut) {
		s = xasprintf("%s", r->nproblems ? "; no intact closing index" :
				    "the recording was cut short (no closing index: its recorder "
				    "was stopped before it could finish)");
		wbuf_bytes(&b, s, strlen(s));
		free(s);
	}
	if (had)
		s = xasprintf("; kept %zu of %llu tick%s", r->nticks, (unsigned long long)had,
			      had == 1 ? "" : "s");
	else
		s = xstrdup("; it holds no ticks");
	wbuf_bytes(&b, s, strlen(s));
	free(s);
	s = xasprintf("%s: %.*s", r->path, (int)b.len, (const char *)b.p);
	wbuf_done(&b);
	return s;
}

/* List the schemas found, in id order, for snap_info. */
static void snap_list_schemas(struct snap_reader *r)
{
	size_t i;

	r->listed = xcalloc(r->nschemas + 1, sizeof(*r->listed));
	for (i = 0; i < r->nschemas; i++)
		if (r->schemas[i])
			r->listed[r->nlisted++] = r->schemas[i];
}

/* Open path for reading if it is a regular file; NULL with *cause if not. */
static FILE *snap_open_file(const char *path, struct stat *st, char **cause)
{
	int fd = rfile_open(path, st, cause);
	FILE *f;

	if (fd == -EINVAL)
		return NULL;
	if (fd < 0) {
		/* Said as every command says a recording it cannot open. */
		free(*cause);
		*cause = xasprintf("%s: cannot open: %s", path, strerror(-fd));
		return NULL;
	}
	if (!(f = fdopen(fd, "rb"))) {
		*cause = xasprintf("%s: cannot read: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

struct snap_reader *snap_open(const char *path, char **cause, char **warning)
{
	/*
	 * Every intact tick is kept.  Chunks are checked for structure and CRC,
	 * SCHEMA chunks parsed, and FRAMES chunks only up to their head; ticks are
	 * decoded by snap_read_tick.
	 */
	struct snap_reader *r = xcalloc(1, sizeof(*r));
	struct stat st;
	uint64_t off, had;

	*warning = NULL;
	r->path = xstrdup(path);
	wbuf_init(&r->payload);
	wbuf_init(&r->raw);
	r->f = snap_open_file(path, &st, cause);
	if (!r->f || snap_read_header(r, (uint64_t)st.st_size, &off, cause)) {
		snap_free(r);
		return NULL;
	}
	snap_scan(r, off, (uint64_t)st.st_size);
	had = snap_order_ticks(r);
	*warning = snap_summary(r, had);
	if (*warning && !r->nticks && (r->nproblems || had)) {
		*cause = *warning;
		*warning = NULL;
		snap_free(r);
		return NULL;
	}
	/* Scanning used these as scratch; what a tick needs is sized when read. */
	wbuf_done(&r->payload);
	wbuf_done(&r->raw);
	wbuf_init(&r->payload);
	wbuf_init(&r->raw);
	snap_list_schemas(r);
	r->info.nticks = r->nticks;
	r->info.nschemas = r->nlisted;
	r->info.schemas = r->listed;
	if (r->nticks) {
		r->info.t_first_ns = r->ticks[0].t_ns;
		r->info.t_last_ns = r->ticks[r->nticks - 1].t_ns;
	}
	return r;
}

/* Return what the header and the scan found. */
const struct source_info *snap_info(struct snap_reader *r)
{
	return &r->info;
}

/* Return how many readable ticks the file holds. */
size_t snap_nticks(struct snap_reader *r)
{
	return r->nticks;
}

/* Charge n bytes to a tick's decoding; -1 once it is over budget. */
static int snap_charge(struct rbuf *rb, uint64_t *used, uint64_t n, uint64_t budget)
{
	*used += n;
	if (*used > budget)
		return rbuf_fail(rb, "decoding needs more than %llu MiB, the most a tick of its "
				 "size may take", (unsigned long long)(budget >> 20));
	return 0;
}

/* Decode one cell of type t into c (zeroed), charging what it allocates. */
static int snap_get_cell(struct rbuf *rb, union cell *c, enum ftype t, uint64_t *used,
			 uint64_t budget)
{
	const uint8_t *p = NULL;
	uint64_t n;
	uint8_t present;
	size_t got;

	switch (t) {
	case FT_STR:
		if (rbuf_count(rb, &n, SNAP_MAX_CELL_STR + 1, "string length"))
			return -1;
		if (!n)
			return 0;
		if (rbuf_bytes(rb, &p, (size_t)n - 1, "string") ||
		    snap_charge(rb, used, snap_cell_cost(t, (size_t)n - 1), budget))
			return -1;
		c->s = xstrndup((const char *)p, (size_t)n - 1);
		return 0;
	case FT_HIST:
		if (rbuf_u8(rb, &present, "histogram flag"))
			return -1;
		if (!present)
			return 0;
		if (present != 1)
			return rbuf_fail(rb, "bad histogram flag %u", present);
		if (snap_charge(rb, used, snap_cell_cost(t, 0), budget))
			return -1;
		c->h = shist_decode(rb->p + rb->pos, rbuf_left(rb), &got);
		if (!c->h)
			return rbuf_fail(rb, "malformed histogram");
		rb->pos += got;
		return 0;
	case FT_IP:
		if (rbuf_u8(rb, &present, "address flag"))
			return -1;
		if (!present)
			return 0;
		if (present != 1)
			return rbuf_fail(rb, "bad address flag %u", present);
		if (rbuf_bytes(rb, &p, 16, "address") ||
		    snap_charge(rb, used, snap_cell_cost(t, 0), budget))
			return -1;
		c->ip = xcalloc(1, sizeof(*c->ip));
		memcpy(c->ip->a, p, 16);
		if (rbuf_u8(rb, &c->ip->prefix, "address prefix") ||
		    rbuf_u8(rb, &c->ip->v4, "address family"))
			return -1;
		if (c->ip->prefix > 128 || c->ip->v4 > 1)
			return rbuf_fail(rb, "bad address prefix /%u", c->ip->prefix);
		return 0;
	default:
		return rbuf_varint(rb, &c->u, "number");
	}
}

/*
 * Decode a tick's body into out, with at most budget bytes allocated in all
 * (*used has what is charged already); -1 with rb->err.
 */
static int snap_decode_tick(struct snap_reader *r, struct rbuf *rb, uint64_t *used,
			    uint64_t budget, struct tick *out)
{
	uint64_t nframes, i, id, nrows, row;
	size_t k;

	if (rbuf_count(rb, &nframes, SNAP_MAX_FRAMES, "frame count"))
		return -1;
	for (i = 0; i < nframes; i++) {
		const struct schema *s;
		struct frame *f;
		uint64_t t_ns, dt_ns;

		if (rbuf_varint(rb, &id, "table id"))
			return -1;
		if (id >= r->nschemas || !r->schemas[id])
			return rbuf_fail(rb, "table id %llu has no SCHEMA chunk",
					 (unsigned long long)id);
		s = r->schemas[id];
		if (rbuf_varint(rb, &t_ns, "frame time") || rbuf_varint(rb, &dt_ns, "frame length"))
			return -1;
		f = frame_new(s, t_ns, dt_ns);
		tick_add(out, f);
		if (rbuf_varint(rb, &f->stats.events, "events") ||
		    rbuf_varint(rb, &f->stats.lost, "lost") ||
		    rbuf_varint(rb, &f->stats.dropped, "dropped") ||
		    rbuf_varint(rb, &f->stats.evicted, "evicted") ||
		    rbuf_varint(rb, &f->stats.bpf_ns, "bpf time") ||
		    rbuf_varint(rb, &f->stats.bpf_runs, "bpf runs") ||
		    (r->minor >= 1 && rbuf_varint(rb, &f->stats.overflow, "overflow")) ||
		    rbuf_count(rb, &nrows, SNAP_MAX_ROWS, "row count"))
			return -1;
		/* Every cell takes at least one byte: refuse counts the payload cannot hold. */
		if (nrows > rbuf_left(rb) / s->nfields)
			return rbuf_fail(rb, "%llu rows of %zu fields do not fit in %zu bytes",
					 (unsigned long long)nrows, s->nfields, rbuf_left(rb));
		if (snap_charge(rb, used, snap_rows_cost(nrows, s->nfields), budget))
			return -1;
		for (row = 0; row < nrows; row++) {
			union cell *c = frame_add_row(f);

			for (k = 0; k < s->nfields; k++)
				if (snap_get_cell(rb, &c[k], s->fields[k].type, used, budget))
					return -1;
		}
	}
	if (rbuf_left(rb))
		return rbuf_fail(rb, "%zu bytes left over", rbuf_left(rb));
	return 0;
}

/*
 * Unpack the body of the FRAMES payload in r->payload (after its head) into
 * r->raw: check that the zstd frame is one whole frame of the declared size
 * before decompressing it.  -1 with *why.
 */
static int snap_unpack(struct snap_reader *r, const struct snap_frames_head *h, size_t head,
		       char **why)
{
	const uint8_t *z = r->payload.p + head;
	size_t zlen = r->payload.len - head, zn;
	unsigned long long content;

	wbuf_reset(&r->raw);
	if (h->codec == SNAP_STORED) {
		if (zlen != h->raw_len) {
			*why = xasprintf("stored body of %zu bytes where %u were declared", zlen,
					 h->raw_len);
			return -1;
		}
		wbuf_bytes(&r->raw, z, zlen);
		wbuf_room(&r->raw, 1);
		return 0;
	}
	content = ZSTD_getFrameContentSize(z, zlen);
	zn = ZSTD_findFrameCompressedSize(z, zlen);
	if (content != h->raw_len || ZSTD_isError(zn) || zn != zlen) {
		*why = xasprintf("bad zstd frame (%u bytes declared, frame says %lld; %s in %zu "
				 "bytes)", h->raw_len, (long long)content,
				 ZSTD_isError(zn) ? ZSTD_getErrorName(zn) :
				 zn != zlen ? "trailing bytes" : "whole", zlen);
		return -1;
	}
	if (!r->zd && !(r->zd = ZSTD_createDCtx())) {
		*why = xstrdup("cannot set up zstd decompression");
		return -1;
	}
	/* One spare byte, so an empty tick still points into a buffer, not NULL. */
	zn = ZSTD_decompressDCtx(r->zd, wbuf_room(&r->raw, (size_t)h->raw_len + 1), h->raw_len,
				 z, zlen);
	if (ZSTD_isError(zn) || zn != h->raw_len) {
		*why = xasprintf("bad zstd frame: %s",
				 ZSTD_isError(zn) ? ZSTD_getErrorName(zn) : "short output");
		return -1;
	}
	r->raw.len = zn;
	return 0;
}

/* Read and check the FRAMES chunk of tick e into r->payload; -1 with *why. */
static int snap_load_frames(struct snap_reader *r, const struct snap_index_ent *e, char **why)
{
	uint8_t hdr[SNAP_CHUNK_HDR] = {0};
	struct snap_chunk_head ch;

	if (snap_pread(r, e->off, hdr, r->chunk_hdr) != r->chunk_hdr) {
		*why = xstrdup("chunk can no longer be read (file changed?)");
		return -1;
	}
	snap_parse_chunk_head(r, hdr, &ch);
	if (!ch.intact || ch.type != SNAP_FRAMES || ch.len != e->len ||
	    snap_read_payload(r, e->off, ch.len) != ch.len ||
	    snap_crc(r->payload.p, ch.len) != ch.crc) {
		*why = xstrdup("chunk can no longer be read (file changed?)");
		return -1;
	}
	return 0;
}

int snap_read_tick(struct snap_reader *r, size_t idx, struct tick *out, char **cause)
{
	const struct snap_index_ent *e;
	struct snap_frames_head h;
	size_t head;
	uint64_t budget, used;
	struct rbuf rb;
	char *why = NULL;

	if (idx >= r->nticks) {
		*cause = xasprintf("%s: tick %zu out of range (the file has %zu)", r->path, idx,
				   r->nticks);
		return -1;
	}
	e = &r->ticks[idx];
	head = r->major >= 2 ? SNAP_FRAMES_HEAD : 12;
	budget = snap_decode_budget(e->len);
	used = 0;
	if (snap_load_frames(r, e, &why) || snap_parse_frames_head(r, e->seq, &h, &why))
		goto fail;
	if (h.raw_len > budget) {
		why = xasprintf("its body of %u bytes is more than a tick of its size may take "
				"(%llu MiB)", h.raw_len, (unsigned long long)(budget >> 20));
		goto fail;
	}
	used = h.raw_len;
	if (snap_unpack(r, &h, head, &why))
		goto fail;
	rbuf_init(&rb, r->raw.p, h.raw_len);
	tick_init(out, h.t_ns);
	if (snap_decode_tick(r, &rb, &used, budget, out)) {
		why = xasprintf("corrupt FRAMES payload: %s of its %u decompressed bytes", rb.err,
				h.raw_len);
		rbuf_done(&rb);
		tick_done(out);
		goto fail;
	}
	return 0;
fail:
	*cause = xasprintf("%s: tick %zu of %zu at offset %llu: %s", r->path, idx + 1, r->nticks,
			   (unsigned long long)e->off, why);
	free(why);
	return -1;
}
