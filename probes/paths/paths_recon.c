/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Request paths from socket activity: messages, requests, calls (the rules
 * are in paths_recon.h).  Requests are reference counted: a connection's
 * queue, a thread's current message and a thread's open request each hold
 * one, so a request answered by another thread, or a call whose reply comes
 * after its request completed, never points at freed memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "../../core/xalloc.h"
#include "paths_recon.h"

#define NBUCKETS 4096

enum msg_kind {
	MK_NONE,	/* no message, or one whose object is finished */
	MK_REQ_IN,	/* receiving a request on a server connection */
	MK_REPLY_OUT,	/* sending a reply on a server connection */
	MK_CALL_OUT,	/* sending a call on a client connection */
	MK_CALL_IN,	/* receiving a call's reply */
};

struct rconn {
	struct rconn *next;
	uint64_t sk;
	struct recon_tuple t;
	bool server;
	uint64_t last_ns;
	uint64_t epoch;			/* messages started on it, by any thread */
	uint64_t nreq;			/* requests seen on it */
	size_t nq, capq;
	struct recon_req **reqs;	/* server: received, not yet answered (FIFO) */
	struct recon_call **calls;	/* client: sent, no reply yet (FIFO) */
};

struct rthread {
	struct rthread *next;
	uint32_t tid, tgid;
	char comm[PATH_COMM_LEN + 1];
	uint64_t cgroup;
	uint64_t last_ns;
	/* The current message. */
	bool in_msg;
	struct rconn *mconn;
	uint64_t mepoch;		/* mconn->epoch when the message started */
	uint8_t mdir;
	enum msg_kind kind;
	struct recon_req *mreq;		/* the request of the message (MK_*) */
	struct recon_call *mcall;	/* the call (MK_CALL_*) */
	struct recon_req *open;		/* received here, not yet answered */
};

struct recon {
	recon_done_fn done;
	void *ctx;
	uint64_t next_id;
	struct rconn *conns[NBUCKETS];
	struct rthread *threads[NBUCKETS];
	struct recon_stats st;
};

/* Take a reference on r. */
static struct recon_req *req_get(struct recon_req *r)
{
	if (r)
		r->refs++;
	return r;
}

/* Drop a reference on r; free it with its calls at the last one. */
static void req_put(struct recon_req *r)
{
	size_t i;

	if (!r || --r->refs)
		return;
	for (i = 0; i < r->ncalls; i++)
		free(r->calls[i]);
	free(r->calls);
	free(r);
}

struct recon *recon_new(recon_done_fn done, void *ctx)
{
	struct recon *rc = xcalloc(1, sizeof(*rc));

	rc->done = done;
	rc->ctx = ctx;
	rc->next_id = 1;
	return rc;
}

/* Release everything a connection holds. */
static void conn_clear(struct rconn *c, struct recon_stats *st)
{
	size_t i;

	for (i = 0; i < c->nq; i++) {
		if (c->server) {
			if (!c->reqs[i]->done)
				st->unanswered++;
			req_put(c->reqs[i]);
		} else {
			req_put(c->calls[i]->req);
		}
	}
	c->nq = 0;
}

/* Forget the thread's current message. */
static void thread_msg_clear(struct rthread *t)
{
	req_put(t->mreq);
	t->mreq = NULL;
	t->mcall = NULL;
	t->kind = MK_NONE;
}

void recon_free(struct recon *rc)
{
	size_t b;

	if (!rc)
		return;
	for (b = 0; b < NBUCKETS; b++) {
		while (rc->threads[b]) {
			struct rthread *t = rc->threads[b];

			rc->threads[b] = t->next;
			thread_msg_clear(t);
			req_put(t->open);
			free(t);
		}
		while (rc->conns[b]) {
			struct rconn *c = rc->conns[b];

			rc->conns[b] = c->next;
			conn_clear(c, &rc->st);
			free(c->reqs);
			free(c->calls);
			free(c);
		}
	}
	free(rc);
}

const struct recon_stats *recon_stats(const struct recon *rc)
{
	return &rc->st;
}

static size_t hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return (size_t)(v & (NBUCKETS - 1));
}

/* Find or make the thread of rec. */
static struct rthread *thread_of(struct recon *rc, const struct path_rec *rec)
{
	size_t b = hash64(rec->tid);
	struct rthread *t;

