/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Cgroup identity: the cgroup v2 id the kernel gives a task
 * (bpf_get_current_cgroup_id: its cgroup's kernfs node id, which on 64-bit
 * is the inode number of the cgroup's directory) named as its path under
 * the cgroup2 mount, and the systemd unit and container that path names.
 * Thread-safe.
 */
#ifndef LATOP_CGROUP_H
#define LATOP_CGROUP_H

#include <stdint.h>
#include <stddef.h>
#include "table.h"

#define CGROUP_PATH_MAX 4096
#define CGROUP_ID_SHORT 12	/* a container id as `docker ps` and `podman ps` show it */

/*
 * Return the directory the cgroup2 hierarchy is mounted on (the first
 * cgroup2 line of /proc/self/mountinfo: /sys/fs/cgroup on a v2 host,
 * /sys/fs/cgroup/unified on a hybrid one), or NULL when it is not mounted.
 */
const char *cgroup_root(void);

/* Use dir as the cgroup2 mount from now on (NULL: look it up again), and
 * forget every name known: for tests over a tree of plain directories. */
void cgroup_set_root(const char *dir);

/*
 * Write the path of cgroup id into buf (len bytes, CGROUP_PATH_MAX is
 * always enough) and return buf: "/" for the root, "/system.slice/x.service"
 * below it.  A cgroup that was removed keeps the last path it was seen at;
 * an id never seen (the tree is walked again on a miss, at most once a
 * second) reads "cgroup:ID"; id 0 (no task) reads "".
 */
const char *cgroup_path(uint64_t id, char *buf, size_t len);

/*
 * Find the cgroup at path: relative to the cgroup2 mount ("/x/y", "x/y")
 * or a full path under it ("/sys/fs/cgroup/unified/x/y").  0 with its id
 * and its level (the root is level 0, /x level 1), or -1 with *cause.
 */
int cgroup_lookup(const char *path, uint64_t *id, unsigned *level, char **cause);

/*
 * The systemd unit of a cgroup path: the last component ending in .service,
 * .scope, .socket, .mount, .swap (the units that run processes), else the
 * last ending in .slice, else "".  Returns buf.
 */
const char *cgroup_unit(const char *path, char *buf, size_t len);

/*
 * The container of a cgroup path, in its short form (the first
 * CGROUP_ID_SHORT hex digits, as `docker ps` shows it): the deepest
 * component that is a 64-hex-digit id, bare (cgroupfs drivers:
 * /docker/ID, /kubepods/burstable/podUID/ID) or as systemd names it
 * (docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope,
 * libpod-ID.scope, containerd-ID.scope); "" when none.  Returns buf.
 */
const char *cgroup_container(const char *path, char *buf, size_t len);

/*
 * The values of a cgroup field: any text (a recording names cgroups this
 * machine may not have); the kernel value of one is its id here, from
 * cgroup_lookup or written "cgroup:ID", else -1 (not pushed down).
 */
extern const struct field_domain cgroup_domain;

#endif
