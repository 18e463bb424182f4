/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core/symbols: a process's maps noted while it ran name its addresses after. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "core/symbols.h"
#include "tap.h"

/* A function of this program, to name in a child's copy of it. */
__attribute__((noinline)) int named_in_child(int x)
{
	return x * 3 + 1;
}

/*
 * A process whose maps were noted while it ran is named from them once it
 * has exited.  Between its exit and its reaping it is a zombie, whose
 * /proc/PID/maps opens and reads empty: a miss then (an address it mapped
 * after the note) must not wipe what was noted.
 */
static void test_symbols_zombie(void)
{
	struct symbols *s = symbols_new();
	uint64_t fn = (uint64_t)(uintptr_t)named_in_child;
	int up[2], down[2], status;
	struct sym_loc loc;
	pid_t pid;
	char c = 'x';
	FILE *f;
	char path[64], line[256];
	bool empty = false;

	if (pipe(up) || pipe(down)) {
		ok(false, "pipes");
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	ok(pid > 0 && read(up[0], &c, 1) == 1, "the child runs");
	symbols_note(s, (uint32_t)pid, fn);
	ok(symbols_user(s, (uint32_t)pid, fn, false, &loc) && loc.func &&
	   !strcmp(loc.func, "named_in_child"), "noted while it runs: named_in_child (%s)",
	   loc.func ? loc.func : "none");
	ok(write(down[1], &c, 1) == 1, "the child is let go");
	/* Wait for it to be a zombie, without reaping it. */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 500 && !empty; i++) {
		f = fopen(path, "r");
		empty = f && !fgets(line, sizeof(line), f);
		if (f)
			fclose(f);
		if (!empty)
			usleep(10000);
	}
	ok(empty, "exited, not reaped: its maps read empty");
	/* An address none of its noted maps covers: a miss, which reads the
	 * maps again (not within the second of the note: sleep past it). */
	sleep(1);
	ok(!symbols_user(s, (uint32_t)pid, 8, false, &loc), "an address it never mapped is not named");
	ok(symbols_user(s, (uint32_t)pid, fn, false, &loc) && loc.func &&
	   !strcmp(loc.func, "named_in_child"),
	   "after that miss, its noted maps still name named_in_child (%s)",
	   loc.func ? loc.func : "none");
	waitpid(pid, &status, 0);
	ok(symbols_user(s, (uint32_t)pid, fn, false, &loc) && loc.func &&
	   !strcmp(loc.func, "named_in_child"), "reaped: still named (%s)",
	   loc.func ? loc.func : "none");
	close(up[0]), close(up[1]), close(down[0]), close(down[1]);
	symbols_free(s);
}

int main(void)
{
	test_symbols_zombie();
	tap_done();
}
