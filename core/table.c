/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Schemas, frames, ticks and rolling windows. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "table.h"
#include "xalloc.h"

int schema_field(const struct schema *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nfields; i++)
		if (!strcmp(s->fields[i].name, name))
			return (int)i;
	return -1;
}

bool domain_valid(const struct field_domain *d, const char *s)
{
	const char *n;
	size_t i;

	if (!strcmp(s, TABLE_OTHER))
		return true;
	if (d->valid)
		return d->valid(s);
	for (i = 0; (n = d->name(i)); i++)
		if (!strcmp(n, s))
			return true;
	return false;
}

const struct field *schema_known(const struct schema *s, size_t idx,
				 const struct schema *const *known, size_t nknown)
{
	const struct field *f = &s->fields[idx];
	size_t i;
	int k;

	for (i = 0; i < nknown; i++) {
		if (strcmp(known[i]->table, s->table))
			continue;
		k = schema_field(known[i], f->name);
		if (k >= 0 && known[i]->fields[k].type == f->type)
			return &known[i]->fields[k];
	}
	return NULL;
}

/* See table.h; fields is s->fields, writable. */
void schema_attach(struct schema *s, struct field *fields,
		   const struct schema *const *known, size_t nknown)
{
	const struct field *k;
	size_t i;

	for (i = 0; i < s->nfields; i++) {
		if (fields[i].pushdown || fields[i].domain)
			continue;
		if ((k = schema_known(s, i, known, nknown))) {
			fields[i].pushdown = k->pushdown;
			fields[i].domain = k->domain;
		}
	}
}

/* Make an empty frame of table s. */
struct frame *frame_new(const struct schema *s, uint64_t t_ns, uint64_t dt_ns)
{
	struct frame *f = xcalloc(1, sizeof(*f));

	f->schema = s;
	f->t_ns = t_ns;
	f->dt_ns = dt_ns;
	return f;
}

/* Free what one cell of type t owns. */
static void cell_free(union cell *c, enum ftype t)
{
	switch (t) {
	case FT_STR:
		free(c->s);
		break;
	case FT_HIST:
		shist_free(c->h);
		break;
	case FT_IP:
		free(c->ip);
		break;
	default:
		break;
	}
}

/* Free a frame and every string, histogram and address it owns. */
void frame_free(struct frame *f)
{
	size_t r, i, nf;

	if (!f)
		return;
	nf = f->schema->nfields;
	for (r = 0; r < f->nrows; r++)
		for (i = 0; i < nf; i++)
			cell_free(&f->cells[r * nf + i], f->schema->fields[i].type);
	free(f->cells);
	free(f);
}

union cell *frame_add_row(struct frame *f)
{
	size_t nf = f->schema->nfields;
	union cell *row;

	if (f->nrows == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->cells = xreallocarray(f->cells, f->cap, nf * sizeof(union cell));
	}
	row = f->cells + f->nrows * nf;
	memset(row, 0, nf * sizeof(union cell));
	f->nrows++;
	return row;
}

void cell_set_str(union cell *c, const char *s)
{
	free(c->s);
	c->s = s ? xstrdup(s) : NULL;
}

/* Set a histogram cell to a copy of h (NULL clears it). */
void cell_set_hist(union cell *c, const struct hist *h)
{
	shist_free(c->h);
	c->h = h ? shist_pack(h) : NULL;
}

void cell_take_shist(union cell *c, struct shist *s)
{
	shist_free(c->h);
	c->h = s;
}

/* Set an address cell to a copy of ip (NULL clears it). */
void cell_set_ip(union cell *c, const struct ipaddr *ip)
{
	free(c->ip);
	c->ip = NULL;
	if (ip) {
		c->ip = xmalloc(sizeof(*c->ip));
		*c->ip = *ip;
	}
}

/* Copy a frame and everything its cells own. */
struct frame *frame_dup(const struct frame *f)
{
	struct frame *d = frame_new(f->schema, f->t_ns, f->dt_ns);
	size_t r, i, nf = f->schema->nfields;

