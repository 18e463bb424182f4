/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target: parse any text; if it parses, bind, print, re-parse,
 * refine and push down, and run it over the unit tests' syscalls fixture
 * (tests/unit/fixture.h) when it binds to that table and reads no BASELINE.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probes/syscalls/syscalls_schema.h"
#include "probes/block/block_schema.h"
#include "queries/query.h"
#include "tests/unit/fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run bound query q over the fixture's ticks (built once) and print the result. */
static void run_fixture(const struct query *q)
{
	static struct tick ticks[FIXTURE_TICKS];
	static FILE *out;
	struct query_error err;
	struct query_run *r;
	struct result *res;
	unsigned k;

	if (!out) {
		out = fopen("/dev/null", "w");
		for (k = 0; k < FIXTURE_TICKS; k++)
			fixture_tick(&ticks[k], k);
	}
	if (query_options(q)->baseline || !(r = query_run_new(q, &err)))
		return;
	for (k = 0; k < FIXTURE_TICKS; k++)
		query_run_add(r, &ticks[k]);
	res = query_run_result(r);
	result_print(out, res, RF_TEXT);
	result_free(res);
	query_run_free(r);
}

/* Exercise the whole front end on one input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct schema *schemas[] = {&syscalls_schema, &syscall_events_schema, &block_schema};
	char *text = malloc(size + 1), *canon, *again, buf[512], *cands[16];
	struct query_error err;
	struct filter_prog f;
	struct query *q, *q2, *r;
	size_t i, n;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	n = query_complete(text, size / 2, schemas, 3, cands, 16);
	for (i = 0; i < n; i++)
		free(cands[i]);
	q = query_parse(text, &err);
	if (!q) {
		query_error_format(text, &err, buf, sizeof(buf));
		free(text);
		return 0;
	}
	canon = query_text(q);
	q2 = query_parse(canon, &err);
	if (!q2)
		abort();
	again = query_text(q2);
	if (strcmp(canon, again))
		abort();
	if (!query_bind(q, &syscalls_schema, &err)) {
		query_pushdown(q, &f);
		run_fixture(q);
	} else {
		query_error_format(text, &err, buf, sizeof(buf));
	}
	/* The block table: stages with histograms, dev and op by name. */
	if (!query_bind(q, &block_schema, &err))
		query_pushdown(q, &f);
	else
		query_error_format(text, &err, buf, sizeof(buf));
	r = query_refine(q2, "where lat > 1ms order by count limit 3", &err);
	if (r && !query_bind(r, &syscalls_schema, &err))
		query_pushdown(r, &f);
	query_free(r);
	query_free(q2);
	query_free(q);
	free(canon);
	free(again);
	free(text);
	return 0;
}
