/*
 * Snapshot files: an append-only chunk stream (see snapshot.h).
 *
 *   0   "LATOPSNP"
 *   8   u16 major, u16 minor
 *   12  u32 header body length, u32 crc32(body)
 *   20  body: u64 start_ns, u64 boot_offset_ns, u32 clock id, str host,
 *       str kernel, str status (minor versions may append; readers skip)
 *   ..  chunks: u32 type, u32 len, u32 crc32(payload), payload
 *
 * All integers little-endian; "str" and counts inside payloads are LEB128
 * varints.  SCHEMA: varint id, str table, str help, varint nfields, then per
 * field str name, u8 type, varint flags, str unit, str help.  FRAMES: u64
 * t_ns, u32 raw length, zstd(varint nframes, per frame varint table id,
 * t_ns, dt_ns, 6 stats, nrows, cells row by row).  INDEX: varint n, then n
 * (u64 t_ns, u64 offset of the FRAMES chunk).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "snapshot.h"
#include "wire.h"
#include "xalloc.h"

#define SNAP_MAGIC "LATOPSNP"
#define SNAP_HDR_BYTES 20
#define SNAP_CHUNK_HDR 12
#define SNAP_MAX_HDR_BODY 65536
#define SNAP_MAX_CHUNK (1u << 30)
#define SNAP_MAX_RAW (256u << 20)		/* a tick, decompressed */
#define SNAP_MAX_TEXT 4096			/* schema text, host, kernel */
#define SNAP_MAX_CELL_STR 65536
#define SNAP_MAX_FIELDS 256
#define SNAP_MAX_SCHEMAS 1024
#define SNAP_MAX_FRAMES 1024			/* tables per tick */
#define SNAP_MAX_ROWS 10000000
#define SNAP_MAX_HIST_BYTES (1ull << 30)	/* histogram memory per tick */
#define SNAP_ZSTD_LEVEL 3

enum snap_chunk {
	SNAP_SCHEMA = 1,
	SNAP_FRAMES = 2,
	SNAP_INDEX = 3,
};

