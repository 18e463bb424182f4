/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Core helpers: human formatting, the syscall table. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/fmt.h"
#include "probes/syscalls/systbl.h"
#include "tap.h"

typedef char *(*fmt_fn)(uint64_t, char *, size_t);

/* Check that fn formats v as want. */
static void check_fmt(fmt_fn fn, const char *fname, uint64_t v, const char *want)
{
	char buf[FMT_BUF];
	const char *got = fn(v, buf, sizeof(buf));

	ok(got == buf && !strcmp(buf, want), "%s(%llu) = %s", fname, (unsigned long long)v, want);
	if (strcmp(buf, want))
		printf("#   got '%s'\n", buf);
}

/* Durations: ns below 1us, three significant digits up to a minute, then m/h/d. */
static void test_fmt_dur(void)
{
	static const struct {
		uint64_t v;
		const char *want;
	} cases[] = {
		{0, "0ns"},
		{999, "999ns"},
		{1000, "1.00us"},
		{1234, "1.23us"},
		{1235000, "1.24ms"},
		{9996, "10.0us"},
		{99949, "99.9us"},
		{99960, "100us"},
		{999499, "999us"},
		{999500, "1.00ms"},
		{12300000, "12.3ms"},
		{999499999, "999ms"},
		{999500000, "1.00s"},
		{1200000000, "1.20s"},
		{59900000000ULL, "59.9s"},
		{59949999999ULL, "59.9s"},
		{59950000000ULL, "1m00s"},
		{123000000000ULL, "2m03s"},
		{123499999999ULL, "2m03s"},
		{123500000000ULL, "2m04s"},
		{3599499999999ULL, "59m59s"},
		{3599500000000ULL, "1h00m"},
		{3900000000000ULL, "1h05m"},
		{86399000000000ULL, "23h59m"},
		{86400000000000ULL, "1d00h"},
		{(3 * 86400ULL + 2 * 3600ULL) * 1000000000ULL, "3d02h"},
		{UINT64_MAX, "213503d23h"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_fmt(fmt_dur, "fmt_dur", cases[i].v, cases[i].want);
}

/* Sizes in powers of 1024 with one decimal below 100; counts with three digits. */
static void test_fmt_size_count(void)
{
	static const struct {
		uint64_t v;
		const char *size, *count;
	} cases[] = {
		{0, "0B", "0"},
		{999, "999B", "999"},
		{1000, "1000B", "1.00K"},
		{1023, "1023B", "1.02K"},
		{1024, "1.0K", "1.02K"},
		{1536, "1.5K", "1.54K"},
		{12345, "12.1K", "12.3K"},
		{102400, "100K", "102K"},
		{524288, "512K", "524K"},
		{999499, "976K", "999K"},
		{999500, "976K", "1.00M"},
		{1047552, "1.0M", "1.05M"},
		{1048576, "1.0M", "1.05M"},
		{4560000, "4.3M", "4.56M"},
		{2147483648ULL, "2.0G", "2.15G"},
		{UINT64_MAX, "16.0E", "18.4E"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_fmt(fmt_size, "fmt_size", cases[i].v, cases[i].size);
		check_fmt(fmt_count, "fmt_count", cases[i].v, cases[i].count);
	}
}

/* Wall-clock times in local time (UTC here), milliseconds truncated. */
static void test_fmt_time(void)
{
	char buf[FMT_BUF];

	setenv("TZ", "UTC", 1);
	tzset();
	check_fmt(fmt_time, "fmt_time", 1700000000123456789ULL, "22:13:20.123");
	check_fmt(fmt_time, "fmt_time", 1700000000999999999ULL, "22:13:20.999");
	check_fmt(fmt_time, "fmt_time", 0, "00:00:00.000");
	setenv("TZ", "UTC-2", 1);
	tzset();
	check_fmt(fmt_time, "fmt_time", 1700000000123456789ULL, "00:13:20.123");
	unsetenv("TZ");
	tzset();
	fmt_dur(1234, buf, 4);
	ok(!strcmp(buf, "1.2"), "a small buffer is truncated, not overrun (%s)", buf);
}

/* The x86_64 syscall table: numbers, names, unknowns, sorted iteration. */
static void test_systbl(void)
{
	const struct syscall_ent *e, *prev = NULL;
	size_t i, n = syscall_count();
	bool sorted = true, round = true;

	ok(syscall_nr("read") == 0 && syscall_nr("write") == 1 && syscall_nr("getppid") == 110,
	   "read = 0, write = 1, getppid = 110");
	ok(!strcmp(syscall_name(0), "read") && !strcmp(syscall_name(110), "getppid") &&
	   !strcmp(syscall_name(17), "pread64"), "numbers name their syscalls");
	ok(syscall_nr("raed") == -1 && syscall_nr("") == -1 && syscall_nr("READ") == -1 &&
	   syscall_nr("read ") == -1, "unknown, empty and misspelt names are -1");
	ok(!syscall_name(335) && !syscall_name(100000) && !syscall_name((unsigned)-1),
	   "unused and out-of-range numbers have no name");
	ok(n > 300 && n < 1000, "a full table (%zu syscalls)", n);
	for (i = 0; i < n; i++) {
		e = syscall_at(i);
		if (!e || (prev && strcmp(prev->name, e->name) >= 0))
			sorted = false;
		if (!e || syscall_nr(e->name) != (int)e->nr || !syscall_name(e->nr) ||
		    strcmp(syscall_name(e->nr), e->name))
			round = false;
		prev = e;
	}
	ok(sorted, "syscall_at walks the names in strictly ascending order");
	ok(round, "every entry's name and number map to each other");
	ok(!syscall_at(n) && !syscall_at(n + 100), "syscall_at past the end is NULL");
}

int main(void)
{
	test_fmt_dur();
	test_fmt_size_count();
	test_fmt_time();
	test_systbl();
	tap_done();
}
