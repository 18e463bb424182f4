/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cgroup ids named as paths; see cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cgroup.h"
#include "xalloc.h"

#define WALK_EVERY_NS 1000000000ull	/* a miss walks the tree at most this often */
#define WALK_DEPTH 32

struct cg_ent {
	uint64_t id;		/* 0: empty */
	char *path;
};

static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cg_root;		/* the mount, once looked up */
static bool cg_root_done;	/* looked up (cg_root NULL: not mounted) */
static struct cg_ent *cg_tab;
static size_t cg_cap, cg_n;
static uint64_t cg_walked_ns;	/* when the tree was last walked, 0 never */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Unescape mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

/* Find the cgroup2 mount in /proc/self/mountinfo; NULL when none.  Locked. */
static char *find_root(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *root = NULL;

	if (!f)
		return NULL;
	while (!root && fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint opts... - fstype source superopts */
		char *dash = strstr(line, " - "), *save, *tok, *mnt = NULL;
		int i;

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		*dash = 0;
		for (i = 0, tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
			if (i == 4)
				mnt = tok;
		if (mnt) {
			unescape(mnt);
			root = xstrdup(mnt);
		}
	}
	fclose(f);
	return root;
}

const char *cgroup_root(void)
{
	const char *r;

	pthread_mutex_lock(&cg_lock);
	if (!cg_root_done) {
		cg_root = find_root();
		cg_root_done = true;
	}
	r = cg_root;
	pthread_mutex_unlock(&cg_lock);
	return r;
}

/* Forget every name.  Locked. */
static void forget(void)
{
	for (size_t i = 0; i < cg_cap; i++)
		free(cg_tab[i].path);
	free(cg_tab);
	cg_tab = NULL;
	cg_cap = cg_n = 0;
	cg_walked_ns = 0;
}

void cgroup_set_root(const char *dir)
{
	pthread_mutex_lock(&cg_lock);
	forget();
	free(cg_root);
	cg_root = dir ? xstrdup(dir) : NULL;
	cg_root_done = dir != NULL;
	pthread_mutex_unlock(&cg_lock);
}

static size_t slot_of(uint64_t id, size_t cap)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ h >> 31) & (cap - 1);
}

/* Return id's entry, or the empty one it would take.  cg_cap > 0.  Locked. */
static struct cg_ent *find(uint64_t id)
{
	size_t i = slot_of(id, cg_cap);

	while (cg_tab[i].id && cg_tab[i].id != id)
		i = (i + 1) & (cg_cap - 1);
	return &cg_tab[i];
}

/* Name id path (a cgroup moved or renamed takes its new path).  Locked. */
static void remember(uint64_t id, const char *path)
{
	struct cg_ent *e;

	if (!id)
		return;
	if (2 * (cg_n + 1) > cg_cap) {
		struct cg_ent *old = cg_tab;
		size_t oldcap = cg_cap;

		cg_cap = cg_cap ? 2 * cg_cap : 256;
		cg_tab = xcalloc(cg_cap, sizeof(*cg_tab));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].id)
				*find(old[i].id) = old[i];
		free(old);
	}
	e = find(id);
	if (e->id) {
		if (!strcmp(e->path, path))
			return;
		free(e->path);
	} else {
		cg_n++;
	}
	e->id = id;
	e->path = xstrdup(path);
}

/* Name every cgroup under dir (the directory of path rel, depth deep).  Locked. */
static void walk(const char *dir, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > WALK_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char sub[CGROUP_PATH_MAX], subrel[CGROUP_PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= sizeof(sub) ||
		    (size_t)snprintf(subrel, sizeof(subrel), "%s/%s", *rel == '/' && !rel[1] ? "" : rel,
				     de->d_name) >= sizeof(subrel))
			continue;
		if (stat(sub, &st) || !S_ISDIR(st.st_mode))
			continue;
		remember((uint64_t)st.st_ino, subrel);
		walk(sub, subrel, depth + 1);
	}
	closedir(d);
}

/* Walk the whole tree again.  Locked. */
static void walk_all(void)
{
	struct stat st;

	if (!cg_root_done) {
		cg_root = find_root();
		cg_root_done = true;
	}
	cg_walked_ns = mono_ns();
	if (!cg_root || stat(cg_root, &st))
		return;
	remember((uint64_t)st.st_ino, "/");
	walk(cg_root, "/", 0);
}

