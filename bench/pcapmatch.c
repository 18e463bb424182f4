/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pcapmatch: what a tcpdump-style tool pays to do the flows probe's work:
 * capture every packet of a TCP port with libpcap (each copied to user
 * space), and match responses to requests per flow with the same code the
 * BPF programs run (probes/flows/flowq.h), counting latencies in log-linear
 * histograms (core/lhist.h).
 *
 *   pcapmatch [-i IFACE] [-p PORT] [-r READY_FILE] [-t MAX_SECONDS]
 *
 * PORT is the server's port: packets to it are requests, from it responses.
 * On exit (SIGINT/SIGTERM) prints what it matched.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/types.h>
#include <pcap/pcap.h>
#include "core/lhist.h"
#include "probes/flows/flowq.h"

#define NFLOWS 1024		/* flows tracked (a power of 2) */
#define TIMEOUT_NS 1000000000ULL

struct flow {
	int used;
	uint8_t caddr[16];	/* client address (IPv4 in the last 4 bytes) */
	uint16_t cport;
	struct flowq q;
	uint64_t count, evicted;
	uint32_t hist[LH_NBUCKETS];
};

static struct flow flows[NFLOWS];
static unsigned server_port;
static uint64_t packets, untracked;
static pcap_t *pc;

/* Stop the capture loop. */
static void on_stop(int sig)
{
	(void)sig;
	if (pc)
		pcap_breakloop(pc);
}

/* Find or add the flow of a client end; NULL when the table is full. */
static struct flow *flow_get(const uint8_t *addr, uint16_t port)
{
	uint32_t h = port * 2654435761u, i;

	for (i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	for (i = 0; i < NFLOWS; i++) {
		struct flow *f = &flows[(h + i) & (NFLOWS - 1)];

		if (!f->used) {
			f->used = 1;
			memcpy(f->caddr, addr, 16);
			f->cport = port;
			return f;
		}
		if (f->cport == port && !memcmp(f->caddr, addr, 16))
			return f;
	}
	return NULL;
}

/* Match one captured packet. */
static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *p)
{
	uint32_t caplen = h->caplen, l3len, ihl, doff, seq, ack, len, nb, ev;
	uint8_t src[16] = {0}, dst[16] = {0}, flags;
	/* With nanosecond precision, tv_usec holds nanoseconds. */
	uint64_t t = h->ts.tv_sec * 1000000000ULL + h->ts.tv_usec;
	__u64 lat, age;
	uint16_t sport, dport, ethertype;
	const u_char *ip, *tcp;
	struct flow *f;

	(void)user;
	packets++;
	if (caplen < 14)
		return;
	ethertype = p[12] << 8 | p[13];
	ip = p + 14;
	caplen -= 14;
	if (ethertype == 0x0800 && caplen >= 20) {
		ihl = (ip[0] & 15) * 4;
		if (ip[9] != 6)
			return;
		l3len = ip[2] << 8 | ip[3];
		memcpy(src + 12, ip + 12, 4);
		memcpy(dst + 12, ip + 16, 4);
	} else if (ethertype == 0x86DD && caplen >= 40) {
		ihl = 40;
		if (ip[6] != 6)
			return;
		l3len = 40 + (ip[4] << 8 | ip[5]);
		memcpy(src, ip + 8, 16);
		memcpy(dst, ip + 24, 16);
	} else {
		return;
	}
	if (caplen < ihl + 20)
		return;
	tcp = ip + ihl;
	sport = tcp[0] << 8 | tcp[1];
	dport = tcp[2] << 8 | tcp[3];
	seq = (uint32_t)tcp[4] << 24 | tcp[5] << 16 | tcp[6] << 8 | tcp[7];
	ack = (uint32_t)tcp[8] << 24 | tcp[9] << 16 | tcp[10] << 8 | tcp[11];
	doff = (tcp[12] >> 4) * 4;
	flags = tcp[13];
	if (l3len < ihl + doff || (flags & 0x02))
		return;
	len = l3len - ihl - doff;
	if (dport == server_port) {
		if (!(f = flow_get(src, sport))) {
			untracked++;
			return;
		}
		fq_request(&f->q, seq, len, (flags & 0x08) && !(flags & 0x01), t, &nb);
	} else if (sport == server_port) {
		if (!(f = flow_get(dst, dport))) {
			untracked++;
			return;
		}
		if (fq_response(&f->q, seq, len, ack, flags & 0x09, t, TIMEOUT_NS, &nb, &ev, &age,
				&lat) == FQ_MATCHED) {
			f->count++;
			f->hist[lh_bucket(lat)]++;
		}
		f->evicted += ev;
	}
}

