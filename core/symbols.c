/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kernel and user address symbolization (kallsyms, ELF symtabs, DWARF lines). */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBDW
#include <elfutils/libdw.h>
#endif
#include "symbols.h"
#include "xalloc.h"

#define LINE_CACHE 1024		/* direct-mapped (vaddr -> line) entries per object */
#define MAX_PIDS 512		/* processes cached; the oldest is dropped beyond */

struct sym {
	uint64_t addr;
	uint64_t size;
	char *name;
	bool data;
	bool sized;		/* size is known (ELF): 0 covers only addr itself */
};

struct line_ent {
	uint64_t vaddr;		/* 0: empty */
	const char *file;
	int line;
};

/* One ELF file: its symbols sorted by address and its loadable segments. */
struct elfobj {
	char *path;
	dev_t dev;
	ino_t ino;
	struct sym *syms;
	size_t nsyms;
	struct {
		uint64_t off, vaddr, filesz, memsz;
	} *loads;
	size_t nloads;
	int fd;
	Elf *elf;
#ifdef HAVE_LIBDW
	void *dw;		/* Dwarf *, opened at the first line lookup */
	bool dw_tried;
#endif
	struct line_ent *lines;
	char **files;		/* interned source file names */
	size_t nfiles;
};

/* One mapped object of a process: where its vaddr 0 lands and what it spans. */
struct pmap {
	struct elfobj *obj;	/* NULL for anonymous mappings */
	char *name;		/* anonymous: "[heap]", "[anon]" */
	uint64_t start, end;	/* address range (all its segments, for objects) */
	uint64_t bias;
};

struct proc {
	uint32_t pid;
	char *exe;		/* the executable's path */
	struct pmap *maps;
	size_t nmaps;
	time_t read_at;		/* when maps were read: a miss re-reads them, once a second */
};

struct symbols {
	struct sym *ksyms;
	size_t nksyms;
	bool kread;
	struct elfobj **objs;
	size_t nobjs;
	struct proc *procs;
	size_t nprocs;
};

bool symbols_have_lines(void)
{
#ifdef HAVE_LIBDW
	return true;
#else
	return false;
#endif
}

struct symbols *symbols_new(void)
{
	elf_version(EV_CURRENT);
	return xcalloc(1, sizeof(struct symbols));
}

/* Order symbols by address, functions before data at one address. */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->data - (int)y->data;
}

/* Return the last symbol at or below addr of the wanted kind, or NULL. */
static const struct sym *sym_find(const struct sym *syms, size_t n, uint64_t addr, bool data)
{
	size_t lo = 0, hi = n, steps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A few steps back: symbols of the other kind, and sized ones ending
	 * before addr, may lie between addr and the one covering it. */
	for (steps = 0; lo-- > 0 && steps < 64; steps++) {
		if (syms[lo].data != data)
			continue;
		if ((syms[lo].size || syms[lo].sized) && addr >= syms[lo].addr + syms[lo].size &&
		    addr != syms[lo].addr)
			continue;
		return &syms[lo];
	}
	return NULL;
}

/* Read /proc/kallsyms once. */
static void kallsyms_read(struct symbols *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	s->kread = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		bool data;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		switch (type) {
		case 't': case 'T': case 'w': case 'W': data = false; break;
		case 'd': case 'D': case 'b': case 'B': case 'r': case 'R': data = true; break;
		default: continue;
		}
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			s->ksyms = xreallocarray(s->ksyms, cap, sizeof(*s->ksyms));
		}
		s->ksyms[s->nksyms++] = (struct sym){addr, 0, xstrdup(name), data, false};
	}
	fclose(f);
	if (s->nksyms)
		qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), sym_cmp);
}

