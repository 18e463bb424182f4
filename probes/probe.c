/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The probe registry, probe options, and `latop probes`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/json.h"
#include "../core/xalloc.h"
#include "probe.h"
#include "perf_event.h"

/*
 * Every probes/NAME/NAME.bpf.c is a probe whose user side (probes/NAME/NAME.c)
 * defines NAME_probe_ops; the Makefile lists them in probe_list.h (PROBE(NAME)
 * lines, sorted), so adding a probe touches no shared file.
 */
#define PROBE(name) extern const struct probe_ops name##_probe_ops;
#include "probe_list.h"
#undef PROBE

const struct probe_ops *const probe_registry[] = {
#define PROBE(name) &name##_probe_ops,
#include "probe_list.h"
#undef PROBE
};
const size_t probe_registry_len = sizeof(probe_registry) / sizeof(probe_registry[0]);

static char counters_opt[64] = "";
static bool run_stats;

const struct probe_ops *probe_for_table(const char *table)
{
	size_t i, j;

	for (i = 0; i < probe_registry_len; i++)
		for (j = 0; j < probe_registry[i]->ntables; j++)
			if (!strcmp(probe_registry[i]->tables[j]->table, table))
				return probe_registry[i];
	return NULL;
}

size_t probe_schemas(const struct schema **out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < probe_registry_len; i++)
		for (j = 0; j < probe_registry[i]->ntables; j++)
			if (n < max)
				out[n++] = probe_registry[i]->tables[j];
	return n;
}

int probe_set_counters(const char *names, char **cause)
{
	static const char *const known[] = {"taskclock", "cycles", "instructions"};
	char *copy, *tok, *save = NULL;
	size_t i;

	if (strlen(names) >= sizeof(counters_opt)) {
		*cause = xasprintf("counter list '%s' is too long", names);
		return -1;
	}
	copy = xstrdup(names);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(tok, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			*cause = xasprintf("unknown counter '%s' (taskclock, cycles, instructions)",
					   tok);
			free(copy);
			return -1;
		}
	}
	free(copy);
	snprintf(counters_opt, sizeof(counters_opt), "%s", names);
	return 0;
}

const char *probe_counters(void)
{
	return counters_opt;
}

void probe_set_run_stats(bool on)
{
	run_stats = on;
}

/* Whether live sources turn BPF run-time statistics on. */
bool probe_run_stats(void)
{
	return run_stats;
}

/* Print one probe's tables and stages. */
static void report_probe(FILE *out, bool json, const struct probe_ops *ops, bool first)
{
	struct hook_choice hooks[PROBE_MAX_HOOKS];
	size_t i, n = ops->hooks(hooks, PROBE_MAX_HOOKS);

	if (json) {
		fprintf(out, "%s{\"name\":", first ? "" : ",");
		json_str(out, ops->name);
		fputs(",\"tables\":[", out);
		for (i = 0; i < ops->ntables; i++) {
			fputs(i ? "," : "", out);
			json_str(out, ops->tables[i]->table);
		}
		fputs("],\"stages\":[", out);
		for (i = 0; i < n; i++) {
			fprintf(out, "%s{\"stage\":", i ? "," : "");
			json_str(out, hooks[i].stage);
			fputs(",\"hook\":", out);
			json_str(out, hooks[i].hook);
			fputs(",\"why\":", out);
			json_str(out, hooks[i].why[0] ? hooks[i].why : NULL);
			fputc('}', out);
		}
		fputs("]}", out);
		return;
	}
	fprintf(out, "%s: %s\n  tables:", ops->name, ops->help);
	for (i = 0; i < ops->ntables; i++)
		fprintf(out, " %s", ops->tables[i]->table);
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		fprintf(out, "  %-46s %s\n", hooks[i].stage,
			hooks[i].hook ? hooks[i].hook : "(none)");
		if (hooks[i].why[0])
			fprintf(out, "  %-46s   %s\n", "", hooks[i].why);
	}
}

/* Print which perf counters this machine can open. */
static void report_counters(FILE *out, bool json)
{
	static const char *const names[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cycles", "instructions",
	};
	size_t i;

	fputs(json ? ",\"counters\":[" : "perf counters:\n", out);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *cause = NULL;
		int err;
		struct perf_counters *c = perf_counters_open(names[i], &err, &cause);

		if (json) {
			fprintf(out, "%s{\"name\":", i ? "," : "");
			json_str(out, names[i]);
			fprintf(out, ",\"available\":%s,\"why\":", c ? "true" : "false");
			json_str(out, cause);
			fputc('}', out);
		} else {
			fprintf(out, "  %-18s %s\n", names[i], c ? "available" : cause);
		}
		perf_counters_free(c);
		free(cause);
	}
	fputs(json ? "]" : "", out);
}

int probes_report(FILE *out, bool json)
{
	size_t i;

	if (json)
		fputs("{\"probes\":[", out);
	for (i = 0; i < probe_registry_len; i++)
		report_probe(out, json, probe_registry[i], i == 0);
	if (json)
		fputc(']', out);
	report_counters(out, json);
	if (json)
		fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}
