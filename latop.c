/* SPDX-License-Identifier: GPL-3.0-or-later */
/* latop: top for latency.  The command table, argument parsing and wiring. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroup.h"
#include "core/config.h"
#include "core/clock.h"
#include "core/fmt.h"
#include "core/json.h"
#include "core/snapshot.h"
#include "core/ring.h"
#include "core/source.h"
#include "core/merge.h"
#include "core/table.h"
#include "core/xalloc.h"
#include "probes/probe.h"
#include "probes/views.h"
#include "queries/expose.h"
#include "queries/query.h"
#include "serve.h"
#include "tui/theme.h"
#include "tui/tui.h"

#define DEFAULT_INTERVAL_NS 1000000000ULL
#define MAX_DURATION_NS (87600ULL * 3600 * 1000000000ULL)	/* 10 years, as 87600h */

struct cmd_entry {
	const char *name;
	const char *usage;
	const char *help;
	int (*exec)(int argc, char **argv);
	const char *shortopts;		/* getopt's */
	const struct option *opts;	/* getopt_long's; what `latop complete` offers */
};

static int cmd_live(int argc, char **argv);
static int cmd_record(int argc, char **argv);
static int cmd_replay(int argc, char **argv);
static int cmd_report(int argc, char **argv);
static int cmd_probes(int argc, char **argv);
static int cmd_serve(int argc, char **argv);