bool symbols_kernel(struct symbols *s, uint64_t addr, bool data, struct sym_loc *out)
{
	const struct sym *k;

	memset(out, 0, sizeof(*out));
	out->obj = "[kernel]";
	if (!s->kread)
		kallsyms_read(s);
	if (!s->nksyms || addr < s->ksyms[0].addr)
		return false;
	k = sym_find(s->ksyms, s->nksyms, addr, data);
	/* A data symbol far below addr is not what holds it (slab memory,
	 * or a label before a large area). */
	if (!k || (data && addr - k->addr >= 4096))
		return false;
	out->func = k->name;
	out->off = addr - k->addr;
	return true;
}

/* Add the FUNC and OBJECT symbols of one symbol table section. */
static void elf_add_syms(struct elfobj *o, Elf_Scn *scn, GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	for (i = 0; d && i < n; i++) {
		const char *name;
		int t;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value || sym.st_shndx == SHN_UNDEF)
			continue;
		t = GELF_ST_TYPE(sym.st_info);
		if (t != STT_FUNC && t != STT_OBJECT && t != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(o->elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (o->nsyms == *cap) {
			*cap = *cap ? *cap * 2 : 1024;
			o->syms = xreallocarray(o->syms, *cap, sizeof(*o->syms));
		}
		o->syms[o->nsyms++] = (struct sym){sym.st_value, sym.st_size, xstrdup(name),
						   t == STT_OBJECT, true};
	}
}

/* Open path (as process pid sees it) and read its symbols and segments. */
static struct elfobj *elfobj_open(uint32_t pid, const char *path, dev_t dev, ino_t ino)
{
	struct elfobj *o = xcalloc(1, sizeof(*o));
	char full[PATH_MAX + 32];
	size_t cap = 0, i, n;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	o->path = xstrdup(path);
	o->dev = dev;
	o->ino = ino;
	snprintf(full, sizeof(full), "/proc/%u/root%s", pid, path);
	o->fd = open(full, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		o->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		return o;
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF)
		return o;
	while ((scn = elf_nextscn(o->elf, scn))) {
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			elf_add_syms(o, scn, &sh, &cap);
	}
	if (o->nsyms)
		qsort(o->syms, o->nsyms, sizeof(*o->syms), sym_cmp);
	if (!elf_getphdrnum(o->elf, &n)) {
		o->loads = xcalloc(n ? n : 1, sizeof(*o->loads));
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(o->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				o->loads[o->nloads++] = (typeof(*o->loads)){ph.p_offset, ph.p_vaddr,
									   ph.p_filesz, ph.p_memsz};
		}
	}
	o->lines = xcalloc(LINE_CACHE, sizeof(*o->lines));
	return o;
}

static void elfobj_free(struct elfobj *o)
{
	size_t i;

	for (i = 0; i < o->nsyms; i++)
		free(o->syms[i].name);
	free(o->syms);
	free(o->loads);
#ifdef HAVE_LIBDW
	if (o->dw)
		dwarf_end(o->dw);
#endif
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	for (i = 0; i < o->nfiles; i++)
		free(o->files[i]);
	free(o->files);
	free(o->lines);
	free(o->path);
	free(o);
}

/* Return the cached object for (path, dev, ino), opening it once. */
static struct elfobj *elfobj_get(struct symbols *s, uint32_t pid, const char *path, dev_t dev,
				 ino_t ino)
{
	size_t i;

	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i]->ino == ino && s->objs[i]->dev == dev &&
		    !strcmp(s->objs[i]->path, path))
			return s->objs[i];
	s->objs = xreallocarray(s->objs, s->nobjs + 1, sizeof(*s->objs));
	return s->objs[s->nobjs++] = elfobj_open(pid, path, dev, ino);
}

/* Return the vaddr span of o's segments in *lo, *hi; false without segments. */
static bool elfobj_span(const struct elfobj *o, uint64_t *lo, uint64_t *hi)
{
	size_t i;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < o->nloads; i++) {
		if (o->loads[i].vaddr < *lo)
			*lo = o->loads[i].vaddr;
		if (o->loads[i].vaddr + o->loads[i].memsz > *hi)
			*hi = o->loads[i].vaddr + o->loads[i].memsz;
	}
	return *hi > *lo;
}

