/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The screen loop: owns the terminal, reads ticks into the history, runs the
 * query over the window when a tick arrives or the query changes, hands keys
 * to the key table or the prompt, and is the only place that draws.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/clock.h"
#include "../core/config.h"
#include "../core/snapshot.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "help.h"
#include "screen_priv.h"
#include "views.h"

#define STATUS_MS 8000			/* how long a status message stays */
#define STATUS_LINES_MAX 4		/* rows a long status message may wrap onto */
#define LIVE_POLL_MS 40			/* key latency while waiting for ticks */

static volatile sig_atomic_t stop_requested;
static struct sigaction old_fatal[NSIG];

uint64_t now_ms(void)
{
	return mono_ns() / 1000000;
}

/* Note that SIGINT, SIGTERM or SIGHUP asked us to quit. */
static void on_stop(int sig)
{
	stop_requested = 1;
}

/* Give the terminal back, then let the previous handler take the signal. */
static void on_fatal(int sig)
{
	endwin();
	sigaction(sig, &old_fatal[sig], NULL);
	raise(sig);
}

/* Install the quit and fatal-signal handlers. */
static void signals_install(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_fatal;
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, &old_fatal[fatal[i]]);
}

void screen_status(struct screen *s, enum role r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->status, sizeof(s->status), fmt, ap);
	va_end(ap);
	s->status_role = r;
	s->status_ms = now_ms();
}

void screen_save(struct screen *s)
{
	const char *dir = s->opts->record_dir ? s->opts->record_dir : ".";
	struct snap_writer *w;
	char name[64], *path, *cause = NULL;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	if (!s->history.nticks) {
		screen_status(s, ROLE_ERROR, "nothing to save yet: no tick has arrived");
		return;
	}
	localtime_r(&now, &tm);
	strftime(name, sizeof(name), "latop-%Y%m%d-%H%M%S.snap", &tm);
	path = xasprintf("%s/%s", dir, name);
	w = snap_create(path, s->info, &cause);
	for (i = 0; w && i < s->history.nticks; i++) {
		if (snap_write_tick(w, &s->history.ticks[i], &cause) < 0) {
			snap_abandon(w);
			w = NULL;
		}
	}
	if (w && snap_close(w, &cause) == 0)
		screen_status(s, ROLE_STATUS, "saved %zu ticks to %s", s->history.nticks, path);
	else
		screen_status(s, ROLE_ERROR, "cannot save %s: %s", path, cause ? cause : "unknown error");
	free(cause);
	free(path);
}

void screen_theme_next(struct screen *s)
{
	char *warning = NULL;
	const char *name;

	if (!s->color) {
		screen_status(s, ROLE_STATUS, "colors are off (NO_COLOR, --no-color or the terminal): mono only");
		return;
	}
	name = theme_next(theme_name());
	theme_load(name, true, &warning);
	if (warning)
		screen_status(s, ROLE_ERROR, "%s", warning);
	else
		screen_status(s, ROLE_STATUS, "theme %s", theme_name());
	free(warning);
}

/* Whether a status message is showing (until STATUS_MS after it was said). */
static bool status_shown(const struct screen *s)
{
	return s->status[0] && now_ms() - s->status_ms < STATUS_MS;
}

bool screen_error_shown(const struct screen *s)
{
	return status_shown(s) && s->status_role == ROLE_ERROR;
}

/* Advance t past the characters that fill cols display columns. */
static const char *skip_width(const char *t, int cols)
{
	while (cols > 0 && *t) {
		char one[8] = {0};
		size_t len = 1;

		while (len < sizeof(one) - 1 && (t[len] & 0xC0) == 0x80)
			len++;
		memcpy(one, t, len);
		cols -= draw_width(one);
		t += len;
	}
	return t;
}

/*
 * Lay the status message out at width w: each of its '\n'-separated parts
 * starts a row and wraps, onto max rows at most.  Draw it from row y when
 * draw; return the rows it takes.
 */
static int status_layout(const struct screen *s, int y, int w, int max, bool draw)
{
	const char *t = s->status;
	char part[sizeof(s->status)];
	int rows = 0;

	while (*t && rows < max) {
		size_t len = strcspn(t, "\n");
		const char *p = part;

		snprintf(part, sizeof(part), "%.*s", (int)len, t);
		t += len + (t[len] == '\n');
		do {
			int used = draw ? draw_text(y + rows, 0, w, p, theme_attr(s->status_role))
					: draw_width(p) < w ? draw_width(p) : w;

			p = skip_width(p, used > 0 ? used : w);
			rows++;
		} while (*p && rows < max);
	}
	return rows ? rows : 1;
}

