/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A TCP request/response server and client for the flows tests, with the
 * server's own account of every request as ground truth.
 *
 *   reqsrv server ADDR PORT CONNS [WORKERS]
 *       Listens on ADDR:PORT (IPv4 or IPv6), serves CONNS connections with
 *       WORKERS threads (default 2), then exits.  Prints "ready" once it
 *       listens.  On exit prints one line per request:
 *           req LPORT RPORT SEQ TRUTH_NS ANSWERED
 *       TRUTH_NS is the time from the recv() that completed the request
 *       returning to the send() of its response starting.
 *
 *   reqsrv client ADDR PORT N [-P pipeline] [-s req_bytes] [-r resp_bytes]
 *                 [-d delay_us] [-x unanswered_index] [-n rename_index]
 *                 [-w wait_ms] [-g gap_us] [-b bind_addr] [-o]
 *       Opens one connection, sends N requests and reads their responses,
 *       P at a time (each request its own send(), gap_us apart), then
 *       closes.  The server waits delay_us before each response.  Request
 *       number X (0-based) asks the server not to answer, request number
 *       R to rename its serving thread reqsrv-renamed once it has answered;
 *       the client then waits wait_ms before going on; -b binds the
 *       client's end to an address first; -o (IPv4) sends with 4 bytes of IP
 *       options (a 24-byte IP header) and asks the server to answer with
 *       them too.  Prints "client LPORT" at the end.
 *
 *   reqsrv many PORT CONNS ROUNDS [PAUSE_MS [RENAME_ROUND [EVERY]]]
 *       Opens CONNS keep-alive connections to itself on 127.0.0.1:PORT, all
 *       open at once, then ROUNDS times sends one 8-byte request on every
 *       one and answers each with 8 bytes; prints "requests N" (CONNS *
 *       ROUNDS) at the end.  Raises its open-file limit to fit.  The first
 *       request goes PAUSE_MS after the last connection is made.  Before
 *       round RENAME_ROUND (0-based) it renames itself reqsrv-renamed; with
 *       EVERY, again every EVERY rounds after, reqsrv and reqsrv-renamed
 *       in turn.
 *
 *   reqsrv churn PORT CONNS ROUNDS
 *       Makes CONNS short connections to itself on 127.0.0.1:PORT, one
 *       after another, from 127.0.0.2 to 127.0.0.251 in turn (so that
 *       most 4-tuples are new): each sends ROUNDS 8-byte requests, each answered
 *       with 8 bytes, and the server closes it first (so its end, not the
 *       client's, waits in TIME_WAIT, and the client's ports come back at
 *       once); prints "requests N" (CONNS * ROUNDS) at the end.
 *
 * A request is a 16-byte header {u32 req_bytes, resp_bytes, delay_us,
 * flags} and padding up to req_bytes; a response is resp_bytes bytes.
 * Both ends set TCP_NODELAY.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "helper.h"

#define F_NOANSWER 1
#define F_RENAME 2
#define F_IPOPT 4
#define MAX_REQ (1 << 20)
#define MAX_LOG 100000

struct hdr {
	uint32_t req_bytes, resp_bytes, delay_us, flags;
};

struct logent {
	unsigned lport, rport, seq;
	uint64_t truth_ns;
	int answered;
};

static int lfd, conns_left;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct logent *log_ents;
static size_t nlog;

/* Sleep us microseconds. */
static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Fill sa from ADDR and PORT; return its length. */
static socklen_t make_addr(const char *addr, int port, struct sockaddr_storage *sa)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	fprintf(stderr, "reqsrv: bad address '%s'\n", addr);
	exit(2);
}

/* Return the port of a socket's local (peer == 0) or remote end. */
static unsigned sock_port(int fd, int peer)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if ((peer ? getpeername(fd, (struct sockaddr *)&sa, &len) :
		    getsockname(fd, (struct sockaddr *)&sa, &len)))
		die("getsockname");
	return ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
					       ((struct sockaddr_in6 *)&sa)->sin6_port);
}

/* Send on IPv4 socket fd with 4 bytes of IP options (three NOPs, an end):
 * a 24-byte IP header. */
static void set_ip_options(int fd)
{
	static const unsigned char opts[4] = {1, 1, 1, 0};

	if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opts, sizeof(opts)))
		die("setsockopt IP_OPTIONS");
}

