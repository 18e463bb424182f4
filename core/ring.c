/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Rings of recordings: naming, rotation, keeping, and reading them as one (see ring.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ring.h"
#include "xalloc.h"

#define RING_MAX_VALUE (1ull << 62)	/* past any size or duration a ring can hold */

int ring_parse_limit(const char *s, bool count_ok, struct ring_limit *out, char **cause)
{
	static const struct { const char *unit; enum ring_kind kind; uint64_t mult; } units[] = {
		{"s", RING_TIME, 1000000000ull}, {"m", RING_TIME, 60000000000ull},
		{"h", RING_TIME, 3600000000000ull}, {"d", RING_TIME, 86400000000000ull},
		{"B", RING_SIZE, 1}, {"K", RING_SIZE, 1ull << 10}, {"KB", RING_SIZE, 1ull << 10},
		{"KiB", RING_SIZE, 1ull << 10}, {"M", RING_SIZE, 1ull << 20},
		{"MB", RING_SIZE, 1ull << 20}, {"MiB", RING_SIZE, 1ull << 20},
		{"G", RING_SIZE, 1ull << 30}, {"GB", RING_SIZE, 1ull << 30},
		{"GiB", RING_SIZE, 1ull << 30}, {"T", RING_SIZE, 1ull << 40},
		{"TB", RING_SIZE, 1ull << 40}, {"TiB", RING_SIZE, 1ull << 40},
	};
	const char *hint = count_ok ? "a duration (24h, 90m), a size (10G) or a number of files (48)"
				    : "a duration (1h, 30s) or a size (100M)";
	char *end;
	double v, x;
	size_t i;

	if (!isdigit((unsigned char)*s) && *s != '.') {
		*cause = xasprintf("'%s' is not %s", s, hint);
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(v)) {
		*cause = xasprintf("'%s' is not %s", s, hint);
		return -1;
	}
	if (!*end) {
		if (!count_ok) {
			*cause = xasprintf("'%s' needs a unit: %s", s, hint);
			return -1;
		}
		if (v != floor(v) || v < 1 || v > 1e9) {
			*cause = xasprintf("'%s': a number of files is a whole number from 1 to "
					   "1000000000", s);
			return -1;
		}
		*out = (struct ring_limit){RING_COUNT, (uint64_t)v};
		return 0;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		x = v * (double)units[i].mult;
		if (x > (double)RING_MAX_VALUE) {
			*cause = xasprintf("'%s' is too large", s);
			return -1;
		}
		out->kind = units[i].kind;
		out->v = (uint64_t)(x + 0.5);
		if (out->kind == RING_TIME && out->v < RING_MIN_PERIOD_NS) {
			*cause = xasprintf("'%s' is shorter than the 1s minimum", s);
			return -1;
		}
		if (out->kind == RING_SIZE && out->v < RING_MIN_BYTES) {
			*cause = xasprintf("'%s' is smaller than the %llu-byte minimum", s,
					   RING_MIN_BYTES);
			return -1;
		}
		return 0;
	}
	*cause = xasprintf("unknown unit '%s' in '%s': %s", end, s, hint);
	return -1;
}

void ring_name(uint64_t ns, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, size, "latop-%04d%02d%02dT%02d%02d%02d.%03uZ.snap", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ns / 1000000ull % 1000));
}