/* Rows the status line takes at width w: a message may take several. */
static int status_height(const struct screen *s, int w)
{
	return status_shown(s) && w > 0 ? status_layout(s, 0, w, STATUS_LINES_MAX, false) : 1;
}

/* Draw the status line on rows y..y+n-1: a message, else the key hints. */
static void status_draw(const struct screen *s, int y, int n, int w)
{
	static const char *const live[][2] = {
		{"F1", "Help"}, {"F3", "Search"}, {"F4", "Filter"}, {"F5", "Pause"},
		{"F6", "Sort"}, {":", "Query"}, {"Tab", "Detail"}, {"Enter", "Drill"},
		{"s", "Save"}, {"q", "Quit"},
	};
	static const char *const replay[][2] = {
		{"F1", "Help"}, {":", "Query"}, {"Space", "Play"}, {",.", "Step"},
		{"[]", "10"}, {"g G", "Ends"}, {"+-", "Speed"}, {"Tab", "Detail"},
		{"Enter", "Drill"}, {"q", "Quit"},
	};
	const char *const (*hints)[2] = s->opts->replay ? replay : live;
	size_t i, nh = s->opts->replay ? sizeof(replay) / sizeof(replay[0]) : sizeof(live) / sizeof(live[0]);
	int x = 0, k;

	for (k = 0; k < n; k++)
		draw_fill(y + k, 0, w, theme_attr(ROLE_STATUS));
	if (status_shown(s)) {
		status_layout(s, y, w, n, true);
		return;
	}
	for (i = 0; i < nh && x < w; i++) {
		x += draw_text(y, x, w - x, hints[i][0], theme_attr(ROLE_STATUS_KEY));
		x += draw_text(y, x, w - x, hints[i][1], theme_attr(ROLE_STATUS));
		x += draw_text(y, x, w - x, " ", theme_attr(ROLE_STATUS));
	}
}

/* Draw everything. */
static void screen_draw(struct screen *s)
{
	int h, w, body_y, body_h, th, ph, sh;

	getmaxyx(stdscr, h, w);
	body_y = header_height(s, w);
	erase();
	if (s->help) {
		help_draw(s->help_top, h - 1, w);
		status_draw(s, h - 1, 1, w);
		curs_set(0);
		refresh();
		return;
	}
	header_draw(s, w);
	ph = prompt_height(s);
	sh = status_height(s, w);
	body_h = h - body_y - sh - ph;
	th = s->detail.open ? (body_h * 2 / 5 > 4 ? body_h * 2 / 5 : 4) : body_h;
	if (th > body_h)
		th = body_h;
	if (s->res)
		table_view_draw(&s->tv, s->res, body_y, th, w);
	else if (body_h > 0)
		draw_text(body_y, 0, w, s->exec_error ? s->exec_error : "(no query)",
			  theme_attr(ROLE_ERROR));
	if (s->detail.open && body_h - th > 1)
		detail_draw(&s->detail, body_y + th, body_h - th, w);
	status_draw(s, h - sh, sh, w);
	if (s->prompt.mode != PROMPT_OFF) {
		prompt_draw(s, h - 1 - sh, w);
		curs_set(1);
	} else {
		curs_set(0);
	}
	refresh();
}

/* Handle a mouse event: a header click sorts, a row click selects, the wheel scrolls. */
static int mouse(struct screen *s)
{
	MEVENT ev;
	int col;

	if (getmouse(&ev) != OK || !s->res || s->help)
		return R_NONE;
	if (ev.bstate & BUTTON4_PRESSED) {
		table_view_move(&s->tv, s->res, -3);
		return R_REDRAW | R_DETAIL;
	}
	if (ev.bstate & BUTTON5_PRESSED) {
		table_view_move(&s->tv, s->res, 3);
		return R_REDRAW | R_DETAIL;
	}
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return R_NONE;
	if (ev.y == s->tv.y_header) {
		col = table_view_hit(&s->tv, ev.x);
		if (col >= 0 && screen_sort(s, col, true) == 0)
			return R_REDRAW | R_REQUERY;
		return R_REDRAW;
	}
	if (ev.y > s->tv.y_header && ev.y <= s->tv.y_header + s->tv.height) {
		table_view_select(&s->tv, s->res, s->tv.top + (size_t)(ev.y - s->tv.y_header - 1));
		return R_REDRAW | R_DETAIL;
	}
	return R_NONE;
}

