/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Matching a TCP flow's responses to its requests, after Torp: shared by
 * flows.bpf.c and the unit tests (no helpers, __u32/__u64 only, bounded
 * loops).  Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 *
 * Seen from the socket that serves the flow:
 *  - a request is inbound data up to a segment with PSH (the end of one
 *    write by the peer).  It is queued as (expected ack = its end sequence
 *    number, arrival time).  Pure ACKs, SYN and FIN carry no request.
 *    A segment whose end is already queued or already answered is a
 *    retransmission and ignored; one that fills a gap is queued in order.
 *  - a response starts with the first outbound data segment after a segment
 *    with PSH (one write by the server).  It answers the oldest pending
 *    request if that request's expected ack is covered by the response's
 *    ack number (the server cannot answer what it has not received), so
 *    pipelined requests are answered in order, one per response.
 *    Retransmitted data (ending at or before the highest sequence sent) is
 *    not a new response.
 *  - a pending request older than the timeout when a response starts was
 *    never answered (a lost request, a dropped response, a server that
 *    ignored it): it leaves the queue as evicted.
 *
 * One CPU adds requests (receive) while another may take them (transmit):
 * tail is written only by fq_request, head only by fq_response.
 */
#ifndef LATOP_FLOWQ_H
#define LATOP_FLOWQ_H

#define FQ_LEN 8		/* pending requests per flow (a power of 2) */

struct fq_ent {
	__u32 ack;		/* expected ack number: the request's end sequence */
	__u32 pad;
	__u64 t_ns;		/* arrival of the request's last segment */
};

struct flowq {
	__u32 head;		/* free-running: next request to answer */
	__u32 tail;		/* free-running: next free entry */
	__u32 rcv_nxt;		/* highest end sequence received */
	__u32 snd_nxt;		/* highest end sequence sent */
	__u32 done;		/* highest expected ack answered or evicted */
	__u8 rcv_init, snd_init, done_init;
	__u8 resp_open;		/* the last response sent had no PSH yet */
	struct fq_ent e[FQ_LEN];
};

enum fq_result {
	FQ_NONE,		/* no data: pure ACK */
	FQ_PART,		/* data, not the end of a request or start of a response */
	FQ_DUP,			/* retransmission */
	FQ_QUEUED,		/* a request queued */
	FQ_FULL,		/* a request not queued: FQ_LEN already pending */
	FQ_MATCHED,		/* a response answered a request: *lat_ns set */
	FQ_UNSOLICITED,		/* a response with no pending request it can answer */
};

/* Return true when sequence a comes after b (mod 2^32). */
static __always_inline int fq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/*
 * Account an inbound data segment [seq, seq+len) at t_ns.  *new_bytes gets
 * how far it moved the highest sequence received (payload bytes, counted
 * once even when retransmitted).
 */
static __always_inline enum fq_result fq_request(struct flowq *q, __u32 seq, __u32 len,
						 int psh, __u64 t_ns, __u32 *new_bytes)
{
	__u32 end = seq + len, head, tail, i, pos;

	*new_bytes = 0;
	if (len == 0)
		return FQ_NONE;
	if (!q->rcv_init) {
		q->rcv_init = 1;
		q->rcv_nxt = seq;
	}
	if (fq_after(end, q->rcv_nxt)) {
		*new_bytes = fq_after(seq, q->rcv_nxt) ? len : end - q->rcv_nxt;
		q->rcv_nxt = end;
	}
	if (!psh)
		return FQ_PART;
	if (q->done_init && !fq_after(end, q->done))
		return FQ_DUP;
	head = *(volatile __u32 *)&q->head;
	tail = q->tail;
	if (tail - head > FQ_LEN)
		head = tail - FQ_LEN;
	for (i = 0; i < FQ_LEN; i++) {
		if (head + i == tail)
			break;
		if (q->e[(head + i) & (FQ_LEN - 1)].ack == end)
			return FQ_DUP;
	}
	if (tail - head >= FQ_LEN)
		return FQ_FULL;
	pos = tail;
	q->e[pos & (FQ_LEN - 1)].ack = end;
	q->e[pos & (FQ_LEN - 1)].t_ns = t_ns;
	/* A segment that filled a gap goes before the later requests. */
	for (i = 0; i < FQ_LEN - 1; i++) {
		struct fq_ent *cur, *prev, tmp;

		if (pos == head)
			break;
		cur = &q->e[pos & (FQ_LEN - 1)];
		prev = &q->e[(pos - 1) & (FQ_LEN - 1)];
		if (!fq_after(prev->ack, cur->ack))
			break;
		tmp = *prev;
		*prev = *cur;
		*cur = tmp;
		pos--;
	}
	*(volatile __u32 *)&q->tail = tail + 1;
	return FQ_QUEUED;
}

/*
 * Account an outbound data segment [seq, seq+len) acking ack at t_ns.
 * Pending requests older than timeout_ns when a response starts are
 * evicted first (*evicted counts them, *evicted_age_ns is the age of the
 * oldest).  On FQ_MATCHED, *lat_ns is the request's host latency.
 */
static __always_inline enum fq_result fq_response(struct flowq *q, __u32 seq, __u32 len,
						  __u32 ack, int psh, __u64 t_ns,
						  __u64 timeout_ns, __u32 *new_bytes,
						  __u32 *evicted, __u64 *evicted_age_ns,
						  __u64 *lat_ns)
{
	__u32 end = seq + len, head, tail, i;
	int start;
	struct fq_ent *e;

	*new_bytes = 0;
	*evicted = 0;
	*evicted_age_ns = 0;
	*lat_ns = 0;
	if (len == 0)
		return FQ_NONE;
	if (q->snd_init && !fq_after(end, q->snd_nxt))
		return FQ_DUP;
	if (!q->snd_init) {
		q->snd_init = 1;
		q->snd_nxt = seq;
	}
	*new_bytes = fq_after(seq, q->snd_nxt) ? len : end - q->snd_nxt;
	q->snd_nxt = end;
	start = !q->resp_open;
	q->resp_open = !psh;
	if (!start)
		return FQ_PART;
	head = q->head;
	tail = *(volatile __u32 *)&q->tail;
	if (tail - head > FQ_LEN)
		head = tail - FQ_LEN;
	for (i = 0; i < FQ_LEN; i++) {
		if (head == tail)
			break;
		e = &q->e[head & (FQ_LEN - 1)];
		if (t_ns < e->t_ns || t_ns - e->t_ns <= timeout_ns)
			break;
		if (!*evicted)
			*evicted_age_ns = t_ns - e->t_ns;
		if (!q->done_init || fq_after(e->ack, q->done))
			q->done = e->ack;
		q->done_init = 1;
		head++;
		(*evicted)++;
	}
	if (head == tail) {
		*(volatile __u32 *)&q->head = head;
		return FQ_UNSOLICITED;
	}
	e = &q->e[head & (FQ_LEN - 1)];
	if (fq_after(e->ack, ack)) {
		*(volatile __u32 *)&q->head = head;
		return FQ_UNSOLICITED;
	}
	*lat_ns = t_ns > e->t_ns ? t_ns - e->t_ns : 0;
	if (!q->done_init || fq_after(e->ack, q->done))
		q->done = e->ack;
	q->done_init = 1;
	*(volatile __u32 *)&q->head = head + 1;
	return FQ_MATCHED;
}

/* Return the requests waiting for a response. */
static __always_inline __u32 fq_pending(const struct flowq *q)
{
	__u32 n = q->tail - q->head;

	return n > FQ_LEN ? FQ_LEN : n;
}

#endif