bool ring_name_parse(const char *name, uint64_t *ns, bool *tmp)
{
	/* Exactly the digits ring_name writes, at their places. */
	static const char pattern[] = "latop-DDDDDDDDTDDDDDD.DDDZ.snap";
	size_t len = strlen(name), plen = sizeof(pattern) - 1, i;
	unsigned y, mo, d, h, mi, s, ms;
	struct tm tm = {0};
	char back[RING_NAME_MAX];
	time_t sec;

	if (len == plen + 4 && tmp && !strcmp(name + plen, ".tmp")) {
		*tmp = true;
	} else if (len == plen) {
		if (tmp)
			*tmp = false;
	} else {
		return false;
	}
	for (i = 0; i < plen; i++)
		if (pattern[i] == 'D' ? !isdigit((unsigned char)name[i]) : name[i] != pattern[i])
			return false;
	if (sscanf(name, "latop-%4u%2u%2uT%2u%2u%2u.%3uZ", &y, &mo, &d, &h, &mi, &s, &ms) != 7)
		return false;
	tm.tm_year = (int)y - 1900;
	tm.tm_mon = (int)mo - 1;
	tm.tm_mday = (int)d;
	tm.tm_hour = (int)h;
	tm.tm_min = (int)mi;
	tm.tm_sec = (int)s;
	sec = timegm(&tm);
	if (sec < 0)
		return false;
	*ns = (uint64_t)sec * 1000000000ull + ms * 1000000ull;
	/* A date that does not exist (month 13, 31 February) does not name back. */
	ring_name(*ns, back, sizeof(back));
	return !strncmp(back, name, plen);
}

uint64_t ring_next_boundary(uint64_t now_ns, uint64_t period_ns)
{
	return (now_ns / period_ns + 1) * period_ns;
}

size_t ring_prune_count(const struct ring_file *files, size_t n, const struct ring_limit *keep,
			uint64_t now_ns)
{
	uint64_t total = 0, end;
	size_t k = 0, i;

	if (n < 2)
		return 0;
	switch (keep->kind) {
	case RING_COUNT:
		k = n > keep->v ? n - keep->v : 0;
		break;
	case RING_SIZE:
		for (i = 0; i < n; i++)
			total += files[i].bytes;
		while (k < n && total > keep->v) {
			total -= files[k].bytes;
			k++;
		}
		break;
	case RING_TIME:
		for (k = 0; k < n; k++) {
			end = k + 1 < n ? files[k + 1].start_ns : now_ns;
			if (end + keep->v >= now_ns)
				break;
		}
		break;
	case RING_NONE:
		break;
	}
	return k < n ? k : n - 1;
}

/* Order ring files by name. */
static int ring_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ring_file *)a)->path, ((const struct ring_file *)b)->path);
}

int ring_list(const char *dir, bool with_tmp, struct ring_file **files, size_t *n, char **cause)
{
	struct ring_file *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	uint64_t ns;
	bool tmp;
	DIR *d = opendir(dir);

	if (!d) {
		*cause = xasprintf("%s: cannot read the directory: %s", dir, strerror(errno));
		return -1;
	}
	while ((errno = 0, de = readdir(d))) {
		char *path;

		if (!ring_name_parse(de->d_name, &ns, with_tmp ? &tmp : NULL))
			continue;
		if (!with_tmp)
			tmp = false;
		path = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		if (cnt == cap) {
			cap = cap ? 2 * cap : 32;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[cnt++] = (struct ring_file){path, ns, (uint64_t)st.st_size, tmp};
	}
	if (errno) {
		*cause = xasprintf("%s: cannot read the directory: %s", dir, strerror(errno));
		closedir(d);
		ring_files_free(v, cnt);
		return -1;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), ring_file_cmp);
	*files = v;
	*n = cnt;
	return 0;
}

void ring_files_free(struct ring_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
}

long ring_prune(const char *dir, const struct ring_limit *keep, bool with_tmp, uint64_t now_ns,
		char **cause)
{
	struct ring_file *files;
	size_t n, k, i;
	long done = 0;

	if (keep->kind == RING_NONE)
		return 0;
	if (ring_list(dir, with_tmp, &files, &n, cause) < 0)
		return -1;
	k = ring_prune_count(files, n, keep, now_ns);
	for (i = 0; i < k; i++) {
		if (unlink(files[i].path) < 0 && errno != ENOENT) {
			*cause = xasprintf("%s: cannot delete (--keep): %s", files[i].path,
					   strerror(errno));
			ring_files_free(files, n);
			return -1;
		}
		done++;
	}
	ring_files_free(files, n);
	return done;
}

struct ring_writer {
	char *dir;
	int dirfd;			/* dir, locked (flock) while the ring writes it */
	struct ring_limit rotate, keep;
	struct source_info info;	/* the header every file gets */
	struct snap_writer *w;
	uint64_t boundary;		/* RING_TIME: when the next file starts */
	uint64_t last_name_ns;		/* the newest file's name */
	size_t ticks, files;
};