/* Handle one key or event. */
static int input(struct screen *s, int ch)
{
	int h = LINES - 1, max;

	if (ch == KEY_RESIZE)
		return R_REDRAW;
	if (ch == KEY_MOUSE)
		return mouse(s);
	if (s->prompt.mode != PROMPT_OFF)
		return prompt_key(s, ch);
	if (!s->help)
		return keys_handle(s, ch);
	max = help_lines() - h > 0 ? help_lines() - h : 0;
	if (ch == KEY_DOWN || ch == 'j')
		s->help_top++;
	else if (ch == KEY_UP || ch == 'k')
		s->help_top--;
	else if (ch == KEY_NPAGE || ch == ' ')
		s->help_top += h - 1;
	else if (ch == KEY_PPAGE)
		s->help_top -= h - 1;
	else
		s->help = false;
	s->help_top = s->help_top < 0 ? 0 : s->help_top > max ? max : s->help_top;
	return R_REDRAW;
}

/* Read what the source has; return reaction flags. */
static int poll_source(struct screen *s, int wait_ms)
{
	char *cause = NULL;
	struct tick t;
	uint64_t prev, gap;
	int r;

	if (s->src_done || (s->opts->replay && (!s->playing || now_ms() < s->next_play_ms)))
		return R_NONE;
	r = source_read(s->src, &t, s->opts->replay ? 0 : wait_ms, &cause);
	if (r == 0)
		return R_NONE;
	if (r < 0 && s->opts->replay) {
		/* A tick the file holds but that cannot be read: say so, play on. */
		s->cursor = s->src->ops->tell(s->src) - 1;
		s->at_end = s->cursor + 1 >= s->info->nticks;
		s->playing = !s->at_end;
		s->next_play_ms = now_ms() + (uint64_t)(1000 / screen_speed(s));
		/* Ticks skipped one after another add up in one message. */
		s->skips = screen_error_shown(s) && s->status_ms == s->skips_ms ? s->skips + 1 : 1;
		if (s->skips > 1)
			screen_status(s, ROLE_ERROR, "skipped %zu ticks; the last: %s", s->skips, cause);
		else
			screen_status(s, ROLE_ERROR, "skipped a tick: %s", cause);
		s->skips_ms = s->status_ms;
		free(cause);
		return R_REDRAW;
	}
	if (r < 0 || r == 2) {
		if (s->opts->replay) {
			s->at_end = true;
			s->playing = false;
			/* A warning still showing (a damaged file's) says more. */
			if (!screen_error_shown(s))
				screen_status(s, ROLE_STATUS, "end of the recording: g or Space to start over");
		} else {
			s->src_done = true;
			screen_status(s, ROLE_ERROR, "the source stopped: %s", cause ? cause : "end of data");
		}
		free(cause);
		return R_REDRAW;
	}
	prev = s->history.nticks ? s->history.ticks[s->history.nticks - 1].t_ns : 0;
	gap = prev && t.t_ns > prev ? (t.t_ns - prev) / 1000000 : 1000;
	history_push(s, &t);
	header_sample(&s->header);
	if (s->opts->replay) {
		s->cursor = s->src->ops->tell(s->src) - 1;
		s->at_end = s->cursor + 1 >= s->info->nticks;
		s->playing = !s->at_end;
		gap = gap < 10 ? 10 : gap > 10000 ? 10000 : gap;
		s->next_play_ms = now_ms() + (uint64_t)((double)gap / screen_speed(s));
	}
	return s->paused ? R_REDRAW : R_REDRAW | R_REQUERY;
}

/* How long to wait for a key before looking at the source again. */
static int wait_ms(const struct screen *s)
{
	uint64_t now = now_ms();

	if (!s->opts->replay)
		return LIVE_POLL_MS;
	if (!s->playing)
		return 250;
	return s->next_play_ms > now ? (int)(s->next_play_ms - now < 250 ? s->next_play_ms - now : 250) : 0;
}

/* Append text to *say (a growing status message), each part on its own row. */
static void say_add(char **say, const char *text)
{
	char *n = xasprintf("%s%s%s", *say ? *say : "", *say ? "\n" : "", text);

	free(*say);
	*say = n;
}

/*
 * Pick the theme (the option, else the rc file's theme=, else default) and
 * say at once what the user must know: the recording's damage, the rc
 * file's warnings (said on stderr too, by core/config.c) and the theme's.
 */