	for (t = rc->threads[b]; t; t = t->next)
		if (t->tid == rec->tid)
			break;
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		t->tid = rec->tid;
		t->next = rc->threads[b];
		rc->threads[b] = t;
		rc->st.threads++;
	}
	t->tgid = rec->tgid;
	memcpy(t->comm, rec->comm, PATH_COMM_LEN);
	t->comm[PATH_COMM_LEN] = 0;
	t->cgroup = rec->cgroup;
	return t;
}

static bool tuple_eq(const struct recon_tuple *a, const struct recon_tuple *b)
{
	return a->lport == b->lport && a->rport == b->rport &&
	       !memcmp(a->laddr, b->laddr, 16) && !memcmp(a->raddr, b->raddr, 16);
}

/* Find or make the connection of rec (a reused socket address starts afresh). */
static struct rconn *conn_of(struct recon *rc, const struct path_rec *rec)
{
	size_t b = hash64(rec->sk);
	struct recon_tuple t;
	struct rconn *c;

	memcpy(t.laddr, rec->laddr, 16);
	memcpy(t.raddr, rec->raddr, 16);
	t.lport = rec->lport;
	t.rport = rec->rport;
	for (c = rc->conns[b]; c; c = c->next)
		if (c->sk == rec->sk)
			break;
	if (c && (!tuple_eq(&c->t, &t) || c->server != !!rec->server)) {
		/* The socket now carries another connection, or this end's role
		 * changed: its queue held the other kind, so start it anew. */
		conn_clear(c, &rc->st);
		c->nreq = 0;
		free(c->reqs);
		free(c->calls);
		c->reqs = NULL;
		c->calls = NULL;
		c->capq = 0;
	} else if (!c) {
		c = xcalloc(1, sizeof(*c));
		c->sk = rec->sk;
		c->next = rc->conns[b];
		rc->conns[b] = c;
		rc->st.conns++;
	}
	c->t = t;
	c->server = rec->server;
	c->last_ns = rec->ts_ns;
	return c;
}

/* Append to a connection's queue (reqs or calls, by role). */
static void conn_push(struct rconn *c, void *p)
{
	if (c->nq == c->capq) {
		c->capq = c->capq ? 2 * c->capq : 4;
		if (c->server)
			c->reqs = xreallocarray(c->reqs, c->capq, sizeof(*c->reqs));
		else
			c->calls = xreallocarray(c->calls, c->capq, sizeof(*c->calls));
	}
	if (c->server)
		c->reqs[c->nq++] = p;
	else
		c->calls[c->nq++] = p;
}

/* Take the oldest entry of a connection's queue, or NULL. */
static void *conn_pop(struct rconn *c)
{
	void *p;

	if (!c->nq)
		return NULL;
	p = c->server ? (void *)c->reqs[0] : (void *)c->calls[0];
	c->nq--;
	if (c->server)
		memmove(c->reqs, c->reqs + 1, c->nq * sizeof(*c->reqs));
	else
		memmove(c->calls, c->calls + 1, c->nq * sizeof(*c->calls));
	return p;
}

/* Report r as complete. */
static void req_complete(struct recon *rc, struct recon_req *r)
{
	if (r->done)
		return;
	r->done = true;
	rc->st.requests++;
	rc->done(rc->ctx, r);
}

/* End the thread's current message: what it finishes completes. */
static void thread_msg_end(struct recon *rc, struct rthread *t)
{
	if (!t->in_msg)
		return;
	if (t->kind == MK_REPLY_OUT)
		req_complete(rc, t->mreq);
	else if (t->kind == MK_CALL_IN && t->mreq->client)
		req_complete(rc, t->mreq);
	/* The message stays current, without its object: more of it only
	 * adds bytes to nothing. */
	thread_msg_clear(t);
}

/* A new request on a server connection. */
static void start_request(struct recon *rc, struct rthread *t, struct rconn *c,
			  const struct path_rec *rec)
{
	struct recon_req *r = xcalloc(1, sizeof(*r));

	r->id = rc->next_id++;
	r->tgid = rec->tgid;
	r->tid = rec->tid;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	r->cgroup = t->cgroup;
	r->entry = c->t;
	r->seq = rec->seq;
	r->nth = c->nreq++;
	r->start_ns = rec->ts_ns;
	r->refs = 1;		/* the thread's message holds it */
	conn_push(c, req_get(r));
	req_put(t->open);
	t->open = req_get(r);
	t->kind = MK_REQ_IN;
	t->mreq = r;		/* the creation reference */
}

