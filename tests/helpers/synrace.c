/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A TCP client made of raw packets that races the end of its own
 * handshake, for the flows tests.
 *
 *   synrace IFACE SRC_IP DST_IP DST_MAC PORT CONNS
 *
 * Sends from IFACE (an AF_PACKET socket: nothing on this host owns SRC_IP,
 * so no local stack answers the server) CONNS connections to
 * DST_IP:PORT, one after another.  Each: a SYN; at the SYN-ACK, the ACK
 * that completes the handshake and the first request are sent at the same
 * moment from two threads on two CPUs, so the server may take both through
 * the listener's request socket at once: each makes a child socket, one
 * keeps the connection and the other is closed while still in SYN_RECV,
 * with the same addresses and ports.  Then a second request, both
 * answered, and a FIN.  Requests are reqsrv's (tests/helpers/reqsrv.c):
 * 64 bytes asking for 64.  Prints "conns N requests M" at the end (M
 * answered requests), and "client PORT" per connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helper.h"

#define REQ_BYTES 64

static int pfd, ifindex;
static uint8_t dst_mac[6];
static uint32_t src_ip, dst_ip;		/* network order */
static uint16_t dst_port;		/* host order */

/* The Internet checksum of n bytes, continuing from sum. */
static uint32_t csum_add(uint32_t sum, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (; n > 1; n -= 2, b += 2)
		sum += (uint32_t)b[0] << 8 | b[1];
	if (n)
		sum += (uint32_t)b[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Send one segment from sport with flags and len bytes of data. */
static void send_seg(uint16_t sport, uint32_t seq, uint32_t ack, uint8_t flags,
		     const void *data, size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct tcphdr) + REQ_BYTES];
	struct iphdr *ip = (struct iphdr *)pkt;
	struct tcphdr *th = (struct tcphdr *)(ip + 1);
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = ifindex, .sll_halen = 6,
	};
	struct { uint32_t s, d; uint8_t z, p; uint16_t l; } ph;
	size_t tl = sizeof(*th) + len;
	uint32_t sum;

	memset(pkt, 0, sizeof(pkt));
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + tl));
	ip->ttl = 64;
	ip->protocol = IPPROTO_TCP;
	ip->saddr = src_ip;
	ip->daddr = dst_ip;
	ip->check = csum_fold(csum_add(0, ip, sizeof(*ip)));
	th->source = htons(sport);
	th->dest = htons(dst_port);
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = 5;
	((uint8_t *)th)[13] = flags;
	th->window = htons(65535);
	memcpy(th + 1, data, len);
	ph = (typeof(ph)){src_ip, dst_ip, 0, IPPROTO_TCP, htons((uint16_t)tl)};
	sum = csum_add(0, &ph, sizeof(ph));
	th->check = csum_fold(csum_add(sum, th, tl));
	memcpy(to.sll_addr, dst_mac, 6);
	if (sendto(pfd, pkt, sizeof(*ip) + tl, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		die("sendto");
}

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

struct seg {
	uint32_t seq, ack, len;
	uint8_t flags;
};

/* Wait (2 s at most) for the server's next segment to sport; false on timeout. */
static bool recv_seg(uint16_t sport, struct seg *s)
{
	uint8_t buf[2048];
	uint64_t end = now_ns() + 2000000000ULL;

	for (;;) {
		struct pollfd p = {pfd, POLLIN, 0};
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		struct iphdr *ip = (struct iphdr *)buf;
		struct tcphdr *th;
		uint64_t now = now_ns();
		ssize_t n;

		if (now >= end || poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return false;
		n = recvfrom(pfd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < (ssize_t)(sizeof(*ip) + sizeof(*th)) || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (ip->version != 4 || ip->protocol != IPPROTO_TCP || ip->saddr != dst_ip ||
		    ip->daddr != src_ip)
			continue;
		th = (struct tcphdr *)(buf + ip->ihl * 4);
		if (ntohs(th->source) != dst_port || ntohs(th->dest) != sport)
			continue;
		s->seq = ntohl(th->seq);
		s->ack = ntohl(th->ack_seq);
		s->flags = ((uint8_t *)th)[13];
		s->len = ntohs(ip->tot_len) - ip->ihl * 4 - th->doff * 4;
		return true;
	}
}

/* The two racers: each sends its segment once both spin on their CPUs. */
struct racer {
	int cpu;
	uint16_t sport;
	uint32_t seq, ack;
	bool data;
	atomic_int *ready;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	uint8_t req[REQ_BYTES] = {0};
	uint32_t hdr[4] = {REQ_BYTES, REQ_BYTES, 0, 0};
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	memcpy(req, hdr, sizeof(hdr));
	atomic_fetch_add(r->ready, 1);
	while (atomic_load(r->ready) < 2)
		;
	if (r->data)
		send_seg(r->sport, r->seq, r->ack, F_PSH | F_ACK, req, sizeof(req));
	else
		send_seg(r->sport, r->seq, r->ack, F_ACK, NULL, 0);
	return NULL;
}

/* Wait for len bytes of response from sseq on; return the next sequence, or 0 when none came. */
static bool await_data(uint16_t sport, uint32_t sseq, uint32_t len, uint32_t *next)
{
	struct seg s;
	uint32_t got = sseq;

	while ((int32_t)(got - (sseq + len)) < 0) {
		if (!recv_seg(sport, &s))
			return false;
		if (s.len && s.seq == got)
			got += s.len;
	}
	*next = got;
	return true;
}

/* One connection from sport; return the requests the server answered. */
static int one_conn(uint16_t sport)
{
	uint32_t isn = (uint32_t)random(), sseq, next;
	uint8_t req[REQ_BYTES] = {0};
	uint32_t hdr[4] = {REQ_BYTES, REQ_BYTES, 0, 0};
	atomic_int ready = 0;
	struct racer ra[2];
	pthread_t th[2];
	struct seg s;
	int i, answered = 0;

	send_seg(sport, isn, 0, F_SYN, NULL, 0);
	do {
		if (!recv_seg(sport, &s))
			return 0;
	} while ((s.flags & (F_SYN | F_ACK)) != (F_SYN | F_ACK) || s.ack != isn + 1);
	sseq = s.seq + 1;
	for (i = 0; i < 2; i++) {
		ra[i] = (struct racer){i % 2, sport, isn + 1, sseq, i == 1, &ready};
		if (pthread_create(&th[i], NULL, race, &ra[i]))
			die("pthread_create");
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (!await_data(sport, sseq, REQ_BYTES, &next))
		return answered;
	answered++;
	memcpy(req, hdr, sizeof(hdr));
	send_seg(sport, isn + 1 + REQ_BYTES, next, F_PSH | F_ACK, req, sizeof(req));
	if (!await_data(sport, next, REQ_BYTES, &next))
		return answered;
	answered++;
	send_seg(sport, isn + 1 + 2 * REQ_BYTES, next, F_FIN | F_ACK, NULL, 0);
	/* The server's FIN, acknowledged, ends it cleanly. */
	while (recv_seg(sport, &s))
		if (s.flags & F_FIN) {
			send_seg(sport, isn + 2 + 2 * REQ_BYTES, s.seq + s.len + 1, F_ACK, NULL, 0);
			break;
		}
	return answered;
}

int main(int argc, char **argv)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP)};
	int conns, i, requests = 0;
	unsigned m[6];

	if (argc != 7 || sscanf(argv[4], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
				&m[4], &m[5]) != 6) {
		fprintf(stderr, "usage: synrace IFACE SRC_IP DST_IP DST_MAC PORT CONNS\n");
		return 2;
	}
	for (i = 0; i < 6; i++)
		dst_mac[i] = (uint8_t)m[i];
	if (inet_pton(AF_INET, argv[2], &src_ip) != 1 || inet_pton(AF_INET, argv[3], &dst_ip) != 1) {
		fprintf(stderr, "synrace: bad address\n");
		return 2;
	}
	dst_port = (uint16_t)atoi(argv[5]);
	conns = atoi(argv[6]);
	ifindex = (int)if_nametoindex(argv[1]);
	if (!ifindex)
		die(argv[1]);
	pfd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	if (pfd < 0)
		die("socket(AF_PACKET)");
	sll.sll_ifindex = ifindex;
	if (bind(pfd, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind");
	srandom((unsigned)now_ns());
	for (i = 0; i < conns; i++) {
		uint16_t sport = (uint16_t)(30000 + i);

		requests += one_conn(sport);
		printf("client %u\n", sport);
	}
	printf("conns %d requests %d\n", conns, requests);
	return 0;
}