static void proc_clear(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		free(p->maps[i].name);
	free(p->maps);
	free(p->exe);
	p->maps = NULL;
	p->nmaps = 0;
	p->exe = NULL;
}

/*
 * Read /proc/PID/maps into p: one pmap per object (biased), one per named
 * anonymous area.  When the process is gone, p keeps what it had: its
 * samples and waits are still being symbolized.  Gone includes exited and
 * not yet reaped (a zombie, or one in exit), whose maps open and read empty:
 * the maps are read into q and take p's place only when there are some.
 */
static void proc_read(struct symbols *s, struct proc *p)
{
	struct proc fresh = {.pid = p->pid}, *q = &fresh;
	char path[64], line[PATH_MAX + 128], exe[PATH_MAX];
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	FILE *f;
	ssize_t n;

	p->read_at = time(NULL);
	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	f = fopen(path, "r");
	if (!f)
		return;		/* gone: what was read before stays */
	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		q->exe = xstrdup(exe);
	}
	while (fgets(line, sizeof(line), f)) {
		char perms[8], name[PATH_MAX] = "";
		struct elfobj *o;
		uint64_t lo, hi;
		size_t i;
		int used = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &used) < 7)
			continue;
		if (used)
			sscanf(line + used, "%4095[^\n]", name);
		if (name[0] != '/') {
			q->maps = xreallocarray(q->maps, q->nmaps + 1, sizeof(*q->maps));
			q->maps[q->nmaps++] = (struct pmap){NULL, xstrdup(name[0] ? name : "[anon]"),
							    start, end, 0};
			continue;
		}
		for (i = 0; i < q->nmaps; i++)
			if (q->maps[i].obj && !strcmp(q->maps[i].obj->path, name))
				break;
		if (i < q->nmaps)
			continue;	/* the object's first mapping placed it already */
		o = elfobj_get(s, q->pid, name, makedev(maj, min), (ino_t)ino);
		if (!elfobj_span(o, &lo, &hi))
			continue;
		for (i = 0; i < o->nloads; i++) {
			uint64_t seg = o->loads[i].off & ~4095ULL;

			if (pgoff >= seg && pgoff < o->loads[i].off + o->loads[i].filesz + 4096) {
				uint64_t bias = start - ((o->loads[i].vaddr & ~4095ULL) + (pgoff - seg));

				q->maps = xreallocarray(q->maps, q->nmaps + 1, sizeof(*q->maps));
				q->maps[q->nmaps++] = (struct pmap){o, NULL, lo + bias, hi + bias, bias};
				break;
			}
		}
	}
	fclose(f);
	if (!q->nmaps) {
		proc_clear(q);
		return;		/* exited, not reaped: what was read before stays */
	}
	proc_clear(p);
	p->exe = q->exe;
	p->maps = q->maps;
	p->nmaps = q->nmaps;
}

/* Return the cache entry of pid, reading its maps when new. */
static struct proc *proc_get(struct symbols *s, uint32_t pid)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (s->nprocs >= MAX_PIDS) {
		proc_clear(&s->procs[0]);
		memmove(s->procs, s->procs + 1, (s->nprocs - 1) * sizeof(*s->procs));
		s->nprocs--;
	}
	s->procs = xreallocarray(s->procs, s->nprocs + 1, sizeof(*s->procs));
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	proc_read(s, p);
	return p;
}

/* Return an interned copy of file's base name in o. */
static const char *elfobj_file(struct elfobj *o, const char *file)
{
	const char *base = strrchr(file, '/');
	size_t i;

	base = base ? base + 1 : file;
	for (i = 0; i < o->nfiles; i++)
		if (!strcmp(o->files[i], base))
			return o->files[i];
	o->files = xreallocarray(o->files, o->nfiles + 1, sizeof(*o->files));
	return o->files[o->nfiles++] = xstrdup(base);
}