struct snap_index_ent {
	uint64_t t_ns;
	uint64_t off;		/* of the chunk header */
	uint32_t len;		/* payload bytes */
	uint32_t nschemas;	/* SCHEMA chunks before it (reader only) */
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
	struct source_info info;
	struct schema **schemas;	/* owned; index = table id */
	size_t nschemas;
	struct snap_index_ent *ticks;
	size_t nticks;
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

/* Write one chunk (header, then payload) as a single flushed write. */
static int snap_put_chunk(struct snap_writer *w, uint32_t type, const struct wbuf *payload,
			  char **cause)
{
	struct wbuf c;
	int rc;

	if (payload->len > SNAP_MAX_CHUNK) {
		*cause = xasprintf("%s: %s chunk of %zu bytes exceeds the %u-byte limit", w->tmp,
				   snap_chunk_name(type), payload->len, SNAP_MAX_CHUNK);
		return -1;
	}
	wbuf_init(&c);
	wbuf_u32(&c, type);
	wbuf_u32(&c, (uint32_t)payload->len);
	wbuf_u32(&c, snap_crc(payload->p, payload->len));
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

/* Name the kind of file mode m is, for messages. */
static const char *snap_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

/*
 * Check that path can take a recording: nothing there, or a regular file
 * (never a device, FIFO, socket, directory or symbolic link), in a
 * directory this process can write.
 */
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
					   path, snap_kind(st.st_mode), S_ISLNK(st.st_mode) ?
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

/* Check path, create its temporary file (mode 0600) and write the header. */
struct snap_writer *snap_create(const char *path, const struct source_info *info,
				char **cause)
{
	struct snap_writer *w;
	struct timespec now;
	struct wbuf body, hdr;
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
	wbuf_init(&hdr);
	wbuf_bytes(&hdr, SNAP_MAGIC, 8);
	wbuf_u16(&hdr, SNAP_MAJOR);
	wbuf_u16(&hdr, SNAP_MINOR);
	wbuf_u32(&hdr, (uint32_t)body.len);
	wbuf_u32(&hdr, snap_crc(body.p, body.len));
	wbuf_bytes(&hdr, body.p, body.len);
	rc = snap_put(w, hdr.p, hdr.len, cause);
	wbuf_done(&body);
	wbuf_done(&hdr);
	if (rc) {
		unlink(w->tmp);
		snap_writer_free(w);
		return NULL;
	}
	return w;
}

/* Return the file the recording is written to until close. */
const char *snap_tmp_path(const struct snap_writer *w)
{
	return w->tmp;
}

/* Return how many ticks the file holds whole. */
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
	rc = snap_put_chunk(w, SNAP_SCHEMA, &b, cause);
	wbuf_done(&b);
	if (rc)
		return -1;
	w->schemas = xreallocarray(w->schemas, w->nschemas + 1, sizeof(*w->schemas));
	w->schemas[w->nschemas] = s;
	return (long)w->nschemas++;
}

/* Serialize one cell of type t. */
static void snap_put_cell(struct wbuf *b, const union cell *c, enum ftype t)
{
	switch (t) {
	case FT_STR:
		if (!c->s) {
			wbuf_varint(b, 0);
		} else {
			size_t n = strnlen(c->s, SNAP_MAX_CELL_STR);

			wbuf_varint(b, n + 1);
			wbuf_bytes(b, c->s, n);
		}
		break;
	case FT_HIST:
		wbuf_u8(b, c->h != NULL);
		if (c->h) {
			size_t need = hist_encode(c->h, wbuf_room(b, 64), 64);

			if (need > 64)
				need = hist_encode(c->h, wbuf_room(b, need), need);
			b->len += need;
		}
		break;
	case FT_IP:
		wbuf_u8(b, c->ip != NULL);
		if (c->ip) {
			wbuf_bytes(b, c->ip->a, 16);
			wbuf_u8(b, c->ip->prefix);
			wbuf_u8(b, c->ip->v4);
		}
		break;
	default:
		wbuf_varint(b, c->u);
		break;
	}
}

/* Append a tick as one FRAMES chunk (writing new schemas first). */
int snap_write_tick(struct snap_writer *w, const struct tick *t, char **cause)
{
	struct wbuf *raw = &w->raw, *out = &w->out;
	size_t i, r, k, bound, zn;
	uint64_t off;

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
		wbuf_varint(raw, f->nrows);
		for (r = 0; r < f->nrows; r++) {
			const union cell *row = frame_row(f, r);

			for (k = 0; k < s->nfields; k++)
				snap_put_cell(raw, &row[k], s->fields[k].type);
		}
	}
	if (t->nframes > SNAP_MAX_FRAMES || raw->len > SNAP_MAX_RAW) {
		*cause = xasprintf("%s: tick too large to record (%zu tables, %zu bytes)", w->tmp,
				   t->nframes, raw->len);
		return -1;
	}
	bound = ZSTD_compressBound(raw->len);
	wbuf_reset(out);
	wbuf_u64(out, t->t_ns);
	wbuf_u32(out, (uint32_t)raw->len);
	zn = ZSTD_compressCCtx(w->zc, wbuf_room(out, bound), bound, raw->p, raw->len,
			       SNAP_ZSTD_LEVEL);
	if (ZSTD_isError(zn)) {
		*cause = xasprintf("%s: compression failed: %s", w->tmp, ZSTD_getErrorName(zn));
		return -1;
	}
	out->len += zn;
	off = w->off;
	if (snap_put_chunk(w, SNAP_FRAMES, out, cause))
		return -1;
	if (w->nindex == w->capindex) {
		w->capindex = w->capindex ? 2 * w->capindex : 64;
		w->index = xreallocarray(w->index, w->capindex, sizeof(*w->index));
	}
	w->index[w->nindex++] = (struct snap_index_ent){.t_ns = t->t_ns, .off = off,
							.len = (uint32_t)out->len};
	return 0;
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
				   w->path, snap_kind(st.st_mode));
		return -1;
	}
	return 0;
}

