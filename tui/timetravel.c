/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Time travel over the tick history: the history kept of recent ticks, the
 * query's window as a view of it, rerunning the query, and stepping, pausing
 * and playing (a recording is reread from the file around the shown tick).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../probes/probe_util.h"
#include "../queries/qtime.h"
#include "screen_priv.h"

#define REPLAY_TICKS 600		/* ticks a replay's window is rebuilt from, at most */

static const double speeds[] = {0.25, 0.5, 1, 2, 4, 8, 16, 64};

void history_bound(struct screen *s)
{
	uint32_t mb = probe_size_option("history_mb", 1, 1u << 20, HISTORY_MB_DEFAULT, false, "MiB");

	window_set_bytes(&s->history, (uint64_t)mb << 20);
}

void history_push(struct screen *s, struct tick *t)
{
	window_push(&s->history, t);
	/* The heap keeps what dropped ticks freed, scattered among what stays:
	 * give it back once an eighth of the bound has gone. */
	if (s->history.dropped - s->trimmed > s->history.max_bytes / 8) {
		malloc_trim(0);
		s->trimmed = s->history.dropped;
	}
}

uint64_t history_span_ns(const struct screen *s)
{
	const struct window *h = &s->history;
	const struct tick *old;
	uint64_t dt = 0;
	size_t i;

	if (!h->nticks)
		return 0;
	old = &h->ticks[0];
	for (i = 0; i < old->nframes; i++)
		dt = old->frames[i]->dt_ns > dt ? old->frames[i]->dt_ns : dt;
	return h->ticks[h->nticks - 1].t_ns - old->t_ns + dt;
}

/* Point the query's window at the history's ticks ending at t_end. */
static void window_view(struct screen *s)
{
	const struct window *h = &s->history;
	size_t e = h->nticks, b;
	uint64_t from;

	while (e > 0 && h->ticks[e - 1].t_ns > s->t_end)
		e--;
	s->win.ticks = h->ticks;
	s->win.nticks = 0;
	if (!e)
		return;
	from = h->ticks[e - 1].t_ns >= s->win.window_ns ? h->ticks[e - 1].t_ns - s->win.window_ns : 0;
	for (b = e - 1; b > 0 && h->ticks[b - 1].t_ns >= from; b--)
		;
	s->win.ticks = h->ticks + b;
	s->win.nticks = e - b;
}

void detail_refresh(struct screen *s)
{
	if (!s->detail.open)
		return;
	if (s->res && s->res->nrows)
		detail_update(&s->detail, s->info, s->schema, &s->win, s->res, s->tv.sel);
	else
		detail_clear(&s->detail);
}

void requery(struct screen *s)
{
	struct query_error err;
	char buf[1024];

	window_view(s);
	result_free(s->res);
	s->res = NULL;
	free(s->exec_error);
	s->exec_error = NULL;
	if (!s->query)
		return;
	s->res = query_exec(s->query, &s->win, &err);
	if (!s->res) {
		query_error_format(s->query_text, &err, buf, sizeof(buf));
		s->exec_error = xstrdup(buf);
		return;
	}
	table_view_sync(&s->tv, s->res, s->query_text);
	detail_refresh(s);
}

/* Replay: make tick idx the newest shown, the window rebuilt from the ticks before it. */
static int replay_rebuild(struct screen *s, size_t idx)
{
	struct tick *got = xcalloc(REPLAY_TICKS, sizeof(*got));
	size_t n = 0, i = idx + 1, bad = 0;
	uint64_t newest = 0;
	char *cause = NULL, *bad_cause = NULL;
	int rc = 0;

	while (i-- > 0 && n < REPLAY_TICKS) {
		if (s->src->ops->seek(s->src, i, &cause) < 0) {
			rc = -1;
			break;
		}
		if (source_read(s->src, &got[n], 0, &cause) != 1) {
			/* Unreadable: said, and left out of the window. */
			bad++;
			free(bad_cause);
			bad_cause = cause;
			cause = NULL;
			continue;
		}
		if (!n)
			newest = got[n].t_ns;
		if (newest >= s->win.window_ns && got[n].t_ns < newest - s->win.window_ns) {
			tick_done(&got[n]);
			break;
		}
		n++;
	}
	window_clear(&s->history);
	while (n-- > 0)
		history_push(s, &got[n]);
	free(got);
	if (rc < 0) {
		screen_status(s, ROLE_ERROR, "seek to tick %zu: %s", idx + 1, cause ? cause : "no tick");
		free(cause);
		free(bad_cause);
		return -1;
	}
	if (bad)
		screen_status(s, ROLE_ERROR, "%zu unreadable tick%s left out of the window: %s", bad,
			      bad > 1 ? "s" : "", bad_cause);
	free(bad_cause);
	s->cursor = idx;
	s->at_end = idx + 1 >= s->info->nticks;
	if (!s->at_end && s->src->ops->seek(s->src, idx + 1, &cause) < 0) {
		screen_status(s, ROLE_ERROR, "seek: %s", cause);
		free(cause);
		s->at_end = true;
	}
	return 0;
}

