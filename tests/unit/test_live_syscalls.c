/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The syscalls probe, live: load it, run known workloads (tests/helpers/
 * workload.c) and check what it saw against what they did.  Needs root
 * (CAP_BPF+CAP_PERFMON); skips with the reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "core/table.h"
#include "core/hist.h"
#include "probes/probe.h"
#include "probes/filter.h"
#include "probes/perf_event.h"
#include "probes/syscalls/syscalls_schema.h"
#include "tap.h"

#define INTERVAL_NS 200000000ULL
#define MS 1000000ULL
#define MAX_ROWS 512
#define MAX_EVENTS 4096
#define NO_PID 0x7ffffffeULL	/* a pid no process has: drops everything */

/* One (pid, tid, syscall) summed over the ticks of a run. */
struct agg {
	uint64_t pid, tid;
	char syscall[32], comm[17];
	uint64_t v[SC_NCOLS];
	uint64_t lat_min, lat_max;
};

struct ev {
	uint64_t pid, lat, comp_sum, oncpu, offcpu;
	char syscall[32], comm[17];
};

/* What the probe reported during one workload run. */
struct run {
	pid_t pid, noise_pid;
	struct agg rows[MAX_ROWS];
	size_t nrows;
	struct ev evs[MAX_EVENTS];
	size_t nevs;
	size_t max_ev_per_tick;
	struct frame_stats stats;
	size_t bad_sum_rows, bad_cpu_rows, rows_seen;
	uint64_t pid_getppid, pid_getppid_rows;	/* every row of pid, past MAX_ROWS too */
};

static struct source *src;
static const char *helpers;

/* Start the workload helper with args; return its pid, its stdin and stdout. */
static pid_t spawn(char *const args[], int *to, int *from)
{
	int in[2], out[2];
	char path[4096];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/workload", helpers);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(path, args);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

/* Return the state letter of pid from /proc/PID/stat ('S' sleeping), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Wait for the helper's ready byte and then for it to block reading go, so
 * that read began before the test's filter: false after 10 s or if it died.
 */
static bool wait_ready(pid_t pid, int from)
{
	struct pollfd p = { .fd = from, .events = POLLIN };
	struct timespec ms = { 0, 1000000 };
	int i;
	char c;

	if (poll(&p, 1, 10000) != 1 || read(from, &c, 1) != 1)
		return false;
	for (i = 0; i < 10000 && proc_state(pid) != 'S'; i++)
		nanosleep(&ms, NULL);
	return proc_state(pid) == 'S';
}

/* Install f for the syscalls table, failing the test loudly if refused. */
static void set_filter(const struct filter_prog *f)
{
	char *cause = NULL;

	if (src->ops->set_filter(src, "syscalls", f, sizeof(*f), &cause)) {
		printf("# set_filter: %s\n", cause);
		free(cause);
	}
}

/* Return a filter that matches no process. */
static struct filter_prog filter_none(void)
{
	struct filter_prog f = { .n = 1 };

	f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, NO_PID };
	return f;
}

/* Find or add the aggregate of (pid, tid, syscall). */
static struct agg *agg_get(struct run *r, uint64_t pid, uint64_t tid, const char *sc)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].pid == pid && r->rows[i].tid == tid &&
		    !strcmp(r->rows[i].syscall, sc))
			return &r->rows[i];
	if (r->nrows == MAX_ROWS)
		return NULL;
	memset(&r->rows[r->nrows], 0, sizeof(r->rows[0]));
	r->rows[r->nrows].pid = pid;
	r->rows[r->nrows].tid = tid;
	r->rows[r->nrows].lat_min = UINT64_MAX;
	snprintf(r->rows[r->nrows].syscall, sizeof(r->rows[0].syscall), "%s", sc);
	return &r->rows[r->nrows++];
}

