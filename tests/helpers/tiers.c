/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A small multi-tier request/reply service with known paths, for the paths
 * view's tests and benchmark.  Every tier is the same program:
 *
 *   tiers serve -p PORT [-b ADDR] [-w WORKERS] [-d DELAY_US] [-r REPLY_BYTES]
 *               [-k CHUNK_BYTES] [-c HOST:PORT:K[:V]]... [-t TRUTH] [-H]
 *       Listens on ADDR:PORT (default 127.0.0.1).  WORKERS threads (default 4)
 *       each accept one connection and serve it until it closes.  A request
 *       is a 16-byte header {magic, fan, reply_bytes, 0}.  For it the worker
 *       makes, for each -c downstream in order, K + fan % (V + 1) calls
 *       (each: send the header on asking for a REPLY_BYTES reply (default
 *       64, at least 16), read the whole reply), sleeps DELAY_US, and
 *       writes the reply its caller asked for in writes of CHUNK_BYTES
 *       (default: one write).  Downstream connections
 *       are per worker and persistent.  -H hands each request to a second
 *       thread after reading it: that thread makes the calls and replies.
 *       TRUTH gets one line per request, written as the reply is sent:
 *         lport rport nth t_first_read_ns t_last_write_ns lat_ns calls shape
 *       (nth counts requests per connection; shape as latop prints it, e.g.
 *       ":9001 → 127.0.0.1:9002 ×2"; times CLOCK_MONOTONIC).
 *
 *   tiers client -c HOST:PORT [-C CLIENTS] [-n REQUESTS] [-f FANMOD] [-r BYTES] [-t TRUTH]
 *       CLIENTS threads (default 2), each on its own connection, send
 *       REQUESTS requests (default 100; replies of BYTES) one after another with fan =
 *       (i * 7 + thread) % FANMOD (default 3).  TRUTH gets one line per request:
 *         cport i fan lat_ns
 *
 *   tiers pingpong -c HOST:PORT -n N        N 1-byte round trips; prints ns per trip
 *                                           (median over batches of 256, then the mean)
 *   tiers echo -p PORT [-b ADDR]             1-byte echo server for pingpong
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "helper.h"

#define MAGIC 0x54494552u	/* "TIER" */
#define MAX_DOWN 8

struct hdr {
	uint32_t magic, fan, reply_bytes, pad;
};

struct down {
	struct sockaddr_in sa;
	char name[64];		/* "127.0.0.1:9002" */
	unsigned k, v;
};

static struct down downs[MAX_DOWN];
static int ndowns;
static struct sockaddr_in listen_sa;
static unsigned delay_us, reply_bytes = 64, chunk_bytes, workers = 4;
static bool handoff;
static int truth_fd = -1;
static int listen_fd;

/* Parse HOST:PORT into sa; false when malformed. */
static bool parse_addr(const char *s, struct sockaddr_in *sa, const char **rest)
{
	char host[64];
	const char *colon = strchr(s, ':');
	char *end;
	long port;

	if (!colon || colon - s >= (long)sizeof(host))
		return false;
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	port = strtol(colon + 1, &end, 10);
	if (port <= 0 || port > 65535)
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return false;
	if (rest)
		*rest = end;
	return true;
}

/* Read exactly len bytes; the time the first read returned goes to *t_first. */
static bool read_full(int fd, void *buf, size_t len, uint64_t *t_first)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return false;
		}
		if (!got && t_first)
			*t_first = now_ns();
		got += n;
	}
	return true;
}

/* Write len bytes in writes of at most chunk (0: one write). */
static bool write_full(int fd, const void *buf, size_t len, size_t chunk)
{
	size_t off = 0;

	while (off < len) {
		size_t want = chunk && len - off > chunk ? chunk : len - off;
		ssize_t n = write(fd, (const char *)buf + off, want);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return false;
		}
		off += n;
	}
	return true;
}

static int connect_to(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; connect(fd, (const struct sockaddr *)sa, sizeof(*sa)); i++) {
		if (i > 200)
			die("connect");
		usleep(10000);
	}
	return fd;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One request being served. */
struct job {
	int fd;			/* the connection it came on */
	struct hdr h;
	uint64_t t0;
	uint16_t lport, rport;
	uint64_t nth;
	int *dfd;		/* the serving thread's downstream connections */
	char *reply;
};

