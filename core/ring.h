/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Continuous recording: a directory of recordings that `latop record -o DIR
 * --rotate ... --keep ...` writes one after the other, and that replay and
 * report read back as one.
 *
 * Each file of the ring is a whole recording (core/snapshot.h: its own
 * header, schemas and index), named by the time it was started, in UTC to
 * the millisecond: DIR/latop-YYYYMMDDTHHMMSS.mmmZ.snap, so that names sort
 * as the files follow each other.  It is written as NAME.snap.tmp and
 * renamed at its close, as any recording; a killed recorder leaves the
 * .tmp, whose complete chunks all read.  A tick goes whole into one file.
 *
 * Rotation by time is aligned on multiples of the period since the Unix
 * epoch (1h rotates on the hour): the first tick written at or after a
 * boundary starts the next file (a file still without a tick at its
 * boundary keeps it, and rotates at the next).  Rotation by size starts the next file
 * before a tick that would take the current one past the size once closed
 * (a file holds at least one tick).  Keeping by count, age or size deletes
 * the oldest finished files of the scheme, and never any other file, each
 * time a file is finished.
 */
#ifndef LATOP_RING_H
#define LATOP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"
#include "source.h"

#define RING_MIN_PERIOD_NS 1000000000ull	/* --rotate: a file a second at most */
#define RING_MIN_BYTES 4096ull			/* --rotate/--keep SIZE: a header and a tick */
#define RING_NAME_MAX 64			/* "latop-YYYYMMDDTHHMMSS.mmmZ.snap.tmp" and NUL */

enum ring_kind {
	RING_NONE,
	RING_TIME,	/* v: nanoseconds */
	RING_SIZE,	/* v: bytes */
	RING_COUNT,	/* v: files */
};

struct ring_limit {
	enum ring_kind kind;
	uint64_t v;
};

/* A file of the ring, as ring_list finds it. */
struct ring_file {
	char *path;
	uint64_t start_ns;	/* from its name (CLOCK_REALTIME) */
	uint64_t bytes;
	bool tmp;		/* NAME.snap.tmp: being written, or its recorder was killed */
};

/*
 * Parse what --rotate (count_ok false) or --keep (count_ok true) is given:
 * a duration with a unit (s, m, h, d: 90s, 1.5h, 7d), a size with a unit
 * (B, K, M, G, T, also KB/KiB and so on, all powers of 1024), or for --keep
 * a bare whole number of files.  At least RING_MIN_PERIOD_NS,
 * RING_MIN_BYTES or 1 file.  0, or -1 with *cause saying what is wrong.
 */
int ring_parse_limit(const char *s, bool count_ok, struct ring_limit *out, char **cause);

/* Write the name of a file started at real time ns into buf (RING_NAME_MAX
 * bytes): "latop-20261127T021500.123Z.snap". */
void ring_name(uint64_t ns, char *buf, size_t size);
/* Whether name is a ring file's, finished ("....snap") or, when tmp is not
 * NULL, also being written ("....snap.tmp", *tmp then true); its start time
 * in *ns. */
bool ring_name_parse(const char *name, uint64_t *ns, bool *tmp);
/* The first boundary of a period_ns rotation after now_ns: the next multiple
 * of period_ns since the epoch. */
uint64_t ring_next_boundary(uint64_t now_ns, uint64_t period_ns);

/*
 * How many of files[0..n) (finished files, oldest first) keep deletes at
 * now_ns: by count, the ones beyond the newest v; by size, the oldest until
 * the rest hold at most v bytes; by age, the ones that ended (the next
 * one's start) more than v ago.  The newest is never counted.
 */
size_t ring_prune_count(const struct ring_file *files, size_t n, const struct ring_limit *keep,
			uint64_t now_ns);

/*
 * The ring files in dir, in name (time) order, regular files only, the ones
 * being written too when with_tmp: 0 with *files (ring_files_free) and *n,
 * or -1 with *cause.
 */
int ring_list(const char *dir, bool with_tmp, struct ring_file **files, size_t *n, char **cause);
void ring_files_free(struct ring_file *files, size_t n);
/* Delete the finished files of dir keep does not keep at now_ns (see
 * ring_prune_count), and the unfinished ones (NAME.snap.tmp) with them when
 * with_tmp (none is being written): how many, or -1 with *cause naming the
 * file. */
long ring_prune(const char *dir, const struct ring_limit *keep, bool with_tmp, uint64_t now_ns,
		char **cause);

struct ring_writer;

/*
 * Start a ring in dir (which must exist), its first file named by now_ns
 * (a name taken is passed for the next millisecond).  rotate RING_NONE
 * writes one file.  keep applies each time a file is finished, to the
 * unfinished files a killed recorder left too: the ring holds dir locked
 * (flock) until it is closed, and a second ring in it is refused.  NULL
 * with *cause.
 */
struct ring_writer *ring_open(const char *dir, const struct ring_limit *rotate,
			      const struct ring_limit *keep, const struct source_info *info,
			      uint64_t now_ns, char **cause);
/* Write tick t (real time now_ns), in a new file first if a boundary passed
 * or the size would; -1 with *cause, the files finished so far and every
 * tick of the current one kept. */
int ring_write_tick(struct ring_writer *rw, const struct tick *t, uint64_t now_ns,
		    char **cause);
/* The file being written (NAME.snap.tmp). */
const char *ring_tmp_path(const struct ring_writer *rw);
/* Ticks written in all, and files started. */
size_t ring_ticks_written(const struct ring_writer *rw);
size_t ring_files_started(const struct ring_writer *rw);
/* Ticks the file being written holds whole (0 when none is). */
size_t ring_current_ticks(const struct ring_writer *rw);
/* Finish the current file and apply keep.  Frees rw. */
int ring_close(struct ring_writer *rw, uint64_t now_ns, char **cause);
/* Leave the current file as it is (readable).  Frees rw. */
void ring_abandon(struct ring_writer *rw);

/*
 * Which of recordings infos[0..n) follow each other: one host's files whose
 * ticks come one after the other in time (the first tick of each after the
 * last of the one before) form a chain, read as one recording; files of
 * other hosts, or of one host overlapping in time, start chains of their
 * own.  Fills chain[i] with recording i's chain (numbered in order of first
 * appearance) and returns how many; order[0..n) lists the recordings chain
 * by chain, each chain's in time order.
 */
size_t ring_chains(const struct source_info *const *infos, size_t n, size_t *chain,
		   size_t *order);

/*
 * One source over srcs[0..n) (taken over), recordings of one host that
 * follow each other: their ticks in turn, seek and tell over all of them as
 * one range.  Its info: the first file's header, the range from the first
 * tick to the last, every file's tables (the first file's schema of one that
 * several hold) and warnings.  NULL with *cause when n is 0.
 */
struct source *chain_open(struct source **srcs, size_t n, char **cause);

#endif
