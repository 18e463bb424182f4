/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Theme files: the shipped ones load cleanly; mistakes are named FILE:LINE
 * without quoting the file; files that are not themes, not regular or too
 * big are refused promptly (an alarm turns a hang into a failure).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tui/theme.h"
#include "tap.h"

/* Write text to a new temporary theme file; return its path (caller frees). */
static char *theme_file(const char *text)
{
	char *path = strdup("/tmp/latop-theme-XXXXXX.theme");
	int fd = mkstemps(path, 6);
	FILE *f = fdopen(fd, "w");

	fputs(text, f);
	fclose(f);
	return path;
}

/* Every theme under themes/ loads in color without a single warning. */
static void shipped_themes(void)
{
	glob_t g;
	size_t i;

	ok(glob("themes/*.theme", 0, NULL, &g) == 0 && g.gl_pathc >= 3,
	   "themes/ holds at least default, light and mono");
	for (i = 0; i < g.gl_pathc; i++) {
		char *w = NULL;
		int rc = theme_load(g.gl_pathv[i], true, &w);

		ok(rc == 0 && !w, "%s loads with no problems (%s)", g.gl_pathv[i], w ? w : "ok");
		free(w);
	}
	globfree(&g);
}

/* A file with mistakes names each by file and line and keeps the good lines. */
static void bad_lines(void)
{
	char *path = theme_file("# a theme with mistakes\n"
				"headr = red\n"
				"selection = reddish blue\n"
				"header = white blue bold\n"
				"row = red\n"
				"status = blue\n"
				"row red blue\n"
				"tab = red blue green\n"
				"Secret_Role = red\n");
	char *w = NULL, want[512];
	int rc = theme_load(path, true, &w);

	ok(rc == 0, "a theme with bad lines still loads");
	snprintf(want, sizeof(want), "%s:2: unknown role 'headr'", path);
	ok(w && strstr(w, want), "an unknown role is named with its line (%s)", w ? w : "none");
	snprintf(want, sizeof(want), "%s:3: selection: word 1 after '=' is not a color or attribute",
		 path);
	ok(w && strstr(w, want), "an unknown color is located by its line and word");
	snprintf(want, sizeof(want), "%s:7: not a theme line (expected 'role = color...')", path);
	ok(w && strstr(w, want), "a line without '=' is not a theme line");
	snprintf(want, sizeof(want), "%s: 2 more bad lines", path);
	ok(w && strstr(w, want) && !strstr(w, ":8:"),
	   "past three problems the rest are counted, not listed");
	ok(w && !strstr(w, "reddish") && !strstr(w, "Secret"),
	   "no word after '=' and no odd role name is quoted");
	ok((theme_attr(ROLE_HEADER) & A_BOLD) && (theme_attr(ROLE_HEADER) & A_COLOR),
	   "the good line still applies: header is bold and colored");
	ok(theme_has_color(), "a color theme on a color terminal draws in color");
	free(w);
	unlink(path);
	free(path);
}

/* Lines longer than any buffer keep their numbers and their meaning. */
static void long_lines(void)
{
	char text[2048], *path, *w = NULL, want[512];
	int rc, n;

	n = snprintf(text, sizeof(text), "# %0600d\n", 0);
	n += snprintf(text + n, sizeof(text) - n, "header = %600s\n", "underline");
	snprintf(text + n, sizeof(text) - n, "headr = red\n");
	path = theme_file(text);
	rc = theme_load(path, true, &w);
	snprintf(want, sizeof(want), "%s:3: unknown role 'headr'", path);
	ok(rc == 0 && w && !strcmp(w, want), "after 600-byte lines the line number is right (%s)",
	   w ? w : "none");
	ok(theme_attr(ROLE_HEADER) & A_UNDERLINE, "a 610-byte line applies whole");
	free(w);
	unlink(path);
	free(path);
}

/* A file that is not a theme (a password file) is one message quoting nothing. */
static void not_a_theme(void)
{
	char *path = theme_file("root:$6$s3cr3tSALT$hash:19000:0:99999:7:::\n"
				"header = hunter2 blue\n"
				"db_password = topsecret\n"
				"daemon:*:19000:0:99999:7:::\n"
				"bin:*:19000:0:99999:7:::\n");
	char *w = NULL, want[512];
	int rc = theme_load(path, true, &w);

	snprintf(want, sizeof(want), "%s: not a theme file (3 of its first 3 lines are not "
		 "'role = color...' lines); using monochrome", path);
	ok(rc == -1 && w && !strcmp(w, want), "a file of bad lines is not a theme file (%s)",
	   w ? w : "none");
	ok(w && !strstr(w, "s3cr3t") && !strstr(w, "root") && !strstr(w, "hunter2") &&
	   !strstr(w, "topsecret"), "... and no text of it is quoted");
	ok(!strcmp(theme_name(), "mono") && !theme_has_color(), "... and monochrome is used");
	free(w);
	unlink(path);
	free(path);
}