/* Make the calls, sleep, reply, and write the truth line. */
static bool serve_job(struct job *j)
{
	char line[1024], shape[768];
	unsigned calls = 0;
	size_t off;
	int d;
	static __thread char *buf;

	if (!buf && !(buf = malloc(1 << 20)))
		die("malloc");

	off = snprintf(shape, sizeof(shape), ":%u", j->lport);
	for (d = 0; d < ndowns; d++) {
		unsigned n = downs[d].k + j->h.fan % (downs[d].v + 1);
		struct hdr h = {MAGIC, j->h.fan, reply_bytes, 0};

		if (!n)
			continue;
		if (j->dfd[d] < 0)
			j->dfd[d] = connect_to(&downs[d].sa);
		for (unsigned i = 0; i < n; i++) {
			if (!write_full(j->dfd[d], &h, sizeof(h), 0) ||
			    !read_full(j->dfd[d], buf, h.reply_bytes, NULL))
				die("downstream call");
		}
		calls += n;
		off += snprintf(shape + off, sizeof(shape) - off, "%s%s ×%u",
				calls == n ? " → " : ", ", downs[d].name, n);
	}
	if (delay_us)
		sleep_us(delay_us);
	memcpy(j->reply, &(uint32_t){MAGIC}, 4);
	if (!write_full(j->fd, j->reply, j->h.reply_bytes, chunk_bytes))
		return false;
	uint64_t t1 = now_ns();
	if (truth_fd >= 0) {
		int n = snprintf(line, sizeof(line), "%u %u %llu %llu %llu %llu %u %s\n",
				 j->lport, j->rport, (unsigned long long)j->nth,
				 (unsigned long long)j->t0, (unsigned long long)t1,
				 (unsigned long long)(t1 - j->t0), calls, shape);
		if (write(truth_fd, line, n) != n)
			die("writing truth");
	}
	return true;
}

/* Handoff mode: the second thread of a worker. */
struct handoff_slot {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *job;
	bool done, ok;
};

static void *handoff_main(void *arg)
{
	struct handoff_slot *s = arg;

	for (;;) {
		struct job *j;

		pthread_mutex_lock(&s->mu);
		while (!s->job)
			pthread_cond_wait(&s->cv, &s->mu);
		j = s->job;
		pthread_mutex_unlock(&s->mu);
		bool ok = serve_job(j);
		pthread_mutex_lock(&s->mu);
		s->job = NULL;
		s->done = true;
		s->ok = ok;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

/* A worker: accept a connection, serve it until it closes, again. */
static void *worker_main(void *arg)
{
	int dfd[MAX_DOWN];
	struct handoff_slot slot = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, false, false};
	char *reply = calloc(1, 1 << 20);
	pthread_t helper;

	(void)arg;
	for (int d = 0; d < MAX_DOWN; d++)
		dfd[d] = -1;
	if (handoff && pthread_create(&helper, NULL, handoff_main, &slot))
		die("pthread_create");
	for (;;) {
		struct sockaddr_in sa, la;
		socklen_t sl = sizeof(sa), ll = sizeof(la);
		int fd = accept(listen_fd, (struct sockaddr *)&sa, &sl), one = 1;
		uint64_t nth = 0;

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		getsockname(fd, (struct sockaddr *)&la, &ll);
		for (;;) {
			struct job j = {.fd = fd, .dfd = dfd, .reply = reply};

			if (!read_full(fd, &j.h, sizeof(j.h), &j.t0))
				break;
			if (j.h.magic != MAGIC || j.h.reply_bytes < 16 || j.h.reply_bytes > (1 << 20))
				break;
			j.lport = ntohs(la.sin_port);
			j.rport = ntohs(sa.sin_port);
			j.nth = nth++;
			if (!handoff) {
				if (!serve_job(&j))
					break;
				continue;
			}
			pthread_mutex_lock(&slot.mu);
			slot.done = false;
			slot.job = &j;
			pthread_cond_broadcast(&slot.cv);
			while (!slot.done)
				pthread_cond_wait(&slot.cv, &slot.mu);
			pthread_mutex_unlock(&slot.mu);
			if (!slot.ok)
				break;
		}
		close(fd);
	}
	return NULL;
}

static int listen_on(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&listen_sa, sizeof(listen_sa)))
		die("bind");
	if (listen(fd, 128))
		die("listen");
	return fd;
}

static void open_truth(const char *path)
{
	truth_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	if (truth_fd < 0)
		die(path);
}