/* Add the stats of f to sum. */
static void stats_add(struct frame_stats *sum, const struct frame_stats *f)
{
	sum->events += f->events;
	sum->lost += f->lost;
	sum->dropped += f->dropped;
	sum->evicted += f->evicted;
	sum->overflow += f->overflow;
	sum->bpf_ns += f->bpf_ns;
	sum->bpf_runs += f->bpf_runs;
}

/* Fold a syscalls frame into r, checking each row's two exact splits. */
static void fold_syscalls(struct run *r, const struct frame *f)
{
	size_t i;
	int c;

	stats_add(&r->stats, &f->stats);
	for (i = 0; i < f->nrows; i++) {
		union cell *row = frame_row(f, i);
		uint64_t comp = 0, t = row[SC_TIME].u;
		struct agg *a;

		for (c = SC_RUNQ; c <= SC_OTHER; c++)
			comp += row[c].u;
		r->rows_seen++;
		if (comp > t + t / 100 || comp + t / 100 < t)
			r->bad_sum_rows++;
		if (row[SC_ONCPU].u + row[SC_OFFCPU].u != t)
			r->bad_cpu_rows++;
		if (row[SC_PID].u == (uint64_t)r->pid && !strcmp(row[SC_SYSCALL].s, "getppid")) {
			r->pid_getppid += row[SC_COUNT].u;
			r->pid_getppid_rows++;
		}
		a = agg_get(r, row[SC_PID].u, row[SC_TID].u, row[SC_SYSCALL].s);
		if (!a)
			continue;
		snprintf(a->comm, sizeof(a->comm), "%s", row[SC_COMM].s);
		for (c = SC_COUNT; c < SC_NCOLS; c++)
			if (c != SC_LAT)
				a->v[c] += row[c].u;
		if (row[SC_LAT].h && row[SC_LAT].h->count) {
			if (row[SC_LAT].h->min < a->lat_min)
				a->lat_min = row[SC_LAT].h->min;
			if (row[SC_LAT].h->max > a->lat_max)
				a->lat_max = row[SC_LAT].h->max;
		}
	}
}

/* Fold a syscall_events frame into r. */
static void fold_events(struct run *r, const struct frame *f)
{
	size_t i;
	int c;

	if (f->nrows > r->max_ev_per_tick)
		r->max_ev_per_tick = f->nrows;
	for (i = 0; i < f->nrows && r->nevs < MAX_EVENTS; i++) {
		union cell *row = frame_row(f, i);
		struct ev *e = &r->evs[r->nevs++];

		e->pid = row[SE_PID].u;
		e->lat = row[SE_LAT].u;
		e->oncpu = row[SE_ONCPU].u;
		e->offcpu = row[SE_OFFCPU].u;
		e->comp_sum = 0;
		for (c = SE_RUNQ; c <= SE_OTHER; c++)
			e->comp_sum += row[c].u;
		snprintf(e->syscall, sizeof(e->syscall), "%s", row[SE_SYSCALL].s);
		snprintf(e->comm, sizeof(e->comm), "%s", row[SE_COMM].s);
	}
}

/* Read ticks until the helpers exited and two more ticks came. */
static bool drain(struct run *r, pid_t *pids, int npids)
{
	int after = 0, alive = npids, i, tries = 0;

	while (after < 2 && tries++ < 200) {
		struct tick t;
		char *cause = NULL;
		int rc = source_read(src, &t, 100, &cause);

		if (rc < 0) {
			printf("# read: %s\n", cause);
			free(cause);
			return false;
		}
		if (rc == 1) {
			struct frame *f = tick_frame(&t, "syscalls");
			struct frame *e = tick_frame(&t, "syscall_events");

			if (f)
				fold_syscalls(r, f);
			if (e)
				fold_events(r, e);
			tick_done(&t);
			if (alive == 0)
				after++;
		}
		for (i = 0; i < npids; i++)
			if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				alive--;
			}
	}
	return after == 2;
}

/*
 * Run the helper with args under a filter build() makes for its pid, with a
 * second, unfiltered "noise" helper running at the same time when noise is set.
 */