static void theme_choose(struct screen *s)
{
	struct config *cfg = config_shared();
	const char *name = s->opts->theme ? s->opts->theme : config_get(cfg, "theme");
	char *warning = NULL, *say = NULL;
	size_t i;

	theme_load(name ? name : "default", s->color, &warning);
	if (s->info->warning)
		say_add(&say, s->info->warning);
	for (i = 0; i < config_nwarnings(cfg); i++)
		say_add(&say, config_warning(cfg, i));
	if (warning)
		say_add(&say, warning);
	if (say)
		screen_status(s, ROLE_ERROR, "%s", say);
	free(warning);
	free(say);
}

/* Open the first query: the option (a fragment refines the first view), else the first view. */
static int first_query(struct screen *s, char **cause)
{
	int v = views_first(s->info);
	char *err_text = NULL, buf[1024];
	struct query_error err;
	size_t i;

	if (v < 0 && !s->opts->query) {
		char list[512] = "";

		for (i = 0; i < s->info->nschemas; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", s->info->schemas[i]->table);
		*cause = xasprintf("no view can show this source's tables (%s)", list[0] ? list : "none");
		return -1;
	}
	if (v >= 0 && screen_view(s, (size_t)v) < 0 && !s->opts->query) {
		*cause = xasprintf("%s", s->status);
		return -1;
	}
	if (!s->opts->query)
		return 0;
	if (screen_refine(s, s->opts->query, &err, &err_text) < 0) {
		query_error_format(err_text, &err, buf, sizeof(buf));
		*cause = xasprintf("bad query: %s", buf);
		free(err_text);
		return -1;
	}
	stack_clear(s);
	return 0;
}

/* Start curses; -1 with *cause if the terminal cannot be used. */
static int terminal_init(struct screen *s, char **cause)
{
	const char *nc = getenv("NO_COLOR");

	setlocale(LC_ALL, "");
	draw_init(!strcmp(nl_langinfo(CODESET), "UTF-8"));
	if (!newterm(NULL, stdout, stdin)) {
		*cause = xasprintf("cannot start the terminal interface (TERM=%s)",
				   getenv("TERM") ? getenv("TERM") : "unset");
		return -1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	s->color = !s->opts->no_color && !(nc && *nc) && has_colors();
	if (s->color) {
		start_color();
		use_default_colors();
	}
	return 0;
}

/* Free the session's state. */
static void screen_done(struct screen *s)
{
	size_t v;

	prompt_done(&s->prompt);
	detail_done(&s->detail);
	table_view_done(&s->tv);
	result_free(s->res);
	free(s->exec_error);
	query_free(s->query);
	free(s->query_text);
	stack_clear(s);
	for (v = 0; v < views_len; v++)
		free(s->view_query[v]);
	free(s->view_query);
	window_done(&s->history);
}

const char *const tui_config_keys[] = {"theme", "history", "history_mb", NULL};

int tui_run(struct source *src, const struct tui_opts *o, char **cause)
{
	struct screen s;
	int flags = R_REDRAW | R_REQUERY, ch;

	memset(&s, 0, sizeof(s));
	s.src = src;
	s.info = src->ops->info(src);
	s.opts = o;
	s.view_query = xcalloc(views_len, sizeof(char *));
	s.t_end = UINT64_MAX;
	s.speed = SPEED_1X;
	s.playing = o->replay;
	s.cursor = o->replay && src->ops->tell ? src->ops->tell(src) : 0;
	window_init(&s.history, UINT64_MAX);
	history_bound(&s);
	window_init(&s.win, 5000000000ULL);
	table_view_init(&s.tv);
	detail_init(&s.detail);
	header_init(&s.header);
	if (prompt_init(&s.prompt, cause) < 0 || first_query(&s, cause) < 0) {
		screen_done(&s);
		return -1;
	}
	if (terminal_init(&s, cause) < 0) {
		screen_done(&s);
		return -1;
	}
	signals_install();
	theme_choose(&s);
	/* A live source attaches its probes at its first read: read before
	 * the first draw, so that LIVE is never on screen before they count. */
	if (!s.opts->replay)
		flags |= poll_source(&s, 0);
	while (!s.quit && !stop_requested) {
		if (flags & R_REQUERY)
			requery(&s);
		else if (flags & R_DETAIL)
			detail_refresh(&s);
		if (flags)
			screen_draw(&s);
		flags = 0;
		timeout(wait_ms(&s));
		ch = getch();
		if (ch != ERR)
			flags |= input(&s, ch);
		flags |= poll_source(&s, ch != ERR ? 0 : 10);
		if (s.status[0] && now_ms() - s.status_ms >= STATUS_MS) {
			s.status[0] = '\0';
			flags |= R_REDRAW;
		}
	}
	endwin();
	screen_done(&s);
	return 0;
}
