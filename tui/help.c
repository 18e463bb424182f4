/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The help screen, generated from the key table, and a query cheat sheet. */
#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "help.h"
#include "keys.h"

static const char *const cheat[] = {
	"",
	"QUERIES  (':' types one; a fragment refines the current query)",
	"  [from TABLE] [where PRED] [group by F, ...] [show ITEM, ...]",
	"  [order by ITEM [asc|desc]] [limit N] [window 5s] [every 1s]",
	"  [sample 1/N] [threshold 1ms] [buffer N] [since '2026-11-25 10:00' | -5m] [until ...]",
	"  group by time(10s), F: one row per 10 s window (a time column)",
	"  PRED: F == v, !=, <, <=, >, >=, F in (a, b), F ~ 'glob*', and, or, not, ( )",
	"  ITEM: F, or count rate sum min max avg stddev p50 p90 p99 p999 p9999 dist (F)",
	"  values: 100us 2ms 1s | 4K 1MiB | 'text' | 10.0.0.0/8",
	"",
	"  where lat > 1ms                  keep slow calls only",
	"  order by p99(lat) desc limit 10  the ten worst tails",
	"  from syscalls where comm ~ 'nginx*' group by syscall show p99(lat), sum(time)",
	"",
	"Tab completes tables, fields and functions; Up/Down browse the history.",
	"Errors show the column and a caret under the query; fix the text and press Enter.",
	"",
	"Press q, Esc or F1 to close this screen; Up/Down/PgUp/PgDn scroll.",
};

#define CHEAT_LEN (sizeof(cheat) / sizeof(cheat[0]))

/* Whether entry i is the first of the entries sharing its action. */
static bool first_of_action(size_t i)
{
	size_t j, keys_len;
	const struct key_action *keys = keys_table(&keys_len);

	for (j = 0; j < i; j++)
		if (keys[j].act == keys[i].act)
			return false;
	return true;
}

/* The labels of every key bound to entry i's action: "F1 ? h". */
static void labels(size_t i, char *buf, size_t n)
{
	size_t j, o = 0, keys_len;
	const struct key_action *keys = keys_table(&keys_len);

	buf[0] = '\0';
	for (j = i; j < keys_len && o < n; j++) {
		if (keys[j].act != keys[i].act || (j > i && !strcmp(keys[j].label, keys[j - 1].label)))
			continue;
		o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? " " : "", keys[j].label);
	}
}

int help_lines(void)
{
	size_t i, n = 2, keys_len;
	const struct key_action *keys = keys_table(&keys_len);

	for (i = 0; i < keys_len; i++)
		n += first_of_action(i) && keys[i].help;
	return (int)(n + CHEAT_LEN);
}

/* Draw text line k of the help into screen line y. */
static void line_draw(int k, int y, int w)
{
	char lab[64];
	size_t i, keys_len;
	const struct key_action *keys = keys_table(&keys_len);

	if (k == 0) {
		draw_text(y, 1, w - 1, "latop: top for latency.  KEYS", theme_attr(ROLE_HELP_KEY));
		return;
	}
	if (k == 1)
		return;
	k -= 2;
	for (i = 0; i < keys_len; i++) {
		if (!first_of_action(i) || !keys[i].help)
			continue;
		if (k-- == 0) {
			labels(i, lab, sizeof(lab));
			draw_text(y, 2, 22, lab, theme_attr(ROLE_HELP_KEY));
			draw_text(y, 25, w - 25, keys[i].help, theme_attr(ROLE_HELP));
			return;
		}
	}
	if (k >= 0 && (size_t)k < CHEAT_LEN)
		draw_text(y, 1, w - 1, cheat[k], theme_attr(k == 1 ? ROLE_HELP_KEY : ROLE_HELP));
}

void help_draw(int top, int h, int w)
{
	int y;

	for (y = 0; y < h; y++) {
		draw_fill(y, 0, w, theme_attr(ROLE_HELP));
		line_draw(top + y, y, w);
	}
}
