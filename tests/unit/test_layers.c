/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The source tree keeps its layers (core <- probes <- queries <- tui: nothing
 * includes a layer above its own) and its libbpf-free rule (the Makefile's
 * NOBPF_SRCS: core/, queries/, probes/views.c and every probes/VIEW/ file
 * but VIEW.c and VIEW.bpf.c include neither libbpf nor a skeleton, through
 * any header).  Run from the top of the tree, as tests/run.sh does.
 */
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

static const char *const layers[] = {"core/", "probes/", "queries/", "tui/"};
#define NLAYERS (sizeof(layers) / sizeof(layers[0]))

/* The layer of path (an index into layers), or -1 (latop.c, tests). */
static int layer_of(const char *path)
{
	for (size_t i = 0; i < NLAYERS; i++)
		if (!strncmp(path, layers[i], strlen(layers[i])))
			return (int)i;
	return -1;
}

/* Resolve the quoted include inc of file into out (a path from the top); false if absent. */
static bool resolve(const char *file, const char *inc, char *out, size_t len)
{
	char dir[PATH_MAX], joined[PATH_MAX * 2], real[PATH_MAX], top[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", file);
	snprintf(joined, sizeof(joined), "%s/%s", dirname(dir), inc);
	if (!realpath(joined, real) && !realpath(inc, real))
		return false;
	if (!getcwd(top, sizeof(top)))
		return false;
	if (strncmp(real, top, strlen(top)) || real[strlen(top)] != '/')
		return false;
	snprintf(out, len, "%s", real + strlen(top) + 1);
	return true;
}

/*
 * Check file and, when deep, every header it includes: no libbpf and no
 * skeleton; for root (the file the walk began at), no header of a layer
 * above its own.  Return the problems found (one message each).
 */
static int check(const char *root, const char *file, bool nobpf, int depth)
{
	char line[1024], inc[512], path[PATH_MAX];
	FILE *f = fopen(file, "r");
	int bad = 0, mine = layer_of(root);

	if (!f) {
		printf("# cannot open %s\n", file);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " # include <%511[^>]>", inc) == 1) {
			if (nobpf && !strncmp(inc, "bpf/", 4)) {
				printf("# %s: includes <%s> (through %s)\n", root, inc, file);
				bad++;
			}
			continue;
		}
		if (sscanf(line, " # include \"%511[^\"]\"", inc) != 1)
			continue;
		if (strstr(inc, ".skel.h") || !strcmp(inc, "vmlinux.h")) {
			if (nobpf) {
				printf("# %s: includes %s (through %s)\n", root, inc, file);
				bad++;
			}
			continue;
		}
		if (!strcmp(inc, "probe_list.h") || !resolve(file, inc, path, sizeof(path)))
			continue;
		if (mine >= 0 && layer_of(path) > mine) {
			printf("# %s: includes %s, a layer above (through %s)\n", root, path, file);
			bad++;
		}
		if (depth < 8)
			bad += check(root, path, nobpf, depth + 1);
	}
	fclose(f);
	return bad;
}

/* Every .c and .h under the layers: which are libbpf-free, and each one's check. */
static void test_tree(void)
{
	static const char *const pats[] = {"core/*.[ch]", "probes/*.[ch]", "probes/*/*.[ch]",
					   "queries/*.[ch]", "tui/*.[ch]"};
	int files = 0, nobpf_files = 0, layer_bad = 0, bpf_bad = 0;
	glob_t g;

	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		if (glob(pats[p], 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *file = g.gl_pathv[i];
			char view[256], probe[600];
			bool nobpf = false;
			int in_view = 0;

			if (strstr(file, ".bpf."))
				continue;
			if (!strncmp(file, "core/", 5) || !strncmp(file, "queries/", 8) ||
			    !strcmp(file, "probes/views.c") || !strcmp(file, "probes/views.h")) {
				nobpf = true;
			} else if (sscanf(file, "probes/%255[^/]/%n", view, &in_view) == 1 && in_view) {
				snprintf(probe, sizeof(probe), "probes/%s/%s.c", view, view);
				nobpf = strcmp(file, probe) != 0;
			}
			files++;
			nobpf_files += nobpf;
			int bad = check(file, file, nobpf, 0);
			if (nobpf)
				bpf_bad += bad;
			else
				layer_bad += bad;
		}
		globfree(&g);
	}
	ok(files > 50, "the tree's sources are found from the top (%d files)", files);
	ok(nobpf_files > 30 && bpf_bad == 0,
	   "%d libbpf-free files include neither libbpf, a skeleton nor a layer above, through any header",
	   nobpf_files);
	ok(layer_bad == 0, "no other file includes a layer above its own");
}

int main(void)
{
	test_tree();
	tap_done();
}
