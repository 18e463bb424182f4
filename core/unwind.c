/* SPDX-License-Identifier: GPL-3.0-or-later */
/* User stacks unwound from a copy with libdw's unwinder (see unwind.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "unwind.h"
#include "xalloc.h"

#if defined(HAVE_LIBDW) && defined(__x86_64__)
#include <elfutils/libdwfl.h>
#include <dwarf.h>

#define MAX_PROCS 64		/* processes cached; the least recently used goes beyond */
#define REPORT_NS 1000000000ULL	/* a process's maps are read again at most this often */

/* One process: its libdw session and what the current unwind reads. */
struct uw_proc {
	uint32_t pid;
	Dwfl *dwfl;
	int memfd;		/* /proc/PID/mem, -1 until needed or when refused */
	uint64_t used;		/* the unwinds' counter at its last use */
	uint64_t reported_ns;	/* when its maps were read */
	/* The sample being unwound. */
	const uint64_t *regs;
	const uint8_t *stack;
	size_t len;
	bool beyond;		/* words past the copy may be read from the process */
};

struct unwinder {
	struct uw_proc procs[MAX_PROCS];
	size_t n;
	uint64_t unwinds;
	uint64_t forgot_at;	/* unwinds at the last unwind_forget_exited */
};

/* What the frame callback fills. */
struct uw_walk {
	uint64_t *ips;
	bool *ret;
	size_t n, max;
};

/*
 * No separate debug info: the objects' own call frame information
 * (.eh_frame, which x86-64 code carries) is what unwinds.  Where a frame
 * has none, libdw falls back to .debug_frame, and with the standard lookup
 * it would open the object's separate debug file (libc6-dbg's, say) and
 * decompress all its debug sections, per process: 10 MB and more a session,
 * a recorder's heap doubling under a fork storm for frames .eh_frame does
 * not cover anyway.
 */
static int uw_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc;
	*debuginfo_file_name = NULL;
	return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = uw_no_debuginfo,
};

/* The one thread unwound: the sample's. */
static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Read a word: from the stack copy when it holds it, else from the process. */
static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_proc *p = arg;
	uint64_t sp = p->regs[7];
	char path[64];

	(void)dwfl;
	if (addr >= sp && addr - sp <= p->len && p->len - (addr - sp) >= sizeof(*result)) {
		memcpy(result, p->stack + (addr - sp), sizeof(*result));
		return true;
	}
	if (!p->beyond)
		return false;
	if (p->memfd == -1) {
		snprintf(path, sizeof(path), "/proc/%u/mem", p->pid);
		p->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (p->memfd < 0)
			p->memfd = -2;
	}
	return p->memfd >= 0 &&
	       pread(p->memfd, result, sizeof(*result), (off_t)addr) == (ssize_t)sizeof(*result);
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw_proc *p = arg;
	Dwarf_Word regs[UNWIND_NREGS];
	size_t i;

	for (i = 0; i < UNWIND_NREGS; i++)
		regs[i] = p->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, UNWIND_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	w->ips[w->n] = pc;
	w->ret[w->n] = !activation;
	w->n++;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void proc_drop(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	if (p->memfd >= 0)
		close(p->memfd);
	p->dwfl = NULL;
	p->memfd = -1;
}

/*
 * (Re)make p's session from the process's maps now; false if it is gone.
 * A session it had stays when the maps cannot be read (the process exited):
 * its samples taken before are still to be unwound.
 */
static bool proc_report(struct uw_proc *p)
{
	Dwfl *d = dwfl_begin(&proc_callbacks);

	p->reported_ns = mono_ns();
	if (!d)
		return false;
	if (dwfl_linux_proc_report(d, (pid_t)p->pid) || dwfl_report_end(d, NULL, NULL) ||
	    !dwfl_attach_state(d, NULL, (pid_t)p->pid, &thread_callbacks, p)) {
		dwfl_end(d);
		return false;
	}
	proc_drop(p);
	p->dwfl = d;
	return true;
}

/* Return pid's cached entry, made (and its session reported) when new. */
static struct uw_proc *proc_get(struct unwinder *u, uint32_t pid)
{
	struct uw_proc *p = NULL;
	size_t i, lru = 0;