/* Print one line per flow (requests, evicted, median latency), then totals
 * with the packets the capture dropped. */
static void report(void)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < NFLOWS; i++) {
		struct flow *f = &flows[i];
		uint64_t seen = 0;
		uint32_t b;

		if (!f->used || !f->count)
			continue;
		for (b = 0; b < LH_NBUCKETS && seen * 2 < f->count; b++)
			seen += f->hist[b];
		printf("flow port %u requests %llu evicted %llu p50_ns %llu\n", f->cport,
		       (unsigned long long)f->count, (unsigned long long)f->evicted,
		       (unsigned long long)lh_bucket_low(b ? b - 1 : 0));
		total += f->count;
	}
	struct pcap_stat ps = {0};

	pcap_stats(pc, &ps);
	printf("packets %llu requests %llu untracked %llu dropped %u\n",
	       (unsigned long long)packets, (unsigned long long)total,
	       (unsigned long long)untracked, ps.ps_drop + ps.ps_ifdrop);
}

int main(int argc, char **argv)
{
	const char *iface = "lo", *ready = NULL;
	char err[PCAP_ERRBUF_SIZE], expr[64];
	struct bpf_program prog;
	unsigned max_s = 600;
	int opt;

	while ((opt = getopt(argc, argv, "i:p:r:t:")) != -1) {
		switch (opt) {
		case 'i': iface = optarg; break;
		case 'p': server_port = (unsigned)atoi(optarg); break;
		case 'r': ready = optarg; break;
		case 't': max_s = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: pcapmatch [-i IFACE] [-p PORT] [-r READY_FILE] "
					"[-t MAX_SECONDS]\n");
			return 2;
		}
	}
	pc = pcap_create(iface, err);
	if (!pc) {
		fprintf(stderr, "pcapmatch: %s\n", err);
		return 1;
	}
	pcap_set_snaplen(pc, 128);
	pcap_set_immediate_mode(pc, 1);
	pcap_set_buffer_size(pc, 8 << 20);
	pcap_set_tstamp_precision(pc, PCAP_TSTAMP_PRECISION_NANO);
	if (pcap_activate(pc) < 0) {
		fprintf(stderr, "pcapmatch: %s: %s\n", iface, pcap_geterr(pc));
		return 1;
	}
	snprintf(expr, sizeof(expr), "tcp port %u", server_port);
	if (pcap_compile(pc, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) ||
	    pcap_setfilter(pc, &prog)) {
		fprintf(stderr, "pcapmatch: filter '%s': %s\n", expr, pcap_geterr(pc));
		return 1;
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGALRM, on_stop);
	alarm(max_s);
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	if (pcap_loop(pc, -1, on_packet, NULL) == PCAP_ERROR)
		fprintf(stderr, "pcapmatch: %s\n", pcap_geterr(pc));
	/* Take what is still in the capture buffer, as tcpdump does at exit. */
	if (pcap_setnonblock(pc, 1, err) == 0)
		while (pcap_dispatch(pc, -1, on_packet, NULL) > 0)
			;
	report();
	pcap_close(pc);
	return 0;
}