static bool run_workload(struct run *r, char *const args[], bool noise,
			 void (*build)(struct filter_prog *f, pid_t pid))
{
	static char *const noise_args[] = {"workload", "sysload", "2000", NULL};
	struct filter_prog none = filter_none(), f = {0};
	int to, from, nto = -1, nfrom = -1;
	pid_t pids[2] = {0, 0};
	bool ok;

	memset(r, 0, sizeof(*r));
	set_filter(&none);
	pids[0] = r->pid = spawn(args, &to, &from);
	if (noise)
		pids[1] = r->noise_pid = spawn(noise_args, &nto, &nfrom);
	ok = r->pid > 0 && wait_ready(r->pid, from) && (!noise || wait_ready(r->noise_pid, nfrom));
	build(&f, r->pid);
	set_filter(&f);
	{
		struct tick t;
		char *cause = NULL;

		/* Flush the tick with the previous run's tail. */
		while (source_read(src, &t, 300, &cause) == 0)
			;
		if (cause)
			free(cause);
		else
			tick_done(&t);
	}
	ok = ok && write(to, "g", 1) == 1 && (!noise || write(nto, "g", 1) == 1);
	ok = drain(r, pids, noise ? 2 : 1) && ok;
	close(to);
	close(from);
	if (noise) {
		close(nto);
		close(nfrom);
	}
	set_filter(&none);
	return ok;
}

/* Return the aggregate of (pid, any tid or tid, syscall), summing tids when tid is 0. */
static struct agg sum_rows(const struct run *r, uint64_t pid, uint64_t tid, const char *sc)
{
	struct agg s = { .pid = pid, .tid = tid, .lat_min = UINT64_MAX };
	size_t i;
	int c;

	for (i = 0; i < r->nrows; i++) {
		const struct agg *a = &r->rows[i];

		if (a->pid != pid || (tid && a->tid != tid) || strcmp(a->syscall, sc))
			continue;
		for (c = 0; c < SC_NCOLS; c++)
			s.v[c] += a->v[c];
		memcpy(s.comm, a->comm, sizeof(s.comm));
		if (a->lat_min < s.lat_min)
			s.lat_min = a->lat_min;
		if (a->lat_max > s.lat_max)
			s.lat_max = a->lat_max;
	}
	return s;
}

/* Return true when got is within 10% + 1 ms of want. */
static bool near(uint64_t got, uint64_t want)
{
	uint64_t tol = want / 10 + MS;

	return got + tol >= want && got <= want + tol;
}

/* Filter: pid == pid. */
static void by_pid(struct filter_prog *f, pid_t pid)
{
	f->n = 1;
	f->e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, (uint64_t)pid };
}

/* Filter: pid == pid, keeping 1 call in 10 and at most 100 events a tick. */
static void by_pid_sampled(struct filter_prog *f, pid_t pid)
{
	by_pid(f, pid);
	f->sample_n = 10;
	f->max_events = 100;
}

/* Filter: pid == pid, calls of 100 ms and more become events. */
static void by_pid_threshold(struct filter_prog *f, pid_t pid)
{
	by_pid(f, pid);
	f->threshold_ns = 100 * MS;
}

/* Filter: comm starts with "worklo". */
static void by_comm(struct filter_prog *f, pid_t pid)
{
	f->n = 1;
	f->e[0] = (struct filter_entry){ FOP_PREFIX, FTERM_COMM, 0 };
	snprintf(f->strs[0], FILTER_STR_LEN, "worklo");
}

/* Filter: comm == "nosuchcomm" (matches nothing). */
static void by_wrong_comm(struct filter_prog *f, pid_t pid)
{
	f->n = 1;
	f->e[0] = (struct filter_entry){ FOP_EQ, FTERM_COMM, 0 };
	snprintf(f->strs[0], FILTER_STR_LEN, "nosuchcomm");
}

