/* SPDX-License-Identifier: GPL-3.0-or-later */
/* latop serve: the probes behind an HTTP endpoint (see serve.h). */
#ifdef LATOP_NO_SERVE
/* The static build (the Makefile's latop-static) has no libmicrohttpd. */
#include <stdio.h>
#include "serve.h"

const char *const serve_config_keys[] = {"serve_metrics", NULL};

int serve_run(const struct serve_opts *o)
{
	(void)o;
	fprintf(stderr, "latop serve: this latop was built without libmicrohttpd\n");
	return 1;
}
#else
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/snapshot.h"
#include "core/source.h"
#include "core/xalloc.h"
#include "probes/probe.h"
#include "probes/views.h"
#include "queries/expose.h"
#include "queries/query.h"
#include "serve.h"

/* The metrics every serve exposes unless one of the same name replaces it:
 * one a view, its counts and its latency histogram by what names the load. */
static const struct serve_metric_arg default_metrics[] = {
	{"syscalls", "from syscalls group by comm, syscall show count, errors, sum(time)"},
	{"syscall_lat", "from syscalls group by syscall show dist(lat)"},
	{"flows", "from flows group by lport show count, evicted, sum(bytes), dist(lat)"},
	{"paths", "from paths group by lport show count, dist(lat)"},
	{"nvme", "from nvme group by side, op show count, sum(bytes), dist(lat)"},
	{"block", "from block group by dev, op show count, sum(bytes), dist(lat)"},
	{"locks", "from locks group by process show count, sum(time), dist(wait)"},
};

struct metric {
	char *name, *text;
	struct query *q;
	struct query_run *run;		/* the collector's */
	struct expose_keys *keys;	/* the HTTP thread's */
};

/* One metric's results of one tick, shared by reference. */
struct resset {
	int refs;
	uint64_t ticks;			/* ticks collected so far */
	struct result **r;		/* one per metric */
};

/* A tick of the ring, shared by reference with /snapshot writers. */
struct rtick {
	struct tick t;
	uint64_t bytes;
	int refs;
};

struct serve {
	const struct serve_opts *o;
	size_t nm;
	struct metric *m;
	pthread_mutex_t mu;		/* guards what follows, held for pointers only */
	struct resset *cur;
	struct rtick **ring;
	size_t head, n, cap;		/* ring[(head + i) % cap], oldest first */
	uint64_t bytes;
	/* Read-only once the probes are open. */
	struct source_info info;
	bool have_info;
	char *status;
	char *tmpdir;
	unsigned snaps;			/* the HTTP thread's */
};

static volatile sig_atomic_t serve_stop;

/* Note that a signal asked serve to stop. */
static void on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

/* Drop a reference to rs (with s->mu held). */
static void resset_unref(struct serve *s, struct resset *rs)
{
	if (!rs || --rs->refs)
		return;
	for (size_t i = 0; i < s->nm; i++)
		result_free(rs->r[i]);
	free(rs->r);
	free(rs);
}

/* Drop a reference to rt (with s->mu held). */
static void rtick_unref(struct rtick *rt)
{
	if (--rt->refs)
		return;
	tick_done(&rt->t);
	free(rt);
}