/* Write the index, sync, and rename the temporary file to PATH. */
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

/* Stop writing, leaving the temporary file with every complete chunk. */
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
	free(r->schemas);
	free(r->ticks);
	free((char *)r->info.status);
	ZSTD_freeDCtx(r->zd);
	wbuf_done(&r->payload);
	wbuf_done(&r->raw);
	free(r->path);
	free(r);
}

/* Read exactly n bytes at off into buf; return the count actually read. */
static size_t snap_pread(struct snap_reader *r, uint64_t off, void *buf, size_t n)
{
	if (fseeko(r->f, (off_t)off, SEEK_SET) < 0)
		return 0;
	return fread(buf, 1, n, r->f);
}

/* Parse the header; return the offset of the first chunk, or 0 with *cause. */
static uint64_t snap_read_header(struct snap_reader *r, uint64_t file_bytes, char **cause)
{
	uint8_t fixed[SNAP_HDR_BYTES];
	uint16_t major, minor;
	uint32_t body_len, body_crc, clock_id;
	uint64_t start_ns;
	struct rbuf rb;
	char *host = NULL, *kernel = NULL, *status = NULL;
	size_t got = snap_pread(r, 0, fixed, sizeof(fixed));
	uint8_t *body;

	if (got < 8 || memcmp(fixed, SNAP_MAGIC, 8)) {
		*cause = xasprintf("%s: not a latop snapshot (bad magic at offset 0)", r->path);
		return 0;
	}
	if (got < sizeof(fixed)) {
		*cause = xasprintf("%s: truncated header at offset %zu (expected %d bytes, found %zu)",
				   r->path, (size_t)8, SNAP_HDR_BYTES, got);
		return 0;
	}
	rbuf_init(&rb, fixed + 8, sizeof(fixed) - 8);
	rbuf_u16(&rb, &major, "major");
	rbuf_u16(&rb, &minor, "minor");
	rbuf_u32(&rb, &body_len, "header length");
	rbuf_u32(&rb, &body_crc, "header crc");
	if (major != SNAP_MAJOR) {
		*cause = xasprintf("%s: unsupported snapshot version %u.%u (this latop reads %d.x)",
				   r->path, major, minor, SNAP_MAJOR);
		return 0;
	}
	if (body_len > SNAP_MAX_HDR_BODY || SNAP_HDR_BYTES + (uint64_t)body_len > file_bytes) {
		*cause = xasprintf("%s: truncated header at offset %d (expected %u bytes, found %llu)",
				   r->path, SNAP_HDR_BYTES, body_len,
				   (unsigned long long)(file_bytes - SNAP_HDR_BYTES));
		return 0;
	}
	body = xmalloc(body_len);
	if (snap_pread(r, SNAP_HDR_BYTES, body, body_len) != body_len ||
	    snap_crc(body, body_len) != body_crc) {
		*cause = xasprintf("%s: corrupt header at offset %d (CRC mismatch)", r->path,
				   SNAP_HDR_BYTES);
		free(body);
		return 0;
	}
	rbuf_init(&rb, body, body_len);
	if (rbuf_u64(&rb, &start_ns, "start time") ||
	    rbuf_u64(&rb, &r->info.boot_offset_ns, "boot offset") ||
	    rbuf_u32(&rb, &clock_id, "clock id") ||
	    rbuf_str(&rb, &host, SNAP_MAX_TEXT, "host") ||
	    rbuf_str(&rb, &kernel, SNAP_MAX_TEXT, "kernel") ||
	    rbuf_str(&rb, &status, SNAP_MAX_TEXT, "status")) {
		*cause = xasprintf("%s: corrupt header at offset %d: %s", r->path, SNAP_HDR_BYTES,
				   rb.err);
		rbuf_done(&rb);
		free(host);
		free(kernel);
		free(body);
		return 0;
	}
	r->info.start_ns = start_ns;
	snprintf(r->info.host, sizeof(r->info.host), "%s", host);
	snprintf(r->info.kernel, sizeof(r->info.kernel), "%s", kernel);
	r->info.status = status;
	free(host);
	free(kernel);
	free(body);
	return SNAP_HDR_BYTES + (uint64_t)body_len;
}