/* A reply message on a server connection answers its oldest open request. */
static void start_reply(struct recon *rc, struct rthread *t, struct rconn *c,
			const struct path_rec *rec)
{
	struct recon_req *r = conn_pop(c);
	struct rthread *o;

	if (!r) {
		rc->st.stray_replies++;
		return;
	}
	/* The thread that received it no longer works for it. */
	for (o = rc->threads[hash64(r->tid)]; o; o = o->next) {
		if (o->tid == r->tid && o->open == r) {
			o->open = NULL;
			req_put(r);
		}
	}
	if (t->open == r) {
		t->open = NULL;
		req_put(r);
	}
	t->kind = MK_REPLY_OUT;
	t->mreq = r;		/* the queue's reference, moved */
}

/* A message sent on a client connection: a call, for the thread's open request. */
static void start_call(struct recon *rc, struct rthread *t, struct rconn *c,
		       const struct path_rec *rec)
{
	struct recon_call *k = xcalloc(1, sizeof(*k));
	struct recon_req *r = t->open;

	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->id = rc->next_id++;
		r->tgid = rec->tgid;
		r->tid = rec->tid;
		memcpy(r->comm, t->comm, sizeof(r->comm));
	r->cgroup = t->cgroup;
		r->client = true;
		r->start_ns = rec->ts_ns;
	}
	k->conn = c->t;
	k->seq = rec->seq;
	k->start_ns = rec->ts_ns;
	k->req = r;
	if (r->ncalls == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4;
		r->calls = xreallocarray(r->calls, r->cap, sizeof(*r->calls));
	}
	r->calls[r->ncalls++] = k;
	conn_push(c, k);
	req_get(r);		/* the queue's */
	t->kind = MK_CALL_OUT;
	t->mreq = req_get(r);
	t->mcall = k;
}

/* A message received on a client connection: the reply to its oldest call. */
static void start_call_reply(struct recon *rc, struct rthread *t, struct rconn *c)
{
	struct recon_call *k = conn_pop(c);

	if (!k) {
		rc->st.stray_call_replies++;
		return;
	}
	t->kind = MK_CALL_IN;
	t->mreq = k->req;	/* the queue's reference, moved */
	t->mcall = k;
}

/* Add the bytes and time of rec to the thread's current message. */
static void msg_extend(struct rthread *t, const struct path_rec *rec)
{
	switch (t->kind) {
	case MK_REQ_IN:
		t->mreq->bytes_in += rec->bytes;
		break;
	case MK_REPLY_OUT:
		t->mreq->bytes_out += rec->bytes;
		t->mreq->end_ns = rec->ts_ns;
		break;
	case MK_CALL_OUT:
		t->mcall->bytes_out += rec->bytes;
		if (t->mreq->client)
			t->mreq->bytes_out += rec->bytes;
		break;
	case MK_CALL_IN:
		t->mcall->bytes_in += rec->bytes;
		t->mcall->end_ns = rec->ts_ns;
		if (t->mreq->client) {
			t->mreq->bytes_in += rec->bytes;
			t->mreq->end_ns = rec->ts_ns;
		}
		break;
	case MK_NONE:
		break;
	}
}

void recon_add(struct recon *rc, const struct path_rec *rec)
{
	struct rthread *t = thread_of(rc, rec);
	struct rconn *c;

	rc->st.records++;
	t->last_ns = rec->ts_ns;
	/* More of the same message, unless another thread has used the
	 * connection since (a reply sent for this thread's request by a
	 * helper ends the request this thread was receiving). */
	if (t->in_msg && t->mconn && t->mconn->sk == rec->sk && t->mdir == rec->dir &&
	    t->mconn->epoch == t->mepoch) {
		t->mconn->last_ns = rec->ts_ns;
		msg_extend(t, rec);
		return;
	}
	thread_msg_end(rc, t);
	c = conn_of(rc, rec);
	t->in_msg = true;
	t->mconn = c;
	t->mepoch = ++c->epoch;
	t->mdir = rec->dir;
	if (c->server && rec->dir == PD_RECV)
		start_request(rc, t, c, rec);
	else if (c->server)
		start_reply(rc, t, c, rec);
	else if (rec->dir == PD_SEND)
		start_call(rc, t, c, rec);
	else
		start_call_reply(rc, t, c);
	msg_extend(t, rec);
}

