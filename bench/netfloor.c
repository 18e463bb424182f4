/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * netfloor: load and attach every program of a BPF object file (by default
 * the empty programs of netfloor.bpf.c, the flows probe's hooks), then wait
 * for SIGINT/SIGTERM.
 *
 *   netfloor [-o OBJECT] [-r READY_FILE] [-t MAX_SECONDS]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop_requested;

/* Note that a signal asked us to finish. */
static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Keep libbpf quiet: failures are reported by what they return. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	const char *obj_path = ".output/bench/netfloor.bpf", *ready = NULL;
	struct bpf_object *obj;
	struct bpf_program *prog;
	unsigned max_s = 600, waited = 0;
	int opt, err, n = 0;

	while ((opt = getopt(argc, argv, "o:r:t:")) != -1) {
		switch (opt) {
		case 'o': obj_path = optarg; break;
		case 'r': ready = optarg; break;
		case 't': max_s = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: netfloor [-o OBJECT] [-r READY_FILE] [-t MAX_SECONDS]\n");
			return 2;
		}
	}
	libbpf_set_print(print_libbpf);
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "netfloor: opening %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "netfloor: loading %s: %s\n", obj_path, strerror(-err));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "netfloor: attaching %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return 1;
		}
		n++;
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	fprintf(stderr, "netfloor: %d empty programs attached\n", n);
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	while (!stop_requested && waited++ < max_s * 10)
		usleep(100000);
	bpf_object__close(obj);
	return 0;
}
