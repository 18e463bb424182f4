/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Block device names and operations: the kernel's dev_t (major << 20 |
 * minor) to and from a name like "loop0", and REQ_OP_* codes to and from
 * "read", "write", "flush"...
 */
#ifndef LATOP_BLKDEV_H
#define LATOP_BLKDEV_H

#include <stddef.h>
#include <stdint.h>

#define BLKDEV_MKDEV(ma, mi) (((uint32_t)(ma) << 20) | (uint32_t)(mi))

/* Write dev's name ("loop0", else "MAJ:MIN") into buf; return buf. */
const char *blkdev_name(uint32_t dev, char *buf, size_t len);
/* Find the device called name in /sys/class/block; 0, or -1 when there is none. */
int blkdev_lookup(const char *name, uint32_t *dev);
/* Return the name of REQ_OP_* code op, or NULL for an unknown one. */
const char *blkdev_op_name(uint32_t op);
/* Return the REQ_OP_* code of name, or -1. */
int blkdev_op_code(const char *name);
/* The operation names, NULL-terminated (for suggestions). */
extern const char *const blkdev_op_names[];

#endif
