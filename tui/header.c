/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Header meters: what latop sees, what it loses, and what it costs. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/fmt.h"
#include "draw.h"
#include "header.h"
#include "screen.h"
#include "views.h"

/* latop's user + system CPU time so far, in ns. */
static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* Bytes of BPF maps and ring buffers mapped into latop (their pages are all
 * mapped when they are: kernel memory, taken at load, counted in its RSS). */
static uint64_t bpf_mapped_bytes(void)
{
	unsigned long long lo, hi;
	char line[512];
	uint64_t sum = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "anon_inode:bpf") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    hi > lo)
			sum += hi - lo;
	fclose(f);
	return sum;
}

/* latop's resident memory now, in bytes, its own (rss) and the BPF maps'
 * (maps); 0 when /proc cannot say. */
static void memory_now(struct header *h)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	h->rss = h->maps = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu %llu", &size, &resident) == 2) {
		h->rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
		h->maps = bpf_mapped_bytes();
		h->maps = h->maps < h->rss ? h->maps : h->rss;
		h->rss -= h->maps;
	}
	fclose(f);
}

/* Start measuring from now. */
void header_init(struct header *h)
{
	h->last_wall_ns = mono_ns();
	h->last_cpu_ns = cpu_ns();
	h->cpu_pct = 0;
	memory_now(h);
}

void header_sample(struct header *h)
{
	uint64_t wall = mono_ns(), cpu = cpu_ns();

	if (wall > h->last_wall_ns + 100000000ULL) {
		h->cpu_pct = 100.0 * (double)(cpu - h->last_cpu_ns) / (double)(wall - h->last_wall_ns);
		h->last_wall_ns = wall;
		h->last_cpu_ns = cpu;
		memory_now(h);
	}
}

/* Draw "label value" at x; return the next x. */
static int meter(int y, int x, int w, const char *label, const char *value, enum role vr)
{
	if (x >= w)
		return x;
	x += draw_text(y, x, w - x, label, theme_attr(ROLE_METER_LABEL) | theme_attr(ROLE_HEADER));
	x += draw_text(y, x, w - x, " ", theme_attr(ROLE_HEADER));
	x += draw_text(y, x, w - x, value, theme_attr(vr));
	x += draw_text(y, x, w - x, "  ", theme_attr(ROLE_HEADER));
	return x;
}

/* The mode: LIVE, PAUSED, or REPLAY with the cursor's time and index. */
static void mode_text(const struct screen *s, char *buf, size_t n)
{
	char t[FMT_BUF];
	uint64_t t_ns = s->res ? s->res->t_ns : 0;

	if (!s->opts->replay) {
		snprintf(buf, n, "%s", s->paused ? "PAUSED" : "LIVE");
		if (s->paused && t_ns)
			snprintf(buf + strlen(buf), n - strlen(buf), " at %.8s", fmt_time(t_ns, t, sizeof(t)));
		return;
	}
	snprintf(buf, n, "REPLAY %.8s [%zu/%zu] %s %gx", t_ns ? fmt_time(t_ns, t, sizeof(t)) : "--:--:--",
		 screen_cursor(s) + 1, s->info->nticks,
		 draw_glyph(s->playing ? G_PLAY : G_PAUSE), screen_speed(s));
}