/* Parse a SCHEMA payload into a new schema the reader owns; -1 with rb->err. */
static int snap_parse_schema(struct snap_reader *r, struct rbuf *rb)
{
	struct schema *s = xcalloc(1, sizeof(*s));
	struct field *fl;
	uint64_t id, n, flags;
	char *table = NULL, *help = NULL;
	uint8_t type;
	size_t i;

	if (rbuf_count(rb, &id, SNAP_MAX_SCHEMAS - 1, "table id"))
		goto bad;
	if (id != r->nschemas) {
		rbuf_fail(rb, "table id %llu out of sequence (expected %zu)", (unsigned long long)id,
			  r->nschemas);
		goto bad;
	}
	if (rbuf_str(rb, &table, SNAP_MAX_TEXT, "table name") ||
	    rbuf_str(rb, &help, SNAP_MAX_TEXT, "table help") ||
	    rbuf_count(rb, &n, SNAP_MAX_FIELDS, "field count"))
		goto bad;
	if (!n) {
		rbuf_fail(rb, "table %s has no fields", table);
		goto bad;
	}
	s->table = table;
	s->help = help;
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
	r->schemas = xreallocarray(r->schemas, r->nschemas + 1, sizeof(*r->schemas));
	r->schemas[r->nschemas++] = s;
	return 0;
bad:
	if (!s->table)
		free(table);
	if (!s->help)
		free(help);
	snap_schema_free(s);
	return -1;
}