/* Write all of buf. */
static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("send");
		p += n;
		len -= (size_t)n;
	}
}

/* Read exactly len bytes; return 0 at a clean EOF before any byte. */
static int recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, p + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			die("recv");
		got += (size_t)n;
	}
	return 1;
}

/* Serve one connection: parse requests as recv() returns them, answer in order. */
static void serve(int fd)
{
	char *buf = malloc(2 * MAX_REQ), *resp = calloc(1, MAX_REQ);
	unsigned lport = sock_port(fd, 0), rport = sock_port(fd, 1), seq = 0;
	size_t have = 0;
	int one = 1;

	if (!buf || !resp)
		die("malloc");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		ssize_t n = recv(fd, buf + have, 2 * MAX_REQ - have, 0);
		uint64_t t_recv = now_ns();

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		/* Answer every request this recv() completed. */
		while (have >= sizeof(struct hdr)) {
			struct hdr h;
			struct logent e;

			memcpy(&h, buf, sizeof(h));
			if (h.req_bytes < sizeof(h) || h.req_bytes > MAX_REQ ||
			    h.resp_bytes < 1 || h.resp_bytes > MAX_REQ) {
				fprintf(stderr, "reqsrv: bad request header\n");
				exit(1);
			}
			if (have < h.req_bytes)
				break;
			e.lport = lport;
			e.rport = rport;
			e.seq = seq++;
			e.answered = !(h.flags & F_NOANSWER);
			e.truth_ns = 0;
			if (h.flags & F_IPOPT)
				set_ip_options(fd);
			if (e.answered) {
				uint64_t t_send;

				if (h.delay_us)
					sleep_us(h.delay_us);
				t_send = now_ns();
				e.truth_ns = t_send - t_recv;
				send_all(fd, resp, h.resp_bytes);
			}
			if ((h.flags & F_RENAME) && prctl(PR_SET_NAME, "reqsrv-renamed", 0, 0, 0))
				die("prctl PR_SET_NAME");
			memmove(buf, buf + h.req_bytes, have - h.req_bytes);
			have -= h.req_bytes;
			pthread_mutex_lock(&mu);
			if (nlog < MAX_LOG)
				log_ents[nlog++] = e;
			pthread_mutex_unlock(&mu);
		}
	}
	close(fd);
	free(buf);
	free(resp);
}

/* A worker: accept and serve connections until CONNS have been taken. */
static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		int fd;

		pthread_mutex_lock(&mu);
		if (conns_left == 0) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		conns_left--;
		pthread_mutex_unlock(&mu);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept");
		serve(fd);
	}
}

/* reqsrv server ADDR PORT CONNS [WORKERS] */
static int run_server(int argc, char **argv)
{
	struct sockaddr_storage sa;
	socklen_t len;
	pthread_t th[64];
	int nw, i, one = 1;
	size_t k;

	if (argc < 3)
		return 2;
	len = make_addr(argv[0], atoi(argv[1]), &sa);
	conns_left = atoi(argv[2]);
	nw = argc > 3 ? atoi(argv[3]) : 2;
	if (nw < 1 || nw > 64)
		nw = 2;
	log_ents = calloc(MAX_LOG, sizeof(*log_ents));
	lfd = socket(sa.ss_family, SOCK_STREAM, 0);
	if (lfd < 0 || !log_ents)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, len) || listen(lfd, 128))
		die("bind/listen");
	printf("ready %u\n", sock_port(lfd, 0));
	fflush(stdout);
	for (i = 0; i < nw; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			die("pthread_create");
	for (i = 0; i < nw; i++)
		pthread_join(th[i], NULL);
	for (k = 0; k < nlog; k++)
		printf("req %u %u %u %llu %d\n", log_ents[k].lport, log_ents[k].rport,
		       log_ents[k].seq, (unsigned long long)log_ents[k].truth_ns,
		       log_ents[k].answered);
	return 0;
}

