// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The paths floor: empty programs on exactly the hooks probes/paths/paths.bpf.c
 * attaches here (tp_btf on the socket send/receive tracepoints), built into
 * the same loader as bench/floor.c.  What the paths probe costs beyond this
 * is its own work (reading the socket, the ring buffer record, user space).
 */
#include "floor.bpf.h"

EMPTY("tp_btf/sock_send_length", tp_send)
EMPTY("tp_btf/sock_recv_length", tp_recv)
