/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Fields with a domain (core/table.h): unknown values are refused with a
 * suggestion, completion offers the names, and a schema read back from a
 * recording gets its pushdown terms and domains from the compiled-in one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/snapshot.h"
#include "core/source.h"
#include "probes/block/block_schema.h"
#include "probes/flows/flows_schema.h"
#include "probes/locks/locks_schema.h"
#include "probes/nvme/nvme_schema.h"
#include "probes/syscalls/syscalls_schema.h"
#include "queries/query.h"
#include "tap.h"

/* Bind text to s and push down; return "" on success, else the message. */
static const char *bind(const char *text, const struct schema *s, struct filter_prog *f)
{
	static struct query_error err;
	struct query *q = query_parse(text, &err);

	if (!q)
		return err.msg;
	if (query_bind(q, s, &err)) {
		query_free(q);
		return err.msg;
	}
	if (f)
		query_pushdown(q, f);
	query_free(q);
	return "";
}

/* Check that text binds to s with message want ("" for none). */
static void refused(const char *text, const struct schema *s, const char *want)
{
	const char *got = bind(text, s, NULL);

	ok(!strcmp(got, want), "%s: %s", text, got);
	if (strcmp(got, want))
		printf("#   want: %s\n", want);
}

/* Complete text at its end against schemas; return the words. */
static char *complete(const char *text, const struct schema *const *schemas, size_t n)
{
	char *out[64], buf[2048] = "";
	size_t k = query_complete(text, strlen(text), schemas, n, out, 64), i;

	for (i = 0; i < k; i++) {
		strcat(buf, i ? " " : "");
		strncat(buf, out[i], sizeof(buf) - strlen(buf) - 1);
		free(out[i]);
	}
	return strdup(buf);
}

static void check_complete(const char *text, const struct schema *const *schemas, size_t n,
			   const char *want)
{
	char *got = complete(text, schemas, n);

	ok(!strcmp(got, want), "complete \"%s\": %s", text, got);
	if (strcmp(got, want))
		printf("#   want: %s\n", want);
	free(got);
}

static void test_refused(void)
{
	struct filter_prog f;

	refused("from block where op == 'raed'", &block_schema,
		"unknown op 'raed' (did you mean 'read'?)");
	refused("from block where op != 'wirte'", &block_schema,
		"unknown op 'wirte' (did you mean 'write'?)");
	refused("from block where op in (read, 'flsh')", &block_schema,
		"unknown op 'flsh' (did you mean 'flush'?)");
	refused("from block_events where op == 'discrad'", &block_events_schema,
		"unknown op 'discrad' (did you mean 'discard'?)");
	refused("from block where dev == 'sdq9'", &block_schema, "");
	refused("from block where dev == ''", &block_schema, "unknown dev ''");
	refused("from block where dev == '7:3' and op == 'write'", &block_schema, "");
	refused("from block where op ~ 'raed*'", &block_schema, "");
	refused("from nvme where side == 'initator'", &nvme_schema,
		"unknown side 'initator' (did you mean 'initiator'?)");
	refused("from nvme_events where side in ('target', 'trget')", &nvme_events_schema,
		"unknown side 'trget' (did you mean 'target'?)");
	refused("from nvme where op == 'raed'", &nvme_schema,
		"unknown op 'raed' (did you mean 'read'?)");
	refused("from nvme where op in ('op7', 'read', 'flush')", &nvme_schema, "");
	refused("from nvme where op == 'op'", &nvme_schema, "unknown op 'op'");
	refused("from locks where kind == 'mutx'", &locks_schema,
		"unknown kind 'mutx' (did you mean 'mutex'?)");
	refused("from lock_events where kind == 'rwsem-r' or kind == 'spinlok'",
		&lock_events_schema, "unknown kind 'spinlok' (did you mean 'spinlock'?)");
	refused("from flow_events where kind == 'slwo'", &flow_events_schema,
		"unknown kind 'slwo' (did you mean 'slow'?)");
	refused("from syscalls where syscall == 'raed'", &syscalls_schema,
		"unknown syscall 'raed' (did you mean 'read'?)");

	ok(!*bind("from nvme where side == 'target' and op == 'write'", &nvme_schema, &f) &&
	   f.n == 3 && f.e[0].term == FTERM_SIDE && !strcmp(f.strs[0], "target") &&
	   f.e[1].term == FTERM_OP && f.e[1].value == 1,
	   "nvme side pushes down as text, op as its REQ_OP code");
	ok(!*bind("from nvme where op == 'op7'", &nvme_schema, &f) && f.n == 0,
	   "an op<N> the kernel cannot test stays in user space");
	ok(!*bind("from locks where kind == 'mutex'", &locks_schema, &f) && f.n == 0,
	   "kind has a domain but no pushdown term");
}