static _Noreturn void serve(void)
{
	pthread_t t;

	listen_fd = listen_on();
	for (unsigned i = 0; i < workers; i++)
		if (pthread_create(&t, NULL, worker_main, NULL))
			die("pthread_create");
	printf("listening\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* The client side. */
static struct sockaddr_in target;
static unsigned nrequests = 100, fanmod = 3;
static pthread_mutex_t truth_mu = PTHREAD_MUTEX_INITIALIZER;

static void *client_main(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	int fd = connect_to(&target);
	struct sockaddr_in la;
	socklen_t ll = sizeof(la);
	char *buf = malloc(1 << 20);

	getsockname(fd, (struct sockaddr *)&la, &ll);
	for (unsigned i = 0; i < nrequests; i++) {
		struct hdr h = {MAGIC, (i * 7 + idx) % fanmod, reply_bytes, 0};
		uint64_t t0 = now_ns(), t1;

		if (!write_full(fd, &h, sizeof(h), 0) || !read_full(fd, buf, reply_bytes, NULL))
			die("request");
		t1 = now_ns();
		if (truth_fd >= 0) {
			char line[128];
			int n = snprintf(line, sizeof(line), "%u %u %u %llu\n", ntohs(la.sin_port),
					 i, h.fan, (unsigned long long)(t1 - t0));

			pthread_mutex_lock(&truth_mu);
			if (write(truth_fd, line, n) != n)
				die("writing truth");
			pthread_mutex_unlock(&truth_mu);
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

static int client(unsigned nclients)
{
	pthread_t t[256];

	if (nclients > 256)
		nclients = 256;
	for (unsigned i = 0; i < nclients; i++)
		if (pthread_create(&t[i], NULL, client_main, (void *)(uintptr_t)i))
			die("pthread_create");
	for (unsigned i = 0; i < nclients; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Order two doubles, for qsort. */
static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* 1-byte round trips for the benchmark: prints the median over batches of
 * 256 trips of ns per trip (a batch during which another tenant took the
 * CPU is an outlier the median ignores), then the mean. */
static int pingpong(unsigned n)
{
	int fd = connect_to(&target);
	unsigned nb = n / 256 ? n / 256 : 1, b;
	double *per = calloc(nb, sizeof(*per));
	char c = 'x';
	uint64_t t0 = now_ns(), tb;

	for (b = 0; b < nb; b++) {
		tb = now_ns();
		for (unsigned i = 0; i < 256; i++)
			if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
				die("pingpong");
		per[b] = (double)(now_ns() - tb) / 256;
	}
	qsort(per, nb, sizeof(*per), dbl_cmp);
	printf("%.1f %.1f\n", per[nb / 2], (double)(now_ns() - t0) / (nb * 256.0));
	free(per);
	return 0;
}

static void *echo_main(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;
	char c;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (read(fd, &c, 1) == 1 && write(fd, &c, 1) == 1)
		;
	close(fd);
	return NULL;
}

static _Noreturn void echo(void)
{
	listen_fd = listen_on();
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			die("accept");
		if (pthread_create(&t, NULL, echo_main, (void *)(intptr_t)fd))
			die("pthread_create");
		pthread_detach(t);
	}
}

static _Noreturn void usage(void)
{
	fprintf(stderr, "usage: tiers serve -p PORT [-b ADDR] [-w N] [-d US] [-r BYTES] [-k BYTES] "
		"[-c HOST:PORT:K[:V]]... [-t FILE] [-H]\n"
		"       tiers client -c HOST:PORT [-C N] [-n N] [-f FANMOD] [-r BYTES] [-t FILE]\n"
		"       tiers pingpong -c HOST:PORT -n N\n"
		"       tiers echo -p PORT [-b ADDR]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned nclients = 2;
	int opt;

	listen_sa.sin_family = AF_INET;
	listen_sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	signal(SIGPIPE, SIG_IGN);
	optind = 2;
	while ((opt = getopt(argc, argv, "p:b:w:d:r:k:c:t:HC:n:f:")) != -1) {
		switch (opt) {
		case 'p':
			listen_sa.sin_port = htons(atoi(optarg));
			break;
		case 'b':
			if (inet_pton(AF_INET, optarg, &listen_sa.sin_addr) != 1)
				usage();
			break;
		case 'w': workers = atoi(optarg); break;
		case 'd': delay_us = atoi(optarg); break;
		case 'r': reply_bytes = atoi(optarg); break;
		case 'k': chunk_bytes = atoi(optarg); break;
		case 't': open_truth(optarg); break;
		case 'H': handoff = true; break;
		case 'C': nclients = atoi(optarg); break;
		case 'n': nrequests = atoi(optarg); break;
		case 'f': fanmod = atoi(optarg) ? atoi(optarg) : 1; break;
		case 'c':
			if (!strcmp(mode, "serve")) {
				const char *rest;
				struct down *d = &downs[ndowns];

				if (ndowns >= MAX_DOWN || !parse_addr(optarg, &d->sa, &rest) ||
				    *rest != ':')
					usage();
				d->k = strtoul(rest + 1, (char **)&rest, 10);
				d->v = *rest == ':' ? strtoul(rest + 1, NULL, 10) : 0;
				snprintf(d->name, sizeof(d->name), "%.*s", (int)(strchr(optarg, ':') - optarg), optarg);
				snprintf(d->name + strlen(d->name), sizeof(d->name) - strlen(d->name),
					 ":%u", ntohs(d->sa.sin_port));
				ndowns++;
			} else if (!parse_addr(optarg, &target, NULL)) {
				usage();
			}
			break;
		default:
			usage();
		}
	}
	if (reply_bytes < 16 || reply_bytes > (1 << 20))
		usage();
	if (!strcmp(mode, "serve") && listen_sa.sin_port)
		serve();
	if (!strcmp(mode, "client") && target.sin_port)
		return client(nclients);
	if (!strcmp(mode, "pingpong") && target.sin_port)
		return pingpong(nrequests);
	if (!strcmp(mode, "echo") && listen_sa.sin_port)
		echo();
	usage();
}
