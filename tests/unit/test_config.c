/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The rc file and core/rfile.c: settings, warnings that name FILE:LINE and
 * quote nothing, and files that are not regular (a FIFO, /dev/zero), too
 * big, looping or unreadable refused promptly.  An alarm turns a hang into
 * a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/config.h"
#include "core/rfile.h"
#include "tap.h"

static char dir[] = "/tmp/latop-config-XXXXXX";

/* Write len bytes of text to path; return 0 on success. */
static int write_bytes(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fwrite(text, 1, len, f);
	return fclose(f);
}

/* Write text to path; return 0 on success. */
static int write_file(const char *path, const char *text)
{
	return write_bytes(path, text, strlen(text));
}

/* A path in the test directory (a static buffer per call site's slot). */
static const char *in_dir(const char *name)
{
	static char bufs[8][256];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

/* All of cfg's warnings joined with " | " (caller frees). */
static char *warnings_of(const struct config *cfg)
{
	size_t i, len = 1;
	char *all;

	for (i = 0; i < config_nwarnings(cfg); i++)
		len += strlen(config_warning(cfg, i)) + 3;
	all = calloc(1, len);
	for (i = 0; i < config_nwarnings(cfg); i++) {
		if (i)
			strcat(all, " | ");
		strcat(all, config_warning(cfg, i));
	}
	return all;
}

/* Load path and return its warnings joined (caller frees). */
static char *load_warnings(const char *path)
{
	struct config *cfg = config_load(path);
	char *w = warnings_of(cfg);

	config_free(cfg);
	return w;
}

/* Values, comments, later keys win. */
static void settings(void)
{
	const char *rc = in_dir("rc");
	struct config *cfg;
	char *w;

	write_file(rc, "# a comment\n"
		       "theme = dark\n"
		       "\n"
		       "   history=500   \n"
		       "\t# an indented comment = not a setting\n"
		       "query.default = from syscalls where pid == 1\n"
		       "theme = light\n"
		       "empty =\n");
	cfg = config_load(rc);
	w = warnings_of(cfg);
	ok(config_nwarnings(cfg) == 0, "a good rc file loads with no warning (%s)", w);
	free(w);
	ok(config_get(cfg, "history") && !strcmp(config_get(cfg, "history"), "500"),
	   "white space around keys and values is trimmed");
	ok(config_get(cfg, "theme") && !strcmp(config_get(cfg, "theme"), "light"),
	   "a later line for the same key wins");
	ok(config_get(cfg, "query.default") &&
	   !strcmp(config_get(cfg, "query.default"), "from syscalls where pid == 1"),
	   "a value keeps its own '=' and spaces");
	ok(config_get(cfg, "empty") && !strcmp(config_get(cfg, "empty"), ""),
	   "an empty value is set, to \"\"");
	ok(!config_get(cfg, "# a comment") && !config_get(cfg, "# an indented comment") &&
	   !config_get(cfg, "missing") && !config_get(NULL, "theme"),
	   "comments set nothing; unknown keys are NULL");
	config_warn(cfg, "theme", "no such theme");
	ok(config_nwarnings(cfg) == 1 && strstr(config_warning(cfg, 0), ":7: theme: no such theme") &&
	   !strncmp(config_warning(cfg, 0), rc, strlen(rc)),
	   "config_warn names the file and the line of the key's setting (%s)",
	   config_warning(cfg, 0) ? config_warning(cfg, 0) : "none");
	ok(!config_warning(cfg, 1), "past the last warning is NULL");
	config_free(cfg);
}

/* Bad lines: a warning each naming FILE:LINE, no text quoted, the rest applies. */
static void bad_lines(void)
{
	const char *rc = in_dir("rc");
	struct config *cfg;
	char want[512], *w;

	write_file(rc, "theme = dark\n# fine\nthis line has no equals\nhistory = /x/h\n");
	cfg = config_load(rc);
	w = warnings_of(cfg);
	snprintf(want, sizeof(want), "%s:3: not a 'key = value' line; line ignored", rc);
	ok(!strcmp(w, want), "a malformed line is a warning naming FILE:LINE (%s)", w);
	ok(!strstr(w, "equals"), "... which does not quote the line");
	ok(config_get(cfg, "theme") && config_get(cfg, "history") &&
	   !strcmp(config_get(cfg, "history"), "/x/h"),
	   "the lines before and after it still apply");
	free(w);
	config_free(cfg);

	write_file(rc, "\n\nTheme = dark\nhistory = 1\n");
	w = load_warnings(rc);
	snprintf(want, sizeof(want),
		 "%s:3: bad key (use lower case letters, digits, '_', '.', '-'); line ignored", rc);
	ok(!strcmp(w, want) && !strstr(w, "Theme"), "a bad key is a warning naming FILE:LINE (%s)", w);
	free(w);
	write_file(rc, " = dark\na = 1\n");
	w = load_warnings(rc);
	ok(strstr(w, ":1: bad key") != NULL, "an empty key is a bad key (%s)", w);
	free(w);
	write_file(rc, "a = 1\nb = 2\nc = 3\nd = 4\nx\ny\nz\nu\nv\n");
	cfg = config_load(rc);
	w = warnings_of(cfg);
	snprintf(want, sizeof(want), "%s:5: not a 'key = value' line; line ignored | "
		 "%s:6: not a 'key = value' line; line ignored | "
		 "%s:7: not a 'key = value' line; line ignored | %s: 2 more bad lines ignored",
		 rc, rc, rc, rc);
	ok(!strcmp(w, want), "past three bad lines the rest are counted (%s)", w);
	ok(config_get(cfg, "d") != NULL, "... and the good lines of a mostly good file apply");
	free(w);
	config_free(cfg);
	write_bytes(rc, "a = 1\nb\0= 2\n", 12);
	w = load_warnings(rc);
	ok(strstr(w, ":2: not a 'key = value' line (it holds a NUL byte)") != NULL,
	   "a line with a NUL byte is a bad line (%s)", w);
	free(w);
}

/* A file that is not an rc file (a password file) is one warning, quoting nothing. */
static void not_an_rc_file(void)
{
	const char *rc = in_dir("shadow");
	struct config *cfg;
	char want[512], *w;

	write_file(rc, "root:$6$s3cr3tSALT$hashhashhash:19000:0:99999:7:::\n"
		       "daemon:*:19000:0:99999:7:::\n"
		       "api_key = topsecretvalue\n"
		       "bin:*:19000:0:99999:7:::\n"
		       "sys:*:19000:0:99999:7:::\n");
	cfg = config_load(rc);
	w = warnings_of(cfg);
	snprintf(want, sizeof(want), "%s: not an rc file (3 of its first 4 lines are not "
		 "'key = value' lines): no setting used", rc);
	ok(!strcmp(w, want), "a file mostly not 'key = value' is one warning (%s)", w);
	ok(!strstr(w, "s3cr3t") && !strstr(w, "root") && !strstr(w, "topsecret") &&
	   !strstr(w, "api_key"), "... quoting none of its text");
	ok(!config_get(cfg, "api_key"), "... and none of its settings apply");
	free(w);
	config_free(cfg);
}

/* A FIFO, /dev/zero, a symlink to it, a file over 1 MiB, a loop: refused at once. */
static void not_regular(void)
{
	const char *fifo = in_dir("fifo"), *big = in_dir("big"), *loop = in_dir("loop");
	char want[512], *w, *data = NULL, *cause = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	mkfifo(fifo, 0600);
	w = load_warnings(fifo);
	snprintf(want, sizeof(want), "%s: is a FIFO, not a regular file; no rc setting used", fifo);
	ok(!strcmp(w, want), "a FIFO is refused without blocking (%s)", w);
	free(w);
	w = load_warnings("/dev/zero");
	ok(!strcmp(w, "/dev/zero: is a character device, not a regular file; no rc setting used"),
	   "/dev/zero is refused without reading it (%s)", w);
	free(w);
	f = fopen(big, "w");
	fseek(f, RFILE_SETTINGS_MAX_BYTES, SEEK_SET);
	fputc('\n', f);
	fclose(f);
	w = load_warnings(big);
	snprintf(want, sizeof(want), "%s: is 1048577 bytes, over the 1048576-byte limit for this "
		 "file; no rc setting used", big);
	ok(!strcmp(w, want), "a file over 1 MiB is refused (%s)", w);
	free(w);
	truncate(big, RFILE_SETTINGS_MAX_BYTES);
	rc = rfile_read(big, RFILE_SETTINGS_MAX_BYTES, &data, &len, &cause);
	ok(rc == 0 && len == RFILE_SETTINGS_MAX_BYTES && data[len] == '\0',
	   "a file of exactly the limit is read whole (%zu bytes)", len);
	free(data);
	rc = rfile_read("/proc/self/maps", 16, &data, &len, &cause);
	ok(rc == -EFBIG && cause && strstr(cause, "/proc/self/maps: holds more than 16 bytes"),
	   "a file whose size says 0 is still cut at the limit (%s)", cause ? cause : "read");
	free(cause);
	cause = NULL;
	rc = rfile_read(dir, 16, &data, &len, &cause);
	ok(rc == -EINVAL && cause && strstr(cause, ": is a directory, not a regular file"),
	   "a directory is refused (%s)", cause ? cause : "read");
	free(cause);
	symlink(loop, loop);
	w = load_warnings(loop);
	snprintf(want, sizeof(want), "%s: cannot read: %s; no rc setting used", loop, strerror(ELOOP));
	ok(!strcmp(w, want), "a symlink loop says so (%s)", w);
	free(w);
	w = load_warnings(in_dir("nothere"));
	ok(strstr(w, "nothere: cannot read: No such file or directory; no rc setting used") != NULL,
	   "a missing named file is a warning (%s)", w);
	free(w);
	unlink(loop);
	unlink(big);
	unlink(fifo);
}

/* An unreadable file says Permission denied (as nobody when run as root). */
static void unreadable(void)
{
	const char *rc = in_dir("secret");
	char *w;
	pid_t pid;
	int st = 0;

	write_file(rc, "theme = mono\n");
	chmod(rc, 0);
	chmod(dir, 0755);
	pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(2);
		w = load_warnings(rc);
		_exit(strstr(w, "secret: cannot read: Permission denied; no rc setting used") ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "an unreadable file says 'cannot read: Permission denied' (child status %d)", st);
	unlink(rc);
}

/* The default file: XDG_CONFIG_HOME, missing is silent, a non-directory warns. */
static void default_file(void)
{
	const char *sub = in_dir("latop"), *dflt = in_dir("latop/latoprc");
	struct config *cfg;
	char want[512], *d, *w;

	setenv("XDG_CONFIG_HOME", dir, 1);
	d = config_dir();
	ok(!strcmp(d, sub), "config_dir follows XDG_CONFIG_HOME (%s)", d);
	free(d);
	cfg = config_load(NULL);
	ok(config_nwarnings(cfg) == 0 && !config_get(cfg, "theme"),
	   "a missing default file is an empty config, silently");
	config_free(cfg);
	mkdir(sub, 0700);
	write_file(dflt, "theme = mono\n");
	cfg = config_load(NULL);
	ok(config_get(cfg, "theme") && !strcmp(config_get(cfg, "theme"), "mono"),
	   "the default file is $XDG_CONFIG_HOME/latop/latoprc");
	config_free(cfg);
	unlink(dflt);
	symlink("/dev/zero", dflt);
	w = load_warnings(NULL);
	snprintf(want, sizeof(want), "%s: is a character device, not a regular file; "
		 "no rc setting used", dflt);
	ok(!strcmp(w, want), "a default rc symlinked to /dev/zero is refused (%s)", w);
	free(w);
	unlink(dflt);
	rmdir(sub);
	setenv("XDG_CONFIG_HOME", "/dev/null", 1);
	w = load_warnings(NULL);
	ok(!strcmp(w, "XDG_CONFIG_HOME=/dev/null is not a directory: no rc file read"),
	   "XDG_CONFIG_HOME on a non-directory is one warning (%s)", w);
	free(w);
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);
	setenv("HOME", "/home/someone", 1);
	d = config_dir();
	ok(!strcmp(d, "/home/someone/.config/latop"),
	   "a relative XDG_CONFIG_HOME is ignored for ~/.config (%s)", d);
	free(d);
}

