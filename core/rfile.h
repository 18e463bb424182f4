/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading files that someone else may control (settings, recordings): only
 * a regular file is read (a FIFO, a device or a directory is refused without
 * blocking on it), and a settings file only up to a size cap.
 */
#ifndef LATOP_RFILE_H
#define LATOP_RFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* The cap on rc and theme files. */
#define RFILE_SETTINGS_MAX_BYTES (1u << 20)

/* What a file of mode is, other than regular: "a FIFO", "a directory", ... */
const char *rfile_kind(mode_t mode);
/* Open the regular file at path for reading, never blocking on anything
 * else, and fstat it into *st: an fd, or -errno with *cause as rfile_read's
 * (-EINVAL: not a regular file). */
int rfile_open(const char *path, struct stat *st, char **cause);
/* Read the regular file at path whole into *data (malloc'd, NUL-terminated,
 * *len bytes before the NUL; it may hold other NULs).  0 on success; else
 * -errno with *cause "PATH: why" (caller frees): -ENOENT and -ENOTDIR when
 * there is no such file, -EINVAL when it is not a regular file ("is a FIFO,
 * not a regular file"), -EFBIG when it holds more than max_bytes. */
int rfile_read(const char *path, size_t max_bytes, char **data, size_t *len, char **cause);

#endif