/* Whether name can be the NAME of latop_NAME_...: [a-z_][a-z0-9_]*. */
static bool good_name(const char *name)
{
	if (!*name || (*name >= '0' && *name <= '9'))
		return false;
	for (; *name; name++)
		if (!((*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') ||
		      *name == '_'))
			return false;
	return true;
}

/* Add metric name=text to s (replacing one of that name); -1 said. */
static int add_metric(struct serve *s, const char *name, const char *text, const char *where)
{
	size_t nschemas, i;
	const struct schema *const *schemas = views_schemas(&nschemas);
	const struct schema *sc = NULL;
	struct query_error err;
	struct query *q;
	char buf[1024];

	if (!good_name(name)) {
		fprintf(stderr, "latop serve: %s: metric name '%s' is not [a-z_][a-z0-9_]*\n",
			where, name);
		return -1;
	}
	if (!(q = query_parse(text, &err))) {
		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop serve: %s: metric %s: bad query: %s\n", where, name, buf);
		return -1;
	}
	for (i = 0; query_table(q) && i < nschemas && !sc; i++)
		if (!strcmp(schemas[i]->table, query_table(q)))
			sc = schemas[i];
	if (!sc) {
		fprintf(stderr, "latop serve: %s: metric %s: the query needs a FROM of a table "
			"latop has (from syscalls, from flows, ...)\n", where, name);
		query_free(q);
		return -1;
	}
	if (query_bind(q, sc, &err) < 0) {
		query_error_format(text, &err, buf, sizeof(buf));
		fprintf(stderr, "latop serve: %s: metric %s: bad query: %s\n", where, name, buf);
		query_free(q);
		return -1;
	}
	for (i = 0; i < s->nm && strcmp(s->m[i].name, name); i++)
		;
	if (i == s->nm) {
		s->m = xreallocarray(s->m, s->nm + 1, sizeof(*s->m));
		memset(&s->m[s->nm++], 0, sizeof(*s->m));
	} else {
		free(s->m[i].name);
		free(s->m[i].text);
		query_free(s->m[i].q);
	}
	s->m[i].name = xstrdup(name);
	s->m[i].text = xstrdup(text);
	s->m[i].q = q;
	return 0;
}

/* Cut the next item of a ';' list off *p (NULL at its end); a ';' inside a
 * query's quoted string ('a;b', with \' and \\ escapes) does not cut. */
static char *next_item(char **p)
{
	char *item = *p, *c, quote = 0;

	if (!item)
		return NULL;
	for (c = item; *c; c++) {
		if (quote && *c == '\\' && (c[1] == quote || c[1] == '\\'))
			c++;
		else if (*c == quote)
			quote = 0;
		else if (!quote && (*c == '\'' || *c == '"'))
			quote = *c;
		else if (!quote && *c == ';')
			break;
	}
	*p = *c ? c + 1 : NULL;
	*c = 0;
	return item;
}

/* The metrics: defaults, latoprc's serve_metrics (NAME=QUERY; ...), then
 * --metric; -1 said. */
static int load_metrics(struct serve *s)
{
	const char *rc = config_get(config_shared(), "serve_metrics");
	size_t i;

	for (i = 0; !s->o->no_defaults && i < sizeof(default_metrics) / sizeof(default_metrics[0]); i++)
		if (add_metric(s, default_metrics[i].name, default_metrics[i].query, "default") < 0)
			return -1;
	if (rc) {
		char *copy = xstrdup(rc), *rest = copy, *item;
		int bad = 0;

		while (!bad && (item = next_item(&rest))) {
			char *eq = strchr(item, '=');

			while (*item == ' ' || *item == '\t')
				item++;
			if (!*item)
				continue;
			if (!eq) {
				fprintf(stderr, "latop serve: latoprc serve_metrics: '%s' is not "
					"NAME=QUERY\n", item);
				bad = 1;
				continue;
			}
			*eq = 0;
			for (char *e = eq; e > item && (e[-1] == ' ' || e[-1] == '\t'); e--)
				e[-1] = 0;
			bad = add_metric(s, item, eq + 1, "latoprc serve_metrics") < 0;
		}
		free(copy);
		if (bad)
			return -1;
	}
	for (i = 0; i < s->o->nmetrics; i++)
		if (add_metric(s, s->o->metrics[i].name, s->o->metrics[i].query, "--metric") < 0)
			return -1;
	if (!s->nm) {
		fprintf(stderr, "latop serve: no metric to serve: give --metric NAME=QUERY\n");
		return -1;
	}
	for (i = 0; i < s->nm; i++)
		s->m[i].keys = expose_keys_new();
	return 0;
}

/* Open, bind and listen on o->listen; the socket, or -1 said. */
static int listen_on(const char *listen_arg)
{
	char host[256] = "127.0.0.1", port[16];
	const char *text = listen_arg ? listen_arg : "127.0.0.1";
	const char *colon = strrchr(text, ':');
	struct addrinfo hints = {0}, *ai = NULL;
	int fd, one = 1, e;

	snprintf(port, sizeof(port), "%d", SERVE_DEFAULT_PORT);
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || (close[1] && close[1] != ':')) {
			fprintf(stderr, "latop serve: --listen '%s': an IPv6 address goes in "
				"brackets: [::1]:%d\n", text, SERVE_DEFAULT_PORT);
			return -1;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(close - text - 1), text + 1);
		if (close[1])
			snprintf(port, sizeof(port), "%s", close + 2);
	} else if (colon) {
		if (colon > text)
			snprintf(host, sizeof(host), "%.*s", (int)(colon - text), text);
		snprintf(port, sizeof(port), "%s", colon + 1);
	} else {
		snprintf(host, sizeof(host), "%s", text);
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((e = getaddrinfo(host, port, &hints, &ai)) != 0) {
		fprintf(stderr, "latop serve: --listen '%s': %s (give ADDR:PORT with a numeric "
			"address and port, e.g. 127.0.0.1:%d)\n", text, gai_strerror(e),
			SERVE_DEFAULT_PORT);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "latop serve: cannot listen on %s port %s: %s\n", host, port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Queue a response of text (copied) with status code. */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *ctype,
			       const char *text, size_t len, bool take)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)text,
					    take ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* Queue a plain-text message. */