	for (i = 0; i < u->n; i++) {
		if (u->procs[i].pid == pid && pid)
			return &u->procs[i];
		if (u->procs[i].used < u->procs[lru].used)
			lru = i;
	}
	if (u->n && !u->procs[lru].pid) {
		p = &u->procs[lru];	/* one unwind_forget_exited emptied */
	} else if (u->n < MAX_PROCS) {
		p = &u->procs[u->n++];
	} else {
		p = &u->procs[lru];
		proc_drop(p);
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->memfd = -1;
	if (!proc_report(p))
		p->dwfl = NULL;
	return p;
}

/* Unwind the sample in p into w; return the frames. */
static size_t walk(struct uw_proc *p, uint32_t tid, struct uw_walk *w)
{
	w->n = 0;
	dwfl_getthread_frames(p->dwfl, (pid_t)tid, uw_frame, w);
	return w->n;
}

/* Whether every frame of w is in a module of p's session. */
static bool all_mapped(struct uw_proc *p, const struct uw_walk *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!dwfl_addrmodule(p->dwfl, w->ret[i] ? w->ips[i] - 1 : w->ips[i]))
			return false;
	return w->n > 0;
}

struct unwinder *unwinder_new(void)
{
	return xcalloc(1, sizeof(struct unwinder));
}

void unwinder_free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->n; i++)
		proc_drop(&u->procs[i]);
	free(u);
}

size_t unwind_user(struct unwinder *u, uint32_t pid, uint32_t tid, const uint64_t *regs,
		   const void *stack, size_t len, bool beyond, uint64_t *ips, bool *ret, size_t max)
{
	struct uw_walk w = {.ips = ips, .ret = ret, .max = max};
	struct uw_proc *p;

	if (!max || !len)
		return 0;
	p = proc_get(u, pid);
	p->used = ++u->unwinds;
	p->regs = regs;
	p->stack = stack;
	p->len = len;
	p->beyond = beyond;
	if (p->dwfl && walk(p, tid, &w) && all_mapped(p, &w))
		return w.n;
	/* A pc outside the objects it knew: the maps may have changed; read
	 * them again, once a second at most (a stack can end in one). */
	if (mono_ns() - p->reported_ns < REPORT_NS)
		return w.n;
	if (!proc_report(p))
		return p->dwfl ? w.n : 0;
	return walk(p, tid, &w);
}

void unwind_note(struct unwinder *u, uint32_t pid)
{
	proc_get(u, pid)->used = ++u->unwinds;
}

void unwind_forget_exited(struct unwinder *u)
{
	size_t i;

	/* An entry stays where it is (its session's callbacks point at it):
	 * emptied, it is the least recently used, the next one proc_get takes. */
	for (i = 0; i < u->n; i++) {
		struct uw_proc *p = &u->procs[i];

		if (p->pid && p->used <= u->forgot_at && kill((pid_t)p->pid, 0) < 0 &&
		    errno == ESRCH) {
			proc_drop(p);
			p->pid = 0;
			p->used = 0;
		}
	}
	u->forgot_at = u->unwinds;
}

bool unwind_available(void)
{
	return true;
}

#else

struct unwinder {
	int unused;
};

struct unwinder *unwinder_new(void)
{
	return xcalloc(1, sizeof(struct unwinder));
}

void unwinder_free(struct unwinder *u)
{
	free(u);
}

size_t unwind_user(struct unwinder *u, uint32_t pid, uint32_t tid, const uint64_t *regs,
		   const void *stack, size_t len, bool beyond, uint64_t *ips, bool *ret, size_t max)
{
	(void)u, (void)pid, (void)tid, (void)regs, (void)stack, (void)len, (void)beyond;
	(void)ips, (void)ret, (void)max;
	return 0;
}

void unwind_note(struct unwinder *u, uint32_t pid)
{
	(void)u, (void)pid;
}

void unwind_forget_exited(struct unwinder *u)
{
	(void)u;
}

bool unwind_available(void)
{
	return false;
}

#endif