/* The shared rc: loaded once, its warnings on stderr once, later ones as they come. */
static void shared(void)
{
	const char *sub = in_dir("latop"), *dflt = in_dir("latop/latoprc"), *err = in_dir("stderr");
	struct config *a, *b;
	char buf[4096], *p;
	int fd, saved, n, count = 0;
	FILE *f;

	setenv("XDG_CONFIG_HOME", dir, 1);
	mkdir(sub, 0700);
	write_file(dflt, "theme = mono\ngarbage\nflow_timeout = 0s\n");
	fflush(stderr);
	saved = dup(2);
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
	a = config_shared();
	b = config_shared();
	config_warn(b, "flow_timeout", "out of range");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(err, "r");
	n = f ? (int)fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n > 0 ? n : 0] = '\0';
	if (f)
		fclose(f);
	for (p = buf; (p = strstr(p, ":2: not a 'key = value' line")); p++)
		count++;
	ok(a == b, "every reader gets the one shared config");
	ok(count == 1 && strstr(buf, "latop: warning: ") == buf,
	   "its load warning is said on stderr once, however many read it (%d times)", count);
	ok(strstr(buf, ":3: flow_timeout: out of range\n") != NULL,
	   "a reader's warning about a key is said as it arises, with its line");
	ok(config_nwarnings(a) == 2, "both stay readable for the TUI's status line (%zu)",
	   config_nwarnings(a));
	unlink(dflt);
	rmdir(sub);
	unlink(err);
}