/* Fill loc's file and line for vaddr in o from DWARF, when there is any. */
static void elfobj_line(struct elfobj *o, uint64_t vaddr, struct sym_loc *loc)
{
	struct line_ent *e;

	if (!o->lines)
		return;
	e = &o->lines[(vaddr >> 1) % LINE_CACHE];
	if (e->vaddr != vaddr) {
		e->vaddr = vaddr;
		e->file = NULL;
		e->line = 0;
#ifdef HAVE_LIBDW
		if (!o->dw_tried) {
			o->dw_tried = true;
			o->dw = o->elf ? dwarf_begin_elf(o->elf, DWARF_C_READ, NULL) : NULL;
		}
		if (o->dw) {
			Dwarf_Die cu;
			Dwarf_Line *l;
			const char *src;
			int line;

			if (dwarf_addrdie(o->dw, vaddr, &cu) && (l = dwarf_getsrc_die(&cu, vaddr)) &&
			    !dwarf_lineno(l, &line) && (src = dwarf_linesrc(l, NULL, NULL))) {
				e->file = elfobj_file(o, src);
				e->line = line;
			}
		}
#endif
	}
	loc->file = e->file;
	loc->line = e->line;
}

/* Find the mapping of p covering addr. */
static const struct pmap *proc_find(const struct proc *p, uint64_t addr)
{
	const struct pmap *anon = NULL;
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		if (addr < p->maps[i].start || addr >= p->maps[i].end)
			continue;
		if (p->maps[i].obj)
			return &p->maps[i];
		anon = &p->maps[i];
	}
	return anon;
}

void symbols_note(struct symbols *s, uint32_t pid, uint64_t addr)
{
	struct proc *p = proc_get(s, pid);

	if (addr && !proc_find(p, addr))
		proc_read(s, p);
}

bool symbols_user(struct symbols *s, uint32_t pid, uint64_t addr, bool ret, struct sym_loc *out)
{
	struct proc *p = proc_get(s, pid);
	const struct pmap *m = proc_find(p, addr);
	const struct sym *sy;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	if ((!m || !m->obj) && time(NULL) != p->read_at) {
		proc_read(s, p);	/* mapped since, or the pid was reused */
		m = proc_find(p, addr);
	}
	if (!m)
		return false;
	if (!m->obj) {
		out->obj = m->name;
		return false;
	}
	out->obj = m->obj->path;
	out->main = p->exe && !strcmp(p->exe, m->obj->path);
	vaddr = addr - m->bias;
	sy = sym_find(m->obj->syms, m->obj->nsyms, vaddr, false);
	if (!sy)
		sy = sym_find(m->obj->syms, m->obj->nsyms, vaddr, true);
	if (sy) {
		out->func = sy->name;
		out->off = vaddr - sy->addr;
	} else {
		out->off = vaddr;
	}
	elfobj_line(m->obj, ret && vaddr ? vaddr - 1 : vaddr, out);
	return true;
}

const char *sym_format(const struct sym_loc *loc, uint64_t addr, bool with_off, char *buf,
		       size_t len)
{
	const char *obj = loc->obj ? strrchr(loc->obj, '/') : NULL;
	size_t o;

	obj = obj ? obj + 1 : loc->obj;
	if (loc->func && with_off && loc->off)
		o = (size_t)snprintf(buf, len, "%s+0x%llx", loc->func, (unsigned long long)loc->off);
	else if (loc->func)
		o = (size_t)snprintf(buf, len, "%s", loc->func);
	else if (obj)
		o = (size_t)snprintf(buf, len, "%s+0x%llx", obj,
				     (unsigned long long)(loc->off ? loc->off : addr));
	else
		o = (size_t)snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	if (loc->file && o < len)
		snprintf(buf + o, len - o, " (%s:%d)", loc->file, loc->line);
	return buf;
}

void symbols_free(struct symbols *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nksyms; i++)
		free(s->ksyms[i].name);
	free(s->ksyms);
	for (i = 0; i < s->nobjs; i++)
		elfobj_free(s->objs[i]);
	free(s->objs);
	for (i = 0; i < s->nprocs; i++)
		proc_clear(&s->procs[i]);
	free(s->procs);
	free(s);
}