/* Start the next file, named by now_ns or the first free millisecond after
 * the newest name; -1 with *cause. */
static int ring_start(struct ring_writer *rw, uint64_t now_ns, char **cause)
{
	char name[RING_NAME_MAX];
	struct stat st;
	uint64_t ns = now_ns / 1000000 * 1000000;

	if (rw->files && ns <= rw->last_name_ns)
		ns = rw->last_name_ns + 1000000;
	for (;; ns += 1000000) {
		char *path, *tmp;
		bool taken;

		ring_name(ns, name, sizeof(name));
		path = xasprintf("%s/%s", rw->dir, name);
		tmp = xasprintf("%s.tmp", path);
		taken = lstat(path, &st) == 0 || lstat(tmp, &st) == 0;
		free(tmp);
		if (!taken) {
			rw->w = snap_create(path, &rw->info, cause);
			free(path);
			if (!rw->w)
				return -1;
			break;
		}
		free(path);
	}
	rw->last_name_ns = ns;
	rw->files++;
	if (rw->rotate.kind == RING_TIME)
		rw->boundary = ring_next_boundary(now_ns, rw->rotate.v);
	return 0;
}

struct ring_writer *ring_open(const char *dir, const struct ring_limit *rotate,
			      const struct ring_limit *keep, const struct source_info *info,
			      uint64_t now_ns, char **cause)
{
	struct ring_writer *rw = xcalloc(1, sizeof(*rw));

	rw->dir = xstrdup(dir);
	while (strlen(rw->dir) > 1 && rw->dir[strlen(rw->dir) - 1] == '/')
		rw->dir[strlen(rw->dir) - 1] = '\0';
	rw->rotate = *rotate;
	rw->keep = *keep;
	if (info)
		rw->info = *info;
	rw->dirfd = open(rw->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rw->dirfd < 0) {
		*cause = xasprintf("%s: cannot open the directory: %s", rw->dir, strerror(errno));
	} else if (flock(rw->dirfd, LOCK_EX | LOCK_NB) < 0) {
		*cause = errno == EWOULDBLOCK ?
			 xasprintf("%s: another latop record is writing a ring in this directory",
				   rw->dir) :
			 xasprintf("%s: cannot lock the directory: %s", rw->dir, strerror(errno));
	} else if (ring_start(rw, now_ns, cause) == 0) {
		return rw;
	}
	if (rw->dirfd >= 0)
		close(rw->dirfd);
	free(rw->dir);
	free(rw);
	return NULL;
}

/* Finish the current file and apply keep; -1 with *cause. */
static int ring_finish(struct ring_writer *rw, uint64_t now_ns, char **cause)
{
	int rc = snap_close(rw->w, cause);

	rw->w = NULL;
	if (rc < 0)
		return -1;
	/* The directory is this ring's alone (ring_open locked it), and its
	 * own file is finished: a NAME.snap.tmp there is a killed recorder's. */
	return ring_prune(rw->dir, &rw->keep, true, now_ns, cause) < 0 ? -1 : 0;
}

int ring_write_tick(struct ring_writer *rw, const struct tick *t, uint64_t now_ns,
		    char **cause)
{
	int r;

	if (!rw->w) {
		*cause = xasprintf("%s: the ring stopped at an earlier error", rw->dir);
		return -1;
	}
	/* A file that holds no tick yet at its boundary takes the next period. */
	if (rw->rotate.kind == RING_TIME && now_ns >= rw->boundary && !snap_ticks_written(rw->w))
		rw->boundary = ring_next_boundary(now_ns, rw->rotate.v);
	if (rw->rotate.kind == RING_TIME && now_ns >= rw->boundary &&
	    (ring_finish(rw, now_ns, cause) < 0 || ring_start(rw, now_ns, cause) < 0))
		return -1;
	if (rw->rotate.kind == RING_SIZE) {
		r = snap_write_tick_max(rw->w, t, rw->rotate.v, cause);
		if (r == 1 && (ring_finish(rw, now_ns, cause) < 0 || ring_start(rw, now_ns, cause) < 0))
			return -1;
		if (r == 1)
			r = snap_write_tick(rw->w, t, cause);
	} else {
		r = snap_write_tick(rw->w, t, cause);
	}
	if (r < 0)
		return -1;
	rw->ticks++;
	return 0;
}

