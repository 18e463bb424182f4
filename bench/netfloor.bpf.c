// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The flows floor: empty programs on the hooks probes/flows/flows.bpf.c uses on
 * this kind of host (the tp_btf ones; its fentry alternatives load only
 * where fentry is permitted).  What the flows probe costs on top of this is
 * its own work.  Keep in step with the tp_btf SEC() lines of flows.bpf.c.
 */
#include "floor.bpf.h"

EMPTY("tp_btf/netif_receive_skb", rx_tp)
EMPTY("tp_btf/net_dev_queue", tx_tp)
EMPTY("tp_btf/inet_sock_set_state", set_state)
EMPTY("tp_btf/sock_recv_length", recv_len)
