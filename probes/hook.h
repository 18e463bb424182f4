/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Hook choice, one mechanism for every probe: a probe lists its stages,
 * each with the hooks that can serve it in order of preference (fentry,
 * tp_btf, a tracefs tracepoint), and the first one this kernel really loads
 * (probes/feature.h) is used.  The choices are what `latop probes` and the
 * live header report.  Uses libbpf; probes/ only.
 */
#ifndef LATOP_HOOK_H
#define LATOP_HOOK_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;

#define HOOK_ALTS 2		/* alternatives a stage can have */
#define HOOK_TARGETS 2		/* targets one alternative attaches to, all needed */
#define HOOK_PROGS 4		/* programs one alternative loads */

/* Why a stage uses the hook it uses. */
struct hook_choice {
	const char *stage;	/* "syscall entry" */
	/* The hook used ("tp_btf/sys_enter"), else what stands in for it
	 * (the spec's fallback), else NULL: the stage is off. */
	const char *hook;
	bool first;		/* hook is the stage's first choice */
	/* Why not the first choice ("fentry/tcp_v4_rcv+tcp_v6_rcv refused:
	 * fentry:tcp_v4_rcv: EPERM at load (...)"); for `latop probes`,
	 * whether the alternatives not used load too. */
	char why[256];
};

/* One way of hooking a stage. */
struct hook_alt {
	/* "fentry" or "fexit" (a kernel function), "tp_btf" (a BTF
	 * tracepoint), "tp" (a tracefs tracepoint, "group/event"). */
	const char *kind;
	const char *module;	/* kernel module of the targets; NULL: vmlinux */
	const char *targets[HOOK_TARGETS];
	const char *progs[HOOK_PROGS];	/* programs in VIEW.bpf.c that serve it */
	const char *label;	/* as `latop probes` names it */
};

/* A stage and its alternatives, preferred first. */
struct hook_spec {
	const char *stage;
	bool required;		/* the probe cannot run without it */
	/* What stands in when no alternative loads ("none: r2t is 0");
	 * NULL: the stage is off. */
	const char *fallback;
	struct hook_alt alt[HOOK_ALTS];
};

/* The common alternatives: one target, one program. */
#define HOOK_TP_BTF(tp, prog) { "tp_btf", NULL, {tp}, {prog}, "tp_btf/" tp }
#define HOOK_FENTRY(fn, prog) { "fentry", NULL, {fn}, {prog}, "fentry/" fn }

enum hook_flags {
	/* Also try the alternatives not used, to say whether they would load
	 * (`latop probes`); without it an open tries only what it needs. */
	HOOK_CHECK_ALL = 1,
	HOOK_FENTRY_FIRST = 2,	/* try fentry and fexit alternatives first */
	HOOK_NO_FENTRY = 4,	/* never use fentry or fexit alternatives */
};

/*
 * Fill choice for spec with the first alternative that loads here (in the
 * order flags give) and return its index; when none does, choice->hook is
 * spec->fallback and -1 is returned.  A refused alternative is named in
 * choice->why.
 */
int hook_choose(const struct hook_spec *spec, struct hook_choice *choice, unsigned flags);

/* Before obj is loaded, switch off the programs of every alternative of
 * spec but alternative keep (-1: all of them). */
void hook_disable(struct bpf_object *obj, const struct hook_spec *spec, int keep);

/*
 * Before obj is loaded, load instead of each program of the alternatives
 * used (used[i], as hook_choose_all fills it; -1: none) its twin, the
 * program named the same with suffix ("rx_tp" -> "rx_tp_d"), where obj has
 * one; the twins are declared not to load ("?" sections).  Return how many
 * were swapped.
 */
int hook_use_twins(struct bpf_object *obj, const struct hook_spec *specs, size_t n,
		   const int *used, const char *suffix);

/*
 * Choose each of specs[0..n-1] into choices[0..n-1] (hook_choose), and
 * with obj given switch off the programs not used; used[i] (when used is
 * not NULL) gets each stage's alternative or -1.  0, or -1 with *cause
 * (when cause is not NULL) naming probe and the required stage that has no
 * hook; EPERM without root says which privilege it needs.
 */
int hook_choose_all(const char *probe, struct bpf_object *obj, const struct hook_spec *specs,
		    size_t n, struct hook_choice *choices, int *used, unsigned flags, char **cause);

/* The cause of a failed skeleton load (err < 0), naming probe and, for
 * EPERM, the privilege loading needs. */
char *hook_load_cause(const char *probe, int err);

#endif