static const struct option live_opts[] = {
	{"query", required_argument, NULL, 'q'},
	{"theme", required_argument, NULL, 't'},
	{"interval", required_argument, NULL, 'i'},
	{"pid", required_argument, NULL, 'p'},
	{"cgroup", required_argument, NULL, 'c'},
	{"no-color", no_argument, NULL, 'C'},
	{"counters", required_argument, NULL, 'k'},
	{"bpf-stats", no_argument, NULL, 'B'},
	{"no-realtime", no_argument, NULL, 'R'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{0},
};

static const struct option record_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"duration", required_argument, NULL, 'd'},
	{"query", required_argument, NULL, 'q'},
	{"interval", required_argument, NULL, 'i'},
	{"pid", required_argument, NULL, 'p'},
	{"cgroup", required_argument, NULL, 'c'},
	{"quiet", no_argument, NULL, 'Q'},
	{"counters", required_argument, NULL, 'k'},
	{"bpf-stats", no_argument, NULL, 'B'},
	{"no-realtime", no_argument, NULL, 'R'},
	{"rotate", required_argument, NULL, 'O'},
	{"keep", required_argument, NULL, 'K'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

static const struct option replay_opts[] = {
	{"query", required_argument, NULL, 'q'},
	{"theme", required_argument, NULL, 't'},
	{"no-color", no_argument, NULL, 'C'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

static const struct option report_opts[] = {
	{"query", required_argument, NULL, 'q'},
	{"json", no_argument, NULL, 'j'},
	{"csv", no_argument, NULL, 'c'},
	{"format", required_argument, NULL, 'f'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

static const struct option serve_opts[] = {
	{"listen", required_argument, NULL, 'l'},
	{"metric", required_argument, NULL, 'm'},
	{"history", required_argument, NULL, 'H'},
	{"max-series", required_argument, NULL, 'S'},
	{"no-defaults", no_argument, NULL, 'N'},
	{"interval", required_argument, NULL, 'i'},
	{"pid", required_argument, NULL, 'p'},
	{"cgroup", required_argument, NULL, 'c'},
	{"counters", required_argument, NULL, 'k'},
	{"bpf-stats", no_argument, NULL, 'B'},
	{"no-realtime", no_argument, NULL, 'R'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* cmd_probes reads its one option itself. */
static const struct option probes_opts[] = {
	{"json", no_argument, NULL, 'j'},
	{0},
};

/* latop with no command: the live TUI. */
static const struct cmd_entry live_cmd = {
	NULL, NULL, NULL, cmd_live, "+q:t:i:p:c:hV", live_opts,
};

static const struct cmd_entry commands[] = {
	{"record", "record -o FILE|DIR [-d DURATION] [-q QUERY] [-i INTERVAL] [-p PID,...]\n"
	 "             [-c CGROUP] [--quiet] [--counters LIST] [--bpf-stats] [--no-realtime]\n"
	 "             [--rotate DURATION|SIZE [--keep DURATION|SIZE|COUNT]]",
	 "record live data to a snapshot file, or a ring of them in DIR, headless", cmd_record, "o:d:q:i:p:c:h", record_opts},
	{"replay", "replay FILE...|DIR [-q QUERY] [-t THEME]",
	 "browse a recording in the TUI, with time travel", cmd_replay, "q:t:h", replay_opts},
	{"report", "report FILE...|DIR... [-q QUERY] [--json|--csv|--format FORMAT]",
	 "run a query over recordings and print the result", cmd_report, "q:h", report_opts},
	{"probes", "probes [--json]",
	 "list the probes, their stages and the hook this kernel gives each", cmd_probes, "",
	 probes_opts},
	{"serve", "serve [--listen ADDR:PORT] [--metric NAME=QUERY]... [--history DUR]\n"
	 "             [--max-series N] [--no-defaults] [-i INTERVAL] [-p PID,...] [-c CGROUP]\n"
	 "             [--counters LIST] [--bpf-stats] [--no-realtime]",
	 "serve metrics (GET /metrics) and recent recordings (GET /snapshot) over HTTP",
	 cmd_serve, "l:m:i:p:c:h", serve_opts},
};

static volatile sig_atomic_t stop_requested;

/* Note that a signal asked us to finish. */
static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Append word to the paragraph being printed to out, whose line has *col
 * columns: on a new line when it would pass 75 columns. */
static void usage_word(FILE *out, const char *word, int *col)
{
	int n = (int)strlen(word);

	if (*col && *col + 1 + n > 75) {
		fputc('\n', out);
		*col = 0;
	}
	*col += fprintf(out, "%s%s", *col ? " " : "", word);
}

/* Print, wrapped, what each view shows: "... per TCP flow (1 flows), ...". */
static void views_usage(FILE *out)
{
	char text[1024], *word, *save;
	size_t v, o;
	int col = 0;

	o = (size_t)snprintf(text, sizeof(text), "latop shows, live, where time goes:");
	for (v = 0; v < views_len && o < sizeof(text); v++) {
		if (views[v].help)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s %s (", v ? ")," : "",
					      views[v].help);
		else
			o += (size_t)snprintf(text + o, sizeof(text) - o, ", ");
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%c %s", views[v].key, views[v].name);
	}
	if (o < sizeof(text))
		snprintf(text + o, sizeof(text) - o, ").");
	for (word = strtok_r(text, " ", &save); word; word = strtok_r(NULL, " ", &save))
		usage_word(out, word, &col);
	fputc('\n', out);
}

/* Print the usage to out. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: latop [-q QUERY] [-t THEME] [-i INTERVAL] [-p PID,...] [-c CGROUP]\n"
		"             [--no-color] [--counters LIST] [--bpf-stats] [--no-realtime]\n"
		"       latop COMMAND [ARGS]\n"
		"\n");
	views_usage(out);
	fprintf(out,
		"\n"
		"options (live TUI):\n"
		"  -q, --query QUERY     open on this query (see latop-query(7))\n"
		"  -t, --theme THEME     theme name or file (default, light, mono, ...)\n"
		"  -i, --interval DUR    tick interval, e.g. 500ms (default 1s)\n"
		"  -p, --pid PID,...     only these processes (up to %d), in the views that have\n"
		"                        a pid\n"
		"  -c, --cgroup CGROUP   only tasks in this cgroup v2 and below it, e.g.\n"
		"                        /system.slice/nginx.service, in the views that have one\n"
		"      --no-color        no colors (also: NO_COLOR in the environment)\n"
		"      --counters LIST   perf counters per call: taskclock,cycles,instructions\n"
		"                        (\"\" for none; each costs time per syscall)\n"
		"      --bpf-stats       measure time in BPF programs for the header (costly)\n"
		"      --no-realtime     collect at the default priority, not SCHED_FIFO 1\n"
		"  -h, --help            this help\n"
		"  -V, --version         the version\n"
		"\n"
		"commands:\n", PROBE_MAX_PIDS);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  latop %-50s\n        %s\n", commands[i].usage, commands[i].help);
	fprintf(out,
		"\n"
		"Live modes need root, or CAP_BPF and CAP_PERFMON.  See latop(1).\n");
}

/*
 * Parse a duration like 30s, 500ms, 2m, 1h or a bare number of seconds:
 * finite, not negative, at least 1ns unless 0, at most 10 years.
 */
static int parse_duration(const char *s, uint64_t *ns, char **cause)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ULL},
		{"m", 60000000000ULL}, {"h", 3600000000000ULL}, {"", 1000000000ULL},
	};
	char *end;
	double v, x;
	bool under;

	errno = 0;
	v = strtod(s, &end);
	under = errno == ERANGE && !isinf(v);
	if (end == s) {
		*cause = xasprintf("'%s' is not a duration (try 30s, 500ms, 2m)", s);
		return -1;
	}
	if (isnan(v) || signbit(v)) {
		*cause = xasprintf("'%s' is not a duration: it must be a number of 0 or more "
				   "(try 30s, 500ms, 2m)", s);
		return -1;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		x = v * (double)units[i].ns;
		if (isinf(x)) {
			*cause = xasprintf("'%s' is not a finite duration: the limit is 10 years "
					   "(87600h)", s);
			return -1;
		}
		if (x > (double)MAX_DURATION_NS) {
			*cause = xasprintf("'%s' is longer than the limit of 10 years (87600h)", s);
			return -1;
		}
		if (under || (v > 0 && x < 1)) {
			*cause = xasprintf("'%s' is shorter than 1ns", s);
			return -1;
		}
		*ns = (uint64_t)(x + 0.5);
		return 0;
	}
	*cause = xasprintf("unknown unit '%s' in duration '%s' (ns, us, ms, s, m, h)", end, s);
	return -1;
}

/* Report an error for a command-line problem and return the exit status 2. */
static int bad_usage(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "latop%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'latop --help'.\n");
	return 2;
}

/* Apply --counters LIST ('k'), --bpf-stats ('B'), --no-realtime ('R'),
 * --pid LIST ('p') or --cgroup PATH ('c') to the probes. */
static int probe_option(int c, const char *arg)
{
	char *cause = NULL;

	if (c == 'p') {
		if (probe_set_pids(arg, &cause) == 0)
			return 0;
		fprintf(stderr, "latop: -p: %s\nTry 'latop --help'.\n", cause);
		free(cause);
		return -1;
	}
	if (c == 'c') {
		if (probe_set_cgroup(arg, &cause) == 0)
			return 0;
		fprintf(stderr, "latop: -c: %s\nTry 'latop --help'.\n", cause);
		free(cause);
		return -1;
	}

	if (c == 'B' || c == 'R') {
		if (c == 'B')
			probe_set_run_stats(true);
		else
			probe_set_realtime(false);
		return 0;
	}
	if (probe_set_counters(arg, &cause) < 0) {
		fprintf(stderr, "latop: --counters: %s\nTry 'latop --help'.\n", cause);
		free(cause);
		return -1;
	}
	return 0;
}

/* Parse and check query text, printing the error with its caret. */
static struct query *parse_query_or_say(const char *text)
{
	struct query_error err;
	struct query *q = query_parse(text, &err);
	char buf[1024];

	if (!q) {
		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop: bad query: %s\n", buf);
	}
	return q;
}

/* Bind q to its FROM table (default: the first the source has); say why not. */
static const struct schema *bind_or_say(struct query *q, const char *text,
					const struct source_info *info)
{
	const char *table = query_table(q);
	const struct schema *s;
	struct query_error err;
	char buf[1024];

	if (!table) {
		if (info->nschemas == 0) {
			fprintf(stderr, "latop: the source has no tables\n");
			return NULL;
		}
		s = info->schemas[0];
	} else if (!(s = source_schema(info, table))) {
		fprintf(stderr, "latop: no table '%s' here; tables:", table);
		for (size_t i = 0; i < info->nschemas; i++)
			fprintf(stderr, " %s", info->schemas[i]->table);
		fprintf(stderr, "\n");
		return NULL;
	}
	if (query_bind(q, s, &err) < 0) {
		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop: bad query: %s\n", buf);
		return NULL;
	}
	return s;
}

/* Run the TUI over src. */
static int run_tui(struct source *src, const struct tui_opts *o)
{
	char *cause = NULL;
	int rc = tui_run(src, o, &cause);

	if (rc < 0) {
		fprintf(stderr, "latop: %s\n", cause ? cause : "the interface failed");
		free(cause);
		return 1;
	}
	return 0;
}

/* Open the live source for the query's table (or every table). */
static struct source *open_live(struct query *q, uint64_t interval_ns)
{
	const char *table = q ? query_table(q) : NULL;
	char *cause = NULL;
	struct source *src;

	src = live_open(table ? &table : NULL, table ? 1 : 0, interval_ns, &cause);
	if (!src) {
		fprintf(stderr, "latop: %s\n", cause ? cause : "cannot start the probes");
		free(cause);
	}
	return src;
}

/* Say once, as who, that live source src collects at less than real-time
 * priority although that was asked for, and why. */
static void say_priority(const char *who, const struct source *src)
{
	bool refused;
	const char *what = live_priority(src, &refused);

	if (what && refused)
		fprintf(stderr, "latop%s%s: warning: %s\n", who ? " " : "", who ? who : "", what);
}

/* Push q's kernel filter into a live source. */
static int push_filter(struct source *src, struct query *q, const struct schema *s)
{
	struct filter_prog f;
	char *cause = NULL;

	if (!src->ops->set_filter)
		return 0;
	query_pushdown(q, &f);
	if (src->ops->set_filter(src, s->table, &f, sizeof(f), &cause) < 0) {
		fprintf(stderr, "latop: %s\n", cause);
		free(cause);
		return -1;
	}
	return 0;
}

/* latop [-q QUERY]: the live TUI. */
static int cmd_live(int argc, char **argv)
{
	struct tui_opts o = {0};
	uint64_t interval_ns = DEFAULT_INTERVAL_NS;
	struct query *q = NULL;
	struct source *src;
	char *cause = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, live_cmd.shortopts, live_cmd.opts, NULL)) != -1) {
		switch (c) {
		case 'q': o.query = optarg; break;
		case 't': o.theme = optarg; break;
		case 'C': o.no_color = true; break;
		case 'c':
		case 'k':
		case 'B':
		case 'R':
		case 'p':
			if (probe_option(c, optarg) < 0)
				return 2;
			break;
		case 'i':
			if (parse_duration(optarg, &interval_ns, &cause) < 0 || interval_ns < 10000000) {
				rc = bad_usage(NULL, "-i: %s", cause ? cause : "the interval must be at least 10ms");
				free(cause);
				return rc;
			}
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("latop %s\n", LATOP_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return bad_usage(NULL, "unknown command '%s'", argv[optind]);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "latop: the live view needs a terminal; use 'latop record' "
				"or 'latop report' from scripts\n");
		return 2;
	}
	if (o.query && !(q = parse_query_or_say(o.query)))
		return 2;
	src = open_live(q, interval_ns);
	query_free(q);
	if (!src)
		return 1;
	rc = run_tui(src, &o);
	say_priority(NULL, src);
	source_close(src);
	return rc;
}