/* Decode one cell of type t into c (zeroed); -1 with rb->err. */
static int snap_get_cell(struct rbuf *rb, union cell *c, enum ftype t, uint64_t *hist_bytes)
{
	const uint8_t *p = NULL;
	uint64_t n;
	uint8_t present;
	size_t used;

	switch (t) {
	case FT_STR:
		if (rbuf_count(rb, &n, SNAP_MAX_CELL_STR + 1, "string length"))
			return -1;
		if (!n)
			return 0;
		if (rbuf_bytes(rb, &p, (size_t)n - 1, "string"))
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
		*hist_bytes += sizeof(struct hist);
		if (*hist_bytes > SNAP_MAX_HIST_BYTES)
			return rbuf_fail(rb, "histograms need more than %llu MiB",
					 SNAP_MAX_HIST_BYTES >> 20);
		c->h = hist_new();
		used = hist_decode(c->h, rb->p + rb->pos, rbuf_left(rb));
		if (!used)
			return rbuf_fail(rb, "malformed histogram");
		rb->pos += used;
		return 0;
	case FT_IP:
		if (rbuf_u8(rb, &present, "address flag"))
			return -1;
		if (!present)
			return 0;
		if (present != 1)
			return rbuf_fail(rb, "bad address flag %u", present);
		c->ip = xcalloc(1, sizeof(*c->ip));
		if (rbuf_bytes(rb, &p, 16, "address"))
			return -1;
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

/* Decode the decompressed body of a FRAMES chunk into out; -1 with rb->err. */
static int snap_decode_tick(struct snap_reader *r, struct rbuf *rb, size_t nschemas,
			    struct tick *out)
{
	uint64_t nframes, i, id, nrows, row, hist_bytes = 0;
	size_t k;

	if (rbuf_count(rb, &nframes, SNAP_MAX_FRAMES, "frame count"))
		return -1;
	for (i = 0; i < nframes; i++) {
		const struct schema *s;
		struct frame *f;
		uint64_t t_ns, dt_ns;

		if (rbuf_varint(rb, &id, "table id"))
			return -1;
		if (id >= nschemas)
			return rbuf_fail(rb, "table id %llu has no SCHEMA chunk before it",
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
		    rbuf_count(rb, &nrows, SNAP_MAX_ROWS, "row count"))
			return -1;
		/* Every cell takes at least one byte: refuse counts the payload cannot hold. */
		if (nrows > rbuf_left(rb) / s->nfields)
			return rbuf_fail(rb, "%llu rows of %zu fields do not fit in %zu bytes",
					 (unsigned long long)nrows, s->nfields, rbuf_left(rb));
		for (row = 0; row < nrows; row++) {
			union cell *c = frame_add_row(f);

			for (k = 0; k < s->nfields; k++)
				if (snap_get_cell(rb, &c[k], s->fields[k].type, &hist_bytes))
					return -1;
		}
	}
	if (rbuf_left(rb))
		return rbuf_fail(rb, "%zu bytes left over", rbuf_left(rb));
	return 0;
}

/* What the uncompressed head of a FRAMES payload says. */
struct snap_frames_head {
	uint64_t t_ns;
	uint32_t raw_len;	/* decompressed bytes */
	const uint8_t *z;	/* the zstd frame */
	size_t zlen;
};

/*
 * Check a FRAMES payload (in r->payload) without decompressing it: its CRC,
 * the tick time and length, and the zstd frame's header and block walk.
 * Return 0 with *h, or -1 with *why (neither path nor offset).
 */
static int snap_frames_head(struct snap_reader *r, uint32_t crc, struct snap_frames_head *h,
			    char **why)
{
	unsigned long long content;
	size_t zsize;
	struct rbuf rb;

	if (snap_crc(r->payload.p, r->payload.len) != crc) {
		*why = xstrdup("bad CRC");
		return -1;
	}
	rbuf_init(&rb, r->payload.p, r->payload.len);
	if (rbuf_u64(&rb, &h->t_ns, "tick time") || rbuf_u32(&rb, &h->raw_len, "tick length")) {
		*why = xasprintf("corrupt head (%s)", rb.err);
		rbuf_done(&rb);
		return -1;
	}
	h->z = rb.p + rb.pos;
	h->zlen = rbuf_left(&rb);
	content = ZSTD_getFrameContentSize(h->z, h->zlen);
	if (h->raw_len > SNAP_MAX_RAW || content != h->raw_len) {
		*why = xasprintf("bad zstd frame (%u bytes declared, frame says %lld, limit %u MiB)",
				 h->raw_len, (long long)content, SNAP_MAX_RAW >> 20);
		return -1;
	}
	zsize = ZSTD_findFrameCompressedSize(h->z, h->zlen);
	if (ZSTD_isError(zsize) || zsize != h->zlen) {
		*why = xasprintf("bad zstd frame (%s in %zu bytes)",
				 ZSTD_isError(zsize) ? ZSTD_getErrorName(zsize) : "trailing bytes",
				 h->zlen);
		return -1;
	}
	return 0;
}

/*
 * Decompress and decode the FRAMES payload h points into (in r->payload),
 * resolving table ids among the first nschemas schemas.  Return 0 with out
 * filled, or -1 with *why (neither path nor offset) and out empty.
 */
static int snap_decode_frames(struct snap_reader *r, const struct snap_frames_head *h,
			      size_t nschemas, struct tick *out, char **why)
{
	struct rbuf rb;
	size_t zn;

	wbuf_reset(&r->raw);
	/* One spare byte, so an empty tick still points into a buffer, not NULL. */
	zn = ZSTD_decompressDCtx(r->zd, wbuf_room(&r->raw, (size_t)h->raw_len + 1), h->raw_len,
				 h->z, h->zlen);
	if (ZSTD_isError(zn) || zn != h->raw_len) {
		*why = xasprintf("bad zstd frame: %s",
				 ZSTD_isError(zn) ? ZSTD_getErrorName(zn) : "short output");
		return -1;
	}
	rbuf_init(&rb, r->raw.p, h->raw_len);
	tick_init(out, h->t_ns);
	if (snap_decode_tick(r, &rb, nschemas, out)) {
		*why = xasprintf("corrupt FRAMES payload: %s of its %u decompressed bytes", rb.err,
				 h->raw_len);
		rbuf_done(&rb);
		tick_done(out);
		return -1;
	}
	return 0;
}

/* Read a chunk's payload at off into r->payload; return bytes read. */
static size_t snap_read_payload(struct snap_reader *r, uint64_t off, uint32_t len)
{
	wbuf_reset(&r->payload);
	/* One spare byte, so an empty payload still points into a buffer, not NULL. */
	r->payload.len = snap_pread(r, off + SNAP_CHUNK_HDR, wbuf_room(&r->payload, (size_t)len + 1),
				    len);
	return r->payload.len;
}

/* Check a SCHEMA or INDEX chunk in r->payload; -1 with *why. */
static int snap_load_other(struct snap_reader *r, uint64_t off, uint32_t type, uint32_t crc,
			   char **why)
{
	struct rbuf rb;

	if (snap_crc(r->payload.p, r->payload.len) != crc) {
		*why = xasprintf("bad CRC in %s chunk at offset %llu", snap_chunk_name(type),
				 (unsigned long long)off);
		return -1;
	}
	if (type != SNAP_SCHEMA)
		return 0;
	rbuf_init(&rb, r->payload.p, r->payload.len);
	if (snap_parse_schema(r, &rb)) {
		*why = xasprintf("corrupt SCHEMA chunk at offset %llu: %s of its payload",
				 (unsigned long long)off, rb.err);
		rbuf_done(&rb);
		return -1;
	}
	return 0;
}

/* Walk every chunk after the header; stop at the first damage, described in *why. */
static void snap_scan(struct snap_reader *r, uint64_t off, uint64_t file_bytes, char **why)
{
	size_t cap = 0;

	while (off < file_bytes) {
		uint8_t hdr[SNAP_CHUNK_HDR];
		uint32_t type, len, crc;
		uint64_t left = file_bytes - off;
		struct snap_frames_head h;
		struct rbuf rb;
		char *hwhy = NULL;

		if (left < SNAP_CHUNK_HDR || snap_pread(r, off, hdr, sizeof(hdr)) != sizeof(hdr)) {
			*why = xasprintf("truncated chunk header at offset %llu (expected %d bytes, "
					 "found %llu)", (unsigned long long)off, SNAP_CHUNK_HDR,
					 (unsigned long long)(left < SNAP_CHUNK_HDR ? left : 0));
			return;
		}
		rbuf_init(&rb, hdr, sizeof(hdr));
		rbuf_u32(&rb, &type, "type");
		rbuf_u32(&rb, &len, "length");
		rbuf_u32(&rb, &crc, "crc");
		if (len > SNAP_MAX_CHUNK) {
			*why = xasprintf("corrupt chunk at offset %llu (length %u exceeds %u)",
					 (unsigned long long)off, len, SNAP_MAX_CHUNK);
			return;
		}
		if (len > left - SNAP_CHUNK_HDR || snap_read_payload(r, off, len) != len) {
			*why = xasprintf("truncated chunk at offset %llu (expected %u bytes, found "
					 "%llu)", (unsigned long long)off, len,
					 (unsigned long long)(left - SNAP_CHUNK_HDR));
			return;
		}
		if (type == SNAP_FRAMES) {
			if (snap_frames_head(r, crc, &h, &hwhy)) {
				*why = xasprintf("%s in FRAMES chunk at offset %llu", hwhy,
						 (unsigned long long)off);
				free(hwhy);
				return;
			}
			if (r->nticks == cap) {
				cap = cap ? 2 * cap : 64;
				r->ticks = xreallocarray(r->ticks, cap, sizeof(*r->ticks));
			}
			r->ticks[r->nticks++] = (struct snap_index_ent){
				.t_ns = h.t_ns, .off = off, .len = len,
				.nschemas = (uint32_t)r->nschemas};
		} else if (snap_load_other(r, off, type, crc, why)) {
			return;
		}
		off += SNAP_CHUNK_HDR + (uint64_t)len;
	}
}

/*
 * Open a snapshot, keeping every tick before any damage.  Chunks are checked
 * for structure and CRC, SCHEMA chunks parsed, and FRAMES chunks only up to
 * their zstd frame header; ticks are decoded by snap_read_tick.
 */
struct snap_reader *snap_open(const char *path, char **cause, char **warning)
{
	struct snap_reader *r = xcalloc(1, sizeof(*r));
	char *why = NULL;
	struct stat st;
	uint64_t off;

	*warning = NULL;
	r->path = xstrdup(path);
	wbuf_init(&r->payload);
	wbuf_init(&r->raw);
	r->f = fopen(path, "rbe");
	if (!r->f || fstat(fileno(r->f), &st) < 0) {
		*cause = xasprintf("%s: cannot open: %s", path, strerror(errno));
		snap_free(r);
		return NULL;
	}
	r->zd = ZSTD_createDCtx();
	off = snap_read_header(r, (uint64_t)st.st_size, cause);
	if (!off) {
		snap_free(r);
		return NULL;
	}
	snap_scan(r, off, (uint64_t)st.st_size, &why);
	if (why && !r->nticks) {
		*cause = xasprintf("%s: %s", path, why);
		free(why);
		snap_free(r);
		return NULL;
	}
	if (why) {
		*warning = xasprintf("%s: %s; kept %zu tick%s before it", path, why, r->nticks,
				     r->nticks == 1 ? "" : "s");
		free(why);
	}
	r->info.nticks = r->nticks;
	r->info.nschemas = r->nschemas;
	r->info.schemas = (const struct schema *const *)r->schemas;
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

/* Read and decode tick idx into out; a failure names the tick and its offset. */
int snap_read_tick(struct snap_reader *r, size_t idx, struct tick *out, char **cause)
{
	const struct snap_index_ent *e;
	struct snap_frames_head h;
	uint8_t hdr[SNAP_CHUNK_HDR] = {0};
	uint32_t type, len, crc;
	struct rbuf rb;
	char *why = NULL;
	size_t got;

	if (idx >= r->nticks) {
		*cause = xasprintf("%s: tick %zu out of range (the file has %zu)", r->path, idx,
				   r->nticks);
		return -1;
	}
	e = &r->ticks[idx];
	got = snap_pread(r, e->off, hdr, sizeof(hdr));
	rbuf_init(&rb, hdr, sizeof(hdr));
	rbuf_u32(&rb, &type, "type");
	rbuf_u32(&rb, &len, "length");
	rbuf_u32(&rb, &crc, "crc");
	if (got != sizeof(hdr) || type != SNAP_FRAMES || len != e->len || snap_read_payload(r, e->off, len) != len) {
		*cause = xasprintf("%s: tick %zu of %zu at offset %llu: chunk can no longer be "
				   "read (file changed?)", r->path, idx + 1, r->nticks,
				   (unsigned long long)e->off);
		return -1;
	}
	if (snap_frames_head(r, crc, &h, &why) ||
	    snap_decode_frames(r, &h, e->nschemas, out, &why)) {
		*cause = xasprintf("%s: tick %zu of %zu at offset %llu: %s", r->path, idx + 1,
				   r->nticks, (unsigned long long)e->off, why);
		free(why);
		return -1;
	}
	return 0;
}
