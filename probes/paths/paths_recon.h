/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Request paths from socket activity (after vPath), in user space: no
 * libbpf here, so the logic is unit-tested on synthetic records.
 *
 * Input: the paths probe's records (struct path_rec), one per send or
 * receive on a TCP socket, in the order the ring buffer gives them (per
 * thread in program order; across threads in causal order).
 *
 * What is attributed:
 *  - Consecutive calls of one thread in one direction on one connection
 *    form one message (until another thread uses that connection).
 *  - On a server connection (one this end accepted), the
 *    n-th inbound message is a request and the n-th reply message answers
 *    it (synchronous request-reply; pipelined requests pair in order).  The
 *    reply may come from another thread than the one that received.
 *  - A message sent on a client connection is a downstream call; the next
 *    message received on that connection is its reply.  The call belongs to
 *    the request the sending thread last received and has not yet answered.
 *  - A call made by a thread with no such request (a pure client, or work
 *    handed to another thread) becomes a request of its own with no entry
 *    connection (entry "-"): its path is the call alone.
 * What is not: calls made by a thread other than the one that received the
 * request, requests interleaved on one thread by an event loop (calls go to
 * the newest), and requests split or merged by the application (two
 * requests read in one receive are one message).
 */
#ifndef LATOP_PATHS_RECON_H
#define LATOP_PATHS_RECON_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "paths.h"

/* A connection as one end saw it. */
struct recon_tuple {
	uint8_t laddr[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t raddr[16];
	uint16_t lport, rport;
};

struct recon_call {
	struct recon_tuple conn;
	uint32_t seq;		/* TCP sequence number of the call's first byte */
	uint64_t start_ns;	/* first send of the call returned */
	uint64_t end_ns;	/* last receive of its reply returned (0: no reply yet) */
	uint64_t bytes_out, bytes_in;
	struct recon_req *req;
};

struct recon_req {
	uint64_t id;		/* unique within one recon */
	uint32_t tgid, tid;	/* the thread that received it (or made the call) */
	char comm[PATH_COMM_LEN + 1];
	uint64_t cgroup;	/* that thread's cgroup v2 id */
	bool client;		/* no entry connection: a call made outside any request */
	struct recon_tuple entry;	/* the connection it arrived on (!client) */
	uint32_t seq;		/* TCP sequence number of its first byte (!client) */
	uint64_t nth;		/* its index among the requests of that connection seen */
	uint64_t start_ns;	/* first receive of the request returned */
	uint64_t end_ns;	/* last send of the reply returned */
	uint64_t bytes_in, bytes_out;
	size_t ncalls, cap;
	struct recon_call **calls;	/* in the order they were made */
	/* internal */
	unsigned refs;
	bool done;
};

struct recon_stats {
	uint64_t records;	/* records fed */
	uint64_t requests;	/* requests completed (including client ones) */
	uint64_t stray_replies;	/* reply messages on a server connection with no request open */
	uint64_t stray_call_replies;	/* messages received on a client connection with no call open */
	uint64_t unanswered;	/* requests given up when their connection went idle */
	uint64_t threads, conns;	/* held now */
};

struct recon;

/* Called once per completed request; r is valid during the call only. */
typedef void (*recon_done_fn)(void *ctx, const struct recon_req *r);

struct recon *recon_new(recon_done_fn done, void *ctx);
void recon_free(struct recon *rc);
/* Feed one record. */
void recon_add(struct recon *rc, const struct path_rec *rec);
/*
 * At now_ns (the records' clock): end every message whose thread has been
 * quiet for grace_ns (so a reply whose thread waits for the next request
 * completes), and forget threads and connections idle for idle_ns.
 */
void recon_flush(struct recon *rc, uint64_t now_ns, uint64_t grace_ns, uint64_t idle_ns);
const struct recon_stats *recon_stats(const struct recon *rc);

/* Time of r spent waiting on its calls (union of their intervals in r). */
uint64_t recon_down_ns(const struct recon_req *r);
/* "10.0.0.5:3306" or "[::1]:8080" for the remote end of t. */
void recon_remote(const struct recon_tuple *t, char *buf, size_t len);
/* Format an address (v4-mapped as a.b.c.d). */
void recon_addr(const uint8_t a[16], char *buf, size_t len);
/* The path shape: ":8080 → 10.0.0.5:3306 ×20, 10.0.0.6:11211 ×1" ("-" as entry for client). */
void recon_shape(const struct recon_req *r, char *buf, size_t len);

#endif