/*
 * Install handlers so SIGINT, SIGTERM and SIGHUP finish a recording
 * cleanly; a SIGHUP already ignored (nohup) stays ignored.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa = {0}, old;

	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
		return;
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * Say how many ticks came late (over 1.5 times interval_ns; 0: their
 * median) and the longest: their counts are whole, their rates average
 * over longer than the interval.  who: "record" or "report".
 */
static void say_late(const char *who, const struct tick_lengths *tl, uint64_t interval_ns)
{
	char a[32], b[32];
	uint64_t longest;
	size_t late = tick_lengths_late(tl, &interval_ns, &longest);

	if (!late)
		return;
	fprintf(stderr, "latop %s: warning: %zu of %zu ticks came late (the longest lasted %s "
		"for an interval of %s): the recorder did not run on time; their counts are "
		"whole, their rates average over the longer span\n", who, late, tl->n,
		fmt_dur(longest, a, sizeof(a)), fmt_dur(interval_ns, b, sizeof(b)));
}

/* Records each probe lost, and entries it evicted, so far, for record's
 * closing words. */
struct lost_tally {
	size_t n;
	struct {
		const char *probe;
		uint64_t lost, evicted, overflow;
	} t[32];
};

/*
 * Add a tick's losses and evictions to the tally.  A probe's tables share
 * its counts: take each one's largest.
 */
static void tally_lost(struct lost_tally *lt, const struct tick *t)
{
	uint64_t lost[32] = {0}, evicted[32] = {0}, overflow[32] = {0};
	size_t i, j;

	for (i = 0; i < t->nframes; i++) {
		const struct frame *f = t->frames[i];
		const struct probe_ops *ops = probe_for_table(f->schema->table);
		const char *name = ops ? ops->name : f->schema->table;

		if (!f->stats.lost && !f->stats.evicted && !f->stats.overflow)
			continue;
		for (j = 0; j < lt->n && strcmp(lt->t[j].probe, name); j++)
			;
		if (j == lt->n) {
			if (lt->n == sizeof(lt->t) / sizeof(lt->t[0]))
				continue;
			lt->t[lt->n].probe = name;
			lt->t[lt->n].lost = lt->t[lt->n].evicted = lt->t[lt->n].overflow = 0;
			lt->n++;
		}
		if (f->stats.lost > lost[j])
			lost[j] = f->stats.lost;
		if (f->stats.evicted > evicted[j])
			evicted[j] = f->stats.evicted;
		if (f->stats.overflow > overflow[j])
			overflow[j] = f->stats.overflow;
	}
	for (j = 0; j < lt->n; j++) {
		lt->t[j].lost += lost[j];
		lt->t[j].evicted += evicted[j];
		lt->t[j].overflow += overflow[j];
	}
}

/* Say what the evicted count of probe (or table) means for its totals. */
static void say_evicted(const char *who, const char *name, uint64_t n)
{
	fprintf(stderr, "latop %s: warning: %s: %llu evicted in the kernel (requests given up "
		"unanswered or unfinished, or keys, connections or requests not tracked "
		"because a table was full; latop(1) HEADER says what each view counts)\n",
		who, name, (unsigned long long)n);
}

/* Say how much of probe's (or table's) counts went to overflow rows. */
static void say_overflow(const char *who, const char *name, uint64_t n)
{
	fprintf(stderr, "latop %s: warning: %s: %llu counted in overflow rows (a table was full: "
		"every total is exact, the detail by key is not; latop(1) TABLE SIZES says how to "
		"make it larger)\n", who, name, (unsigned long long)n);
}

/*
 * For --json consumers: the figures of every warning report may give, as one
 * JSON object, the last line of standard error (all zero when every count
 * of the table is exact); interval_ns as for say_late.
 */
static void say_health_json(const char *table, const struct frame_stats *st,
			    const struct tick_lengths *tl, uint64_t interval_ns)
{
	uint64_t longest = 0;
	size_t late = tick_lengths_late(tl, &interval_ns, &longest);

	fprintf(stderr, "{\"health\": {\"table\": ");
	json_str(stderr, table);
	fprintf(stderr, ", \"events\": %llu, \"lost\": %llu, \"dropped\": %llu, "
		"\"evicted\": %llu, \"overflow\": %llu, \"ticks\": %zu, \"ticks_late\": %zu, "
		"\"longest_tick_ns\": %llu, \"interval_ns\": %llu}}\n",
		(unsigned long long)st->events, (unsigned long long)st->lost,
		(unsigned long long)st->dropped, (unsigned long long)st->evicted,
		(unsigned long long)st->overflow, tl->n, late,
		(unsigned long long)(late ? longest : 0), (unsigned long long)interval_ns);
}

/* Say which probes lost records, evicted entries or counted in overflow
 * rows: what their tables hold is short by the first two. */
static void say_lost(const struct lost_tally *lt)
{
	for (size_t j = 0; j < lt->n; j++) {
		if (lt->t[j].lost)
			fprintf(stderr, "latop record: warning: %s: %llu records lost in the "
				"kernel (a ring buffer or map was full, or an event came while its "
				"program was running on that CPU)\n", lt->t[j].probe,
				(unsigned long long)lt->t[j].lost);
		if (lt->t[j].evicted)
			say_evicted("record", lt->t[j].probe, lt->t[j].evicted);
		if (lt->t[j].overflow)
			say_overflow("record", lt->t[j].probe, lt->t[j].overflow);
	}
}

/* Bind q to the live source, push its filter down and apply its EVERY; 0, or 2 said. */
static int record_query(struct source *src, struct query *q, const char *text)
{
	const struct schema *s = bind_or_say(q, text, src->ops->info(src));
	char *cause = NULL;

	if (!s || push_filter(src, q, s) < 0)
		return 2;
	{
		/* The other half of report_probe_options: these choose what a
		 * report shows, and a recording keeps every row its filter passes. */
		char *v = query_options_written(q, QOK_VIEW);

		if (v)
			fprintf(stderr, "latop record: warning: %s: %s what a report or replay "
				"shows, and nothing while recording, which keeps every row the "
				"filter passes; give %s to latop report\n", v,
				strchr(v, ',') ? "these choose" : "this chooses",
				strchr(v, ',') ? "them" : "it");
		free(v);
	}
	if (query_option_given(q, "every") && src->ops->set_interval &&
	    src->ops->set_interval(src, query_options(q)->every_ns, &cause) < 0) {
		fprintf(stderr, "latop record: %s\n", cause);
		free(cause);
		return 2;
	}
	return 0;
}

