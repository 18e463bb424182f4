/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Open, read and close per-CPU perf counters with perf_event_open(2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../core/xalloc.h"
#include "perf_event.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} perf_names[] = {
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
};

bool perf_event_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	size_t i;

	for (i = 0; i < sizeof(perf_names) / sizeof(perf_names[0]); i++) {
		if (!strcmp(perf_names[i].name, name)) {
			*type = perf_names[i].type;
			*config = perf_names[i].config;
			return true;
		}
	}
	return false;
}

/* Call perf_event_open(2), which glibc does not wrap. */
static int sys_perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

struct perf_counters *perf_counters_open(const char *name, int *err, char **cause)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct perf_counters *c;
	int cpu, nopen = 0, first_err = 0;
	uint64_t config;
	uint32_t type;

	*err = 0;
	if (!perf_event_lookup(name, &type, &config)) {
		*err = EINVAL;
		*cause = xasprintf("perf counter '%s' is unknown to latop", name);
		return NULL;
	}
	attr.type = type;
	attr.config = config;
	c = xcalloc(1, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		*err = -c->ncpus;
		*cause = xasprintf("perf counter '%s': cannot count the CPUs (%s)", name,
				   strerror(-c->ncpus));
		free(c);
		return NULL;
	}
	c->fds = xcalloc(c->ncpus, sizeof(*c->fds));
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		c->fds[cpu] = sys_perf_event_open(&attr, cpu);
		if (c->fds[cpu] >= 0)
			nopen++;
		else if (errno != ENODEV && !first_err)
			first_err = errno;
	}
	if (nopen == 0 || first_err) {
		*err = first_err ? first_err : ENODEV;
		*cause = xasprintf("perf counter '%s': perf_event_open: %s%s", name,
				   strerror(*err),
				   *err == ENOENT || *err == EOPNOTSUPP ?
				   " (this machine has no such counter)" : "");
		perf_counters_free(c);
		return NULL;
	}
	return c;
}

uint64_t perf_counters_read(const struct perf_counters *c)
{
	uint64_t sum = 0, v;
	int cpu;

	for (cpu = 0; cpu < c->ncpus; cpu++)
		if (c->fds[cpu] >= 0 && read(c->fds[cpu], &v, sizeof(v)) == sizeof(v))
			sum += v;
	return sum;
}

int perf_counters_to_map(const struct perf_counters *c, int map_fd, char **cause)
{
	uint32_t cpu;

	for (cpu = 0; cpu < (uint32_t)c->ncpus; cpu++) {
		if (c->fds[cpu] < 0)
			continue;
		if (bpf_map_update_elem(map_fd, &cpu, &c->fds[cpu], BPF_ANY)) {
			*cause = xasprintf("perf counter '%s': storing cpu %u in its map: %s",
					   c->name, cpu, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Close every CPU's counter and free c. */
void perf_counters_free(struct perf_counters *c)
{
	int cpu;

	if (!c)
		return;
	for (cpu = 0; cpu < c->ncpus; cpu++)
		if (c->fds[cpu] >= 0)
			close(c->fds[cpu]);
	free(c->fds);
	free(c);
}