const char *ring_tmp_path(const struct ring_writer *rw)
{
	return rw->w ? snap_tmp_path(rw->w) : NULL;
}

size_t ring_ticks_written(const struct ring_writer *rw)
{
	return rw->ticks;
}

size_t ring_files_started(const struct ring_writer *rw)
{
	return rw->files;
}

size_t ring_current_ticks(const struct ring_writer *rw)
{
	return rw->w ? snap_ticks_written(rw->w) : 0;
}

int ring_close(struct ring_writer *rw, uint64_t now_ns, char **cause)
{
	int rc = rw->w ? ring_finish(rw, now_ns, cause) : 0;

	close(rw->dirfd);
	free(rw->dir);
	free(rw);
	return rc;
}

void ring_abandon(struct ring_writer *rw)
{
	if (!rw)
		return;
	snap_abandon(rw->w);
	close(rw->dirfd);
	free(rw->dir);
	free(rw);
}

/* Where a recording starts in time: its first tick, else its header's start. */
static uint64_t ring_first(const struct source_info *in)
{
	return in->nticks && in->t_first_ns ? in->t_first_ns : in->start_ns;
}

/* Where it ends: its last tick, else its start. */
static uint64_t ring_last(const struct source_info *in)
{
	return in->nticks && in->t_last_ns ? in->t_last_ns : ring_first(in);
}

size_t ring_chains(const struct source_info *const *infos, size_t n, size_t *chain,
		   size_t *order)
{
	size_t *by_time = xcalloc(n ? n : 1, sizeof(*by_time));
	size_t *tail = xcalloc(n ? n : 1, sizeof(*tail));	/* each chain's newest member */
	size_t i, j, k, nchains = 0, o = 0;

	/* Recordings by start time (insertion: rings are short lists). */
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && ring_first(infos[by_time[j - 1]]) > ring_first(infos[i]); j--)
			by_time[j] = by_time[j - 1];
		by_time[j] = i;
	}
	/* Each joins the first chain of its host that ended before it began. */
	for (k = 0; k < n; k++) {
		const struct source_info *in = infos[by_time[k]];

		for (j = 0; j < nchains; j++) {
			const struct source_info *t = infos[tail[j]];

			if (!strcmp(t->host, in->host) && ring_last(t) < ring_first(in))
				break;
		}
		if (j == nchains)
			nchains++;
		tail[j] = by_time[k];
		chain[by_time[k]] = j;
	}
	/* Number chains by their first appearance in infos. */
	for (i = 0; i < nchains; i++)
		tail[i] = SIZE_MAX;
	for (i = 0, k = 0; i < n; i++)
		if (tail[chain[i]] == SIZE_MAX)
			tail[chain[i]] = k++;
	for (i = 0; i < n; i++)
		chain[i] = tail[chain[i]];
	for (j = 0; j < nchains; j++)
		for (k = 0; k < n; k++)
			if (chain[by_time[k]] == j)
				order[o++] = by_time[k];
	free(by_time);
	free(tail);
	return nchains;
}

struct chain {
	struct source **srcs;
	size_t n, cur;
	size_t *first;			/* index of each file's first tick; first[n]: the total */
	struct source_info info;
	const struct schema **schemas;
	char *warning, *status;
};

/* The next tick of the current file, or of the ones after it; 2 past the last. */
static int chain_read(struct source *s, struct tick *out, int timeout_ms, char **cause)
{
	struct chain *c = s->priv;
	int r;

	while (c->cur < c->n) {
		r = source_read(c->srcs[c->cur], out, timeout_ms, cause);
		if (r != 2)
			return r;
		if (c->cur + 1 == c->n)
			return 2;
		c->cur++;
		if (c->srcs[c->cur]->ops->seek(c->srcs[c->cur], 0, cause) < 0)
			return -1;
	}
	return 2;
}

