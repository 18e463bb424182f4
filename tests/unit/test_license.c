/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The tree's licenses hold together (README.md, License): every C source and
 * header names its license in an SPDX line among its first lines, either
 * GPL-3.0-or-later (user space, which links GNU readline) or GPL-2.0 OR
 * BSD-2-Clause; everything compiled into a BPF object (a .bpf.c and the
 * headers it includes, at any depth) is the latter, so that the objects'
 * "Dual BSD/GPL" is true; and every BPF object built declares, in its
 * "license" section, a license the kernel takes as GPL-compatible (which
 * GPL-only helpers need).  Run from the top of the tree, after the build.
 */
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

#define USER_LICENSE "GPL-3.0-or-later"
#define BPF_LICENSE "GPL-2.0 OR BSD-2-Clause"

/* What the kernel's license_is_gpl_compatible() accepts. */
static const char *const gpl_compatible[] = {
	"GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL",
	"Dual MPL/GPL",
};

static char *sources[1024];
static size_t nsources;

/* Collect the .c and .h files of the tree, leaving out build output and .git. */
static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)st;
	if (type == FTW_D && ftw->level == 1 && strstr(path, "/."))
		return FTW_SKIP_SUBTREE;
	if (type == FTW_F && n > 2 && path[n - 2] == '.' && (path[n - 1] == 'c' || path[n - 1] == 'h') &&
	    nsources < sizeof(sources) / sizeof(sources[0]))
		sources[nsources++] = strdup(path + 2);	/* without "./" */
	return FTW_CONTINUE;
}

/* The SPDX license of file among its first five lines, into buf; false if none. */
static bool spdx_of(const char *file, char *buf, size_t n)
{
	char line[512], *p, *e;
	FILE *f = fopen(file, "r");
	bool found = false;

	for (int i = 0; f && i < 5 && !found && fgets(line, sizeof(line), f); i++) {
		if (!(p = strstr(line, "SPDX-License-Identifier: ")))
			continue;
		p += strlen("SPDX-License-Identifier: ");
		e = strstr(p, " */");
		if (!e)
			e = p + strcspn(p, "\n");
		snprintf(buf, n, "%.*s", (int)(e - p), p);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* Whether a .bpf.c includes file, directly or through its headers. */
static bool in_bpf[1024];

/* Mark file and the quoted includes it reaches (found beside it) as BPF code. */
static void mark_bpf(const char *file, int depth)
{
	char line[512], inc[256], dir[PATH_MAX], path[PATH_MAX * 2], real[PATH_MAX], top[PATH_MAX];
	FILE *f;

	for (size_t i = 0; i < nsources; i++) {
		if (strcmp(sources[i], file))
			continue;
		if (in_bpf[i])
			return;
		in_bpf[i] = true;
	}
	if (depth > 8 || !(f = fopen(file, "r")) || !getcwd(top, sizeof(top)))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " # include \"%255[^\"]\"", inc) != 1)
			continue;
		snprintf(dir, sizeof(dir), "%s", file);
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), inc);
		if (realpath(path, real) && !strncmp(real, top, strlen(top)) &&
		    real[strlen(top)] == '/')
			mark_bpf(real + strlen(top) + 1, depth + 1);
	}
	fclose(f);
}

/* Every source's SPDX line, and the BPF sources' dual license. */
static void test_spdx(void)
{
	char lic[128];
	int missing = 0, unknown = 0, bpf_wrong = 0, nbpf = 0;

	nftw(".", collect, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	for (size_t i = 0; i < nsources; i++)
		if (strstr(sources[i], ".bpf.c"))
			mark_bpf(sources[i], 0);
	for (size_t i = 0; i < nsources; i++) {
		nbpf += in_bpf[i];
		if (!spdx_of(sources[i], lic, sizeof(lic))) {
			printf("# %s: no SPDX-License-Identifier line in its first 5 lines\n",
			       sources[i]);
			missing++;
		} else if (strcmp(lic, USER_LICENSE) && strcmp(lic, BPF_LICENSE)) {
			printf("# %s: license '%s' is neither " USER_LICENSE " nor " BPF_LICENSE "\n",
			       sources[i], lic);
			unknown++;
		} else if (in_bpf[i] && strcmp(lic, BPF_LICENSE)) {
			printf("# %s: compiled into a BPF object, but its license is '%s', not "
			       BPF_LICENSE "\n", sources[i], lic);
			bpf_wrong++;
		}
	}
	ok(nsources > 100, "the tree's C sources are found from the top (%zu files)", nsources);
	ok(missing == 0, "every .c and .h has an SPDX-License-Identifier line (%d lack one)", missing);
	ok(unknown == 0, "every SPDX line says " USER_LICENSE " or " BPF_LICENSE);
	ok(nbpf > 10 && bpf_wrong == 0,
	   "the %d files compiled into BPF objects are " BPF_LICENSE, nbpf);
	for (size_t i = 0; i < nsources; i++)
		free(sources[i]);
}

/* The "license" section of the ELF object at path, into buf; false if none. */
static bool elf_license(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			const char *name;

			if (!gelf_getshdr(scn, &sh) ||
			    !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, "license"))
				continue;
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf && d->d_size) {
				snprintf(buf, n, "%.*s", (int)strnlen(d->d_buf, d->d_size),
					 (const char *)d->d_buf);
				found = true;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* Every view's BPF object (and any bench object built) declares a GPL-compatible license. */
static void test_objects(void)
{
	static const char *const pats[] = {".output/*.bpf.o", ".output/bench/*.bpf"};
	char lic[128], obj[PATH_MAX];
	int views = 0, built = 0, bad = 0, checked = 0;
	glob_t g;

	elf_version(EV_CURRENT);
	/* each probes/VIEW/VIEW.bpf.c has been built, so none is left out */
	if (glob("probes/*/*.bpf.c", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char view[256];

			if (sscanf(g.gl_pathv[i], "probes/%255[^/]/", view) != 1)
				continue;
			snprintf(obj, sizeof(obj), ".output/%s.bpf.o", view);
			views++;
			built += access(obj, R_OK) == 0;
		}
		globfree(&g);
	}
	ok(views >= 6 && built == views, "every view's BPF object is built (%d of %d)", built, views);
	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		if (glob(pats[p], 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			bool good = false;

			checked++;
			if (!elf_license(g.gl_pathv[i], lic, sizeof(lic))) {
				printf("# %s: no license section\n", g.gl_pathv[i]);
				bad++;
				continue;
			}
			for (size_t k = 0; k < sizeof(gpl_compatible) / sizeof(gpl_compatible[0]); k++)
				good |= !strcmp(lic, gpl_compatible[k]);
			if (!good) {
				printf("# %s: license '%s' is not GPL-compatible for the kernel\n",
				       g.gl_pathv[i], lic);
				bad++;
			}
		}
		globfree(&g);
	}
	ok(checked >= views && bad == 0,
	   "the %d BPF objects built declare a GPL-compatible license", checked);
}

int main(void)
{
	test_spdx();
	test_objects();
	tap_done();
}