static enum MHD_Result say(struct MHD_Connection *c, unsigned code, const char *msg)
{
	return respond(c, code, "text/plain; charset=utf-8", msg, strlen(msg), false);
}

/* GET /metrics. */
static enum MHD_Result get_metrics(struct serve *s, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	bool om = accept && strstr(accept, "application/openmetrics-text");
	struct resset *rs;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	pthread_mutex_lock(&s->mu);
	rs = s->cur;
	if (rs)
		rs->refs++;
	pthread_mutex_unlock(&s->mu);
	m = open_memstream(&buf, &len);
	if (!m)
		return say(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	fprintf(m, "# HELP latop_serve_ticks%s ticks collected since latop serve started\n"
		"# TYPE latop_serve_ticks%s counter\nlatop_serve_ticks_total %llu\n",
		om ? "" : "_total", om ? "" : "_total",
		(unsigned long long)(rs ? rs->ticks : 0));
	for (size_t i = 0; rs && i < s->nm; i++) {
		struct expose_opts eo = {.name = s->m[i].name, .help = s->m[i].text,
					 .max_series = s->o->max_series, .openmetrics = om};

		expose_result(m, rs->r[i], &eo, s->m[i].keys);
	}
	expose_end(m, om);
	fclose(m);
	pthread_mutex_lock(&s->mu);
	resset_unref(s, rs);
	pthread_mutex_unlock(&s->mu);
	return respond(c, MHD_HTTP_OK, expose_content_type(om), buf, len, true);
}

/* Write ticks rt[0..n) as a recording and queue it; the references stay. */
static enum MHD_Result send_snapshot(struct serve *s, struct MHD_Connection *c,
				     struct rtick **rt, size_t n)
{
	char *path = xasprintf("%s/%u.snap", s->tmpdir, s->snaps++), *cause = NULL;
	struct snap_writer *w = snap_create(path, &s->info, &cause);
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st;
	char name[128];
	int fd;

	for (size_t i = 0; w && i < n; i++)
		if (snap_write_tick(w, &rt[i]->t, &cause) < 0) {
			snap_abandon(w);
			w = NULL;
		}
	if (!w || snap_close(w, &cause) < 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		char *msg = xasprintf("cannot write the recording: %s\n",
				      cause ? cause : strerror(errno));

		unlink(path);
		fprintf(stderr, "latop serve: /snapshot: %s", msg);
		free(path);
		free(cause);
		return respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
			       msg, strlen(msg), true);
	}
	unlink(path);
	free(path);
	if (fstat(fd, &st) < 0 || !(r = MHD_create_response_from_fd((size_t)st.st_size, fd))) {
		close(fd);
		return say(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot send the recording\n");
	}
	snprintf(name, sizeof(name), "attachment; filename=\"%s.snap\"", s->info.host);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, name);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET /snapshot?last=DUR. */
static enum MHD_Result get_snapshot(struct serve *s, struct MHD_Connection *c)
{
	const char *last = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "last");
	uint64_t last_ns = 0, newest;
	struct rtick **rt;
	char *cause = NULL;
	size_t i, n = 0;
	enum MHD_Result ret;

	if (last && s->o->parse_duration(last, &last_ns, &cause) < 0) {
		char *msg = xasprintf("last=%s: %s\n", last, cause);

		free(cause);
		return respond(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
			       strlen(msg), true);
	}
	pthread_mutex_lock(&s->mu);
	rt = xcalloc(s->n + 1, sizeof(*rt));
	newest = s->n ? s->ring[(s->head + s->n - 1) % s->cap]->t.t_ns : 0;
	for (i = 0; i < s->n; i++) {
		struct rtick *t = s->ring[(s->head + i) % s->cap];

		if (last && newest > last_ns && t->t.t_ns < newest - last_ns)
			continue;
		t->refs++;
		rt[n++] = t;
	}
	pthread_mutex_unlock(&s->mu);
	if (!n || !s->have_info)
		ret = say(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no tick collected yet\n");
	else
		ret = send_snapshot(s, c, rt, n);
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < n; i++)
		rtick_unref(rt[i]);
	pthread_mutex_unlock(&s->mu);
	free(rt);
	return ret;
}