/* Keys no part of latop reads are named, once each, with the closest known key. */
static void unknown_keys(void)
{
	static const char *const known[] = {"flow_max", "history_mb", "theme"};
	struct config *cfg;
	char *w;

	write_file(in_dir("rc"), "flow_maxx = 100\ntheme = dark\nhistroy_mb = 3\n"
				 "zzz = 1\nflow_maxx = 5\nflow_max = 64\n");
	cfg = config_load(in_dir("rc"));
	config_check_keys(cfg, known, 3);
	w = warnings_of(cfg);
	ok(config_nwarnings(cfg) == 3, "three unknown keys, three warnings (%s)", w);
	ok(strstr(w, "rc:5: flow_maxx: not a latoprc key; ignored (did you mean 'flow_max'?)") &&
	   strstr(w, "rc:3: histroy_mb: not a latoprc key; ignored (did you mean 'history_mb'?)"),
	   "a misspelt key is named at its last line, with the key it is close to (%s)", w);
	ok(strstr(w, "rc:4: zzz: not a latoprc key; ignored") &&
	   !strstr(w, "zzz: not a latoprc key; ignored ("),
	   "a key close to none is named without a guess (%s)", w);
	ok(!strcmp(config_get(cfg, "flow_max"), "64") && !strcmp(config_get(cfg, "theme"), "dark"),
	   "the known keys still apply");
	free(w);
	config_free(cfg);
	write_file(in_dir("rc"), "theme = dark\n");
	cfg = config_load(in_dir("rc"));
	config_check_keys(cfg, known, 3);
	ok(config_nwarnings(cfg) == 0, "a file of known keys gets no warning");
	config_free(cfg);
}

int main(void)
{
	alarm(20);
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp for the rc files");
		tap_done();
	}
	settings();
	bad_lines();
	not_an_rc_file();
	not_regular();
	unreadable();
	default_file();
	shared();
	unknown_keys();
	unlink(in_dir("rc"));
	unlink(in_dir("shadow"));
	rmdir(dir);
	tap_done();
}
