/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The query and search line.  GNU readline runs through its callback
 * interface: curses keys are queued as bytes for rl_getc_function, readline
 * never touches the terminal (prep/deprep are no-ops, no signals caught) and
 * its redisplay only marks the line dirty: the screen loop draws it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <readline/readline.h>
#include <readline/history.h>

#include "../core/config.h"
#include "../core/rfile.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "prompt.h"
#include "screen.h"

#define QUEUE_LEN 64
#define HISTORY_MAX 1000
#define HISTORY_MAX_BYTES (16u << 20)	/* a history file bigger than this is not ours */
#define CANDS_MAX 256

static struct screen *cur;		/* the screen readline's callbacks serve */
static unsigned char queue[QUEUE_LEN];
static size_t q_head, q_tail;
static bool line_ready;
static char *line_text;
static FILE *devnull;

/* Hand readline the next queued byte. */
static int getc_cb(FILE *f)
{
	if (q_head == q_tail)
		return EOF;
	return queue[q_head++ % QUEUE_LEN];
}

/* Tell readline whether more bytes are queued (for Esc sequences). */
static int avail_cb(void)
{
	return q_head != q_tail;
}

/* Leave the terminal to curses. */
static void prep_noop(int meta)
{
}

/* Leave the terminal to curses. */
static void deprep_noop(void)
{
}

/* Let the screen loop draw the line: nothing to do here. */
static void redisplay_cb(void)
{
}

/* Take the finished line. */
static void line_cb(char *line)
{
	free(line_text);
	line_text = line;
	line_ready = true;
}

/* Queue the bytes of one key for readline; false if it has none. */
static bool queue_key(int ch)
{
	static const struct {
		int key;
		const char *seq;
	} seqs[] = {
		{KEY_LEFT, "\033[D"}, {KEY_RIGHT, "\033[C"}, {KEY_UP, "\033[A"},
		{KEY_DOWN, "\033[B"}, {KEY_HOME, "\033[H"}, {KEY_END, "\033[F"},
		{KEY_DC, "\033[3~"}, {KEY_BACKSPACE, "\177"}, {KEY_ENTER, "\n"},
	};
	const char *seq = NULL;
	char one[2] = {(char)ch, 0};
	size_t i;

	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		if (seqs[i].key == ch)
			seq = seqs[i].seq;
	if (!seq && (ch < 0 || ch > 255))
		return false;
	if (!seq)
		seq = ch ? one : "";
	for (; *seq && q_tail - q_head < QUEUE_LEN; seq++)
		queue[q_tail++ % QUEUE_LEN] = (unsigned char)*seq;
	return true;
}

/* Show ambiguous completions in the status line instead of printing them. */
static void matches_cb(char **matches, int num, int max_len)
{
	char buf[512];
	size_t o = 0;
	int i;

	o += (size_t)snprintf(buf, sizeof(buf), "%d candidates:", num);
	for (i = 1; i <= num && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, " %s", matches[i]);
	free(cur->prompt.hint);
	cur->prompt.hint = xstrdup(buf);
}

/* Complete tables, fields, functions and keywords with query_complete (not
 * on the go-to line). */
static char **complete_cb(const char *text, int start, int end)
{
	char *cands[CANDS_MAX], **m;
	size_t n, i, lcd;

	rl_attempted_completion_over = 1;
	if (cur->prompt.mode == PROMPT_GOTO)
		return NULL;	/* a time: nothing to complete */
	n = query_complete(rl_line_buffer, (size_t)end, cur->info->schemas, cur->info->nschemas,
			   cands, CANDS_MAX);
	if (!n)
		return NULL;
	m = xcalloc(n + 2, sizeof(char *));
	lcd = strlen(cands[0]);
	for (i = 1; i < n; i++) {
		size_t k = 0;

		while (k < lcd && cands[i][k] == cands[0][k])
			k++;
		lcd = k;
	}
	if (lcd < (size_t)(end - start))
		lcd = (size_t)(end - start);
	m[0] = n == 1 ? cands[0] : xstrndup(n > 1 && lcd == (size_t)(end - start) ? text : cands[0], lcd);
	for (i = 0; n > 1 && i < n; i++)
		m[i + 1] = cands[i];
	rl_completion_suppress_append = n == 1 && m[0][strlen(m[0]) - 1] == '(';
	return m;
}