/* What record tallies of the ticks it writes, for its closing words. */
struct record_tally {
	struct lost_tally lost;
	struct tick_lengths lens;
};

/* Write tick t to w, or to the ring rw when w is NULL, and tally its losses
 * and length; free t either way.  -1 with *cause. */
static int record_tick(struct snap_writer *w, struct ring_writer *rw, struct tick *t,
		       struct record_tally *rt, char **cause)
{
	int rc = w ? snap_write_tick(w, t, cause)
		   : ring_write_tick(rw, t, clock_ns(CLOCK_REALTIME), cause);

	if (rc == 0) {
		tally_lost(&rt->lost, t);
		tick_lengths_add(&rt->lens, t, NULL);
	}
	tick_done(t);
	return rc;
}

/* How long to wait for a tick: 100ms, or what is left of dur_ns from start if less. */
static int tick_wait_ms(uint64_t start, uint64_t dur_ns)
{
	uint64_t elapsed = mono_ns() - start, left_ms;

	if (!dur_ns)
		return 100;
	if (elapsed >= dur_ns)
		return 0;
	left_ms = (dur_ns - elapsed + 999999) / 1000000;
	return left_ms < 100 ? (int)left_ms : 100;
}

/* Say where a recording that did not finish is, and what it holds. */
static void say_kept(const char *tmp, size_t nticks)
{
	if (nticks)
		fprintf(stderr, "latop record: kept %zu tick%s in %s; 'latop report' and "
			"'latop replay' read it\n", nticks, nticks == 1 ? "" : "s", tmp);
	else
		fprintf(stderr, "latop record: %s holds no tick; nothing was recorded\n", tmp);
}

/*
 * Check -o DIR for a ring of recordings (ring, or -o names a directory),
 * making it when --rotate is given and it is missing; 0, or 2 said.
 */
static int record_check_dir(const char *out, bool rotate)
{
	struct stat st;

	if (stat(out, &st) < 0 && errno == ENOENT && rotate && mkdir(out, 0750) == 0)
		fprintf(stderr, "latop record: made the directory %s\n", out);
	if (stat(out, &st) < 0) {
		fprintf(stderr, "latop record: -o: %s: %s\n", out, strerror(errno));
		return 2;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "latop record: -o: %s: is not a directory; --rotate writes a "
			"directory of recordings\n", out);
		return 2;
	}
	if (access(out, W_OK | X_OK) < 0) {
		fprintf(stderr, "latop record: -o: %s: cannot write in the directory: %s\n", out,
			strerror(errno));
		return 2;
	}
	return 0;
}

/*
 * latop record -o FILE [-d DUR] [-q QUERY]: record headless until -d or a
 * stop signal, then take the partial last interval as a tick of its own.
 * -o DIR, or --rotate, writes a ring of recordings in DIR (core/ring.h).
 */
static int cmd_record(int argc, char **argv)
{
	const char *out = NULL, *text = NULL, *rotate_arg = NULL, *keep_arg = NULL;
	uint64_t dur_ns = 0, interval_ns = DEFAULT_INTERVAL_NS, start = 0;
	struct record_tally tally = {0};
	struct query *q = NULL;
	struct source *src = NULL;
	struct snap_writer *w = NULL;
	struct ring_writer *rw = NULL;
	struct ring_limit rotate = {RING_NONE, 0}, keep = {RING_NONE, 0};
	char *cause = NULL, *tmp = NULL;
	bool quiet = false, closed = false, ring = false;
	size_t nticks = 0, nfiles = 0;
	struct stat st;
	struct tick t;
	int c, r, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, commands[0].shortopts, commands[0].opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': text = optarg; break;
		case 'Q': quiet = true; break;
		case 'c':
		case 'k':
		case 'B':
		case 'R':
		case 'p':
			if (probe_option(c, optarg) < 0)
				return 2;
			break;
		case 'd':
		case 'i':
			if (parse_duration(optarg, c == 'd' ? &dur_ns : &interval_ns, &cause) < 0) {
				rc = bad_usage("record", c == 'd' ? "-d: %s" : "-i: %s", cause);
				free(cause);
				return rc;
			}
			break;
		case 'O':
		case 'K':
			*(c == 'O' ? &rotate_arg : &keep_arg) = optarg;
			if (ring_parse_limit(optarg, c == 'K', c == 'O' ? &rotate : &keep,
					     &cause) < 0) {
				rc = bad_usage("record", c == 'O' ? "--rotate: %s" : "--keep: %s",
					       cause);
				free(cause);
				return rc;
			}
			break;
		case 'h':
			printf("usage: latop %s\n", commands[0].usage);
			return 0;
		default:
			return 2;
		}
	}
	if (!out)
		return bad_usage("record", "%s", "needs -o FILE");
	if (keep.kind != RING_NONE && rotate.kind == RING_NONE)
		return bad_usage("record", "%s", "--keep needs --rotate (it keeps a ring of files)");
	if (optind < argc)
		return bad_usage("record", "unexpected argument '%s'", argv[optind]);
	if (interval_ns < 10000000)
		return bad_usage("record", "%s", "-i: the interval must be at least 10ms");
	ring = rotate.kind != RING_NONE || (stat(out, &st) == 0 && S_ISDIR(st.st_mode));
	if (ring && record_check_dir(out, rotate.kind != RING_NONE))
		return 2;
	/* Refuse a target the recording could not end in before spending any
	 * time on it; snap_create checks it again when it makes the file. */
	if (!ring && snap_check_target(out, &cause) < 0) {
		fprintf(stderr, "latop record: -o: %s\n", cause);
		free(cause);
		return 2;
	}
	if (text && !(q = parse_query_or_say(text)))
		return 2;
	if (!(src = open_live(q, interval_ns))) {
		rc = 1;
		goto out;
	}
	if (q && (rc = record_query(src, q, text)))
		goto out;
	/* Attach the probes before the file appears, so that F.tmp existing
	 * means events are being counted, and -d counts from there: attaching
	 * can take seconds where fentry trampolines are slow to set up. */
	r = source_read(src, &t, 0, &cause);
	if (r < 0) {
		rc = 1;
		goto out;
	}
	if (!quiet)
		say_priority("record", src);
	/* From the file's creation on, a stop signal ends it whole. */
	catch_stop_signals();
	if (ring)
		rw = ring_open(out, &rotate, &keep, src->ops->info(src), clock_ns(CLOCK_REALTIME),
			       &cause);
	else
		w = snap_create(out, src->ops->info(src), &cause);
	if (!w && !rw) {
		if (r == 1)
			tick_done(&t);
		rc = 1;
		goto out;
	}
	tmp = xstrdup(w ? snap_tmp_path(w) : ring_tmp_path(rw));
	if (r == 1 && record_tick(w, rw, &t, &tally, &cause) < 0) {
		rc = 1;
		goto out;
	}
	start = mono_ns();
	if (!quiet && ring)
		fprintf(stderr, "latop: recording to %s (latop-*.snap%s%s%s%s)%s; Ctrl-C to stop\n",
			out, rotate.kind == RING_NONE ? ", one file" : ", a new file every ",
			rotate.kind == RING_NONE ? "" : rotate_arg,
			keep.kind == RING_NONE ? "" : ", keeping ",
			keep.kind == RING_NONE ? "" : keep_arg,
			dur_ns ? "" : " until interrupted");
	else if (!quiet)
		fprintf(stderr, "latop: recording to %s%s; Ctrl-C to stop\n", out,
			dur_ns ? "" : " until interrupted");
	if (!quiet && w && strcmp(tmp + strlen(out), ".tmp"))
		fprintf(stderr, "latop record: %s.tmp exists (an earlier recording's?) and is left "
			"as it is; this one is written to %s until it ends\n", out, tmp);
	while (!stop_requested && (!dur_ns || mono_ns() - start < dur_ns)) {
		r = source_read(src, &t, tick_wait_ms(start, dur_ns), &cause);
		if (r < 0) {
			fprintf(stderr, "latop record: %s\n", cause);
			free(cause);
			cause = NULL;
			rc = 1;
			break;
		}
		if (r == 1 && record_tick(w, rw, &t, &tally, &cause) < 0) {
			rc = 1;
			goto out;
		}
	}
	/* What was counted since the last tick goes in too. */
	r = rc ? 0 : source_flush(src, &t, &cause);
	if (r < 0) {
		fprintf(stderr, "latop record: %s\n", cause);
		free(cause);
		cause = NULL;
		rc = 1;
	}
	if (r == 1 && record_tick(w, rw, &t, &tally, &cause) < 0) {
		rc = 1;
		goto out;
	}
	if (rw) {
		nticks = ring_ticks_written(rw);
		nfiles = ring_files_started(rw);
		r = ring_close(rw, clock_ns(CLOCK_REALTIME), &cause);
		rw = NULL;
	} else {
		nticks = snap_ticks_written(w);
		r = snap_close(w, &cause);
		w = NULL;
	}
	if (r < 0)
		rc = 1;
	else
		closed = true;
