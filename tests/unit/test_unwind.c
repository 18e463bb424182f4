/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core/unwind: a stack this process copies of itself, unwound from the copy. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "core/symbols.h"
#include "core/unwind.h"
#include "tap.h"

#define COPY 8192

static uint8_t stack_copy[COPY];
static size_t copied;
static uint64_t regs[UNWIND_NREGS];

/* Return the end of the mapping that holds addr (0 if none). */
static uint64_t mapping_end(uint64_t addr)
{
	unsigned long long lo, hi;
	char line[512];
	uint64_t end = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/* Copy up to COPY bytes from sp up to the stack's end, byte by byte (the
 * sanitizer would see the other frames' red zones in a memcpy). */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(uint64_t sp)
{
	const volatile uint8_t *p = (const volatile uint8_t *)sp;
	uint64_t end = mapping_end(sp);

	copied = end > sp && end - sp < COPY ? end - sp : COPY;
	for (size_t i = 0; i < copied; i++)
		stack_copy[i] = p[i];
}

#if defined(__x86_64__)
/* Take the registers and the stack here, as a sample would; the frame
 * pointer given is garbage, so only the call frame information unwinds. */
__attribute__((noinline, optimize("omit-frame-pointer"))) static void capture(void)
{
	uint64_t sp, ip;

	__asm__ volatile("mov %%rsp, %0\n\tlea 0(%%rip), %1" : "=r"(sp), "=r"(ip));
	copy_stack(sp);
	memset(regs, 0, sizeof(regs));
	regs[6] = 0xdeadbeef;	/* bp */
	regs[7] = sp;
	regs[16] = ip;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void level2(void)
{
	capture();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void level1(void)
{
	level2();
	__asm__ volatile("" ::: "memory");
}
#endif

static void test_unwind_self(void)
{
#if defined(__x86_64__)
	struct unwinder *u = unwinder_new();
	struct symbols *syms = symbols_new();
	static const char *const want[] = {"capture", "level2", "level1", "test_unwind_self"};
	uint64_t ips[64], full[64];
	bool ret[64], same;
	size_t n, i, j = 0, nfull;
	struct sym_loc loc;

	if (!unwind_available()) {
		skip("this build does not unwind (no libdw)\n");
		goto out;
	}
	level1();
	n = unwind_user(u, (uint32_t)getpid(), (uint32_t)getpid(), regs, stack_copy, copied, true, ips,
			ret, 64);
	ok(n >= 4, "the copy unwinds past its first frames (%zu frames)", n);
	for (i = 0; i < n && j < 4; i++) {
		if (symbols_user(syms, (uint32_t)getpid(), ips[i], ret[i], &loc) && loc.func &&
		    !strncmp(loc.func, want[j], strlen(want[j])))
			j++;
	}
	ok(j == 4, "its frames are capture < level2 < level1 < test_unwind_self, in order (%zu of 4)",
	   j);
	ok(n && !ret[0] && (n < 2 || ret[1]), "the first frame is the sample's pc, the next a return address");
	/* The stack's top alone, with nothing read past it: the frames it
	 * holds, the same as the whole copy's, and no others (what this
	 * process holds past it now is other calls' frames). */
	memcpy(full, ips, sizeof(full));
	nfull = n;
	n = unwind_user(u, (uint32_t)getpid(), (uint32_t)getpid(), regs, stack_copy, 16, false, ips,
			ret, 64);
	for (i = 0, same = true; i < n && i < nfull; i++)
		same = same && ips[i] == full[i];
	ok(n >= 1 && n < nfull && same,
	   "16 bytes of it, read no further: the first %zu of the %zu frames, no others", n, nfull);
	n = unwind_user(u, (uint32_t)getpid(), (uint32_t)getpid(), regs, stack_copy, 0, true, ips, ret,
			64);
	ok(n == 0, "no stack copied: nothing unwound");
out:
	symbols_free(syms);
	unwinder_free(u);
#else
	skip("unwinding is for x86-64\n");
#endif
}

/* Write all of len bytes of buf to fd, or read them; false on a short one. */
static bool full_io(int fd, void *buf, size_t len, bool rd)
{
	uint8_t *b = buf;

	while (len) {
		ssize_t n = rd ? read(fd, b, len) : write(fd, b, len);

		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * A sample is unwound after it is read, later than it is taken: a process
 * whose maps were noted while it ran still unwinds once it has exited.  A
 * child copies its stack and registers to us, we note it, it exits and is
 * reaped, and then its copy is unwound.
 */
static void test_unwind_exited(void)
{
#if defined(__x86_64__)
	struct unwinder *u = unwinder_new(), *late = unwinder_new();
	int up[2], down[2], status;
	uint64_t ips[64];
	bool ret[64];
	size_t n;
	pid_t pid;
	char c = 'x';

	if (!unwind_available() || pipe(up) || pipe(down)) {
		skip("this build does not unwind (no libdw)\n");
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		level1();
		if (!full_io(up[1], &copied, sizeof(copied), false) ||
		    !full_io(up[1], regs, sizeof(regs), false) ||
		    !full_io(up[1], stack_copy, copied, false))
			_exit(1);
		full_io(down[0], &c, 1, true);
		_exit(0);
	}
	ok(pid > 0 && full_io(up[0], &copied, sizeof(copied), true) && copied <= COPY &&
	   full_io(up[0], regs, sizeof(regs), true) && full_io(up[0], stack_copy, copied, true),
	   "the child sent its stack (%zu bytes)", copied);
	unwind_note(u, (uint32_t)pid);
	full_io(down[1], &c, 1, false);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited and was reaped");
	n = unwind_user(u, (uint32_t)pid, (uint32_t)pid, regs, stack_copy, copied, true, ips, ret, 64);
	ok(n >= 4, "noted while it ran, the exited child's copy unwinds (%zu frames)", n);
	n = unwind_user(late, (uint32_t)pid, (uint32_t)pid, regs, stack_copy, copied, true, ips, ret,
			64);
	ok(n == 0, "not noted: an exited process's copy does not unwind (%zu frames)", n);
	close(up[0]), close(up[1]), close(down[0]), close(down[1]);
out:
	unwinder_free(u);
	unwinder_free(late);
#else
	skip("unwinding is for x86-64\n");
#endif
}

int main(void)
{
	test_unwind_self();
	test_unwind_exited();
	tap_done();
}