/*
 * Return why this process must not write the history file at path, or
 * NULL: latop often runs as root with a user's HOME and rc file, so the
 * file (or, before it exists, its directory) must belong to the user latop
 * runs as and be no link, and a path the rc file names must come from an rc
 * file that user owns.
 */
static char *history_unsafe(const char *path, bool from_rc)
{
	long owner = config_owner(config_shared());
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *why = NULL;
	uid_t me = geteuid();
	struct stat st;

	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (from_rc && owner >= 0 && owner != (long)me)
		why = xasprintf("%s: named by an rc file that uid %ld owns, and latop runs as uid %u",
				path, owner, (unsigned)me);
	else if (lstat(path, &st) == 0) {
		/* What is neither is refused by rfile_read, which says what it is. */
		if (S_ISLNK(st.st_mode))
			why = xasprintf("%s: is a symbolic link", path);
		else if (S_ISREG(st.st_mode) && st.st_uid != me)
			why = xasprintf("%s: belongs to uid %u, and latop runs as uid %u", path,
					(unsigned)st.st_uid, (unsigned)me);
	} else if (errno == ENOENT && slash && lstat(dir, &st) == 0 &&
		   (st.st_uid != me || (st.st_mode & 022))) {
		why = xasprintf("%s: its directory %s belongs to another user or others can "
				"write it", path, dir);
	}
	free(dir);
	return why;
}

/*
 * Check the history file is one this process may write (history_unsafe)
 * and a regular file (or none yet) of at most HISTORY_MAX_BYTES, so a FIFO
 * or a device named there cannot hang or flood latop; else warn, on the rc
 * file's history= line when it named it.
 */
static int history_check(const char *path, bool from_rc)
{
	char *text = NULL, *why = history_unsafe(path, from_rc), *what;
	size_t len = 0;
	int err = why ? -EPERM : rfile_read(path, HISTORY_MAX_BYTES, &text, &len, &why);

	free(text);
	if (!err || err == -ENOENT || err == -ENOTDIR) {
		free(why);
		return 0;
	}
	what = xasprintf("%s; no query history kept", why);
	config_warn(config_shared(), from_rc ? "history" : NULL, what);
	free(what);
	free(why);
	return -1;
}

/* The history file: rc "history = PATH", else CONFIG_DIR/history; "" for none. */
static void history_path(struct prompt *p)
{
	const char *set = config_get(config_shared(), "history");
	bool from_rc = set && strchr(set, '/');
	char *dir;

	if (from_rc) {
		snprintf(p->history_path, sizeof(p->history_path), "%s", set);
	} else {
		dir = config_dir();
		if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
			char *parent = xstrdup(dir), *slash = strrchr(parent, '/');

			if (slash && slash != parent) {
				*slash = '\0';
				mkdir(parent, 0700);
			}
			free(parent);
			mkdir(dir, 0700);
		}
		snprintf(p->history_path, sizeof(p->history_path), "%s/history", dir);
		free(dir);
	}
	p->history_from_rc = from_rc;
	if (history_check(p->history_path, from_rc) < 0)
		p->history_path[0] = '\0';
}

