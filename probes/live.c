/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The live source: opens the probes that own the requested tables and, every
 * interval, has each one fold its kernel state into frames.  Programs' run
 * time comes from the kernel's BPF run-time statistics.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include "../core/cgroup.h"
#include "../core/clock.h"
#include "../core/config.h"
#include "../core/xalloc.h"
#include "probe.h"

#define MAX_PROGS 64
#define MAX_SCHEMAS 32
#define LIVE_MAX_PROBES 16	/* probes whose wake fds a wait polls */

struct live_probe {
	struct probe p;
	uint64_t run_ns, run_cnt;	/* its programs' totals at the last tick */
	uint64_t misses;		/* and their runs the kernel skipped */
};

struct live {
	struct source src;
	struct source_info info;
	struct live_probe *probes;
	size_t nprobes;
	const struct schema *schemas[MAX_SCHEMAS];
	char *status;
	char *priority;			/* what collecting runs at, from the first read */
	bool realtime;			/* ask for real time once attached */
	bool priority_refused;		/* real time was asked for and refused */
	int tfd;
	int stats_fd;			/* keeps BPF run-time statistics on */
	uint64_t interval_ns;
	uint64_t last_mono_ns;
	bool attached;			/* the probes' programs are attached */
};

/* Append text to *s (a growing status line). */
static void append(char **s, const char *text)
{
	char *n = xasprintf("%s%s%s", *s ? *s : "", *s ? "; " : "", text);

	free(*s);
	*s = n;
}

/*
 * Sum run_time_ns, run_cnt and recursion_misses over a probe's programs.
 * A miss is an event the program never saw: the kernel does not run a
 * tracing program (fentry, tp_btf) again on a CPU where it is running
 * already, so an event in an interrupt that came during its run is lost.
 */
static void prog_totals(struct live_probe *lp, uint64_t *run_ns, uint64_t *run_cnt,
			uint64_t *misses)
{
	int fds[MAX_PROGS];
	size_t i, n = lp->p.ops->prog_fds(&lp->p, fds, MAX_PROGS);

	*run_ns = *run_cnt = *misses = 0;
	for (i = 0; i < n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fds[i], &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
		*misses += info.recursion_misses;
	}
}

/* Arm the tick timer for interval_ns; fill *cause on failure. */
static int arm_timer(struct live *l, uint64_t interval_ns, char **cause)
{
	struct itimerspec its = {
		.it_interval = { interval_ns / 1000000000ULL, interval_ns % 1000000000ULL },
		.it_value = { interval_ns / 1000000000ULL, interval_ns % 1000000000ULL },
	};

	if (interval_ns == 0) {
		*cause = xasprintf("live: the tick interval must be above 0");
		return -1;
	}
	if (timerfd_settime(l->tfd, 0, &its, NULL)) {
		*cause = xasprintf("live: arming the tick timer: %s", strerror(errno));
		return -1;
	}
	l->interval_ns = interval_ns;
	l->info.interval_ns = interval_ns;
	return 0;
}

/* Collect one tick from every live probe into out. */
static int collect_tick(struct live *l, struct tick *out, char **cause)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), t_ns = clock_ns(CLOCK_REALTIME);
	uint64_t dt = mono - l->last_mono_ns;
	size_t i, j;

	l->last_mono_ns = mono;
	tick_init(out, t_ns);
	for (i = 0; i < l->nprobes; i++) {
		struct live_probe *lp = &l->probes[i];
		size_t first = out->nframes;
		uint64_t run_ns, run_cnt, misses;

		if (!lp->p.live)
			continue;
		if (lp->p.ops->collect(&lp->p, t_ns, dt, out, cause)) {
			tick_done(out);
			return -1;
		}
		prog_totals(lp, &run_ns, &run_cnt, &misses);
		for (j = first; j < out->nframes; j++) {
			out->frames[j]->stats.bpf_ns = run_ns - lp->run_ns;
			out->frames[j]->stats.bpf_runs = run_cnt - lp->run_cnt;
		}
		/* Missed runs are lost events of the probe's main table. */
		if (out->nframes > first)
			out->frames[first]->stats.lost += misses - lp->misses;
		lp->run_ns = run_ns;
		lp->run_cnt = run_cnt;
		lp->misses = misses;
	}
	return 1;
}

static int realtime_opt = -1;	/* -1: latoprc's realtime, else on */

const char *const live_config_keys[] = {"realtime", NULL};