out:
	if (cause)
		fprintf(stderr, "latop record: %s\n", cause);
	free(cause);
	if (w) {
		nticks = snap_ticks_written(w);
		snap_abandon(w);
	}
	if (rw) {
		/* The files before the current one are finished; it keeps its ticks. */
		/* The current file's, if one is open (not after a failed start). */
		free(tmp);
		tmp = ring_tmp_path(rw) ? xstrdup(ring_tmp_path(rw)) : NULL;
		nfiles = ring_files_started(rw) - (tmp ? 1 : 0);
		nticks = ring_current_ticks(rw);
		if (nfiles)
			fprintf(stderr, "latop record: %zu earlier file%s of the ring in %s %s "
				"finished\n", nfiles, nfiles > 1 ? "s" : "", out,
				nfiles > 1 ? "are" : "is");
		ring_abandon(rw);
		rw = NULL;
	}
	say_lost(&tally.lost);
	say_late("record", &tally.lens, q && query_option_given(q, "every") ?
		 query_options(q)->every_ns : interval_ns);
	tick_lengths_free(&tally.lens);
	if (closed && !quiet && ring)
		fprintf(stderr, "latop: recorded %zu ticks (%.1fs) in %zu file%s to %s\n", nticks,
			(double)(mono_ns() - start) / 1e9, nfiles, nfiles == 1 ? "" : "s", out);
	else if (closed && !quiet)
		fprintf(stderr, "latop: recorded %zu ticks (%.1fs) to %s\n", nticks,
			(double)(mono_ns() - start) / 1e9, out);
	else if (tmp && !closed)
		say_kept(tmp, nticks);
	free(tmp);
	query_free(q);
	source_close(src);
	return rc;
}

static int report_distinct(const char *who, char **paths, struct source **srcs, int n);

/* The recordings args[0..nargs) name, files or directories of a ring (their
 * files in name order, those being written too) into *paths (*n of them);
 * 0, or 1 said. */
static int expand_recordings(const char *who, char **args, int nargs, char ***paths, int *n)
{
	struct ring_file *files;
	struct stat st;
	size_t nf, k;
	char *cause = NULL;
	int cap = nargs;

	*paths = xcalloc((size_t)cap, sizeof(**paths));
	*n = 0;
	for (int i = 0; i < nargs; i++) {
		if (stat(args[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			(*paths)[(*n)++] = xstrdup(args[i]);
			continue;
		}
		if (ring_list(args[i], true, &files, &nf, &cause) < 0) {
			fprintf(stderr, "latop %s: %s\n", who, cause);
			free(cause);
			return 1;
		}
		if (!nf) {
			fprintf(stderr, "latop %s: %s: holds no recordings (latop-*.snap, as "
				"'latop record -o DIR' names them)\n", who, args[i]);
			ring_files_free(files, nf);
			return 1;
		}
		cap += (int)nf;
		*paths = xreallocarray(*paths, (size_t)cap, sizeof(**paths));
		for (k = 0; k < nf; k++)
			(*paths)[(*n)++] = xstrdup(files[k].path);
		ring_files_free(files, nf);
	}
	return 0;
}

/*
 * Read each host's recordings that follow each other as one
 * (core/ring.h: ring_chains): srcs[0..*n) become the chains, in order of
 * first appearance; the others are left for merge_open.
 */
static void chain_recordings(struct source **srcs, int *n)
{
	const struct source_info **infos = xcalloc((size_t)*n, sizeof(*infos));
	size_t *chain = xcalloc((size_t)*n, sizeof(*chain)), *order = xcalloc((size_t)*n, sizeof(*order));
	struct source **was = xcalloc((size_t)*n, sizeof(*was)), **members;
	size_t nchains, j, o = 0, m;
	char *cause = NULL;

	for (int i = 0; i < *n; i++)
		infos[i] = srcs[i]->ops->info(srcs[i]);
	nchains = ring_chains(infos, (size_t)*n, chain, order);
	memcpy(was, srcs, (size_t)*n * sizeof(*srcs));
	members = xcalloc((size_t)*n, sizeof(*members));
	for (j = 0; j < nchains; j++) {
		for (m = 0; o < (size_t)*n && chain[order[o]] == j; o++)
			members[m++] = was[order[o]];
		srcs[j] = m == 1 ? members[0] : chain_open(members, m, &cause);
	}
	*n = (int)nchains;
	free(infos);
	free(chain);
	free(order);
	free(was);
	free(members);
}

/*
 * Open the recordings who ("replay") is given as one source: files, several
 * or a directory, of one host following each other; 0, or 1 or 2 said.
 */
static int open_recordings(const char *who, char **args, int nargs, struct source **out)
{
	struct source **srcs;
	char **paths, *cause = NULL;
	int n, npaths, rc;

	*out = NULL;
	rc = expand_recordings(who, args, nargs, &paths, &npaths);
	n = npaths;
	if (rc)
		goto done;
	srcs = xcalloc((size_t)n, sizeof(*srcs));
	for (int i = 0; i < n && !rc; i++)
		if (!(srcs[i] = replay_open(paths[i], &cause))) {
			fprintf(stderr, "latop %s: %s\n", who, cause);
			free(cause);
			rc = 1;
		}
	if (!rc)
		rc = report_distinct(who, paths, srcs, n);
	if (!rc && n > 1) {
		chain_recordings(srcs, &n);
		if (n > 1) {
			fprintf(stderr, "latop %s: these recordings do not follow each other "
				"(other hosts, or overlapping in time): '%s' and '%s'; "
				"'latop report' reads them together\n", who,
				srcs[0]->ops->info(srcs[0])->path ? srcs[0]->ops->info(srcs[0])->path : "?",
				srcs[1]->ops->info(srcs[1])->path ? srcs[1]->ops->info(srcs[1])->path : "?");
			rc = 2;
		}
	}
	if (!rc)
		*out = srcs[0];
	else
		for (int i = 0; i < n; i++)
			source_close(srcs[i]);
	free(srcs);
done:
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

/* latop replay FILE...|DIR: the TUI over a recording, or one host's ring. */
static int cmd_replay(int argc, char **argv)
{
	struct tui_opts o = {.replay = true};
	struct source *src;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, commands[1].shortopts, commands[1].opts, NULL)) != -1) {
		switch (c) {
		case 'q': o.query = optarg; break;
		case 't': o.theme = optarg; break;
		case 'C': o.no_color = true; break;
		case 'h': printf("usage: latop %s\n", commands[1].usage); return 0;
		default: return 2;
		}
	}
	if (optind >= argc)
		return bad_usage("replay", "%s", "needs a FILE (or several, or a DIR)");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "latop replay: needs a terminal; use 'latop report' from scripts\n");
		return 2;
	}
	if (o.query) {
		struct query *q = parse_query_or_say(o.query);

		if (!q)
			return 2;
		query_free(q);
	}
	if ((rc = open_recordings("replay", argv + optind, argc - optind, &src)))
		return rc;
	rc = run_tui(src, &o);
	source_close(src);
	return rc;
}