/* Filter: pid == pid and lat >= 100 ms (decided at exit). */
static void by_pid_slow(struct filter_prog *f, pid_t pid)
{
	f->n = 3;
	f->needs_lat = 1;
	f->e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, (uint64_t)pid };
	f->e[1] = (struct filter_entry){ FOP_GE, FTERM_LAT, 100 * MS };
	f->e[2] = (struct filter_entry){ FOP_AND, 0, 0 };
}

/* Check that every row seen so far split its time exactly. */
static void check_splits(const struct run *r, const char *what)
{
	ok(r->rows_seen > 0 && r->bad_sum_rows == 0,
	   "%s: the 8 components sum to time within 1%% in every row (%zu of %zu rows off)",
	   what, r->bad_sum_rows, r->rows_seen);
	ok(r->rows_seen > 0 && r->bad_cpu_rows == 0,
	   "%s: oncpu + offcpu == time in every row (%zu of %zu rows off)",
	   what, r->bad_cpu_rows, r->rows_seen);
}

static struct run r;
static bool ran;		/* the last workload ran (kept out of ok(), which evaluates twice) */

/* N getppid/write/read: exact counts, and the noise helper only in dropped. */
static void test_counts(void)
{
	char *const args[] = {"workload", "sysload", "5000", NULL};
	struct agg g, w, rd, noise_g;

	ran = run_workload(&r, args, true, by_pid);
	ok(ran, "sysload ran to completion under the probe");
	g = sum_rows(&r, r.pid, r.pid, "getppid");
	w = sum_rows(&r, r.pid, r.pid, "write");
	rd = sum_rows(&r, r.pid, r.pid, "read");
	noise_g = sum_rows(&r, r.noise_pid, r.noise_pid, "getppid");
	ok(g.v[SC_COUNT] == 5000, "getppid counted exactly 5000 times (got %lu)",
	   (unsigned long)g.v[SC_COUNT]);
	ok(w.v[SC_COUNT] == 5000, "write counted exactly 5000 times (got %lu)",
	   (unsigned long)w.v[SC_COUNT]);
	ok(rd.v[SC_COUNT] == 5000, "read counted exactly 5000 times (got %lu)",
	   (unsigned long)rd.v[SC_COUNT]);
	ok(g.v[SC_ERRORS] == 0 && w.v[SC_ERRORS] == 0, "no errors counted for calls that succeed");
	ok(g.lat_min > 0 && g.lat_max < 100 * MS && g.v[SC_TIME] / 5000 < MS,
	   "getppid latency is plausible (min %lu ns, max %lu ns, avg %lu ns)",
	   (unsigned long)g.lat_min, (unsigned long)g.lat_max,
	   (unsigned long)(g.v[SC_TIME] / 5000));
	ok(noise_g.v[SC_COUNT] == 0, "the unfiltered helper's calls are not in the table (got %lu)",
	   (unsigned long)noise_g.v[SC_COUNT]);
	ok(r.stats.dropped >= 6000, "dropped counts the filtered-out helper's calls (%lu >= 6000)",
	   (unsigned long)r.stats.dropped);
	ok(r.stats.bpf_runs > 15000 && r.stats.bpf_ns > 0,
	   "BPF run-time statistics are reported (%lu runs, %lu ns)",
	   (unsigned long)r.stats.bpf_runs, (unsigned long)r.stats.bpf_ns);
	ok(r.stats.evicted == 0 && r.stats.lost == 0, "nothing evicted or lost");
	ok(!strcmp(g.comm, "workload"), "comm is the helper's name ('%s')", g.comm);
	check_splits(&r, "sysload");
}

/*
 * 1200 threads, 400 a second, each with about 20 keys (thread x syscall):
 * 16 000 keys in the 2 s (10 ticks of 200 ms) an idle key keeps its slot,
 * more than the 8192 slots.  Slots of exited threads are freed at the next
 * tick, so none of their calls is refused for want of one.
 */
