/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The replay source: ticks read back from a snapshot file, with seeking. */
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
#include "source.h"
#include "xalloc.h"

struct replay {
	struct snap_reader *r;
	size_t next;			/* index of the tick the next read returns */
	struct source_info info;
	char *status;
	char *warning;
	char *path;
};

/* Return the next tick, or 2 at the end of the recording; past a tick that
 * cannot be read, -1 (the next read goes on with the one after it). */
static int replay_read(struct source *s, struct tick *out, int timeout_ms, char **cause)
{
	struct replay *rp = s->priv;

	if (rp->next >= snap_nticks(rp->r))
		return 2;
	if (snap_read_tick(rp->r, rp->next++, out, cause))
		return -1;
	return 1;
}

/* Position so the next read returns tick idx. */
static int replay_seek(struct source *s, size_t idx, char **cause)
{
	struct replay *rp = s->priv;

	if (idx > snap_nticks(rp->r)) {
		*cause = xasprintf("tick %zu out of range (the recording has %zu)", idx,
				   snap_nticks(rp->r));
		return -1;
	}
	rp->next = idx;
	return 0;
}

/* Return the index of the tick the next read returns. */
static size_t replay_tell(struct source *s)
{
	return ((struct replay *)s->priv)->next;
}

/* Return the recording's header, range and schemas. */
static const struct source_info *replay_info(struct source *s)
{
	return &((struct replay *)s->priv)->info;
}

/* Close the file and free the source. */
static void replay_close(struct source *s)
{
	struct replay *rp = s->priv;

	snap_free(rp->r);
	free(rp->status);
	free(rp->warning);
	free(rp->path);
	free(rp);
	free(s);
}

static const struct source_ops replay_ops = {
	.name = "replay",
	.read = replay_read,
	.seek = replay_seek,
	.tell = replay_tell,
	.set_filter = NULL,
	.set_interval = NULL,
	.info = replay_info,
	.close = replay_close,
};

struct source *replay_open(const char *path, char **cause)
{
	struct source *s;
	struct replay *rp;
	char *warning = NULL;
	struct snap_reader *r = snap_open(path, cause, &warning);
	const char *recorded;

	if (!r)
		return NULL;
	rp = xcalloc(1, sizeof(*rp));
	rp->r = r;
	rp->info = *snap_info(r);
	recorded = rp->info.status && *rp->info.status ? rp->info.status : NULL;
	if (warning && recorded)
		rp->status = xasprintf("%s; recorded: %s", warning, recorded);
	else if (warning)
		rp->status = xstrdup(warning);
	else
		rp->status = xasprintf("replay of %s%s%s", path, recorded ? "; recorded: " : "",
				       recorded ? recorded : "");
	rp->warning = warning;
	rp->info.status = rp->status;
	rp->info.warning = rp->warning;
	rp->path = xstrdup(path);
	rp->info.path = rp->path;
	s = xcalloc(1, sizeof(*s));
	s->ops = &replay_ops;
	s->priv = rp;
	return s;
}
