/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Addresses to names: kernel addresses through /proc/kallsyms, user
 * addresses through /proc/PID/maps and the ELF symbol tables (.symtab and
 * .dynsym) of the mapped objects, and source file:line from their DWARF
 * when the build has libdw and the object has debug info.  Everything read
 * is cached: objects by path, processes by pid, kallsyms once.
 */
#ifndef LATOP_SYMBOLS_H
#define LATOP_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbols;

/* Where an address is.  The strings belong to the cache: valid until symbols_free. */
struct sym_loc {
	const char *func;	/* function or data symbol, NULL if none covers it */
	uint64_t off;		/* addr - symbol start; without a symbol, the offset in obj */
	const char *obj;	/* the object's path, "[kernel]", "[heap]", ... */
	const char *file;	/* source file (base name), NULL without line info */
	int line;
	bool main;		/* the object is the process's executable */
};

struct symbols *symbols_new(void);
void symbols_free(struct symbols *s);
/*
 * Resolve a kernel address: a function (data false) or a data symbol such
 * as a static lock (data true).  False when nothing covers it.
 */
bool symbols_kernel(struct symbols *s, uint64_t addr, bool data, struct sym_loc *out);
/*
 * Resolve addr in process pid.  ret: addr is a return address (a caller's
 * frame), so its line is looked up at addr - 1.  False when no mapping
 * covers it; out->obj still names an anonymous mapping ("[heap]") if one does.
 */
bool symbols_user(struct symbols *s, uint32_t pid, uint64_t addr, bool ret, struct sym_loc *out);
/* Read process pid's maps now if they are not cached (while it still runs),
 * or again if addr (0: none) lies in none of those cached. */
void symbols_note(struct symbols *s, uint32_t pid, uint64_t addr);
/* Format loc as "func+0x1a (file.c:42)" / "func" / "[obj]+0x..." into buf. */
const char *sym_format(const struct sym_loc *loc, uint64_t addr, bool with_off, char *buf,
		       size_t len);
/* Whether this build reads DWARF line info. */
bool symbols_have_lines(void);

#endif