static void test_exits(void)
{
	char *const args[] = {"workload", "threads", "1200", "400", NULL};

	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "1200 short-lived threads ran to completion under the probe");
	ok(r.pid_getppid == 1200 && r.pid_getppid_rows == 1200,
	   "each thread's one getppid counted, in a row of its own (%lu in %lu rows)",
	   (unsigned long)r.pid_getppid, (unsigned long)r.pid_getppid_rows);
	ok(r.stats.evicted == 0 && r.stats.overflow == 0,
	   "no call refused for want of a slot (evicted %lu, overflow %lu)",
	   (unsigned long)r.stats.evicted, (unsigned long)r.stats.overflow);
}

/* A pipe read blocked for 300 ms: lat, offcpu and sleep all about 300 ms. */
static void test_pipewait(void)
{
	char *const args[] = {"workload", "pipewait", "300", NULL};
	struct agg rd;

	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "pipewait ran to completion");
	rd = sum_rows(&r, r.pid, r.pid, "read");
	ok(rd.v[SC_COUNT] == 1, "one pipe read counted (got %lu)", (unsigned long)rd.v[SC_COUNT]);
	ok(near(rd.v[SC_TIME], 300 * MS), "pipe read lat ~300 ms (got %.1f ms)",
	   rd.v[SC_TIME] / 1e6);
	ok(near(rd.v[SC_OFFCPU], 300 * MS), "pipe read offcpu ~300 ms (got %.1f ms)",
	   rd.v[SC_OFFCPU] / 1e6);
	ok(near(rd.v[SC_SLEEP], 300 * MS), "pipe wait is attributed to sleep (%.1f ms sleep, "
	   "%.1f net, %.1f block, %.1f lock)", rd.v[SC_SLEEP] / 1e6, rd.v[SC_NET] / 1e6,
	   rd.v[SC_BLOCK] / 1e6, rd.v[SC_LOCK] / 1e6);
	ok(rd.v[SC_CSWITCH] >= 1, "the blocked read switched out (%lu)",
	   (unsigned long)rd.v[SC_CSWITCH]);
	check_splits(&r, "pipewait");
}

/* read() and recv() on a TCP socket blocked 200 ms each: attributed to net. */
static void test_sockwait(void)
{
	char *const args[] = {"workload", "sockwait", "200", NULL};
	struct agg rd, rv;

	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "sockwait ran to completion");
	rd = sum_rows(&r, r.pid, r.pid, "read");
	rv = sum_rows(&r, r.pid, r.pid, "recvfrom");
	ok(near(rd.v[SC_TIME], 200 * MS) && near(rd.v[SC_NET], 200 * MS),
	   "socket read() wait is attributed to net (lat %.1f ms, net %.1f ms, sleep %.1f ms)",
	   rd.v[SC_TIME] / 1e6, rd.v[SC_NET] / 1e6, rd.v[SC_SLEEP] / 1e6);
	ok(near(rv.v[SC_TIME], 200 * MS) && near(rv.v[SC_NET], 200 * MS),
	   "recv() wait is attributed to net (lat %.1f ms, net %.1f ms, sleep %.1f ms)",
	   rv.v[SC_TIME] / 1e6, rv.v[SC_NET] / 1e6, rv.v[SC_SLEEP] / 1e6);
	check_splits(&r, "sockwait");
}

/* A mutex held 200 ms by another thread: the futex wait is lock time. */
static void test_lockwait(void)
{
	char *const args[] = {"workload", "lockwait", "200", NULL};
	struct agg fx;

	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "lockwait ran to completion");
	fx = sum_rows(&r, r.pid, r.pid, "futex");
	ok(fx.v[SC_LOCK] >= 180 * MS && fx.v[SC_LOCK] <= 260 * MS,
	   "futex wait of the main thread is attributed to lock (lock %.1f ms of %.1f ms)",
	   fx.v[SC_LOCK] / 1e6, fx.v[SC_TIME] / 1e6);
	check_splits(&r, "lockwait");
}