static void test_complete(void)
{
	const struct schema *blk[] = {&block_schema};
	const struct schema *all[] = {&nvme_schema, &block_schema, &locks_schema};

	check_complete("from block where op == 'wr", blk, 1, "write write_zeroes");
	check_complete("from block where op == wr", blk, 1, "write write_zeroes");
	check_complete("from block where op != 'zone_re", blk, 1, "zone_reset zone_reset_all");
	check_complete("from block where op in ('read', 'fl", blk, 1, "flush");
	check_complete("from block where op not in (read, dis", blk, 1, "discard");
	check_complete("from block where op == '", blk, 1,
		       "read write flush discard secure_erase zone_append write_zeroes "
		       "zone_open zone_close zone_finish zone_reset zone_reset_all drv_in drv_out");
	check_complete("from nvme where side == '", all, 3, "initiator target");
	check_complete("from block where op == 'fl", all, 3, "flush");
	check_complete("from locks where kind == 'rw", all, 3, "rwlock-r rwlock-w rwsem-r rwsem-w");
	check_complete("from block where o", blk, 1, "op order or");
	check_complete("from block where comm == 'x", blk, 1, "");
}

/* A schema read back from a recording pushes down and checks names as the
 * compiled-in one does. */
static void test_snapshot(void)
{
	char path[] = "/tmp/latop-domains-XXXXXX";
	struct source_info info = {.host = "t", .kernel = "t"};
	const struct schema *schemas[] = {&block_schema, &syscalls_schema};
	const struct schema *bs = NULL, *ss = NULL;
	const struct source_info *ri;
	struct snap_writer *sw;
	struct filter_prog f;
	struct source *src;
	char *cause = NULL;
	struct tick t;
	size_t i;
	int fd = mkstemp(path);

	close(fd);
	info.nschemas = 2;
	info.schemas = schemas;
	sw = snap_create(path, &info, &cause);
	tick_init(&t, 1000000000ULL);
	tick_add(&t, frame_new(&block_schema, 1000000000ULL, 1000000000ULL));
	tick_add(&t, frame_new(&syscalls_schema, 1000000000ULL, 1000000000ULL));
	ok(sw && !snap_write_tick(sw, &t, &cause) && !snap_close(sw, &cause),
	   "a recording of block and syscalls is written");
	tick_done(&t);
	src = replay_open(path, &cause);
	ok(src != NULL, "and read back (%s)", src ? "ok" : cause);
	if (!src)
		return;
	ri = src->ops->info(src);
	for (i = 0; i < ri->nschemas; i++) {
		if (!strcmp(ri->schemas[i]->table, "block"))
			bs = ri->schemas[i];
		if (!strcmp(ri->schemas[i]->table, "syscalls"))
			ss = ri->schemas[i];
	}
	ok(bs && bs != &block_schema && ss && ss != &syscalls_schema,
	   "the recording's schemas are its own");
	if (bs && ss) {
		i = (size_t)schema_field(bs, "op");
		ok(!bs->fields[i].domain && !bs->fields[i].pushdown,
		   "a recorded field carries no domain or pushdown term");
		ok(!*bind("from block where op == 'write' and dev == '7:3'", bs, &f) &&
		   f.n == 3 && f.e[0].term == FTERM_OP && f.e[0].value == 1 &&
		   f.e[1].term == FTERM_DEV && f.e[1].value == ((7u << 20) | 3),
		   "op and dev of a recorded block schema push down");
		refused("from block where op == 'raed'", bs, "unknown op 'raed' (did you mean 'read'?)");
		ok(!*bind("from syscalls where syscall == 'write' and pid == 3", ss, &f) &&
		   f.n == 3 && f.e[0].term == FTERM_SYSCALL && f.e[0].value == 1 &&
		   f.e[1].term == FTERM_PID && f.e[1].value == 3,
		   "syscall and pid of a recorded syscalls schema push down");
		refused("from syscalls where syscall == 'raed'", ss,
			"unknown syscall 'raed' (did you mean 'read'?)");
		check_complete("from block where op == 'wr", &bs, 1, "write write_zeroes");
	}
	src->ops->close(src);
	unlink(path);
}

int main(void)
{
	test_refused();
	test_complete();
	test_snapshot();
	tap_done();
}
