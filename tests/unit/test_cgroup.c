/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cgroup ids named as paths, and the units and containers paths name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/cgroup.h"
#include "tap.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"

/* Paths as systemd, docker, containerd, CRI-O, podman and Kubernetes make them. */
static const struct {
	const char *path, *unit, *container;
} cases[] = {
	{"/", "", ""},
	{"/system.slice", "system.slice", ""},
	{"/system.slice/nginx.service", "nginx.service", ""},
	{"/system.slice/nginx.service/worker", "nginx.service", ""},
	{"/init.scope", "init.scope", ""},
	{"/system.slice/ssh.socket", "ssh.socket", ""},
	{"/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope",
	 "vte-spawn-1.scope", ""},
	{"/user.slice/user-1000.slice/session-3.scope", "session-3.scope", ""},
	{"/system.slice/docker-" ID ".scope", "docker-" ID ".scope", "3f4e5d6c7b8a"},
	{"/docker/" ID, "", "3f4e5d6c7b8a"},
	{"/system.slice/containerd.service", "containerd.service", ""},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/"
	 "cri-containerd-" ID ".scope", "cri-containerd-" ID ".scope", "3f4e5d6c7b8a"},
	{"/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/" ID, "", "3f4e5d6c7b8a"},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podx.slice/crio-" ID
	 ".scope", "crio-" ID ".scope", "3f4e5d6c7b8a"},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podx.slice/crio-conmon-"
	 ID ".scope", "crio-conmon-" ID ".scope", ""},
	{"/machine.slice/libpod-" ID ".scope/container", "libpod-" ID ".scope", "3f4e5d6c7b8a"},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
	 "libpod-" ID ".scope", "3f4e5d6c7b8a"},
	{"/docker/" ID "/nested", "", "3f4e5d6c7b8a"},
	{"/docker/3f4e5d6c7b8a", "", ""},		/* not a whole id */
	{"/docker/" ID "0", "", ""},			/* 65 digits */
	{"/system.slice/docker-3F4E.scope", "docker-3F4E.scope", ""},
	{"/latop-test-a", "", ""},
	{"/x.slicex/y.servicey", "", ""},
};

/* Unit and container of each path. */
static void test_derive(void)
{
	char u[CGROUP_PATH_MAX], c[CGROUP_PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cgroup_unit(cases[i].path, u, sizeof(u));
		cgroup_container(cases[i].path, c, sizeof(c));
		ok(!strcmp(u, cases[i].unit) && !strcmp(c, cases[i].container),
		   "%s: unit '%s' container '%s'", cases[i].path, cases[i].unit, cases[i].container);
		if (strcmp(u, cases[i].unit) || strcmp(c, cases[i].container))
			printf("#   got unit '%s' container '%s'\n", u, c);
	}
	ok(!strcmp(cgroup_unit("/a.service", u, 4), "a.s"),
	   "a unit longer than the buffer is cut, NUL-terminated");
}

static uint64_t ino(const char *p)
{
	struct stat st;

	return stat(p, &st) ? 0 : (uint64_t)st.st_ino;
}

/* Ids of a tree of directories named by their paths; removed ones keep theirs. */
static void test_resolve(void)
{
	char tmpl[] = "/tmp/latop-cg-XXXXXX", p[CGROUP_PATH_MAX], buf[CGROUP_PATH_MAX], *cause = NULL;
	uint64_t id, a, ab;
	unsigned lv;

	ok(mkdtemp(tmpl) != NULL, "a temporary tree");
	snprintf(p, sizeof(p), "%s/a", tmpl);
	mkdir(p, 0700);
	a = ino(p);
	snprintf(p, sizeof(p), "%s/a/b.service", tmpl);
	mkdir(p, 0700);
	ab = ino(p);
	cgroup_set_root(tmpl);
	ok(!strcmp(cgroup_root(), tmpl), "the root set is the root");
	ok(!strcmp(cgroup_path(ino(tmpl), buf, sizeof(buf)), "/"), "the root is /");
	ok(!strcmp(cgroup_path(a, buf, sizeof(buf)), "/a"), "a is /a (%s)", buf);
	ok(!strcmp(cgroup_path(ab, buf, sizeof(buf)), "/a/b.service"), "b is /a/b.service (%s)", buf);
	ok(!strcmp(cgroup_path(0, buf, sizeof(buf)), ""), "id 0 is empty");
	snprintf(p, sizeof(p), "cgroup:%llu", 987654321ull);
	ok(!strcmp(cgroup_path(987654321, buf, sizeof(buf)), p), "an unknown id is cgroup:ID (%s)",
	   buf);

	ok(cgroup_lookup("/a/b.service", &id, &lv, &cause) == 0 && id == ab && lv == 2,
	   "lookup /a/b.service: its id, level 2");
	ok(cgroup_lookup("a//b.service/", &id, &lv, &cause) == 0 && id == ab && lv == 2,
	   "lookup a//b.service/ is the same");
	snprintf(p, sizeof(p), "%s/a", tmpl);
	ok(cgroup_lookup(p, &id, &lv, &cause) == 0 && id == a && lv == 1,
	   "lookup of the full path %s: level 1", p);
	ok(cgroup_lookup("/", &id, &lv, &cause) == 0 && id == ino(tmpl) && lv == 0,
	   "lookup of /: the root, level 0");
	ok(cgroup_lookup("/nope", &id, &lv, &cause) == -1 && cause && strstr(cause, "/nope"),
	   "lookup of a missing cgroup fails naming it (%s)", cause ? cause : "");
	free(cause);
	cause = NULL;
	ok(cgroup_lookup("/a/../a", &id, &lv, &cause) == -1, "'..' is refused");
	free(cause);
	cause = NULL;

	/* A cgroup made after the first walk is found by the next. */
	snprintf(p, sizeof(p), "%s/c", tmpl);
	mkdir(p, 0700);
	sleep(1);
	ok(!strcmp(cgroup_path(ino(p), buf, sizeof(buf)), "/c"), "a new cgroup is found (%s)", buf);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a/b.service", tmpl);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a", tmpl);
	rmdir(p);
	rmdir(tmpl);
	ok(!strcmp(cgroup_path(ab, buf, sizeof(buf)), "/a/b.service"),
	   "a removed cgroup keeps its name (%s)", buf);
	cgroup_set_root(NULL);
}

int main(void)
{
	test_derive();
	test_resolve();
	tap_done();
}