/* Position the file holding tick idx. */
static int chain_seek(struct source *s, size_t idx, char **cause)
{
	struct chain *c = s->priv;
	size_t k;

	if (idx > c->first[c->n]) {
		*cause = xasprintf("tick %zu out of range (the recordings have %zu)", idx,
				   c->first[c->n]);
		return -1;
	}
	for (k = 0; k + 1 < c->n && idx >= c->first[k + 1]; k++)
		;
	c->cur = k;
	return c->srcs[k]->ops->seek(c->srcs[k], idx - c->first[k], cause);
}

/* The index of the tick the next read returns. */
static size_t chain_tell(struct source *s)
{
	struct chain *c = s->priv;

	return c->first[c->cur] + c->srcs[c->cur]->ops->tell(c->srcs[c->cur]);
}

static const struct source_info *chain_info(struct source *s)
{
	return &((struct chain *)s->priv)->info;
}

static void chain_close(struct source *s)
{
	struct chain *c = s->priv;

	for (size_t i = 0; i < c->n; i++)
		source_close(c->srcs[i]);
	free(c->srcs);
	free(c->first);
	free(c->schemas);
	free(c->warning);
	free(c->status);
	free(c);
	free(s);
}

static const struct source_ops chain_ops = {
	.name = "replay",
	.read = chain_read,
	.seek = chain_seek,
	.tell = chain_tell,
	.info = chain_info,
	.close = chain_close,
};

struct source *chain_open(struct source **srcs, size_t n, char **cause)
{
	struct source *s;
	struct chain *c;
	size_t i, k, j, cap = 0;

	if (!n) {
		*cause = xstrdup("no recordings to read");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->srcs = xcalloc(n, sizeof(*c->srcs));
	memcpy(c->srcs, srcs, n * sizeof(*srcs));
	c->n = n;
	c->first = xcalloc(n + 1, sizeof(*c->first));
	c->info = *srcs[0]->ops->info(srcs[0]);
	c->info.nschemas = 0;
	c->info.nticks = 0;
	c->info.t_first_ns = c->info.t_last_ns = 0;
	for (i = 0; i < n; i++) {
		const struct source_info *in = srcs[i]->ops->info(srcs[i]);

		c->first[i] = c->info.nticks;
		c->info.nticks += in->nticks;
		if (in->nticks && !c->info.t_first_ns)
			c->info.t_first_ns = in->t_first_ns;
		if (in->nticks && in->t_last_ns > c->info.t_last_ns)
			c->info.t_last_ns = in->t_last_ns;
		if (in->interval_ns != c->info.interval_ns)
			c->info.interval_ns = 0;	/* the files do not agree */
		for (k = 0; k < in->nschemas; k++) {
			for (j = 0; j < c->info.nschemas; j++)
				if (!strcmp(c->schemas[j]->table, in->schemas[k]->table))
					break;
			if (j < c->info.nschemas)
				continue;
			if (c->info.nschemas == cap) {
				cap = cap ? 2 * cap : 16;
				c->schemas = xreallocarray(c->schemas, cap, sizeof(*c->schemas));
			}
			c->schemas[c->info.nschemas++] = in->schemas[k];
		}
		if (in->warning) {
			char *w = c->warning ? xasprintf("%s; %s", c->warning, in->warning)
					     : xstrdup(in->warning);

			free(c->warning);
			c->warning = w;
		}
	}
	c->first[n] = c->info.nticks;
	c->info.schemas = c->schemas;
	c->info.warning = c->warning;
	if (n > 1) {
		const struct source_info *a = srcs[0]->ops->info(srcs[0]);
		const struct source_info *b = srcs[n - 1]->ops->info(srcs[n - 1]);

		c->status = xasprintf("%s%sreplay of %zu recordings, %s to %s", c->warning ?
				      c->warning : "", c->warning ? "; " : "", n,
				      a->path ? a->path : "?", b->path ? b->path : "?");
		c->info.status = c->status;
	}
	s = xcalloc(1, sizeof(*s));
	s->ops = &chain_ops;
	s->priv = c;
	return s;
}