/* fsync'd writes to a disk file: fsync waits on block I/O. */
static void test_fileio(void)
{
	const char *dir = getenv("LATOP_FILEIO_DIR") ? getenv("LATOP_FILEIO_DIR") : "/var/tmp";
	char *const args[] = {"workload", "fileio", "20", (char *)dir, NULL};
	struct agg fs;

	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "fileio ran to completion");
	fs = sum_rows(&r, r.pid, r.pid, "fsync");
	ok(fs.v[SC_COUNT] == 20, "20 fsyncs counted (got %lu; overflow %lu, lost %lu)",
	   (unsigned long)fs.v[SC_COUNT], (unsigned long)r.stats.overflow,
	   (unsigned long)r.stats.lost);
	if (fs.v[SC_TIME] < 20 * 50000ULL)
		skip("fsync on %s takes %.1f us on average: no real I/O to attribute", dir,
		     fs.v[SC_TIME] / 20 / 1e3);
	else
		ok(fs.v[SC_BLOCK] > 0 && fs.v[SC_BLOCK] >= fs.v[SC_OFFCPU] / 2,
		   "fsync time is mostly block I/O (block %.2f ms, offcpu %.2f ms, sleep %.2f ms, "
		   "lat %.2f ms)", fs.v[SC_BLOCK] / 1e6, fs.v[SC_OFFCPU] / 1e6,
		   fs.v[SC_SLEEP] / 1e6, fs.v[SC_TIME] / 1e6);
	check_splits(&r, "fileio");
}

/* SAMPLE 1/10 keeps rates true within 30% and caps events by BUFFER. */
static void test_sample(void)
{
	char *const args[] = {"workload", "sysload", "20000", NULL};
	struct agg g;

	ran = run_workload(&r, args, false, by_pid_sampled);
	ok(ran, "sampled sysload ran to completion");
	g = sum_rows(&r, r.pid, r.pid, "getppid");
	ok(g.v[SC_COUNT] >= 14000 && g.v[SC_COUNT] <= 26000,
	   "SAMPLE 1/10 scales getppid back to 20000 +-30%% (got %lu)",
	   (unsigned long)g.v[SC_COUNT]);
	ok(r.stats.dropped >= 40000, "sampling drops about 9 in 10 calls (%lu)",
	   (unsigned long)r.stats.dropped);
	ok(r.nevs > 0 && r.max_ev_per_tick <= 100,
	   "sampled calls become events, at most BUFFER=100 a tick (%zu events, max %zu a tick)",
	   r.nevs, r.max_ev_per_tick);
	/* Every call is left out by sampling, left out over the budget, or an
	 * event: both kinds of leaving out are dropped, nothing is lost. */
	ok(r.stats.lost == 0 && r.stats.dropped + r.nevs >= 60000,
	   "events over the budget are dropped, not lost (dropped %lu + events %zu, lost %lu)",
	   (unsigned long)r.stats.dropped, r.nevs, (unsigned long)r.stats.lost);
}

/* THRESHOLD 100 ms: only the 300 ms pipe read (and the writer's sleep) are events. */
static void test_threshold(void)
{
	char *const args[] = {"workload", "pipewait", "300", NULL};
	size_t i, below = 0, reads = 0;
	const struct ev *rd = NULL;

	ran = run_workload(&r, args, false, by_pid_threshold);
	ok(ran, "pipewait with THRESHOLD ran");
	for (i = 0; i < r.nevs; i++) {
		below += r.evs[i].lat < 100 * MS;
		if (r.evs[i].pid == (uint64_t)r.pid && !strcmp(r.evs[i].syscall, "read")) {
			reads++;
			rd = &r.evs[i];
		}
	}
	ok(below == 0, "no event is below THRESHOLD (%zu of %zu)", below, r.nevs);
	ok(reads == 1 && near(rd->lat, 300 * MS),
	   "the pipe read is one event with lat ~300 ms (%zu events, lat %.1f ms; lost %lu)",
	   reads, rd ? rd->lat / 1e6 : 0.0, (unsigned long)r.stats.lost);
	ok(rd && rd->comp_sum == rd->lat && rd->oncpu + rd->offcpu == rd->lat &&
	   !strcmp(rd->comm, "workload"),
	   "the event carries comm and exact splits (comm '%s', components %lu, lat %lu)",
	   rd ? rd->comm : "", rd ? (unsigned long)rd->comp_sum : 0UL,
	   rd ? (unsigned long)rd->lat : 0UL);
}