void probe_set_realtime(bool on)
{
	realtime_opt = on;
}

/* Whether collecting asks for real time: the option, else latoprc's
 * realtime (yes or no, a bad value said), else yes. */
static bool realtime_wanted(void)
{
	struct config *cfg;
	const char *v;

	if (realtime_opt >= 0)
		return realtime_opt;
	cfg = config_shared();
	v = config_get(cfg, "realtime");
	if (!v || !strcmp(v, "yes"))
		return true;
	if (!strcmp(v, "no"))
		return false;
	config_warn(cfg, "realtime", "not yes or no; using the default yes");
	return true;
}

static bool has_cap(const struct __user_cap_data_struct *d, unsigned c);

/* Why SCHED_FIFO was refused with errno err. */
static const char *fifo_refused(int err)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {0};

	if (err != EPERM)
		return strerror(err);
	if (syscall(SYS_capget, &h, d) == 0 && has_cap(d, CAP_SYS_NICE))
		return "refused although latop has CAP_SYS_NICE (its cgroup may give real-time "
		       "tasks no run time)";
	return "it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more";
}

static bool fifo_held;		/* collecting runs at SCHED_FIFO 1 */
static bool fifo_yielded;	/* and left it for slow work (probe_priority_yield) */

void probe_priority_yield(void)
{
	struct sched_param other = { .sched_priority = 0 };

	if (fifo_held && !fifo_yielded &&
	    sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &other) == 0)
		fifo_yielded = true;
}

void probe_priority_restore(void)
{
	struct sched_param fifo = { .sched_priority = 1 };

	if (fifo_yielded && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0)
		fifo_yielded = false;
}

/*
 * Have the thread that collects ticks (this one: collecting, the TUI and
 * the recording's writes share it) run when its timer fires, however many
 * threads want the CPUs: SCHED_FIFO at priority 1, else the lowest nice
 * this process may take.  Children it would start get the default policy
 * back (SCHED_RESET_ON_FORK).  Say what it got in l->priority.
 */
static void raise_priority(struct live *l)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { .sched_priority = 0 };
	int err, nice, lowest;

	if (!l->realtime) {
		l->priority = xstrdup("collecting runs at the default priority (real time "
				      "turned off)");
		return;
	}
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0) {
		l->priority = xstrdup("collecting runs at real-time priority (SCHED_FIFO 1)");
		fifo_held = true;
		return;
	}
	err = errno;
	sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &other);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		nice = 0;
	for (lowest = -20; lowest < nice && setpriority(PRIO_PROCESS, 0, lowest); lowest++)
		;
	if (lowest > nice)
		lowest = nice;
	l->priority_refused = true;
	l->priority = xasprintf("collecting runs at nice %d, not at real-time priority "
				"(SCHED_FIFO: %s), so its ticks may come late on a busy machine",
				lowest, fifo_refused(err));
}

/* Attach every live probe, raise collecting's priority and start the first
 * tick from now. */
static int attach_probes(struct live *l, char **cause)
{
	size_t i;

	for (i = 0; i < l->nprobes; i++) {
		struct live_probe *lp = &l->probes[i];

		if (lp->p.live && lp->p.ops->attach(&lp->p, cause))
			return -1;
	}
	l->attached = true;
	raise_priority(l);
	append(&l->status, l->priority);
	l->info.status = l->status;
	l->last_mono_ns = clock_ns(CLOCK_MONOTONIC);
	return arm_timer(l, l->interval_ns, cause);
}

/* Wait up to timeout_ms for the tick timer, then collect a tick; a probe
 * whose wake fd is readable first does its urgent work (probe.h), and no
 * tick comes of it. */