/* reqsrv client ADDR PORT N [options] */
static int run_client(int argc, char **argv)
{
	struct sockaddr_storage sa;
	socklen_t len;
	long n, pipe = 1, req = 64, resp = 64, delay = 0, skip = -1, rename = -1, wait_ms = 0;
	long gap = 0, i, j;
	char *buf, *rbuf;
	const char *bind_addr = NULL;
	int fd, one = 1, opt, ipopt = 0;

	if (argc < 3)
		return 2;
	len = make_addr(argv[0], atoi(argv[1]), &sa);
	n = atol(argv[2]);
	optind = 3;
	while ((opt = getopt(argc, argv, "P:s:r:d:x:n:w:g:b:o")) != -1) {
		long v = optarg ? atol(optarg) : 0;

		switch (opt) {
		case 'P': pipe = v; break;
		case 's': req = v; break;
		case 'r': resp = v; break;
		case 'd': delay = v; break;
		case 'x': skip = v; break;
		case 'n': rename = v; break;
		case 'w': wait_ms = v; break;
		case 'g': gap = v; break;
		case 'b': bind_addr = optarg; break;
		case 'o': ipopt = 1; break;
		default: return 2;
		}
	}
	if (pipe < 1 || req < (long)sizeof(struct hdr) || req > MAX_REQ || resp < 1 ||
	    resp > MAX_REQ)
		return 2;
	buf = calloc(1, req);
	rbuf = malloc(resp);
	fd = socket(sa.ss_family, SOCK_STREAM, 0);
	if (!buf || !rbuf || fd < 0)
		die("socket");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind_addr) {
		struct sockaddr_storage ba;
		socklen_t blen = make_addr(bind_addr, 0, &ba);

		if (bind(fd, (struct sockaddr *)&ba, blen))
			die("bind");
	}
	if (ipopt)
		set_ip_options(fd);
	if (connect(fd, (struct sockaddr *)&sa, len))
		die("connect");
	for (i = 0; i < n; i += pipe) {
		long batch = n - i < pipe ? n - i : pipe, answered = 0;

		for (j = 0; j < batch; j++) {
			struct hdr h = {req, resp, delay, (i + j == skip ? F_NOANSWER : 0) |
						      (i + j == rename ? F_RENAME : 0) |
						      (ipopt ? F_IPOPT : 0)};

			memcpy(buf, &h, sizeof(h));
			send_all(fd, buf, req);
			answered += !(h.flags & F_NOANSWER);
			if (gap && j + 1 < batch)
				sleep_us(gap);
		}
		for (j = 0; j < answered; j++)
			if (!recv_all(fd, rbuf, resp))
				die("early EOF");
		if (((skip >= i && skip < i + batch) || (rename >= i && rename < i + batch)) &&
		    wait_ms)
			sleep_us(wait_ms * 1000);
	}
	printf("client %u\n", sock_port(fd, 0));
	close(fd);
	return 0;
}

/* Read or write exactly n bytes on fd, or die naming what. */
static void full_io(int fd, char *buf, size_t n, bool wr, const char *what)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = wr ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);

		if (r <= 0)
			die(what);
		done += (size_t)r;
	}
}

/* Listen on 127.0.0.1:port (lfd); sa and the return: its address. */
static socklen_t listen_loopback(int port, struct sockaddr_storage *sa)
{
	socklen_t len = make_addr("127.0.0.1", port, sa);
	int one = 1;

	lfd = socket(sa->ss_family, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)sa, len) || listen(lfd, 128))
		die("listen");
	return len;
}

/* reqsrv many PORT CONNS ROUNDS [PAUSE_MS [RENAME_ROUND [EVERY]]]: CONNS
 * connections at once, ROUNDS requests each, the first PAUSE_MS after the
 * last connection, renamed at RENAME_ROUND and every EVERY rounds after. */
