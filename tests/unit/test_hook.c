/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Hook choice (probes/hook.h): alternatives tried in order, the first that
 * this kernel loads used, refusals named, fallbacks and required stages.
 * Real loads decide, so it needs root; a function no kernel has stands in
 * for a refused fentry.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "probes/hook.h"

#define NOFN "latop_test_no_such_function"

static const struct hook_spec fentry_then_tp = {
	"stage A", true, NULL,
	{HOOK_FENTRY(NOFN, "a0"), HOOK_TP_BTF("sched_switch", "a1")},
};
static const struct hook_spec tp_then_fentry = {
	"stage B", false, NULL,
	{HOOK_TP_BTF("sched_switch", "b0"), HOOK_FENTRY(NOFN, "b1")},
};
static const struct hook_spec nothing_loads = {
	"stage C", false, "none: c is 0",
	{HOOK_FENTRY(NOFN, "c0"), {"tp", NULL, {"latop_test/no_such_event"}, {"c1"},
				   "tp/latop_test/no_such_event"}},
};
static const struct hook_spec required_none = {
	"stage D", true, NULL, {HOOK_FENTRY(NOFN, "d0")},
};

static int has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

int main(void)
{
	struct hook_choice c[4];
	int used[4], k;
	char *cause = NULL;

	if (geteuid() != 0) {
		skip("hook choice loads real programs: needs root");
		tap_done();
	}
	k = hook_choose(&fentry_then_tp, &c[0], 0);
	ok(k == 1 && !strcmp(c[0].hook, "tp_btf/sched_switch") && !c[0].first,
	   "a refused first choice falls back to the second (%d, %s)", k, c[0].hook);
	ok(has(c[0].why, "fentry/" NOFN " refused: fentry:" NOFN),
	   "the refusal names the hook and why: %s", c[0].why);

	k = hook_choose(&tp_then_fentry, &c[1], 0);
	ok(k == 0 && c[1].first && !c[1].why[0],
	   "the first choice that loads is used, the other not tried (%d, \"%s\")", k, c[1].why);
	k = hook_choose(&tp_then_fentry, &c[1], HOOK_CHECK_ALL);
	ok(k == 0 && c[1].first && has(c[1].why, "alternative fentry/" NOFN " does not load here"),
	   "with HOOK_CHECK_ALL the alternative is tried too: %s", c[1].why);
	k = hook_choose(&tp_then_fentry, &c[1], HOOK_FENTRY_FIRST);
	ok(k == 0 && has(c[1].why, "fentry/" NOFN " refused"),
	   "HOOK_FENTRY_FIRST tries the fentry alternative before: %s", c[1].why);
	k = hook_choose(&fentry_then_tp, &c[0], HOOK_NO_FENTRY);
	ok(k == 1 && has(c[0].why, "not tried"),
	   "HOOK_NO_FENTRY skips fentry and says so: %s", c[0].why);

	k = hook_choose(&nothing_loads, &c[2], 0);
	ok(k == -1 && c[2].hook && !strcmp(c[2].hook, "none: c is 0") && !c[2].first,
	   "nothing loads: the fallback stands in (%s)", c[2].hook ? c[2].hook : "NULL");
	ok(has(c[2].why, "fentry/" NOFN " refused") &&
	   has(c[2].why, "tp/latop_test/no_such_event refused: tp:latop_test/no_such_event"),
	   "every refusal is named: %s", c[2].why);

	{
		const struct hook_spec specs[] = {tp_then_fentry, nothing_loads};

		ok(hook_choose_all("t", NULL, specs, 2, c, used, 0, &cause) == 0 && !cause &&
		   used[0] == 0 && used[1] == -1,
		   "optional stages without a hook do not fail the probe");
	}
	{
		const struct hook_spec specs[] = {tp_then_fentry, required_none, fentry_then_tp};

		ok(hook_choose_all("t", NULL, specs, 3, c, used, 0, &cause) == -1 && cause &&
		   has(cause, "t: stage D: fentry/" NOFN " refused") && used[2] == 1,
		   "a required stage without a hook fails, naming probe and stage (%s); "
		   "the others are still chosen", cause ? cause : "no cause");
		free(cause);
	}
	cause = hook_load_cause("t", -1);
	ok(!strcmp(cause, "loading BPF programs needs root or CAP_BPF+CAP_PERFMON "
		   "(EPERM at load of t)"), "EPERM at load names the privilege: %s", cause);
	free(cause);
	tap_done();
}