/* comm prefix filters in the kernel; a comm nobody has drops everything. */
static void test_comm(void)
{
	char *const args[] = {"workload", "sysload", "3000", NULL};
	size_t i, other = 0;
	struct agg g;

	ran = run_workload(&r, args, false, by_comm);
	ok(ran, "sysload under a comm filter ran");
	g = sum_rows(&r, r.pid, r.pid, "getppid");
	for (i = 0; i < r.nrows; i++)
		other += strncmp(r.rows[i].comm, "worklo", 6) != 0;
	ok(g.v[SC_COUNT] == 3000, "comm ~ 'worklo*' keeps the helper's 3000 getppid (got %lu)",
	   (unsigned long)g.v[SC_COUNT]);
	ok(other == 0, "every row's comm starts with worklo (%zu others)", other);
	ran = run_workload(&r, args, false, by_wrong_comm);
	ok(ran, "sysload under a wrong comm ran");
	ok(r.nrows == 0 && r.stats.dropped >= 9000,
	   "comm == 'nosuchcomm' shows nothing and drops the calls (%zu rows, %lu dropped)",
	   r.nrows, (unsigned long)r.stats.dropped);
}

/* A latency predicate is decided at exit: only slow calls stay. */
static void test_needs_lat(void)
{
	char *const args[] = {"workload", "pipewait", "300", NULL};
	size_t i, fast = 0;
	struct agg rd;

	ran = run_workload(&r, args, false, by_pid_slow);
	ok(ran, "pipewait under lat >= 100ms ran");
	rd = sum_rows(&r, r.pid, r.pid, "read");
	for (i = 0; i < r.nrows; i++)
		fast += r.rows[i].lat_min < 100 * MS;
	ok(rd.v[SC_COUNT] == 1 && near(rd.v[SC_TIME], 300 * MS),
	   "the slow pipe read stays (count %lu, lat %.1f ms)", (unsigned long)rd.v[SC_COUNT],
	   rd.v[SC_TIME] / 1e6);
	ok(fast == 0 && r.nrows >= 1, "no row has a call under 100 ms (%zu of %zu rows)", fast,
	   r.nrows);
	ok(r.stats.dropped > 0, "fast calls are dropped at exit (%lu)",
	   (unsigned long)r.stats.dropped);
}

/* A malformed filter program is refused with a reason. */
static void test_bad_filter(void)
{
	struct filter_prog f = { .n = 1 };
	char *cause = NULL;
	int rc;

	f.e[0] = (struct filter_entry){ FOP_AND, 0, 0 };
	rc = src->ops->set_filter(src, "syscalls", &f, sizeof(f), &cause);
	ok(rc == -1 && cause && strstr(cause, "underflow"),
	   "a filter that pops an empty stack is refused (%s)", cause ? cause : "accepted");
	free(cause);
}

