/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The probe registry.  A probe is a view's folder probes/NAME/ (NAME.bpf.c,
 * NAME.h, NAME.c defining NAME_probe_ops); the Makefile registers every one
 * (probes/probe.c).  It owns one or more tables.
 */
#ifndef LATOP_PROBE_H
#define LATOP_PROBE_H

#include <stdio.h>
#include <stdbool.h>
#include <linux/types.h>
#include "../core/table.h"
#include "../core/source.h"
#include "filter.h"
#include "hook.h"

struct probe;

#define PROBE_MAX_HOOKS 32	/* stages (and counters) one probe reports */

struct probe_ops {
	const char *name;		/* "syscalls" */
	const char *help;
	/* The latoprc keys it reads, NULL-terminated (NULL: none). */
	const char *const *config_keys;
	size_t ntables;
	const struct schema *const *tables;	/* the tables it fills */
	/* Open and load, not yet attached: filters can be set before the
	 * first event counts.  0, or -1 with *cause (names the missing
	 * privilege or kernel feature). */
	int (*open)(struct probe *p, char **cause);
	/* Attach the loaded programs: events count from here on. */
	int (*attach)(struct probe *p, char **cause);
	/* Install a pushdown filter for one of its tables (f->fields_table). */
	int (*set_filter)(struct probe *p, const struct filter_prog *f, char **cause);
	/* Read and reset the kernel state; append one frame per table to t. */
	int (*collect)(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
		       char **cause);
	/* What each stage would use on this kernel, every alternative tried,
	 * for `latop probes`: at most max into out (0 when max is too small
	 * for them all).  An open probe's own choices are in probe.hooks. */
	size_t (*hooks)(struct hook_choice *out, size_t max);
	void (*close)(struct probe *p);
	/* The fds of its loaded programs, for run-time statistics; how many. */
	size_t (*prog_fds)(struct probe *p, int *out, size_t max);
	/* Optional: an fd that becomes readable when the probe has work that
	 * cannot wait for the tick (-1: none now), and that work, done when it
	 * is (e.g. noting a new process's maps before it exits). */
	int (*wake_fd)(struct probe *p);
	void (*wake)(struct probe *p);
};

struct probe {
	const struct probe_ops *ops;
	void *priv;
	bool live;			/* open succeeded */
	char *error;			/* why open failed, when !live */
	struct hook_choice hooks[PROBE_MAX_HOOKS];	/* each stage's hook, set by open */
	size_t nhooks;
};

extern const struct probe_ops *const probe_registry[];
extern const size_t probe_registry_len;

/* Find the probe that owns table, or NULL. */
const struct probe_ops *probe_for_table(const char *table);
/* Every schema of every registered probe, for queries and completion. */
size_t probe_schemas(const struct schema **out, size_t max);

/*
 * The live source: opens the probes that own the given tables (NULL: all),
 * ticking every interval_ns.  A probe that fails to open is reported in
 * info()->status and the others run on; if none opens, NULL with *cause.
 * The probes attach at the first read, so a filter set before it applies
 * to every event counted.  A filter set before then that chooses by latency
 * adds to the status (which a recording keeps) "PROBE: THRESHOLD Nns on
 * single events" for a THRESHOLD, "PROBE: a WHERE on latency chooses its
 * events" for a WHERE testing lat: a join refuses such recordings.
 */
struct source *live_open(const char *const *tables, size_t ntables,
			 uint64_t interval_ns, char **cause);

/*
 * Choose the perf counters probes read during events, before live_open:
 * a comma list of "taskclock", "cycles", "instructions", "" for none.
 * -1 with *cause for an unknown name.  Counters this machine lacks are
 * skipped at open, with the reason in the source status.
 */
int probe_set_counters(const char *names, char **cause);
/* The counter list in effect (probe_set_counters, or the default). */
const char *probe_counters(void);

/* How many processes probe_set_pids takes: their test fills under half a filter. */
#define PROBE_MAX_PIDS 8

/*
 * Limit every live source opened after this to the processes in list, "PID"
 * or "PID,PID,..." (tgids; "" again: every process), in the kernel: each
 * probe with a pushable pid field tests "pid == A or pid == B ..." from its
 * attach on, ANDed with any filter set later (when both do not fit in one
 * filter, with as many of that filter's leading conjuncts as fit: the kernel
 * filter may pass more than a WHERE, which a query re-checks).  A probe
 * without one (nvme: its events belong to no process) is not narrowed; the
 * source status (which a recording keeps) names both kinds.  -1 with *cause for a bad list or more than
 * PROBE_MAX_PIDS ids.
 */
int probe_set_pids(const char *list, char **cause);

/*
 * Limit every live source opened after this to the tasks in the cgroup v2
 * at path (relative to the cgroup2 mount, or a full path under it; "":
 * every cgroup) and the cgroups below it, in the kernel, as probe_set_pids
 * does (both: tasks that pass both).  A probe without a pushable cgroup
 * field is not narrowed; the source status names both kinds.  -1 with
 * *cause when the cgroup does not exist or no cgroup2 is mounted.
 */
int probe_set_cgroup(const char *path, char **cause);

/*
 * Keep the kernel's BPF run-time statistics on while a live source opened
 * after this runs, so frames carry bpf_ns and bpf_runs.  Off by default:
 * each program run then reads the clock twice, which costs more than the
 * probe itself here.
 */
void probe_set_run_stats(bool on);
bool probe_run_stats(void);

/*
 * Whether a live source, once its probes attach, raises the thread that
 * collects its ticks to real-time priority (SCHED_FIFO 1, else the lowest
 * nice allowed; children get the default back), so that ticks come on time
 * on a saturated machine.  Without this call: latoprc's realtime (yes or
 * no), read when the live source opens, else yes.
 */
void probe_set_realtime(bool on);
/* The latoprc keys the live source reads (besides each probe's), NULL-terminated. */
extern const char *const live_config_keys[];

/*
 * Around slow work in a probe's collect (symbolizing and unwinding stacks with
 * libdw can take milliseconds, a process's first read over 100 ms): the collecting
 * thread leaves real-time priority, so a CPU it holds is not taken from the
 * workload for that long, until probe_priority_restore().  Nothing when
 * collecting does not run at real-time priority; yielding twice is yielding.
 */
void probe_priority_yield(void);
void probe_priority_restore(void);
/*
 * What live source s's collecting got when it attached, as text for a
 * person, and *refused true when real time was asked for and refused;
 * NULL before its first read, or when s is not live.
 */
const char *live_priority(const struct source *s, bool *refused);

/* Print, for `latop probes`, each probe's stages and chosen hooks. */
int probes_report(FILE *out, bool json);

#endif