static int run_many(int argc, char **argv)
{
	struct sockaddr_storage sa;
	struct rlimit rl;
	int port, conns, rounds, pause_ms, rename_round, every, one = 1, *cli, *srv, i, r;
	char buf[8] = "request";
	socklen_t len;

	if (argc < 3 || argc > 6)
		return 2;
	port = atoi(argv[0]);
	conns = atoi(argv[1]);
	rounds = atoi(argv[2]);
	pause_ms = argc >= 4 ? atoi(argv[3]) : 0;
	rename_round = argc >= 5 ? atoi(argv[4]) : -1;
	every = argc == 6 ? atoi(argv[5]) : 0;
	if (conns <= 0 || rounds <= 0 || (argc == 6 && every <= 0))
		return 2;
	rl.rlim_cur = rl.rlim_max = (rlim_t)conns * 2 + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("raising the open-file limit");
	len = listen_loopback(port, &sa);
	cli = calloc((size_t)conns, sizeof(*cli));
	srv = calloc((size_t)conns, sizeof(*srv));
	if (!cli || !srv)
		die("calloc");
	for (i = 0; i < conns; i++) {
		cli[i] = socket(sa.ss_family, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&sa, len))
			die("connect");
		srv[i] = accept(lfd, NULL, NULL);
		if (srv[i] < 0)
			die("accept");
		setsockopt(cli[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(srv[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (pause_ms > 0)
		usleep((useconds_t)pause_ms * 1000);
	for (r = 0; r < rounds; r++) {
		if (rename_round >= 0 && r >= rename_round &&
		    (every ? (r - rename_round) % every == 0 : r == rename_round) &&
		    prctl(PR_SET_NAME,
			  every && (r - rename_round) / every % 2 ? "reqsrv" : "reqsrv-renamed",
			  0, 0, 0))
			die("prctl PR_SET_NAME");
		for (i = 0; i < conns; i++)
			full_io(cli[i], buf, sizeof(buf), true, "sending a request");
		for (i = 0; i < conns; i++) {
			full_io(srv[i], buf, sizeof(buf), false, "reading a request");
			full_io(srv[i], buf, sizeof(buf), true, "answering");
		}
		for (i = 0; i < conns; i++)
			full_io(cli[i], buf, sizeof(buf), false, "reading an answer");
	}
	for (i = 0; i < conns; i++) {
		close(cli[i]);
		close(srv[i]);
	}
	printf("requests %lld\n", (long long)conns * rounds);
	return 0;
}

/* reqsrv churn PORT CONNS ROUNDS: CONNS short connections, one after another. */
static int run_churn(int argc, char **argv)
{
	struct sockaddr_storage sa;
	int port, conns, rounds, one = 1, cli, srv, i, r;
	char buf[8] = "request";
	socklen_t len;

	if (argc != 3)
		return 2;
	port = atoi(argv[0]);
	conns = atoi(argv[1]);
	rounds = atoi(argv[2]);
	if (conns <= 0 || rounds <= 0)
		return 2;
	len = listen_loopback(port, &sa);
	for (i = 0; i < conns; i++) {
		struct sockaddr_in from = {.sin_family = AF_INET,
					   .sin_addr.s_addr = htonl(0x7f000002 + i % 250)};

		cli = socket(sa.ss_family, SOCK_STREAM, 0);
		if (cli < 0 || bind(cli, (struct sockaddr *)&from, sizeof(from)) ||
		    connect(cli, (struct sockaddr *)&sa, len))
			die("connect");
		srv = accept(lfd, NULL, NULL);
		if (srv < 0)
			die("accept");
		setsockopt(cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		for (r = 0; r < rounds; r++) {
			full_io(cli, buf, sizeof(buf), true, "sending a request");
			full_io(srv, buf, sizeof(buf), false, "reading a request");
			full_io(srv, buf, sizeof(buf), true, "answering");
			full_io(cli, buf, sizeof(buf), false, "reading an answer");
		}
		close(srv);
		/* The server's FIN, then the client's. */
		if (read(cli, buf, sizeof(buf)) != 0)
			die("reading the server's close");
		close(cli);
	}
	printf("requests %lld\n", (long long)conns * rounds);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc > 1 && !strcmp(argv[1], "server"))
		rc = run_server(argc - 2, argv + 2);
	else if (argc > 1 && !strcmp(argv[1], "client"))
		rc = run_client(argc - 2, argv + 2);
	else if (argc > 1 && !strcmp(argv[1], "many"))
		rc = run_many(argc - 2, argv + 2);
	else if (argc > 1 && !strcmp(argv[1], "churn"))
		rc = run_churn(argc - 2, argv + 2);
	if (rc == 2)
		fprintf(stderr, "usage: reqsrv server ADDR PORT CONNS [WORKERS]\n"
				"       reqsrv client ADDR PORT N [-P pipeline] [-s req_bytes] "
				"[-r resp_bytes] [-d delay_us] [-x unanswered] [-n rename] [-w wait_ms] "
				"[-g gap_us] [-b bind_addr]\n"
				"       reqsrv many PORT CONNS ROUNDS [PAUSE_MS [RENAME_ROUND [EVERY]]]\n"
				"       reqsrv churn PORT CONNS ROUNDS\n");
	return rc;
}