int prompt_init(struct prompt *p, char **cause)
{
	memset(p, 0, sizeof(*p));
	devnull = fopen("/dev/null", "w");
	if (!devnull) {
		*cause = xasprintf("cannot open /dev/null for readline: %s", strerror(errno));
		return -1;
	}
	rl_readline_name = "latop";
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	rl_prep_term_function = prep_noop;
	rl_deprep_term_function = deprep_noop;
	rl_getc_function = getc_cb;
	rl_input_available_hook = avail_cb;
	rl_redisplay_function = redisplay_cb;
	rl_outstream = devnull;
	rl_attempted_completion_function = complete_cb;
	rl_completion_display_matches_hook = matches_cb;
	rl_completer_word_break_characters = (char *)" \t\n()=<>!~,'\"/*:;.+-[]";
	rl_variable_bind("show-all-if-ambiguous", "on");
	rl_variable_bind("bell-style", "none");
	rl_variable_bind("enable-bracketed-paste", "off");
	using_history();
	stifle_history(HISTORY_MAX);
	history_path(p);
	if (p->history_path[0])
		read_history(p->history_path);
	return 0;
}

void prompt_done(struct prompt *p)
{
	char *why = NULL;

	if (p->mode != PROMPT_OFF)
		rl_callback_handler_remove();
	/* Checked again: what is at the path may have changed since it was read. */
	if (p->history_path[0] && !(why = history_unsafe(p->history_path, p->history_from_rc)))
		write_history(p->history_path);
	free(why);
	free(p->error);
	free(p->hint);
	free(line_text);
	line_text = NULL;
	if (devnull)
		fclose(devnull);
	devnull = NULL;
}

void prompt_open(struct screen *s, enum prompt_mode m, const char *prefill)
{
	struct prompt *p = &s->prompt;

	cur = s;
	if (p->mode != PROMPT_OFF)
		rl_callback_handler_remove();
	p->mode = m;
	free(p->error);
	p->error = NULL;
	free(p->hint);
	p->hint = NULL;
	q_head = q_tail = 0;
	line_ready = false;
	rl_callback_handler_install("", line_cb);
	rl_replace_line(prefill, 1);
	rl_point = rl_end;
}

/* Close the line. */
static void prompt_close(struct prompt *p)
{
	rl_replace_line("", 1);
	rl_callback_handler_remove();
	p->mode = PROMPT_OFF;
	free(p->hint);
	p->hint = NULL;
}

/* Keep text on the open line with why it was not taken shown under it. */
static int keep_line(struct prompt *p, const char *text, const char *why)
{
	free(p->error);
	p->error = xstrdup(why);
	rl_replace_line(text, 1);
	rl_point = rl_end;
	return R_REDRAW;
}

/* Enter on the query line: refine and apply, or show the error in place. */
static int query_enter(struct screen *s, const char *text)
{
	struct prompt *p = &s->prompt;
	struct query_error err;
	char buf[2048], *err_text = NULL;

	if (!*text) {
		prompt_close(p);
		return R_REDRAW;
	}
	add_history(text);
	if (screen_refine(s, text, &err, &err_text) < 0) {
		query_error_format(err_text, &err, buf, sizeof(buf));
		free(err_text);
		return keep_line(p, text, buf);
	}
	free(p->error);
	p->error = NULL;
	prompt_close(p);
	return R_REDRAW | R_REQUERY;
}

/* Enter on the go-to line: jump, or show why not in place. */
static int goto_enter(struct screen *s, const char *text)
{
	struct prompt *p = &s->prompt;
	char why[256];

	if (*text && screen_goto(s, text, why, sizeof(why)) < 0)
		return keep_line(p, text, why);
	free(p->error);
	p->error = NULL;
	prompt_close(p);
	return R_REDRAW | (*text ? R_REQUERY : 0);
}

