/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading small regular files safely: no FIFO that blocks, no endless device. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rfile.h"
#include "xalloc.h"

const char *rfile_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "of an unknown kind";
}

/* Fail with errno err and "PATH: cannot read: strerror"; return -err. */
static int rfile_fail(const char *path, int err, char **cause)
{
	*cause = xasprintf("%s: cannot read: %s", path, strerror(err));
	return -err;
}

/* Read fd to its end or past max_bytes; -errno with *cause on failure. */
static int rfile_slurp(int fd, const char *path, size_t max_bytes, char **data, size_t *len,
		       char **cause)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap + 1);
	ssize_t r;

	for (;;) {
		if (n == cap) {
			cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return rfile_fail(path, errno, cause);
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max_bytes) {
			free(buf);
			*cause = xasprintf("%s: holds more than %zu bytes, the limit for this file",
					   path, max_bytes);
			return -EFBIG;
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int rfile_open(const char *path, struct stat *st, char **cause)
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rfile_fail(path, errno, cause);
	if (fstat(fd, st) < 0) {
		rc = rfile_fail(path, errno, cause);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st->st_mode)) {
		*cause = xasprintf("%s: is %s, not a regular file", path, rfile_kind(st->st_mode));
		close(fd);
		return -EINVAL;
	}
	/* A regular file: reads may block (on a slow disk) like any other. */
	if (fcntl(fd, F_SETFL, 0) < 0) {
		rc = rfile_fail(path, errno, cause);
		close(fd);
		return rc;
	}
	return fd;
}

int rfile_read(const char *path, size_t max_bytes, char **data, size_t *len, char **cause)
{
	struct stat st;
	int fd, rc;

	fd = rfile_open(path, &st, cause);
	if (fd < 0)
		return fd;
	if ((unsigned long long)st.st_size > max_bytes) {
		*cause = xasprintf("%s: is %llu bytes, over the %zu-byte limit for this file", path,
				   (unsigned long long)st.st_size, max_bytes);
		close(fd);
		return -EFBIG;
	}
	rc = rfile_slurp(fd, path, max_bytes, data, len, cause);
	close(fd);
	return rc;
}