/* With the taskclock counter on, calls carry their on-CPU counter time. */
static void test_taskclock(void)
{
	static const char *const tables[] = {"syscalls"};
	char *const args[] = {"workload", "sysload", "5000", NULL};
	char *cause = NULL;
	struct agg g;
	int rc;

	source_close(src);
	rc = probe_set_counters("taskclock", &cause);
	ok(rc == 0, "taskclock can be chosen");
	src = live_open(tables, 1, INTERVAL_NS, &cause);
	ok(src, "the probe reopens with the taskclock counter (%s)", cause ? cause : "ok");
	if (!src) {
		free(cause);
		return;
	}
	ran = run_workload(&r, args, false, by_pid);
	ok(ran, "sysload ran with the counter on");
	g = sum_rows(&r, r.pid, r.pid, "getppid");
	ok(g.v[SC_COUNT] == 5000 && g.v[SC_TASKCLOCK] > 0 &&
	   g.v[SC_TASKCLOCK] <= g.v[SC_ONCPU],
	   "getppid's taskclock is positive and within its oncpu time (%lu ns of %lu ns)",
	   (unsigned long)g.v[SC_TASKCLOCK], (unsigned long)g.v[SC_ONCPU]);
	rc = probe_set_counters("cycles,bogus", &cause);
	ok(rc == -1 && cause && strstr(cause, "bogus"),
	   "an unknown counter name is refused (%s)", cause ? cause : "accepted");
	free(cause);
	probe_set_counters("", &cause);
}

/* With hardware counters (where the machine has them), calls carry cycles
 * and instructions; elsewhere the test says why it cannot run. */
static void test_hw_counters(void)
{
	static const char *const tables[] = {"syscalls"};
	char *const args[] = {"workload", "sysload", "5000", NULL};
	struct perf_counters *pc;
	char *cause = NULL;
	struct agg g;
	int err = 0;

	pc = perf_counters_open("cycles", &err, &cause);
	if (!pc) {
		skip("hardware counters: %s", cause ? cause : "cannot open 'cycles'");
		free(cause);
		return;
	}
	perf_counters_free(pc);
	source_close(src);
	probe_set_counters("cycles,instructions", &cause);
	src = live_open(tables, 1, INTERVAL_NS, &cause);
	ok(src, "the probe opens with cycles and instructions (%s)", cause ? cause : "ok");
	if (!src) {
		free(cause);
		return;
	}
	ran = run_workload(&r, args, false, by_pid);
	g = sum_rows(&r, r.pid, r.pid, "getppid");
	ok(ran && g.v[SC_COUNT] == 5000 && g.v[SC_CYCLES] > 5000 && g.v[SC_INSTRUCTIONS] > 5000,
	   "getppid carries cycles and instructions (%lu cycles, %lu instructions for %lu calls)",
	   (unsigned long)g.v[SC_CYCLES], (unsigned long)g.v[SC_INSTRUCTIONS],
	   (unsigned long)g.v[SC_COUNT]);
	probe_set_counters("", &cause);
}

int main(void)
{
	static const char *const tables[] = {"syscalls", "syscall_events"};
	const struct source_info *info;
	char *cause = NULL;

	helpers = getenv("LATOP_HELPERS") ? getenv("LATOP_HELPERS") : ".output/helpers";
	signal(SIGPIPE, SIG_IGN);
	probe_set_run_stats(true);
	src = live_open(tables, 2, INTERVAL_NS, &cause);
	if (!src && geteuid() != 0) {
		skip("live syscalls probe: not root: %s", cause ? cause : "");
		free(cause);
		tap_done();
	}
	ok(src != NULL, "the syscalls probe loads and attaches (%s)", cause ? cause : "ok");
	if (!src) {
		free(cause);
		tap_done();
	}
	info = src->ops->info(src);
	printf("# status: %s\n", info->status);
	ok(info->nschemas == 2 && strstr(info->status, "syscalls: live"),
	   "the source reports both tables and says the probe is live");
	test_counts();
	test_exits();
	test_pipewait();
	test_sockwait();
	test_lockwait();
	test_fileio();
	test_sample();
	test_threshold();
	test_comm();
	test_needs_lat();
	test_bad_filter();
	test_taskclock();
	test_hw_counters();
	source_close(src);
	tap_done();
}