/* libmicrohttpd's request handler. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct serve *s = cls;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return say(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/metrics"))
		return get_metrics(s, c);
	if (!strcmp(url, "/snapshot"))
		return get_snapshot(s, c);
	if (!strcmp(url, "/"))
		return say(c, MHD_HTTP_OK, "latop serve: GET /metrics (Prometheus, OpenMetrics), "
			   "GET /snapshot?last=60s (a recording)\n");
	return say(c, MHD_HTTP_NOT_FOUND, "not found: /metrics or /snapshot?last=DUR\n");
}

/* Start the HTTP server on socket fd in a thread of its own, which takes
 * no stop signal; NULL said. */
static struct MHD_Daemon *start_http(struct serve *s, int fd)
{
	sigset_t block, old;
	struct MHD_Daemon *d;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
			     on_request, s,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONN_LIMIT,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_CONN_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONN_MEMORY,
			     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d)
		fprintf(stderr, "latop serve: cannot start the HTTP server (libmicrohttpd)\n");
	return d;
}

/* Add tick t (taken) to the ring, dropping what is older than the history
 * or over its memory bound (the newest always stays). */
static void ring_push(struct serve *s, struct tick *t)
{
	struct rtick *rt = xcalloc(1, sizeof(*rt));

	rt->t = *t;
	rt->bytes = tick_bytes(t);
	rt->refs = 1;
	pthread_mutex_lock(&s->mu);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct rtick **ring = xcalloc(cap, sizeof(*ring));

		for (size_t i = 0; i < s->n; i++)
			ring[i] = s->ring[(s->head + i) % s->cap];
		free(s->ring);
		s->ring = ring;
		s->cap = cap;
		s->head = 0;
	}
	s->ring[(s->head + s->n++) % s->cap] = rt;
	s->bytes += rt->bytes;
	while (s->n > 1) {
		struct rtick *old = s->ring[s->head];

		if (old->t.t_ns + s->o->history_ns >= rt->t.t_ns &&
		    s->bytes <= SERVE_HISTORY_MAX_BYTES)
			break;
		s->bytes -= old->bytes;
		s->head = (s->head + 1) % s->cap;
		s->n--;
		rtick_unref(old);
	}
	pthread_mutex_unlock(&s->mu);
}

/* Fold tick t into every metric, publish their results, keep t in the ring. */
static void collect(struct serve *s, struct tick *t, uint64_t nticks)
{
	struct resset *rs = xcalloc(1, sizeof(*rs)), *old;

	rs->refs = 1;
	rs->ticks = nticks;
	rs->r = xcalloc(s->nm + 1, sizeof(*rs->r));
	for (size_t i = 0; i < s->nm; i++) {
		query_run_add(s->m[i].run, t);
		rs->r[i] = query_run_result(s->m[i].run);
	}
	pthread_mutex_lock(&s->mu);
	old = s->cur;
	s->cur = rs;
	resset_unref(s, old);
	pthread_mutex_unlock(&s->mu);
	ring_push(s, t);
}

