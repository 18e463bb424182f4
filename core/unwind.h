/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * User stacks unwound from a copy, as perf --call-graph dwarf does: the
 * registers and a copy of the stack from the stack pointer up, taken at a
 * sample, unwound here with the call frame information (.eh_frame,
 * .debug_frame) of the objects mapped in the process (libdw), so code built
 * without frame pointers unwinds too.  Memory the copy does not hold (a
 * frame beyond it) is read from the process itself, when the caller says
 * so.  One libdw session is
 * cached per process, made again when an address falls outside its mapped
 * objects (new mappings).  x86-64 only, and only with libdw (HAVE_LIBDW);
 * elsewhere unwind_user returns 0 and callers fall back to what they had.
 */
#ifndef LATOP_UNWIND_H
#define LATOP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNWIND_NREGS 17		/* x86-64's DWARF registers 0-16: ax dx cx bx si di bp sp r8-r15 ip */

struct unwinder;

struct unwinder *unwinder_new(void);
void unwinder_free(struct unwinder *u);
/*
 * Unwind thread tid of process pid from regs (UNWIND_NREGS, DWARF order)
 * and stack, len bytes copied from regs[7] up.  With beyond, a word past
 * the copy is read from the process as it is now (the outer frames of a
 * copy cut at its limit); without, the walk ends there (a copy of the
 * stack's top only: what the process holds there now may be another
 * call's).  Write at most max frames: each one's pc into ips, and into ret
 * whether it is a return address (a caller's frame: its line is at
 * pc - 1).  Return how many (0: this build or machine cannot, or the
 * process is gone).
 */
size_t unwind_user(struct unwinder *u, uint32_t pid, uint32_t tid, const uint64_t *regs,
		   const void *stack, size_t len, bool beyond, uint64_t *ips, bool *ret,
		   size_t max);
/*
 * Read pid's maps now if they are not cached, so its stacks still unwind
 * when it exits before they are (a sample is unwound later than it is taken).
 */
void unwind_note(struct unwinder *u, uint32_t pid);
/*
 * Drop the sessions of processes that have exited and that no unwind or
 * note used since the last call (once a tick: their samples are unwound).
 * A session holds the call frame information of every object its process
 * maps, a few hundred KB: under a fork storm, sessions of processes long
 * gone were most of the locks probe's memory.
 */
void unwind_forget_exited(struct unwinder *u);
/* Whether this build unwinds (x86-64 with libdw). */
bool unwind_available(void);

#endif
