/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Choose each stage's hook by loading what the kernel offers (probes/hook.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "hook.h"
#include "feature.h"
#include "../core/xalloc.h"

/* Return whether alternative a is an fentry or fexit one. */
static bool is_fentry(const struct hook_alt *a)
{
	return !strcmp(a->kind, "fentry") || !strcmp(a->kind, "fexit");
}

/* Return true when every target of a loads here; fill why otherwise. */
static bool alt_works(const struct hook_alt *a, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < HOOK_TARGETS && a->targets[i]; i++) {
		const char *t = a->targets[i];
		bool ok;

		if (!strcmp(a->kind, "tp"))
			ok = feature_tracepoint(t, why, len);
		else if (is_fentry(a))
			ok = a->module ? feature_fentry_mod(a->module, t, why, len) :
			     feature_fentry(t, why, len);
		else
			ok = a->module ? feature_tp_btf_mod(a->module, t, why, len) :
			     feature_tp_btf(t, why, len);
		if (!ok)
			return false;
	}
	return true;
}

/* Append "; "-separated text (printf-style) to the why of c. */
__attribute__((format(printf, 2, 3)))
static void add_why(struct hook_choice *c, const char *fmt, ...)
{
	size_t l = strlen(c->why);
	va_list ap;

	if (l + 2 >= sizeof(c->why))
		return;
	if (l) {
		memcpy(c->why + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + l, sizeof(c->why) - l, fmt, ap);
	va_end(ap);
}

int hook_choose(const struct hook_spec *spec, struct hook_choice *choice, unsigned flags)
{
	int nalt = 0, order[HOOK_ALTS], i, k, chosen = -1;
	char why[160];

	while (nalt < HOOK_ALTS && spec->alt[nalt].kind)
		nalt++;
	/* The order to try: as declared, or fentry ones first when asked. */
	for (i = 0, k = 0; i < nalt; i++)
		if (!(flags & HOOK_FENTRY_FIRST) || is_fentry(&spec->alt[i]))
			order[k++] = i;
	for (i = 0; i < nalt && k < nalt; i++)
		if ((flags & HOOK_FENTRY_FIRST) && !is_fentry(&spec->alt[i]))
			order[k++] = i;
	choice->stage = spec->stage;
	choice->hook = NULL;
	choice->first = false;
	choice->why[0] = 0;
	for (i = 0; i < nalt; i++) {
		const struct hook_alt *a = &spec->alt[order[i]];

		if ((flags & HOOK_NO_FENTRY) && is_fentry(a)) {
			add_why(choice, "%s not tried (fentry hooks are switched off)", a->label);
			continue;
		}
		if (chosen >= 0) {
			/* Only to report whether the others would load too. */
			if (alt_works(a, why, sizeof(why)))
				add_why(choice, "alternative %s loads here too", a->label);
			else
				add_why(choice, "alternative %s does not load here: %s", a->label, why);
			continue;
		}
		if (alt_works(a, why, sizeof(why))) {
			chosen = order[i];
			choice->hook = a->label;
			choice->first = chosen == 0;
			if (!(flags & HOOK_CHECK_ALL))
				break;
			continue;
		}
		add_why(choice, "%s refused: %s", a->label, why);
	}
	if (chosen < 0)
		choice->hook = spec->fallback;
	return chosen;
}

void hook_disable(struct bpf_object *obj, const struct hook_spec *spec, int keep)
{
	int i, j;

	for (i = 0; i < HOOK_ALTS && spec->alt[i].kind; i++) {
		if (i == keep)
			continue;
		for (j = 0; j < HOOK_PROGS && spec->alt[i].progs[j]; j++) {
			struct bpf_program *p =
				bpf_object__find_program_by_name(obj, spec->alt[i].progs[j]);

			if (p)
				bpf_program__set_autoload(p, false);
		}
	}
}

int hook_use_twins(struct bpf_object *obj, const struct hook_spec *specs, size_t n,
		   const int *used, const char *suffix)
{
	int swapped = 0, j;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct hook_alt *a;

		if (used[i] < 0)
			continue;
		a = &specs[i].alt[used[i]];
		for (j = 0; j < HOOK_PROGS && a->progs[j]; j++) {
			struct bpf_program *p = bpf_object__find_program_by_name(obj, a->progs[j]);
			struct bpf_program *twin;
			char name[64];

			snprintf(name, sizeof(name), "%s%s", a->progs[j], suffix);
			twin = bpf_object__find_program_by_name(obj, name);
			if (!p || !twin)
				continue;
			bpf_program__set_autoload(p, false);
			bpf_program__set_autoload(twin, true);
			swapped++;
		}
	}
	return swapped;
}

/* The cause of a required stage without a hook. */
static char *required_cause(const char *probe, const struct hook_choice *c)
{
	if (strstr(c->why, "EPERM") && geteuid() != 0)
		return xasprintf("loading BPF programs needs root or CAP_BPF+CAP_PERFMON "
				 "(EPERM at load of %s: %s)", probe, c->why);
	if (strstr(c->why, "no kernel BTF"))
		return xasprintf("%s: this kernel has no BTF; %s", probe, c->why);
	return xasprintf("%s: %s: %s", probe, c->stage, c->why);
}

int hook_choose_all(const char *probe, struct bpf_object *obj, const struct hook_spec *specs,
		    size_t n, struct hook_choice *choices, int *used, unsigned flags, char **cause)
{
	int rc = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int k = hook_choose(&specs[i], &choices[i], flags);

		if (used)
			used[i] = k;
		if (obj)
			hook_disable(obj, &specs[i], k);
		if (k < 0 && specs[i].required && !rc) {
			rc = -1;
			if (cause)
				*cause = required_cause(probe, &choices[i]);
		}
	}
	return rc;
}

char *hook_load_cause(const char *probe, int err)
{
	if (err == -EPERM)
		return xasprintf("loading BPF programs needs root or CAP_BPF+CAP_PERFMON "
				 "(EPERM at load of %s)", probe);
	return xasprintf("%s: loading the BPF programs: %s", probe, strerror(-err));
}