/* Draw the first meter line: mode, host, time, window. */
static void line_mode(const struct screen *s, int y, int w)
{
	char mode[128], a[FMT_BUF], b[FMT_BUF], now[16];
	time_t t = time(NULL);
	struct tm tm;
	int x = 0;

	draw_fill(y, 0, w, theme_attr(ROLE_HEADER));
	mode_text(s, mode, sizeof(mode));
	x += draw_text(y, x, w, " latop ", theme_attr(ROLE_HEADER) | A_BOLD);
	x = meter(y, x, w, "", mode, s->paused || s->opts->replay ? ROLE_METER_WARN : ROLE_METER_VALUE);
	x = meter(y, x, w, "host", s->info->host, ROLE_METER_VALUE);
	localtime_r(&t, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	x = meter(y, x, w, "time", now, ROLE_METER_VALUE);
	snprintf(a, sizeof(a), "%s", fmt_dur(s->win.window_ns, b, sizeof(b)));
	x = meter(y, x, w, "window", a, ROLE_METER_VALUE);
	snprintf(a, sizeof(a), "%zu", s->win.nticks);
	x = meter(y, x, w, "ticks", a, ROLE_METER_VALUE);
	if (!s->opts->replay && s->history.nticks) {
		/* How far back time travel reaches; short of the window when
		 * latoprc's history_mb holds fewer ticks than it spans. */
		uint64_t span = history_span_ns(s);

		meter(y, x, w, "history", fmt_dur(span, b, sizeof(b)),
		      span < s->win.window_ns ? ROLE_METER_WARN : ROLE_METER_VALUE);
	}
}

/* Draw the second meter line: rates, losses and latop's own cost. */
static void line_rates(const struct screen *s, int y, int w)
{
	const struct frame_stats *st = s->res ? &s->res->stats : NULL;
	double span = s->res && s->res->span_ns ? (double)s->res->span_ns / 1e9 : 0;
	char a[FMT_BUF], b[64];
	int x = 1;

	draw_fill(y, 0, w, theme_attr(ROLE_HEADER));
	if (st && span > 0)
		fmt_count((uint64_t)((double)st->events / span), a, sizeof(a));
	else
		snprintf(a, sizeof(a), "-");
	x = meter(y, x, w, "events/s", a, ROLE_METER_VALUE);
	x = meter(y, x, w, "lost", fmt_count(st ? st->lost : 0, a, sizeof(a)),
		  st && st->lost ? ROLE_METER_BAD : ROLE_METER_VALUE);
	x = meter(y, x, w, "dropped", fmt_count(st ? st->dropped : 0, a, sizeof(a)),
		  st && st->dropped ? ROLE_METER_WARN : ROLE_METER_VALUE);
	x = meter(y, x, w, "evicted", fmt_count(st ? st->evicted : 0, a, sizeof(a)),
		  st && st->evicted ? ROLE_METER_BAD : ROLE_METER_VALUE);
	x = meter(y, x, w, "overflow", fmt_count(st ? st->overflow : 0, a, sizeof(a)),
		  st && st->overflow ? ROLE_METER_WARN : ROLE_METER_VALUE);
	snprintf(b, sizeof(b), "%.1f%%", s->header.cpu_pct);
	x = meter(y, x, w, "latop cpu", b, s->header.cpu_pct > 10 ? ROLE_METER_WARN : ROLE_METER_VALUE);
	x = meter(y, x, w, "rss", fmt_size(s->header.rss, a, sizeof(a)), ROLE_METER_VALUE);
	if (s->header.maps)
		x = meter(y, x, w, "+bpf maps", fmt_size(s->header.maps, a, sizeof(a)),
			  ROLE_METER_VALUE);
	if (st && span > 0 && st->bpf_runs)
		snprintf(b, sizeof(b), "%.2f%%", 100.0 * (double)st->bpf_ns / 1e9 / span);
	else if (st && st->events && !st->bpf_runs)
		snprintf(b, sizeof(b), "off (--bpf-stats)");
	else
		snprintf(b, sizeof(b), "-");
	meter(y, x, w, "bpf", b, st && span > 0 && (double)st->bpf_ns / 1e9 / span > 0.05 ?
		  ROLE_METER_WARN : ROLE_METER_VALUE);
}

/* Rows above the tabs: the meters, and a damaged recording's warning. */
static int rows_above_tabs(const struct screen *s)
{
	return s->info->warning ? 3 : 2;
}

/* Draw what the reader of a damaged recording found, for as long as it is open. */
static void line_damage(const struct screen *s, int y, int w)
{
	int x;

	draw_fill(y, 0, w, theme_attr(ROLE_HEADER));
	x = draw_text(y, 1, w - 1, "damaged:", theme_attr(ROLE_METER_BAD));
	draw_text(y, 1 + x, w - 1 - x, " ", theme_attr(ROLE_HEADER));
	draw_text(y, 2 + x, w - 2 - x, s->info->warning, theme_attr(ROLE_HEADER));
}

/* Draw the tabs: the current view highlighted, views without a table dim. */
static void line_tabs(const struct screen *s, int y, int w)
{
	char buf[64];
	size_t v;
	int x = 0;

	draw_fill(y, 0, w, theme_attr(ROLE_TAB));
	for (v = 0; v < views_len && x < w; v++) {
		enum role r = v == s->view ? ROLE_TAB_ACTIVE :
			      views_schema(s->info, v) ? ROLE_TAB : ROLE_TAB_DIM;

		snprintf(buf, sizeof(buf), " %c %s ", views[v].key, views[v].name);
		x += draw_text(y, x, w - x, buf, theme_attr(r));
		x += draw_text(y, x, w - x, " ", theme_attr(ROLE_TAB));
	}
	snprintf(buf, sizeof(buf), " theme %s ", theme_name());
	if (x + draw_width(buf) < w)
		draw_text(y, w - draw_width(buf), draw_width(buf), buf, theme_attr(ROLE_TAB_DIM));
}

#define QUERY_LINES_MAX 3

/* The query line's prefix: the drill-down depth. */
static void query_prefix(const struct screen *s, char *buf, size_t n)
{
	snprintf(buf, n, s->depth ? "[drill %zu] " : "", s->depth);
}

int header_height(const struct screen *s, int w)
{
	char pre[32];
	int cols, lines;

	query_prefix(s, pre, sizeof(pre));
	cols = draw_width(pre) + (s->query_text ? draw_width(s->query_text) : 0);
	lines = w > 0 ? (cols + w - 1) / w : 1;
	return rows_above_tabs(s) + 1 + (lines < 1 ? 1 : lines > QUERY_LINES_MAX ? QUERY_LINES_MAX : lines);
}

/* Draw the active query, with the drill-down depth, wrapped onto n lines. */
static void lines_query(const struct screen *s, int y, int n, int w)
{
	const char *t = s->query_text ? s->query_text : "";
	char pre[32];
	int x, k;

	query_prefix(s, pre, sizeof(pre));
	for (k = 0; k < n; k++)
		draw_fill(y + k, 0, w, theme_attr(ROLE_QUERY));
	x = draw_text(y, 0, w, pre, theme_attr(ROLE_METER_WARN));
	for (k = 0; k < n && *t; k++, x = 0) {
		int used = draw_text(y + k, x, w - x, t, theme_attr(ROLE_QUERY));

		while (used > 0 && *t) {
			char one[8] = {0};
			size_t len = 1;

			while (len < sizeof(one) - 1 && (t[len] & 0xC0) == 0x80)
				len++;
			memcpy(one, t, len);
			used -= draw_width(one);
			t += len;
		}
	}
}

void header_draw(const struct screen *s, int w)
{
	int tabs = rows_above_tabs(s);

	line_mode(s, 0, w);
	line_rates(s, 1, w);
	if (s->info->warning)
		line_damage(s, 2, w);
	line_tabs(s, tabs, w);
	lines_query(s, tabs + 1, header_height(s, w) - tabs - 1, w);
}