int prompt_key(struct screen *s, int ch)
{
	struct prompt *p = &s->prompt;
	char *text;
	int guard, flags = R_REDRAW;

	cur = s;
	if (ch == 27) {
		prompt_close(p);
		free(p->error);
		p->error = NULL;
		return R_REDRAW;
	}
	if (!queue_key(ch))
		return R_NONE;
	if (ch == '\t' || ch == KEY_BTAB) {
		free(p->hint);
		p->hint = NULL;
	}
	for (guard = 0; q_head != q_tail && guard < QUEUE_LEN; guard++)
		rl_callback_read_char();
	q_head = q_tail = 0;
	if (p->mode == PROMPT_SEARCH && s->res) {
		snprintf(s->search, sizeof(s->search), "%s", rl_line_buffer);
		if (s->search[0] && !table_view_search(&s->tv, s->res, s->search, 1, false))
			screen_status(s, ROLE_ERROR, "no row matches '%s'", s->search);
		flags |= R_DETAIL;
	}
	if (!line_ready)
		return flags;
	line_ready = false;
	text = line_text ? xstrdup(line_text) : NULL;
	if (!text || p->mode == PROMPT_SEARCH) {
		prompt_close(p);
		free(text);
		return flags;
	}
	flags = p->mode == PROMPT_GOTO ? goto_enter(s, text) : query_enter(s, text);
	free(text);
	return flags;
}

int prompt_height(const struct screen *s)
{
	const struct prompt *p = &s->prompt;
	const char *c;
	int n = 1;

	if (p->mode == PROMPT_OFF)
		return 0;
	for (c = p->error; c && *c; c++)
		n += *c == '\n';
	return n + (p->error != NULL) + (p->hint != NULL);
}

/* Draw the error lines (message, query, caret) from y, the query and caret
 * shifted left together when the caret would be off screen. */
static int error_draw(const char *error, int y, int w)
{
	const char *line = error, *nl, *caret = strrchr(error, '\n');
	char buf[1024];
	int n = 0, off = 0, len;

	if (caret && strchr(caret, '^') && (int)(strchr(caret, '^') - caret) > w - 4)
		off = (int)(strchr(caret, '^') - caret) - w / 2;
	while (line && *line) {
		nl = strchr(line, '\n');
		len = nl ? (int)(nl - line) : (int)strlen(line);
		if (n > 0 && off > 0)
			snprintf(buf, sizeof(buf), "%.2s%.*s", line, len - off - 2 > 0 ? len - off - 2 : 0,
				 len > off + 2 ? line + off + 2 : "");
		else
			snprintf(buf, sizeof(buf), "%.*s", len, line);
		draw_fill(y + n, 0, w, theme_attr(ROLE_STATUS));
		draw_text(y + n, 0, w, buf, theme_attr(strchr(buf, '^') && strspn(buf, " ^") == strlen(buf)
							? ROLE_CARET : ROLE_ERROR));
		n++;
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* Skip at least *cols display columns of s; set *cols to those skipped. */
static const char *skip_cols(const char *s, int *cols)
{
	int skipped = 0;

	while (*s && skipped < *cols) {
		char one[8] = {0};
		size_t len = 1;

		while (len < sizeof(one) - 1 && (s[len] & 0xC0) == 0x80)
			len++;
		memcpy(one, s, len);
		skipped += draw_width(one);
		s += len;
	}
	*cols = skipped;
	return s;
}

void prompt_draw(const struct screen *s, int y_last, int w)
{
	const struct prompt *p = &s->prompt;
	int y = y_last - prompt_height(s) + 1, lead, cx, off = 0;
	const char *label = p->mode == PROMPT_SEARCH ? "search: " :
			    p->mode == PROMPT_GOTO ? "go to: " : "query: ";
	char *head;

	if (p->mode == PROMPT_OFF)
		return;
	if (p->error)
		y += error_draw(p->error, y, w);
	if (p->hint) {
		draw_fill(y, 0, w, theme_attr(ROLE_STATUS));
		draw_text(y++, 0, w, p->hint, theme_attr(ROLE_STATUS));
	}
	draw_fill(y, 0, w, theme_attr(ROLE_PROMPT));
	lead = draw_text(y, 0, w, label, theme_attr(ROLE_PROMPT));
	head = xstrndup(rl_line_buffer, (size_t)rl_point);
	cx = draw_width(head);
	free(head);
	while (cx - off >= w - lead - 1)
		off += w / 3 > 0 ? w / 3 : 1;
	draw_text(y, lead, w - lead, skip_cols(rl_line_buffer, &off), theme_attr(ROLE_QUERY));
	move(y, lead + cx - off);
}