const char *cgroup_path(uint64_t id, char *buf, size_t len)
{
	struct cg_ent *e = NULL;

	if (!len)
		return buf;
	if (!id) {
		*buf = 0;
		return buf;
	}
	pthread_mutex_lock(&cg_lock);
	if (cg_cap)
		e = find(id);
	if ((!e || !e->id) && (!cg_walked_ns || mono_ns() - cg_walked_ns >= WALK_EVERY_NS)) {
		walk_all();
		e = cg_cap ? find(id) : NULL;
	}
	if (e && e->id)
		snprintf(buf, len, "%s", e->path);
	else
		snprintf(buf, len, "cgroup:%" PRIu64, id);
	pthread_mutex_unlock(&cg_lock);
	return buf;
}

int cgroup_lookup(const char *path, uint64_t *id, unsigned *level, char **cause)
{
	const char *root = cgroup_root(), *rel = path;
	char full[CGROUP_PATH_MAX], norm[CGROUP_PATH_MAX];
	size_t rl, o = 0;
	struct stat st;
	unsigned lv = 0;

	if (!root) {
		*cause = xasprintf("no cgroup2 hierarchy is mounted (see /proc/self/mountinfo)");
		return -1;
	}
	rl = strlen(root);
	if (!strncmp(path, root, rl) && (path[rl] == '/' || !path[rl]))
		rel = path + rl;
	/* Normalise: one '/' between components, none at the end, "/" for the root. */
	for (const char *p = rel; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			*cause = xasprintf("cgroup '%s': '.' and '..' are not allowed", path);
			return -1;
		}
		if (o + n + 2 > sizeof(norm)) {
			*cause = xasprintf("cgroup '%s': path too long", path);
			return -1;
		}
		norm[o++] = '/';
		memcpy(norm + o, p, n);
		o += n;
		lv++;
		p += n;
	}
	if (!o)
		norm[o++] = '/';
	norm[o] = 0;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, lv ? norm : "") >= sizeof(full)) {
		*cause = xasprintf("cgroup '%s': path too long", path);
		return -1;
	}
	errno = 0;
	if (stat(full, &st) || !S_ISDIR(st.st_mode)) {
		*cause = xasprintf("no cgroup '%s' (%s: %s)", path, full,
				   errno ? strerror(errno) : "not a directory");
		return -1;
	}
	pthread_mutex_lock(&cg_lock);
	if (!cg_cap)
		walk_all();	/* the other names too, before their cgroups go */
	remember((uint64_t)st.st_ino, norm);
	pthread_mutex_unlock(&cg_lock);
	*id = (uint64_t)st.st_ino;
	*level = lv;
	return 0;
}

/* Whether s ends in suffix. */
static bool ends(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(s + n - k, suffix, k);
}

const char *cgroup_unit(const char *path, char *buf, size_t len)
{
	static const char *const runs[] = {".service", ".scope", ".socket", ".mount", ".swap"};
	const char *best = NULL, *slice = NULL;
	size_t bestn = 0, slicen = 0;

	for (const char *p = path; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
			if (ends(p, n, runs[i])) {
				best = p;
				bestn = n;
			}
		if (ends(p, n, ".slice")) {
			slice = p;
			slicen = n;
		}
		p += n;
	}
	if (!best) {
		best = slice;
		bestn = slicen;
	}
	if (len)
		snprintf(buf, len, "%.*s", best ? (int)bestn : 0, best ? best : "");
	return buf;
}

/* Whether p (n bytes) is a 64-hex-digit id. */
static bool hex64(const char *p, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

const char *cgroup_container(const char *path, char *buf, size_t len)
{
	static const char *const prefixes[] = {
		"", "docker-", "cri-containerd-", "crio-", "libpod-", "containerd-",
	};
	const char *id = NULL;

	for (const char *p = path; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t k = strlen(prefixes[i]), m = n;

			if (n <= k || memcmp(p, prefixes[i], k))
				continue;
			if (*prefixes[i] && ends(p, n, ".scope"))
				m -= strlen(".scope");
			if (hex64(p + k, m - k))
				id = p + k;
		}
		p += n;
	}
	if (len)
		snprintf(buf, len, "%.*s", id ? CGROUP_ID_SHORT : 0, id ? id : "");
	return buf;
}

static const char *domain_name(size_t i)
{
	(void)i;
	return NULL;
}

static bool domain_any(const char *s)
{
	(void)s;
	return true;
}

static int64_t domain_id(const char *s)
{
	uint64_t id;
	unsigned level;
	char *cause = NULL, *end;

	if (!strncmp(s, "cgroup:", 7)) {
		errno = 0;
		id = strtoull(s + 7, &end, 10);
		return !errno && *end == 0 && s[7] >= '0' && s[7] <= '9' && id <= INT64_MAX ?
		       (int64_t)id : -1;
	}
	if (!*s || cgroup_lookup(s, &id, &level, &cause)) {
		free(cause);
		return -1;
	}
	return id <= INT64_MAX ? (int64_t)id : -1;
}

const struct field_domain cgroup_domain = {domain_name, domain_any, domain_id};