/* The tables the metrics read, each once, into tables (up to max); their count. */
static size_t metric_tables(const struct serve *s, const char **tables, size_t max)
{
	size_t n = 0, i, j;

	for (i = 0; i < s->nm; i++) {
		const char *t = query_table(s->m[i].q);

		for (j = 0; j < n && strcmp(tables[j], t); j++)
			;
		if (j == n && n < max)
			tables[n++] = t;
	}
	return n;
}

const char *const serve_config_keys[] = {"serve_metrics", NULL};

int serve_run(const struct serve_opts *o)
{
	struct serve s = {.o = o};
	struct MHD_Daemon *d = NULL;
	struct source *src = NULL;
	struct sigaction sa = {0};
	const char *tables[64];
	char tmpl[] = "/tmp/latop-serve-XXXXXX", *cause = NULL;
	uint64_t nticks = 0;
	int fd = -1, rc = 0, r;
	struct query_error err;
	struct tick t;
	size_t i;

	pthread_mutex_init(&s.mu, NULL);
	/* A stop while the probes open ends serve cleanly once they are. */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (load_metrics(&s) < 0) {
		rc = 2;
		goto out;
	}
	for (i = 0; i < s.nm; i++)
		if (!(s.m[i].run = query_run_new(s.m[i].q, &err))) {
			fprintf(stderr, "latop serve: metric %s: %s\n", s.m[i].name, err.msg);
			rc = 2;
			goto out;
		}
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "latop serve: cannot make a directory in /tmp for /snapshot: %s\n",
			strerror(errno));
		rc = 1;
		goto out;
	}
	s.tmpdir = xstrdup(tmpl);
	signal(SIGPIPE, SIG_IGN);
	if ((fd = listen_on(o->listen)) < 0 || !(d = start_http(&s, fd))) {
		rc = 1;
		goto out;
	}
	src = live_open(tables, metric_tables(&s, tables, 64), o->interval_ns, &cause);
	if (!src) {
		fprintf(stderr, "latop serve: %s\n", cause ? cause : "cannot start the probes");
		rc = 1;
		goto out;
	}
	/* The first read attaches the probes. */
	r = source_read(src, &t, 0, &cause);
	if (r < 0) {
		fprintf(stderr, "latop serve: %s\n", cause);
		rc = 1;
		goto out;
	}
	s.info = *src->ops->info(src);
	s.status = xstrdup(s.info.status ? s.info.status : "");
	s.info.status = s.status;
	s.info.warning = NULL;
	s.info.path = NULL;
	s.have_info = true;
	if (r == 1)
		collect(&s, &t, ++nticks);
	fprintf(stderr, "latop serve: serving %zu metrics on http://%s/metrics; SIGTERM or "
		"Ctrl-C stops\n", s.nm, o->listen ? o->listen : "127.0.0.1:9617");
	{
		bool refused;
		const char *what = live_priority(src, &refused);

		if (what && refused)
			fprintf(stderr, "latop serve: warning: %s\n", what);
	}
	while (!serve_stop) {
		r = source_read(src, &t, 100, &cause);
		if (r < 0) {
			fprintf(stderr, "latop serve: %s\n", cause);
			rc = 1;
			break;
		}
		if (r == 1)
			collect(&s, &t, ++nticks);
	}
out:
	free(cause);
	if (d)
		MHD_stop_daemon(d);
	if (fd >= 0)
		close(fd);
	source_close(src);
	for (i = 0; i < s.nm; i++) {
		free(s.m[i].name);
		free(s.m[i].text);
		query_run_free(s.m[i].run);
		query_free(s.m[i].q);
		expose_keys_free(s.m[i].keys);
	}
	if (s.cur)
		resset_unref(&s, s.cur);
	free(s.m);
	for (i = 0; i < s.n; i++)
		rtick_unref(s.ring[(s.head + i) % s.cap]);
	free(s.ring);
	if (s.tmpdir)
		rmdir(s.tmpdir);
	free(s.tmpdir);
	free(s.status);
	pthread_mutex_destroy(&s.mu);
	if (!rc)
		fprintf(stderr, "latop serve: stopped after %llu ticks\n",
			(unsigned long long)nticks);
	return rc;
}
#endif