/* Load name and check the warning is "<file>: <want>; using monochrome", promptly. */
static void refused(const char *name, const char *file, const char *want, const char *what)
{
	char *w = NULL, full[1024];
	int rc = theme_load(name, true, &w);

	snprintf(full, sizeof(full), "%s: %s; using monochrome", file, want);
	ok(rc == -1 && w && !strcmp(w, full) && !strcmp(theme_name(), "mono"),
	   "%s (%s)", what, w ? w : "no warning");
	free(w);
}

/* FIFOs, devices, big files, loops and unreadable files are refused, saying why. */
static void not_regular(void)
{
	char dir[] = "/tmp/latop-themes-XXXXXX", p[256], q[256], x[256], *w = NULL;
	pid_t pid;
	FILE *f;
	int st = 0;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp for the theme files");
		return;
	}
	snprintf(p, sizeof(p), "%s/fifo.theme", dir);
	mkfifo(p, 0600);
	refused(p, p, "is a FIFO, not a regular file", "a FIFO is refused without blocking");
	refused("/dev/zero", "/dev/zero", "is a character device, not a regular file",
		"/dev/zero is refused without reading it");
	snprintf(q, sizeof(q), "%s/big.theme", dir);
	f = fopen(q, "w");
	fseek(f, 2 << 20, SEEK_SET);
	fputc('\n', f);
	fclose(f);
	refused(q, q, "is 2097153 bytes, over the 1048576-byte limit for this file",
		"a file over 1 MiB is refused");
	setenv("XDG_CONFIG_HOME", dir, 1);
	snprintf(x, sizeof(x), "%s/latop", dir);
	mkdir(x, 0755);
	snprintf(x, sizeof(x), "%s/latop/themes", dir);
	mkdir(x, 0755);
	snprintf(x, sizeof(x), "%s/latop/themes/loop.theme", dir);
	symlink(x, x);
	refused("loop", x, "cannot read: Too many levels of symbolic links",
		"a theme found by name that loops says so, not 'not found'");
	unlink(x);
	snprintf(x, sizeof(x), "%s/latop/themes/locked.theme", dir);
	f = fopen(x, "w");
	fputs("header = red\n", f);
	fclose(f);
	chmod(x, 0);
	chmod(dir, 0755);
	pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(2);
		theme_load("locked", true, &w);
		_exit(w && strstr(w, "locked.theme: cannot read: Permission denied; using monochrome")
		      ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "an unreadable theme says 'cannot read: Permission denied' (child status %d)", st);
	unlink(x);
	snprintf(x, sizeof(x), "%s/latop/themes", dir);
	rmdir(x);
	snprintf(x, sizeof(x), "%s/latop", dir);
	rmdir(x);
	unsetenv("XDG_CONFIG_HOME");
	unlink(q);
	unlink(p);
	rmdir(dir);
}

/* Without color, or for a theme that does not exist, monochrome applies. */
static void fallbacks(void)
{
	char *w = NULL;
	int rc = theme_load("no-such-theme", true, &w);

	ok(rc == -1 && w && strstr(w, "theme 'no-such-theme' not found"),
	   "a missing theme says so (%s)", w ? w : "no warning");
	ok(!strcmp(theme_name(), "mono") && !theme_has_color(), "and monochrome is used");
	free(w);
	w = NULL;
	rc = theme_load("themes/default.theme", false, &w);
	ok(!strcmp(theme_name(), "mono") && !theme_has_color() &&
	   !(theme_attr(ROLE_HEADER) & A_COLOR),
	   "no-color asks for the monochrome theme whatever was named");
	free(w);
	ok(theme_bar_role("block") == ROLE_BAR_BLOCK && theme_bar_role("zzz") == ROLE_BAR_OTHER,
	   "breakdown components map to their bar roles, unknown ones to other");
}

int main(void)
{
	alarm(20);
	FILE *out = fopen("/dev/null", "w");
	SCREEN *scr = newterm("xterm-256color", out, stdin);

	if (!scr) {
		skip("no terminfo entry for xterm-256color");
		tap_done();
	}
	start_color();
	use_default_colors();
	shipped_themes();
	bad_lines();
	long_lines();
	not_a_theme();
	not_regular();
	fallbacks();
	endwin();
	delscreen(scr);
	fclose(out);
	tap_done();
}