static int live_read(struct source *s, struct tick *out, int timeout_ms, char **cause)
{
	struct live *l = s->priv;
	struct pollfd pfd[1 + LIVE_MAX_PROBES];
	size_t who[1 + LIVE_MAX_PROBES], i, nfd = 1;
	uint64_t expirations;
	int n;

	if (!l->attached && attach_probes(l, cause))
		return -1;
	pfd[0] = (struct pollfd){.fd = l->tfd, .events = POLLIN};
	for (i = 0; i < l->nprobes && nfd < 1 + LIVE_MAX_PROBES; i++) {
		struct live_probe *lp = &l->probes[i];
		int fd = lp->p.live && lp->p.ops->wake_fd ? lp->p.ops->wake_fd(&lp->p) : -1;

		if (fd >= 0) {
			who[nfd] = i;
			pfd[nfd++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
	}
	n = poll(pfd, nfd, timeout_ms);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0) {
		*cause = xasprintf("live: waiting for the tick timer: %s", strerror(errno));
		return -1;
	}
	for (i = 1; n > 0 && i < nfd; i++)
		if (pfd[i].revents & POLLIN)
			l->probes[who[i]].p.ops->wake(&l->probes[who[i]].p);
	if (!(pfd[0].revents & POLLIN))
		return 0;
	if (read(l->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return 0;
	return collect_tick(l, out, cause);
}

/* Collect a tick now, covering the time since the last, and restart the interval. */
static int live_flush(struct source *s, struct tick *out, char **cause)
{
	struct live *l = s->priv;

	if (!l->attached)
		return 0;
	if (arm_timer(l, l->interval_ns, cause))
		return -1;
	return collect_tick(l, out, cause);
}

/* Say in l's status how filter f chooses probe's single events by latency
 * (probe.h: live_open). */
static void note_selection(struct live *l, const char *probe, const struct filter_prog *f)
{
	char *note;

	if (f->threshold_ns) {
		note = xasprintf("%s: THRESHOLD %lluns on single events", probe,
				 (unsigned long long)f->threshold_ns);
		append(&l->status, note);
		free(note);
	}
	if (f->needs_lat) {
		note = xasprintf("%s: a WHERE on latency chooses its events", probe);
		append(&l->status, note);
		free(note);
	}
	l->info.status = l->status;
}

/* The processes probe_set_pids chose; none: every process. */
static uint32_t scope_pids[PROBE_MAX_PIDS];
static size_t scope_npids;

int probe_set_pids(const char *list, char **cause)
{
	uint32_t pids[PROBE_MAX_PIDS];
	const char *p = list;
	unsigned long v;
	size_t n = 0;
	char *end;

	while (*p) {
		errno = 0;
		v = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
		if (!v || errno || v > INT32_MAX || (*end && *end != ',') || (*end == ',' && !end[1])) {
			*cause = xasprintf("'%s' is not a list of process ids (PID[,PID...])", list);
			return -1;
		}
		if (n == PROBE_MAX_PIDS) {
			*cause = xasprintf("'%s' names more than %d processes", list, PROBE_MAX_PIDS);
			return -1;
		}
		pids[n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	memcpy(scope_pids, pids, n * sizeof(pids[0]));
	scope_npids = n;
	return 0;
}

/* The cgroup probe_set_cgroup chose: its path, and its subtree test; none: every cgroup. */
static char *scope_cgroup;
static uint64_t scope_cgroup_value;

int probe_set_cgroup(const char *path, char **cause)
{
	uint64_t id;
	unsigned level;

	free(scope_cgroup);
	scope_cgroup = NULL;
	if (!*path)
		return 0;
	if (cgroup_lookup(path, &id, &level, cause))
		return -1;
	if (id >> FILTER_CGROUP_LEVEL_SHIFT || level >= 1u << (64 - FILTER_CGROUP_LEVEL_SHIFT)) {
		*cause = xasprintf("cgroup '%s' has an id (%llu) or depth (%u) too large", path,
				   (unsigned long long)id, level);
		return -1;
	}
	scope_cgroup = xstrdup(path);
	scope_cgroup_value = FILTER_CGROUP_VALUE(level, id);
	return 0;
}

/* Whether probe ops can test term (FTERM_PID, FTERM_CGROUP) in the kernel. */
static bool knows_term(const struct probe_ops *ops, unsigned term)
{
	for (size_t j = 0; j < ops->ntables; j++)
		for (size_t k = 0; k < ops->tables[j]->nfields; k++)
			if ((ops->tables[j]->fields[k].flags & FF_PUSH) &&
			    ops->tables[j]->fields[k].pushdown == term)
				return true;
	return false;
}

/* Whether probe ops can test an event's process in the kernel. */
static bool knows_pid(const struct probe_ops *ops)
{
	return knows_term(ops, FTERM_PID);
}

/* Whether ops is narrowed by -p or -c: it can test what they name. */
static bool scoped(const struct probe_ops *ops)
{
	return (scope_npids && knows_pid(ops)) || (scope_cgroup && knows_term(ops, FTERM_CGROUP));
}

/* Where the operand ending before entry end of postfix program e begins. */
static uint32_t operand_start(const struct filter_entry *e, uint32_t end)
{
	int need = 1;

	while (end > 0 && need > 0) {
		end--;
		if (e[end].op == FOP_AND || e[end].op == FOP_OR)
			need++;
		else if (e[end].op != FOP_NOT)
			need--;
	}
	return end;
}

/*
 * Narrow f to the processes of probe_set_pids and the cgroup of
 * probe_set_cgroup, those of them probe ops can test (see probe.h).  When f's
 * program and the pid test do not fit together, f's last conjuncts go (the
 * left side of an AND holds whatever the whole does), then all of it.
 */
static void scope_filter(struct filter_prog *f, const struct probe_ops *ops)
{
	struct filter_entry e[FILTER_MAX_ENTRIES];
	uint32_t n = 0, trimmed = 0;

	for (size_t i = 0; knows_pid(ops) && i < scope_npids; i++) {
		e[n++] = (struct filter_entry){FOP_EQ, FTERM_PID, scope_pids[i]};
		if (i)
			e[n++] = (struct filter_entry){FOP_OR, 0, 0};
	}
	if (scope_cgroup && knows_term(ops, FTERM_CGROUP)) {
		e[n++] = (struct filter_entry){FOP_PREFIX, FTERM_CGROUP, scope_cgroup_value};
		if (n > 1)
			e[n++] = (struct filter_entry){FOP_AND, 0, 0};
	}
	while (f->n && f->n + n + 1 > FILTER_MAX_ENTRIES) {
		f->n = f->e[f->n - 1].op == FOP_AND ? operand_start(f->e, f->n - 1) : 0;
		trimmed = 1;
	}
	if (trimmed) {
		f->needs_lat = 0;
		for (uint32_t i = 0; i < f->n; i++)
			f->needs_lat |= f->e[i].term == FTERM_LAT;
	}
	memcpy(f->e + f->n, e, n * sizeof(e[0]));
	f->n += n;
	if (f->n > n)
		f->e[f->n++] = (struct filter_entry){FOP_AND, 0, 0};
}

/* Narrow every probe that can test a process to scope_pids, before the
 * attach; say which and which not in the status.  -1 with *cause. */
static int scope_probes(struct live *l, char **cause)
{
	char *narrowed = NULL, *not = NULL, *line, ids[16 * PROBE_MAX_PIDS] = "";
	char *cg_narrowed = NULL, *cg_not = NULL;

	for (size_t i = 0; scope_cgroup && i < l->nprobes; i++) {
		struct live_probe *lp = &l->probes[i];
		char **list;

		if (!lp->p.live)
			continue;
		list = knows_term(lp->p.ops, FTERM_CGROUP) ? &cg_narrowed : &cg_not;
		line = xasprintf("%s%s%s", *list ? *list : "", *list ? ", " : "", lp->p.ops->name);
		free(*list);
		*list = line;
	}
	if (cg_narrowed) {
		line = xasprintf("-c %s: %s count only this cgroup and those below it%s%s%s",
				 scope_cgroup, cg_narrowed, cg_not ? "; " : "", cg_not ? cg_not : "",
				 cg_not ? " not narrowed" : "");
		append(&l->status, line);
		free(line);
	} else if (cg_not) {
		line = xasprintf("-c %s: %s not narrowed", scope_cgroup, cg_not);
		append(&l->status, line);
		free(line);
	}
	free(cg_narrowed);
	free(cg_not);
	for (size_t i = 0; i < scope_npids; i++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%u", i ? "," : "",
			 scope_pids[i]);
	for (size_t i = 0; (scope_npids || scope_cgroup) && i < l->nprobes; i++) {
		struct live_probe *lp = &l->probes[i];
		struct filter_prog f;
		char **list;

		if (!lp->p.live)
			continue;
		if (scope_npids) {
			list = knows_pid(lp->p.ops) ? &narrowed : &not;
			line = xasprintf("%s%s%s", *list ? *list : "", *list ? ", " : "",
					 lp->p.ops->name);
			free(*list);
			*list = line;
		}
		if (!scoped(lp->p.ops))
			continue;
		memset(&f, 0, sizeof(f));
		scope_filter(&f, lp->p.ops);
		if (lp->p.ops->set_filter(&lp->p, &f, cause)) {
			free(narrowed);
			free(not);
			return -1;
		}
	}
	if (narrowed) {
		line = xasprintf("-p %s: %s count only these processes%s%s%s", ids, narrowed,
				 not ? "; " : "", not ? not : "",
				 not ? " not narrowed (their events belong to no process)" : "");
		append(&l->status, line);
		free(line);
	}
	free(narrowed);
	free(not);
	return 0;
}

/* Install a pushdown filter in the probe that owns table. */
static int live_set_filter(struct source *s, const char *table, const void *blob,
			   size_t len, char **cause)
{
	struct live *l = s->priv;
	struct filter_prog f;
	size_t i, j;

	if (len != sizeof(struct filter_prog)) {
		*cause = xasprintf("live: filter for '%s' is %zu bytes, expected %zu",
				   table, len, sizeof(struct filter_prog));
		return -1;
	}
	for (i = 0; i < l->nprobes; i++) {
		const struct probe_ops *ops = l->probes[i].p.ops;

		for (j = 0; j < ops->ntables; j++) {
			if (strcmp(ops->tables[j]->table, table))
				continue;
			if (!l->probes[i].p.live) {
				*cause = xasprintf("live: table '%s' is not live: %s", table,
						   l->probes[i].p.error);
				return -1;
			}
			memcpy(&f, blob, sizeof(f));
			f.fields_table = (__u32)j;
			if (scoped(ops))
				scope_filter(&f, ops);
			if (ops->set_filter(&l->probes[i].p, &f, cause))
				return -1;
			if (!l->attached)
				note_selection(l, ops->name, &f);
			return 0;
		}
	}
	*cause = xasprintf("live: no open probe fills table '%s'", table);
	return -1;
}

/* Change the tick interval. */
static int live_set_interval(struct source *s, uint64_t interval_ns, char **cause)
{
	return arm_timer(s->priv, interval_ns, cause);
}

/* Return what this source is and gives. */
static const struct source_info *live_info(struct source *s)
{
	struct live *l = s->priv;

	return &l->info;
}

/* Close the probes and free the source. */
static void live_close(struct source *s)
{
	struct live *l = s->priv;
	size_t i;

	for (i = 0; i < l->nprobes; i++) {
		if (l->probes[i].p.live)
			l->probes[i].p.ops->close(&l->probes[i].p);
		free(l->probes[i].p.error);
	}
	if (l->tfd >= 0)
		close(l->tfd);
	if (l->stats_fd >= 0)
		close(l->stats_fd);
	free(l->probes);
	free(l->status);
	free(l->priority);
	free(l);
}

static const struct source_ops live_ops = {
	.name = "live",
	.read = live_read,
	.flush = live_flush,
	.set_filter = live_set_filter,
	.set_interval = live_set_interval,
	.info = live_info,
	.close = live_close,
};

const char *live_priority(const struct source *s, bool *refused)
{
	const struct live *l = s->ops == &live_ops ? s->priv : NULL;

	*refused = l && l->priority_refused;
	return l ? l->priority : NULL;
}

/* Return true when ops owns one of tables (all tables when tables is NULL). */
static bool probe_wanted(const struct probe_ops *ops, const char *const *tables, size_t n)
{
	size_t i, j;

	if (!tables)
		return true;
	for (i = 0; i < n; i++)
		for (j = 0; j < ops->ntables; j++)
			if (!strcmp(ops->tables[j]->table, tables[i]))
				return true;
	return false;
}

/* Describe a live probe: its name and any stage that fell back. */
static char *describe_live(struct probe *p)
{
	const struct hook_choice *hooks = p->hooks;
	size_t i, n = p->nhooks, used = 0;
	char *s = NULL, *line;

	for (i = 0; i < n; i++)
		used += hooks[i].first;
	line = xasprintf("%s: live, %zu of %zu stages on their first-choice hook", p->ops->name,
			 used, n);
	append(&s, line);
	free(line);
	for (i = 0; i < n; i++)
		if (hooks[i].why[0] && hooks[i].hook && !hooks[i].first)
			append(&s, hooks[i].why);
	return s;
}

/* Return whether capability c is in the effective set d. */
static bool has_cap(const struct __user_cap_data_struct *d, unsigned c)
{
	return (d[c / 32].effective >> (c % 32)) & 1;
}

/*
 * Name the capabilities that loading BPF programs needs and this process
 * lacks: "neither" CAP_BPF nor CAP_PERFMON, or the one missing; NULL when
 * it has them (or CAP_SYS_ADMIN) or cannot tell.
 */
static const char *missing_privilege(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {0};
	bool bpf, perfmon;

	if (syscall(SYS_capget, &h, d) < 0 || has_cap(d, CAP_SYS_ADMIN))
		return NULL;
	bpf = has_cap(d, CAP_BPF);
	perfmon = has_cap(d, CAP_PERFMON);
	if (bpf && perfmon)
		return NULL;
	return bpf ? "CAP_PERFMON" : perfmon ? "CAP_BPF" : "neither";
}

/*
 * Say why no probe opened: the privilege missing, once, when that is it;
 * else each probe's reason on a line of its own.
 */
static char *no_probe_cause(const struct live *l)
{
	const char *missing = missing_privilege();
	char *s, *n;
	size_t i;

	if (missing)
		return xasprintf("the probes need root, or CAP_BPF and CAP_PERFMON, and this "
				 "process (uid %u) %s%s; run latop as root, e.g. with sudo",
				 (unsigned)geteuid(), strcmp(missing, "neither") ? "lacks " : "has ",
				 missing);
	s = xstrdup("live: no probe could open:");
	for (i = 0; i < l->nprobes; i++) {
		n = xasprintf("%s\n  %s", s, l->probes[i].p.error);
		free(s);
		s = n;
	}
	return s;
}

struct source *live_open(const char *const *tables, size_t ntables,
			 uint64_t interval_ns, char **cause)
{
	struct live *l = xcalloc(1, sizeof(*l));
	struct utsname u;
	char *failed = NULL;
	size_t i, j, nlive = 0;

	l->tfd = -1;
	l->stats_fd = -1;
	/* Read now: a latoprc warning is said before a TUI takes the terminal. */
	l->realtime = realtime_wanted();
	for (i = 0; tables && i < ntables; i++) {
		if (!probe_for_table(tables[i])) {
			*cause = xasprintf("live: no probe fills table '%s'", tables[i]);
			goto fail;
		}
	}
	l->probes = xcalloc(probe_registry_len, sizeof(*l->probes));
	for (i = 0; i < probe_registry_len; i++) {
		const struct probe_ops *ops = probe_registry[i];
		struct live_probe *lp;
		char *err = NULL;

		if (!probe_wanted(ops, tables, ntables))
			continue;
		lp = &l->probes[l->nprobes++];
		lp->p.ops = ops;
		if (ops->open(&lp->p, &err)) {
			lp->p.error = err ? err : xasprintf("%s: failed to open", ops->name);
			append(&failed, lp->p.error);
			continue;
		}
		lp->p.live = true;
		nlive++;
		for (j = 0; j < ops->ntables && l->info.nschemas < MAX_SCHEMAS; j++)
			l->schemas[l->info.nschemas++] = ops->tables[j];
		append(&l->status, (err = describe_live(&lp->p)));
		free(err);
	}
	if (nlive == 0) {
		*cause = l->nprobes ? no_probe_cause(l) : xasprintf("live: no probe to open");
		goto fail;
	}
	if (failed)
		append(&l->status, failed);
	if (scope_probes(l, cause))
		goto fail;
	if (probe_run_stats()) {
		l->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (l->stats_fd < 0)
			append(&l->status, "BPF run-time statistics unavailable (bpf_enable_stats)");
	}
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->tfd < 0) {
		*cause = xasprintf("live: creating the tick timer: %s", strerror(errno));
		goto fail;
	}
	if (arm_timer(l, interval_ns, cause))
		goto fail;
	for (i = 0; i < l->nprobes; i++)
		if (l->probes[i].p.live)
			prog_totals(&l->probes[i], &l->probes[i].run_ns, &l->probes[i].run_cnt,
				    &l->probes[i].misses);
	l->last_mono_ns = clock_ns(CLOCK_MONOTONIC);
	if (uname(&u) == 0) {
		snprintf(l->info.host, sizeof(l->info.host), "%.63s", u.nodename);
		snprintf(l->info.kernel, sizeof(l->info.kernel), "%.127s", u.release);
	}
	l->info.boot_offset_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	l->info.schemas = l->schemas;
	l->info.status = l->status;
	free(failed);
	l->src.ops = &live_ops;
	l->src.priv = l;
	return &l->src;
fail:
	free(failed);
	live_close(&(struct source){ .ops = &live_ops, .priv = l });
	return NULL;
}