/* Fold every tick of src from t_from on into run, freeing each as it goes. */
static void report_ticks(struct source *src, struct query_run *run, uint64_t t_from,
			 const char *table, struct tick_lengths *lens)
{
	char *cause = NULL;
	struct tick t;
	int r;

	/* A tick that cannot be read is said and skipped; the others still count. */
	while ((r = source_read(src, &t, 0, &cause)) != 2) {
		if (r < 0) {
			fprintf(stderr, "latop report: warning: %s; skipped that tick\n", cause);
			free(cause);
			cause = NULL;
			continue;
		}
		if (r != 1)
			continue;
		if (t.t_ns >= t_from) {
			query_run_add(run, &t);
			/* Late ticks and the health line are the stretch's. */
			if (query_run_covers(run, &t))
				tick_lengths_add(lens, &t, table);
		}
		tick_done(&t);
	}
}

/* Return whether recordings a and b (given as pa, pb) are one, the same file or a copy;
 * say so for who ("report"). */
static bool same_recording(const char *who, const char *pa, const struct stat *sa, const struct source_info *a,
			   const char *pb, const struct stat *sb, const struct source_info *b)
{
	time_t sec = (time_t)(a->start_ns / 1000000000ull);
	char when[32] = "";
	struct tm tm;

	if (sa->st_ino && sa->st_dev == sb->st_dev && sa->st_ino == sb->st_ino) {
		fprintf(stderr, "latop %s: '%s' and '%s' are the same file: each tick would "
			"count twice\n", who, pa, pb);
		return true;
	}
	if (!a->start_ns || a->start_ns != b->start_ns || strcmp(a->host, b->host))
		return false;
	if (localtime_r(&sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(stderr, "latop %s: '%s' and '%s' are the same recording (host %s, started %s): "
		"each tick would count twice\n", who, pa, pb, a->host, when);
	return true;
}

/* Refuse a recording given twice, as one file or as a copy; 0, or 2 said. */
static int report_distinct(const char *who, char **paths, struct source **srcs, int n)
{
	struct stat *st = xcalloc((size_t)n, sizeof(*st));
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		if (stat(paths[i], &st[i]) < 0)
			st[i].st_ino = 0;
		for (int j = 0; j < i && !rc; j++)
			if (same_recording(who, paths[j], &st[j], srcs[j]->ops->info(srcs[j]),
					   paths[i], &st[i], srcs[i]->ops->info(srcs[i])))
				rc = 2;
	}
	free(st);
	return rc;
}

/*
 * The same query text works live and over a recording, but some options
 * steer only the live probes: say so, rather than let "threshold 8ms" or
 * "every 2s" seem to select or regroup what a report shows.
 */
static void report_probe_options(const struct query *q)
{
	char *k = query_options_written(q, QOK_KERNEL), *t = query_options_written(q, QOK_TICK);

	if (k)
		fprintf(stderr, "latop report: warning: %s: %s what the probes send while "
			"recording, and nothing over a recording, which holds what its own "
			"query kept; select single events by latency with WHERE lat >= DUR\n",
			k, strchr(k, ',') ? "these choose" : "this chooses");
	if (t)
		fprintf(stderr, "latop report: warning: %s: the live probes' tick interval; a "
			"recording's ticks are as recorded (GROUP BY time(DUR) groups them)\n", t);
	free(k);
	free(t);
}

/* latop report FILE... -q QUERY [--json|--csv]: scripting and CI. */
static int cmd_report(int argc, char **argv)
{
	enum result_format fmt = RF_TEXT;
	int metrics = 0;	/* 1 Prometheus text, 2 OpenMetrics */
	const char *text = NULL;
	struct source **srcs = NULL, *src = NULL;
	char **paths = NULL;
	int npaths = 0;
	struct query *q;
	struct query_error err;
	struct result *res;
	struct query_run *run = NULL;
	uint64_t t_from = 0;
	struct tick_lengths lens = {0};
	int c, nsrc, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, commands[2].shortopts, commands[2].opts, NULL)) != -1) {
		switch (c) {
		case 'q': text = optarg; break;
		case 'j': fmt = RF_JSON; metrics = 0; break;
		case 'c': fmt = RF_CSV; metrics = 0; break;
		case 'f':
			metrics = 0;
			if (!strcmp(optarg, "text") || !strcmp(optarg, "json") ||
			    !strcmp(optarg, "csv"))
				fmt = optarg[0] == 't' ? RF_TEXT : optarg[0] == 'j' ? RF_JSON : RF_CSV;
			else if (!strcmp(optarg, "prometheus") || !strcmp(optarg, "openmetrics"))
				metrics = optarg[0] == 'p' ? 1 : 2;
			else
				return bad_usage("report", "--format: unknown format '%s' (text, "
						 "json, csv, prometheus, openmetrics)", optarg);
			break;
		case 'h': printf("usage: latop %s\n", commands[2].usage); return 0;
		default: return 2;
		}
	}
	if (optind >= argc)
		return bad_usage("report", "%s", "needs at least one FILE");
	if (!text)
		text = "";
	if (!(q = parse_query_or_say(text)))
		return 2;
	/* Opening and reading a recording decode tick after tick, each freed
	 * before the next: keep that heap for the next tick rather than return it
	 * to the kernel and fault it back in (most of a big report's time). */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	nsrc = 0;
	if ((rc = expand_recordings("report", argv + optind, argc - optind, &paths, &npaths)))
		goto out;
	nsrc = npaths;
	srcs = xcalloc((size_t)nsrc, sizeof(*srcs));
	for (int i = 0; i < nsrc; i++) {
		char *cause = NULL;

		srcs[i] = replay_open(paths[i], &cause);
		if (!srcs[i]) {
			fprintf(stderr, "latop report: %s\n", cause);
			free(cause);
			rc = 1;
			goto out;
		}
		if (srcs[i]->ops->info(srcs[i])->warning)
			fprintf(stderr, "latop report: warning: %s\n",
				srcs[i]->ops->info(srcs[i])->warning);
	}
	if ((rc = report_distinct("report", paths, srcs, nsrc)))
		goto out;
	/* One host's files that follow each other (a ring) read as one. */
	chain_recordings(srcs, &nsrc);
	/* The whole recording, unless the query asks for a WINDOW: then its end,
	 * the ticks of every file no older than the newest tick minus WINDOW (what
	 * a window holds after the newest tick when the files follow each other). */
	for (int i = 0; i < nsrc && query_option_given(q, "window"); i++) {
		const struct source_info *info = srcs[i]->ops->info(srcs[i]);
		uint64_t window_ns = query_options(q)->window_ns;

		if (info->nticks && info->t_last_ns >= window_ns &&
		    info->t_last_ns - window_ns > t_from)
			t_from = info->t_last_ns - window_ns;
	}
	/* One source over every file: their ticks in turn, then the tables
	 * joined across them (core/merge.h) when the query asks for one. */
	{
		const struct joiner *const *joiners;
		char *cause = NULL;
		size_t njoiners;

		joiners = views_joiners(&njoiners);
		src = merge_open(srcs, (size_t)nsrc, joiners, njoiners, query_table(q), &cause);
		if (!src) {
			fprintf(stderr, "latop report: %s\n", cause);
			free(cause);
			rc = 1;
			goto out;
		}
		nsrc = 0;	/* src owns them now */
	}
	if (!bind_or_say(q, text, src->ops->info(src))) {
		rc = 2;
		goto out;
	}
	report_probe_options(q);
	run = query_run_new(q, &err);
	if (!run) {
		char buf[1024];

		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop report: %s\n", buf);
		rc = 1;
		goto out;
	}
	/* SINCE/UNTIL -5m count back from the newest tick of every file. */
	query_run_end(run, src->ops->info(src)->t_last_ns);
	report_ticks(src, run, t_from, query_table(q), &lens);
	if (query_run_check(run, &err)) {
		char buf[1024];

		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop report: %s\n", buf);
		rc = 1;
		goto out;
	}
	res = query_run_result(run);
	if (metrics) {
		struct expose_opts eo = {.help = text, .openmetrics = metrics == 2};

		expose_result(stdout, res, &eo, NULL);
		expose_end(stdout, eo.openmetrics);
	} else {
		result_print(stdout, res, fmt);
	}
	fflush(stdout);
	if (res->stats.lost)
		fprintf(stderr, "latop report: warning: %s: %llu records lost in the kernel "
			"while recording (a ring buffer or map was full, or an event came while "
			"its program was running on that CPU)\n", query_table(q),
			(unsigned long long)res->stats.lost);
	if (res->stats.evicted)
		say_evicted("report", query_table(q), res->stats.evicted);
	if (res->stats.overflow)
		say_overflow("report", query_table(q), res->stats.overflow);
	say_late("report", &lens, src->ops->info(src)->interval_ns);
	if (fmt == RF_JSON)
		say_health_json(query_table(q), &res->stats, &lens,
				src->ops->info(src)->interval_ns);
	result_free(res);