int screen_seek(struct screen *s, long delta, bool absolute)
{
	long idx, last;
	size_t e;

	if (s->opts->replay) {
		last = s->info->nticks ? (long)s->info->nticks - 1 : 0;
		idx = absolute ? (delta < 0 ? last : delta) : (long)s->cursor + delta;
		idx = idx < 0 ? 0 : idx > last ? last : idx;
		s->playing = false;
		return replay_rebuild(s, (size_t)idx);
	}
	if (!s->history.nticks)
		return -1;
	if (!s->paused) {
		s->paused = true;
		s->t_end = s->history.ticks[s->history.nticks - 1].t_ns;
	}
	for (e = s->history.nticks; e > 1 && s->history.ticks[e - 1].t_ns > s->t_end; e--)
		;
	last = (long)s->history.nticks - 1;
	idx = absolute ? (delta < 0 ? last : delta) : (long)e - 1 + delta;
	idx = idx < 0 ? 0 : idx > last ? last : idx;
	s->t_end = s->history.ticks[idx].t_ns;
	return 0;
}

/* The end of the newest tick shown, or 0 with none. */
static uint64_t shown_end(const struct screen *s)
{
	if (!s->opts->replay && s->paused)
		return s->t_end;
	return s->history.nticks ? s->history.ticks[s->history.nticks - 1].t_ns : 0;
}

/* Replay: the end of the first tick from idx on that can be read, its
 * index in *at; UINT64_MAX (and *at the last tick) when none can. */
static uint64_t replay_tick_end(struct screen *s, size_t idx, size_t *at)
{
	struct tick t;
	char *cause = NULL;
	int r;

	for (*at = idx; *at < s->info->nticks; ++*at) {
		if (s->src->ops->seek(s->src, *at, &cause) < 0)
			break;
		r = source_read(s->src, &t, 0, &cause);
		free(cause);
		cause = NULL;
		if (r == 1) {
			uint64_t e = t.t_ns;

			tick_done(&t);
			return e;
		}
	}
	free(cause);
	*at = s->info->nticks - 1;
	return UINT64_MAX;
}

int screen_goto(struct screen *s, const char *text, char *why, size_t n)
{
	struct qtime qt;
	uint64_t target, first, last;
	size_t lo = 0, hi, mid, readable, nt = s->opts->replay ? s->info->nticks : s->history.nticks;
	char at[QTIME_BUF], end[QTIME_BUF];

	if (qtime_parse(text, &qt, why, n))
		return -1;
	if (!nt) {
		snprintf(why, n, "no tick to go to yet");
		return -1;
	}
	target = qtime_resolve(&qt, shown_end(s));
	/* the first tick ending after target: the one that covers it (in
	 * replay, the first readable one from there) */
	for (hi = nt; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if ((s->opts->replay ? replay_tick_end(s, mid, &readable) : s->history.ticks[mid].t_ns) <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo = lo < nt ? lo : nt - 1;
	if (s->opts->replay)
		replay_tick_end(s, lo, &lo);
	if (screen_seek(s, (long)lo, true) < 0)
		return 0;
	first = s->opts->replay ? s->info->t_first_ns : s->history.ticks[0].t_ns;
	last = s->opts->replay ? s->info->t_last_ns : s->history.ticks[nt - 1].t_ns;
	qtime_format(target, false, at, sizeof(at));
	if (!lo && target + (s->opts->replay ? s->info->interval_ns : 0) < first)
		screen_status(s, ROLE_STATUS, "%s is before the %s: at its first tick (%s)", at,
			      s->opts->replay ? "recording" : "history",
			      qtime_format(first, false, end, sizeof(end)));
	else if (target >= last)
		screen_status(s, ROLE_STATUS, "%s is past the %s: at its last tick (%s)", at,
			      s->opts->replay ? "recording" : "history",
			      qtime_format(last, false, end, sizeof(end)));
	else
		screen_status(s, ROLE_STATUS, "at %s (tick %zu of %zu)", at, lo + 1, nt);
	return 0;
}

void screen_pause(struct screen *s)
{
	if (s->opts->replay) {
		if (!s->playing && s->at_end && replay_rebuild(s, 0) < 0)
			return;
		s->playing = !s->playing;
		s->next_play_ms = now_ms();
		return;
	}
	s->paused = !s->paused;
	s->t_end = UINT64_MAX;
	if (s->paused && s->history.nticks)
		s->t_end = s->history.ticks[s->history.nticks - 1].t_ns;
}

double screen_speed(const struct screen *s)
{
	return speeds[s->speed];
}

void screen_speed_step(struct screen *s, int delta)
{
	int n = (int)(sizeof(speeds) / sizeof(speeds[0]));

	s->speed += delta;
	s->speed = s->speed < 0 ? 0 : s->speed >= n ? n - 1 : s->speed;
	/* The header shows the speed too: a warning showing (a tick skipped) stays. */
	if (!screen_error_shown(s))
		screen_status(s, ROLE_STATUS, "replay speed %gx", speeds[s->speed]);
}

size_t screen_cursor(const struct screen *s)
{
	return s->cursor;
}
