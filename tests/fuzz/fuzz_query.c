/* libFuzzer target: parse any text; if it parses, bind, print, re-parse, refine and push down. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "probes/syscalls_schema.h"
#include "probes/block_schema.h"
#include "queries/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (!query_bind(q, &syscalls_schema, &err))
		query_pushdown(q, &f);
	else
		query_error_format(text, &err, buf, sizeof(buf));
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
