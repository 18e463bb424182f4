/* Theme files: the shipped ones load cleanly; mistakes are named FILE:LINE. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
				"row red blue\n");
	char *w = NULL, want[512];
	int rc = theme_load(path, true, &w);

	ok(rc == 0, "a theme with bad lines still loads");
	snprintf(want, sizeof(want), "%s:2: unknown role 'headr'", path);
	ok(w && strstr(w, want), "an unknown role is named with its line (%s)", w ? w : "none");
	snprintf(want, sizeof(want), "%s:3: unknown color or attribute 'reddish'", path);
	ok(w && strstr(w, want), "an unknown color is named with its line");
	ok(w && strstr(w, "(more problems not shown)"),
	   "past two problems the rest are summarised, not listed");
	ok((theme_attr(ROLE_HEADER) & A_BOLD) && (theme_attr(ROLE_HEADER) & A_COLOR),
	   "the good line still applies: header is bold and colored");
	ok(theme_has_color(), "a color theme on a color terminal draws in color");
	free(w);
	unlink(path);
	free(path);
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
	fallbacks();
	endwin();
	delscreen(scr);
	fclose(out);
	tap_done();
}
