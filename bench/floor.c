/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * floor: load and attach the empty programs of floor.bpf.c (the hooks of the
 * syscalls probe), then wait for SIGINT/SIGTERM.  A program the kernel
 * refuses (fentry where it is not permitted, a missing tracepoint) is left
 * out and named, as latop's probe leaves out its optional hooks.
 *
 *   floor [-p PROG,...] [-r READY_FILE] [-t MAX_SECONDS] [-v]
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

#define MAX_PROGS 64

static volatile sig_atomic_t stop_requested;
static bool verbose;

struct opts {
	const char *only;	/* comma-separated program names, or NULL for all */
	const char *ready;	/* file to create once attached */
	unsigned max_s;		/* exit after this long even without a signal */
};

/* Note that a signal asked us to finish. */
static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Pass libbpf's messages through only with -v. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* Return whether name is in the comma-separated list (NULL: everything is). */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	if (!list)
		return true;
	while (p && *p) {
		if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* Return whether prog is an fentry/fexit program. */
static bool is_fentry(const struct bpf_program *prog)
{
	enum bpf_attach_type t = bpf_program__expected_attach_type(prog);

	return t == BPF_TRACE_FENTRY || t == BPF_TRACE_FEXIT;
}

/* Open the skeleton with autoload set from want[] (indexed in program order). */
static struct floor_bpf *open_with(const bool *want)
{
	struct floor_bpf *skel = floor_bpf__open();
	struct bpf_program *prog;
	size_t i = 0;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, want[i++]);
	return skel;
}

/* Try to load only program idx; return 0 or a negative errno. */
static int try_one(size_t idx)
{
	bool want[MAX_PROGS] = {0};
	struct floor_bpf *skel;
	int err;

	want[idx] = true;
	skel = open_with(want);
	if (!skel)
		return -errno;
	err = floor_bpf__load(skel);
	floor_bpf__destroy(skel);
	return err;
}

/* Open and load every wanted program the kernel accepts; say which it refuses. */
static struct floor_bpf *load_accepted(const char *only, size_t *nprogs)
{
	bool want[MAX_PROGS] = {0};
	struct floor_bpf *skel;
	struct bpf_program *prog;
	size_t n = 0;

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open the BPF object: %s\n", strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		if (n == MAX_PROGS)
			break;
		want[n++] = in_list(only, bpf_program__name(prog));
	}
	*nprogs = n;
	floor_bpf__destroy(skel);

	/* Everything at once first, then without fentry/fexit, then one by one. */
	for (int pass = 0; pass < 3; pass++) {
		size_t i = 0;

		if (pass == 1) {
			skel = floor_bpf__open();
			if (!skel)
				return NULL;
			bpf_object__for_each_program(prog, skel->obj) {
				if (want[i] && is_fentry(prog)) {
					want[i] = false;
					fprintf(stderr, "floor: leaving out %s (fentry/fexit)\n",
						bpf_program__name(prog));
				}
				i++;
			}
			floor_bpf__destroy(skel);
		} else if (pass == 2) {
			for (i = 0; i < n; i++) {
				int err;

				if (!want[i] || (err = try_one(i)) == 0)
					continue;
				want[i] = false;
				fprintf(stderr, "floor: leaving out program %zu: %s\n", i, strerror(-err));
			}
		}
		skel = open_with(want);
		if (!skel)
			return NULL;
		if (floor_bpf__load(skel) == 0)
			return skel;
		floor_bpf__destroy(skel);
	}
	fprintf(stderr, "floor: the kernel accepts none of the programs\n");
	return NULL;
}

/* Attach every loaded program into links[]; return how many attached. */
static int attach_loaded(struct floor_bpf *skel, struct bpf_link **links)
{
	struct bpf_program *prog;
	int nattached = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			fprintf(stderr, "floor: cannot attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			continue;
		}
		links[nattached] = link;
		fprintf(stderr, "floor: attached %s (%s)\n", bpf_program__name(prog),
			bpf_program__section_name(prog));
		nattached++;
	}
	return nattached;
}

/* Parse the command line into o; return 0, or -1 after printing the usage. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){.max_s = 3600};
	while ((c = getopt(argc, argv, "p:r:t:vh")) != -1) {
		switch (c) {
		case 'p': o->only = optarg; break;
		case 'r': o->ready = optarg; break;
		case 't': o->max_s = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'v': verbose = true; break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: floor [-p PROG,...] [-r READY_FILE] [-t MAX_SECONDS] [-v]\n"
				"Attach empty programs on the syscalls probe's hooks until SIGINT/SIGTERM.\n");
			return -1;
		}
	}
	return optind < argc ? -1 : 0;
}

/* Load and attach the floor, then wait for a signal or the time limit. */
int main(int argc, char **argv)
{
	struct sigaction sa = {0};
	struct bpf_link *links[MAX_PROGS] = {0};
	struct floor_bpf *skel;
	struct opts o;
	size_t nprogs = 0;
	int nattached, rc = 0;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	libbpf_set_print(print_libbpf);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = load_accepted(o.only, &nprogs);
	if (!skel)
		return 1;
	nattached = attach_loaded(skel, links);
	fprintf(stderr, "floor: %d of %zu programs attached\n", nattached, nprogs);
	if (nattached == 0) {
		rc = 1;
		goto out;
	}
	if (o.ready) {
		FILE *f = fopen(o.ready, "w");
		int bad = !f || fprintf(f, "%d\n", nattached) < 0;

		if ((f && fclose(f) != 0) || bad) {
			fprintf(stderr, "floor: cannot write %s: %s\n", o.ready, strerror(errno));
			rc = 1;
			goto out;
		}
	}
	for (unsigned s = 0; s < o.max_s * 10 && !stop_requested; s++)
		usleep(100000);
out:
	for (int i = 0; i < nattached; i++)
		bpf_link__destroy(links[i]);
	floor_bpf__destroy(skel);
	return rc;
}