	d->stats = f->stats;
	for (r = 0; r < f->nrows; r++) {
		const union cell *src = frame_row(f, r);
		union cell *dst = frame_add_row(d);

		for (i = 0; i < nf; i++) {
			switch (f->schema->fields[i].type) {
			case FT_STR:
				cell_set_str(&dst[i], src[i].s);
				break;
			case FT_HIST:
				dst[i].h = src[i].h ? shist_dup(src[i].h) : NULL;
				break;
			case FT_IP:
				cell_set_ip(&dst[i], src[i].ip);
				break;
			default:
				dst[i].u = src[i].u;
				break;
			}
		}
	}
	return d;
}

/* Start an empty tick at t_ns. */
void tick_init(struct tick *t, uint64_t t_ns)
{
	t->t_ns = t_ns;
	t->nframes = 0;
	t->frames = NULL;
	t->bytes = 0;
}

/* Add a frame to a tick, which then owns it. */
void tick_add(struct tick *t, struct frame *f)
{
	t->frames = xreallocarray(t->frames, t->nframes + 1, sizeof(*t->frames));
	t->frames[t->nframes++] = f;
}

/* Free a tick's frames and leave it empty. */
void tick_done(struct tick *t)
{
	size_t i;

	for (i = 0; i < t->nframes; i++)
		frame_free(t->frames[i]);
	free(t->frames);
	t->frames = NULL;
	t->nframes = 0;
}

void tick_lengths_add(struct tick_lengths *tl, const struct tick *t, const char *table)
{
	const struct frame *f = table ? tick_frame(t, table) : NULL;
	uint64_t dt = f ? f->dt_ns : 0;
	size_t i;

	if (table ? !f : !t->nframes)
		return;
	for (i = 0; !table && i < t->nframes; i++)
		if (t->frames[i]->dt_ns > dt)
			dt = t->frames[i]->dt_ns;
	if (tl->n == tl->cap) {
		tl->cap = tl->cap ? 2 * tl->cap : 64;
		tl->dt_ns = xreallocarray(tl->dt_ns, tl->cap, sizeof(*tl->dt_ns));
	}
	tl->dt_ns[tl->n++] = dt;
}

/* Order u64 values for qsort. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t tick_lengths_late(const struct tick_lengths *tl, uint64_t *interval_ns,
			 uint64_t *longest_ns)
{
	size_t i, late = 0;

	*longest_ns = 0;
	if (!tl->n)
		return 0;
	if (!*interval_ns) {
		uint64_t *v = xmalloc(tl->n * sizeof(*v));

		memcpy(v, tl->dt_ns, tl->n * sizeof(*v));
		qsort(v, tl->n, sizeof(*v), cmp_u64);
		*interval_ns = v[tl->n / 2];
		free(v);
	}
	for (i = 0; i < tl->n; i++) {
		if (tl->dt_ns[i] > *longest_ns)
			*longest_ns = tl->dt_ns[i];
		late += tl->dt_ns[i] > *interval_ns + *interval_ns / 2;
	}
	return late;
}

void tick_lengths_free(struct tick_lengths *tl)
{
	free(tl->dt_ns);
	memset(tl, 0, sizeof(*tl));
}

struct frame *tick_frame(const struct tick *t, const char *table)
{
	size_t i;

	for (i = 0; i < t->nframes; i++)
		if (!strcmp(t->frames[i]->schema->table, table))
			return t->frames[i];
	return NULL;
}

/* Return the memory the heap block p takes (its header too), 0 for NULL. */
static size_t heap_bytes(const void *p)
{
	return p ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}

size_t frame_bytes(const struct frame *f)
{
	size_t b = heap_bytes(f) + heap_bytes(f->cells), r, i, nf = f->schema->nfields;

	for (i = 0; i < nf; i++) {
		enum ftype t = f->schema->fields[i].type;

		if (t != FT_STR && t != FT_HIST && t != FT_IP)
			continue;
		for (r = 0; r < f->nrows; r++)
			b += heap_bytes(frame_row(f, r)[i].s);	/* any owned pointer */
	}
	return b;
}

