/* SPDX-License-Identifier: GPL-3.0-or-later */
/* JSON strings: escapes, and valid UTF-8 whatever the input. */
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "tap.h"

/* Return what json_str prints for s (malloc'd). */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_str(f, s);
	fclose(f);
	return buf;
}

/* Check json_str(in) prints want. */
static void check(const char *in, const char *want, const char *what)
{
	char *got = json_of(in);

	ok(!strcmp(got, want), "%s: %s", what, got);
	free(got);
}

int main(void)
{
	check(NULL, "null", "NULL is null");
	check("read", "\"read\"", "plain ASCII");
	check("a\"b\\c\nd\te\x01", "\"a\\\"b\\\\c\\nd\\te\\u0001\"", "quotes, backslash, controls");
	check("caf\xc3\xa9", "\"caf\xc3\xa9\"", "two-byte UTF-8 passes through");
	check("\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\"",
	      "three- and four-byte UTF-8 pass through");
	/* A 15-byte comm cut inside a character: "worker-\xe2\x82\xac\xe2\x82\xac\xe2\x82" */
	check("worker-\xe2\x82\xac\xe2\x82\xac\xe2\x82", "\"worker-\xe2\x82\xac\xe2\x82\xac\\ufffd\\ufffd\"",
	      "a name cut inside a character: each stray byte is U+FFFD");
	check("caf\xe9", "\"caf\\ufffd\"", "Latin-1 is not passed through");
	check("\xc0\xaf", "\"\\ufffd\\ufffd\"", "an overlong '/' is not passed through");
	check("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "a surrogate is not passed through");
	check("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "above U+10FFFF is not passed");
	check("\xff\x80", "\"\\ufffd\\ufffd\"", "bytes that start nothing");
	tap_done();
}