/* Drop connection c from its bucket and free it. */
static void conn_forget(struct recon *rc, struct rconn **pp)
{
	struct rconn *c = *pp;

	*pp = c->next;
	conn_clear(c, &rc->st);
	free(c->reqs);
	free(c->calls);
	free(c);
	rc->st.conns--;
}

void recon_flush(struct recon *rc, uint64_t now_ns, uint64_t grace_ns, uint64_t idle_ns)
{
	size_t b;

	for (b = 0; b < NBUCKETS; b++) {
		struct rthread **tp = &rc->threads[b];

		while (*tp) {
			struct rthread *t = *tp;

			if (t->kind != MK_NONE && t->last_ns + grace_ns <= now_ns)
				thread_msg_end(rc, t);
			if (t->last_ns + idle_ns <= now_ns) {
				thread_msg_clear(t);
				req_put(t->open);
				*tp = t->next;
				free(t);
				rc->st.threads--;
				continue;
			}
			tp = &t->next;
		}
	}
	/* Threads that went away no longer point at connections. */
	for (b = 0; b < NBUCKETS; b++) {
		struct rthread *t;

		for (t = rc->threads[b]; t; t = t->next)
			if (t->mconn && t->mconn->last_ns + idle_ns <= now_ns) {
				thread_msg_clear(t);
				t->in_msg = false;
				t->mconn = NULL;
			}
	}
	for (b = 0; b < NBUCKETS; b++) {
		struct rconn **cp = &rc->conns[b];

		while (*cp) {
			if ((*cp)->last_ns + idle_ns <= now_ns)
				conn_forget(rc, cp);
			else
				cp = &(*cp)->next;
		}
	}
}

static int call_cmp(const void *a, const void *b)
{
	const struct recon_call *x = *(struct recon_call *const *)a, *y = *(struct recon_call *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

uint64_t recon_down_ns(const struct recon_req *r)
{
	struct recon_call **v;
	uint64_t cover = 0, reach = r->start_ns;
	size_t i;

	if (!r->ncalls || r->end_ns <= r->start_ns)
		return 0;
	v = xreallocarray(NULL, r->ncalls, sizeof(*v));
	memcpy(v, r->calls, r->ncalls * sizeof(*v));
	qsort(v, r->ncalls, sizeof(*v), call_cmp);
	for (i = 0; i < r->ncalls; i++) {
		uint64_t s = v[i]->start_ns, e = v[i]->end_ns ? v[i]->end_ns : r->end_ns;

		if (s < r->start_ns)
			s = r->start_ns;
		if (e > r->end_ns)
			e = r->end_ns;
		if (e <= reach)
			continue;
		cover += e - (s > reach ? s : reach);
		reach = e;
	}
	free(v);
	return cover;
}

void recon_addr(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!memcmp(a, mapped, 12))
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

void recon_remote(const struct recon_tuple *t, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	recon_addr(t->raddr, a, sizeof(a));
	snprintf(buf, len, strchr(a, ':') ? "[%s]:%u" : "%s:%u", a, t->rport);
}

void recon_shape(const struct recon_req *r, char *buf, size_t len)
{
	size_t i, j, off;

	off = r->client ? (size_t)snprintf(buf, len, "-") :
			  (size_t)snprintf(buf, len, ":%u", r->entry.lport);
	for (i = 0; i < r->ncalls && off < len; i++) {
		const struct recon_call *k = r->calls[i];
		char dst[INET6_ADDRSTRLEN + 8];
		size_t n = 0;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = r->calls[j]->conn.rport == k->conn.rport &&
			       !memcmp(r->calls[j]->conn.raddr, k->conn.raddr, 16);
		if (seen)
			continue;
		for (j = i; j < r->ncalls; j++)
			n += r->calls[j]->conn.rport == k->conn.rport &&
			     !memcmp(r->calls[j]->conn.raddr, k->conn.raddr, 16);
		recon_remote(&k->conn, dst, sizeof(dst));
		off += snprintf(buf + off, len - off, "%s%s ×%zu", i ? ", " : " → ", dst, n);
	}
}