uint64_t tick_bytes(const struct tick *t)
{
	uint64_t b = heap_bytes(t->frames);
	size_t i;

	for (i = 0; i < t->nframes; i++)
		b += frame_bytes(t->frames[i]);
	return b;
}

/* Start an empty window of window_ns. */
void window_init(struct window *w, uint64_t window_ns)
{
	w->window_ns = window_ns;
	w->nticks = 0;
	w->cap = 0;
	w->ticks = NULL;
	w->max_bytes = w->bytes = w->dropped = 0;
}

/* Drop the oldest n ticks. */
static void window_drop(struct window *w, size_t n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		if (w->max_bytes) {
			uint64_t b = w->ticks[i].bytes;

			w->bytes -= b < w->bytes ? b : w->bytes;
			w->dropped += b;
		}
		tick_done(&w->ticks[i]);
	}
	memmove(w->ticks, w->ticks + n, (w->nticks - n) * sizeof(*w->ticks));
	w->nticks -= n;
}

/* Free every tick in the window and its storage. */
void window_done(struct window *w)
{
	window_clear(w);
	free(w->ticks);
	w->ticks = NULL;
	w->cap = 0;
}

/* Drop the ticks older than the newest tick's time minus window_ns. */
static void window_evict(struct window *w)
{
	uint64_t newest, oldest_kept, over;
	size_t n = 0;

	if (!w->nticks)
		return;
	newest = w->ticks[w->nticks - 1].t_ns;
	if (newest >= w->window_ns) {
		oldest_kept = newest - w->window_ns;
		while (n < w->nticks && w->ticks[n].t_ns < oldest_kept)
			n++;
		if (n)
			window_drop(w, n);
	}
	if (!w->max_bytes || w->bytes <= w->max_bytes)
		return;
	/* Over the bound: the oldest go until what is left fits. */
	over = w->bytes - w->max_bytes;
	for (n = 0; n + 1 < w->nticks && over; n++) {
		uint64_t b = w->ticks[n].bytes;

		over -= b < over ? b : over;
	}
	window_drop(w, n);
}

/* Give back the rows a frame grew room for and did not fill. */
static void frame_fit(struct frame *f)
{
	if (f->nrows == f->cap || !f->nrows)
		return;
	f->cells = xreallocarray(f->cells, f->nrows, f->schema->nfields * sizeof(union cell));
	f->cap = f->nrows;
}

/* Append a tick (taking its frames, leaving *t empty) and evict old ones. */
void window_push(struct window *w, struct tick *t)
{
	size_t i;

	/* A bounded window keeps its ticks a while: no room left unused. */
	for (i = 0; w->max_bytes && i < t->nframes; i++)
		frame_fit(t->frames[i]);
	if (w->nticks == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->ticks = xreallocarray(w->ticks, w->cap, sizeof(*w->ticks));
	}
	/* Its size is taken once: walking every cell of a tick again when it
	 * leaves was a tenth of the TUI's time under fork loops. */
	t->bytes = w->max_bytes ? tick_bytes(t) : 0;
	w->bytes += t->bytes;
	w->ticks[w->nticks++] = *t;
	t->frames = NULL;
	t->nframes = 0;
	window_evict(w);
}

/* Change the window length, evicting what no longer fits. */
void window_set(struct window *w, uint64_t window_ns)
{
	w->window_ns = window_ns;
	window_evict(w);
}

void window_set_bytes(struct window *w, uint64_t max_bytes)
{
	size_t i;

	w->max_bytes = max_bytes;
	w->bytes = 0;
	for (i = 0; i < w->nticks; i++) {
		w->ticks[i].bytes = max_bytes ? tick_bytes(&w->ticks[i]) : 0;
		w->bytes += w->ticks[i].bytes;
	}
	window_evict(w);
}

/* Drop every tick. */
void window_clear(struct window *w)
{
	window_drop(w, w->nticks);
}
