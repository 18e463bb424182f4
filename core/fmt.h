/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Human formatting of durations, sizes, counts and times (TUI and reports),
 * and the closest word to a misspelt one. */
#ifndef LATOP_FMT_H
#define LATOP_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Room for any fmt_* result. */
#define FMT_BUF 32

/* Nanoseconds: "812ns", "1.84us", "12.3ms", "1.20s", "2m03s", "1h05m", "3d02h". */
char *fmt_dur(uint64_t ns, char *buf, size_t n);
/* Bytes (powers of 1024): "512B", "4.0K", "1.5M", "2.0G", "512K". */
char *fmt_size(uint64_t bytes, char *buf, size_t n);
/* Counts (powers of 1000): "999", "12.3K", "4.56M". */
char *fmt_count(uint64_t v, char *buf, size_t n);
/* CLOCK_REALTIME ns as local time "HH:MM:SS.mmm". */
char *fmt_time(uint64_t t_ns, char *buf, size_t n);

/*
 * The closest candidate to word by edit distance, or NULL if none is close:
 * at most one edit for words of up to four letters, two for longer ones, and
 * never as many edits as the word has letters.  The first of equally close
 * wins.  cands ends at n entries or at a NULL, whichever comes first.
 */
const char *text_suggest(const char *word, const char *const *cands, size_t n);

#endif