out:
	tick_lengths_free(&lens);
	query_run_free(run);
	source_close(src);
	for (int i = 0; i < nsrc; i++)
		source_close(srcs[i]);
	free(srcs);
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	query_free(q);
	return rc;
}

/* latop serve: the probes behind an HTTP endpoint (serve.c). */
static int cmd_serve(int argc, char **argv)
{
	const struct cmd_entry *cmd = &commands[4];
	struct serve_opts o = {.interval_ns = DEFAULT_INTERVAL_NS,
			       .history_ns = 300 * 1000000000ULL,
			       .parse_duration = parse_duration};
	struct serve_metric_arg *m = xcalloc((size_t)argc + 1, sizeof(*m));
	char *cause = NULL, *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, cmd->shortopts, cmd->opts, NULL)) != -1) {
		switch (c) {
		case 'l': o.listen = optarg; break;
		case 'N': o.no_defaults = true; break;
		case 'm':
			if (!strchr(optarg, '=')) {
				free(m);
				return bad_usage("serve", "--metric '%s': give NAME=QUERY", optarg);
			}
			m[o.nmetrics].name = xstrndup(optarg, (size_t)(strchr(optarg, '=') - optarg));
			m[o.nmetrics++].query = strchr(optarg, '=') + 1;
			break;
		case 'S':
			errno = 0;
			o.max_series = strtoul(optarg, &end, 10);
			if (errno || *end || !o.max_series || optarg[0] == '-') {
				rc = bad_usage("serve", "--max-series '%s': give a number of 1 or more",
					       optarg);
				goto out;
			}
			break;
		case 'c':
		case 'k':
		case 'B':
		case 'R':
		case 'p':
			if (probe_option(c, optarg) < 0) {
				rc = 2;
				goto out;
			}
			break;
		case 'i':
		case 'H':
			if (parse_duration(optarg, c == 'i' ? &o.interval_ns : &o.history_ns,
					   &cause) < 0) {
				rc = bad_usage("serve", c == 'i' ? "-i: %s" : "--history: %s", cause);
				free(cause);
				goto out;
			}
			break;
		case 'h':
			printf("usage: latop %s\n", cmd->usage);
			rc = 0;
			goto out;
		default:
			rc = 2;
			goto out;
		}
	}
	if (optind < argc) {
		rc = bad_usage("serve", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (o.interval_ns < 10000000) {
		rc = bad_usage("serve", "%s", "-i: the interval must be at least 10ms");
		goto out;
	}
	o.metrics = m;
	rc = serve_run(&o);
out:
	for (size_t i = 0; i < o.nmetrics; i++)
		free((char *)m[i].name);
	free(m);
	return rc;
}

/* latop probes: what this kernel gives each stage. */
static int cmd_probes(int argc, char **argv)
{
	bool json = argc > 1 && strcmp(argv[1], "--json") == 0;

	if (argc > 1 && !json)
		return bad_usage("probes", "unknown option '%s'", argv[1]);
	return probes_report(stdout, json) < 0 ? 1 : 0;
}

/* Find the command named by name or an unambiguous prefix of it. */
static const struct cmd_entry *find_command(const char *name, bool *ambiguous)
{
	const struct cmd_entry *found = NULL;
	size_t len = strlen(name);

	*ambiguous = false;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
		if (strncmp(commands[i].name, name, len) == 0) {
			if (found)
				*ambiguous = true;
			found = &commands[i];
		}
	}
	return *ambiguous ? NULL : found;
}

