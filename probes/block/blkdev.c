/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Block device names and operation codes (see blkdev.h). */
#include <stdio.h>
#include <string.h>
#include "blkdev.h"

/* REQ_OP_* codes (include/linux/blk_types.h), stable kernel ABI of the trace events. */
static const struct {
	uint32_t op;
	const char *name;
} blkdev_ops[] = {
	{0, "read"}, {1, "write"}, {2, "flush"}, {3, "discard"}, {5, "secure_erase"},
	{7, "zone_append"}, {9, "write_zeroes"}, {10, "zone_open"}, {11, "zone_close"},
	{12, "zone_finish"}, {13, "zone_reset"}, {15, "zone_reset_all"},
	{34, "drv_in"}, {35, "drv_out"},
};
#define NOPS (sizeof(blkdev_ops) / sizeof(blkdev_ops[0]))

const char *const blkdev_op_names[] = {
	"read", "write", "flush", "discard", "secure_erase", "zone_append", "write_zeroes",
	"zone_open", "zone_close", "zone_finish", "zone_reset", "zone_reset_all", "drv_in",
	"drv_out", NULL,
};

const char *blkdev_op_name(uint32_t op)
{
	size_t i;

	for (i = 0; i < NOPS; i++)
		if (blkdev_ops[i].op == op)
			return blkdev_ops[i].name;
	return NULL;
}

int blkdev_op_code(const char *name)
{
	size_t i;

	for (i = 0; i < NOPS; i++)
		if (!strcmp(blkdev_ops[i].name, name))
			return (int)blkdev_ops[i].op;
	return -1;
}

const char *blkdev_name(uint32_t dev, char *buf, size_t len)
{
	unsigned ma = dev >> 20, mi = dev & 0xfffff;
	char path[64], line[128];
	FILE *f;

	snprintf(buf, len, "%u:%u", ma, mi);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", ma, mi);
	f = fopen(path, "r");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%s", line + 8);
			break;
		}
	}
	fclose(f);
	return buf;
}

int blkdev_lookup(const char *name, uint32_t *dev)
{
	unsigned ma, mi;
	char path[128];
	FILE *f;
	int n;

	if (!name[0] || strchr(name, '/') || strlen(name) > 64)
		return -1;
	if (sscanf(name, "%u:%u%n", &ma, &mi, &n) == 2 && !name[n]) {
		*dev = BLKDEV_MKDEV(ma, mi);
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	if (n != 2)
		return -1;
	*dev = BLKDEV_MKDEV(ma, mi);
	return 0;
}