/* Print word on a line of its own when it begins with prefix. */
static void complete_word(const char *word, const char *prefix)
{
	if (!strncmp(word, prefix, strlen(prefix)))
		printf("%s\n", word);
}

/* The cgroups one level below the directory part of cur (a path under the
 * cgroup2 mount, "/system.slice/n") that cur starts, one a line. */
static void complete_cgroup(const char *cur)
{
	const char *root = cgroup_root(), *slash = strrchr(cur, '/');
	char dir[CGROUP_PATH_MAX], word[CGROUP_PATH_MAX];
	int dn = slash ? (int)(slash - cur) : 0;
	struct dirent *de;
	DIR *d;

	if (!root || (size_t)snprintf(dir, sizeof(dir), "%s/%.*s", root, dn, cur) >= sizeof(dir) ||
	    !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    (size_t)snprintf(word, sizeof(word), "%.*s%s%s", dn, cur, slash ? "/" : "",
				     de->d_name) < sizeof(word))
			complete_word(word, cur);
	closedir(d);
}

/* The option of cmd that word names ("--query", "-q") when it takes an argument, or NULL. */
static const struct option *complete_arg_option(const struct cmd_entry *cmd, const char *word)
{
	const struct option *o;
	const char *s;

	if (word[0] != '-' || !word[1])
		return NULL;
	for (o = cmd->opts; o->name; o++) {
		if (o->has_arg != required_argument)
			continue;
		if (word[1] == '-' && !strcmp(word + 2, o->name))
			return o;
		if (word[1] != '-' && !word[2] && word[1] == o->val &&
		    (s = strchr(cmd->shortopts, word[1])) && s[1] == ':')
			return o;
	}
	return NULL;
}

/* The query candidates for text (a query, maybe after its opening quote):
 * text with its last word completed, one a line. */
static void complete_query(const char *text)
{
	char *cands[256];
	size_t n, nschemas, start;
	const struct schema *const *schemas = views_schemas(&nschemas);

	if (*text == '\'' || *text == '"')
		text++;
	start = strlen(text);
	while (start && (isalnum((unsigned char)text[start - 1]) || text[start - 1] == '_'))
		start--;
	n = query_complete(text, strlen(text), schemas, nschemas, cands, 256);
	for (size_t i = 0; i < n; i++) {
		printf("%.*s%s\n", (int)start, text, cands[i]);
		free(cands[i]);
	}
}

/*
 * latop complete CWORD WORD...: what bash completion offers for word CWORD
 * of the command line WORD... (bash's COMP_CWORD and COMP_WORDS, WORD 0 being
 * latop).  The first line says what follows: "words", the candidates, one a
 * line; "files", complete file names; "snapshots", recordings' file names.
 */
static int cmd_complete(int argc, char **argv)
{
	const struct cmd_entry *cmd = &live_cmd;
	const struct option *o, *arg = NULL;
	char **w = argv + 2, *end;
	const char *cur;
	int nw = argc - 2, first = 1;
	long cw = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	bool ambiguous;

	if (argc < 3 || *end || cw < 1 || cw >= nw)
		return bad_usage("complete", "%s", "needs CWORD and the words, CWORD from 1");
	cur = w[cw];
	if (w[1][0] != '-' && cw > 1) {
		if (!(cmd = find_command(w[1], &ambiguous)))
			return printf("words\n") < 0;
		first = 2;
	}
	/* bash splits --opt=value at '=' into --opt, =, value */
	if (!strcmp(cur, "=") && cw - 1 >= first) {
		arg = complete_arg_option(cmd, w[cw - 1]);
		cur = "";
	} else if (cw - 2 >= first && !strcmp(w[cw - 1], "=")) {
		arg = complete_arg_option(cmd, w[cw - 2]);
	} else if (cw - 1 >= first) {
		arg = complete_arg_option(cmd, w[cw - 1]);
	}
	if (arg && !strcmp(arg->name, "output"))
		return printf("files\n") < 0;
	if (arg && !strcmp(arg->name, "theme") && strchr(cur, '/'))
		return printf("files\n") < 0;
	if (!arg && cur[0] != '-' && cw > 1 && (cmd->exec == cmd_replay || cmd->exec == cmd_report))
		return printf("snapshots\n") < 0;
	printf("words\n");
	if (arg && !strcmp(arg->name, "query")) {
		complete_query(cur);
	} else if (arg && !strcmp(arg->name, "theme")) {
		const char *t = theme_next("");

		do
			complete_word(t, cur);
		while (strcmp(t = theme_next(t), theme_next("")));
	} else if (arg && (!strcmp(arg->name, "rotate") || !strcmp(arg->name, "keep"))) {
		/* what a ring is usually given: an hour a file, a day kept */
		static const char *const rotate_eg[] = {"1h", "10m", "100M", NULL};
		static const char *const keep_eg[] = {"24h", "7d", "48", "10G", NULL};

		for (const char *const *e = arg->name[0] == 'r' ? rotate_eg : keep_eg; *e; e++)
			complete_word(*e, cur);
	} else if (arg && !strcmp(arg->name, "cgroup")) {
		complete_cgroup(cur);
	} else if (arg) {
		/* a duration or a list: nothing to offer */
	} else if (cur[0] == '-') {
		for (o = cmd->opts; o->name; o++) {
			char word[64];

			snprintf(word, sizeof(word), "--%s", o->name);
			complete_word(word, cur);
		}
		for (const char *s = cmd->shortopts; *s; s++) {
			char word[3] = {'-', *s, 0};

			if (*s != ':' && *s != '+')
				complete_word(word, cur);
		}
	} else if (cw == 1) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			complete_word(commands[i].name, cur);
	}
	return fflush(stdout) != 0;
}

/* Add the NULL-terminated keys to the growing list *v of *n. */
static void add_keys(const char ***v, size_t *n, const char *const *keys)
{
	for (; keys && *keys; keys++) {
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		(*v)[(*n)++] = *keys;
	}
}

/* Warn of latoprc keys no part of latop reads (a misspelt flow_max would
 * otherwise leave the default in place without a word). */
static void check_rc_keys(void)
{
	const char **keys = NULL;
	size_t n = 0, i;

	for (i = 0; i < probe_registry_len; i++)
		add_keys(&keys, &n, probe_registry[i]->config_keys);
	add_keys(&keys, &n, live_config_keys);
	add_keys(&keys, &n, tui_config_keys);
	add_keys(&keys, &n, serve_config_keys);
	config_check_keys(config_shared(), keys, n);
	free(keys);
}

int main(int argc, char **argv)
{
	const struct cmd_entry *cmd;
	bool ambiguous;

	/* for the bash completion script; exact, so no prefix of a command reaches it */
	if (argc > 1 && !strcmp(argv[1], "complete"))
		return cmd_complete(argc - 1, argv + 1);
	if (argc > 1 && argv[1][0] != '-') {
		cmd = find_command(argv[1], &ambiguous);
		if (ambiguous)
			return bad_usage(NULL, "ambiguous command '%s'", argv[1]);
		if (!cmd)
			return bad_usage(NULL, "unknown command '%s'", argv[1]);
		if (cmd->exec != cmd_report)	/* reads no latoprc */
			check_rc_keys();
		return cmd->exec(argc - 1, argv + 1);
	}
	check_rc_keys();
	return cmd_live(argc, argv);
}
