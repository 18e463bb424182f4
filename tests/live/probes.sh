#!/bin/bash
# `latop probes` names the hook of every syscalls and flows stage and why any alternative was refused.
. "$(dirname "$0")/../lib.sh"
need_root
out=$("$LATOP_BIN" probes 2>&1); rc=$?
ok $rc "latop probes exits 0"
echo "$out" | grep -q "syscall entry *tp_btf/sys_enter"; ok $? "syscall entry uses tp_btf/sys_enter"
echo "$out" | grep -q "off-CPU split.*tp_btf/sched_switch"; ok $? "the off-CPU split uses tp_btf/sched_switch"
if echo "$out" | grep -q "socket send/recv time *fentry/security_socket_sendmsg, fentry+fexit/sock_recvmsg"; then
	ok 0 "fentry loads here: socket time uses fentry"
else
	echo "$out" | grep -q "refused: fentry:security_socket_sendmsg: E[A-Z]* at "; ok $? "a refused fentry says which errno and at which step"
fi
json=$("$LATOP_BIN" probes --json 2>&1)
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "syscalls" in [p["name"] for p in d["probes"]]; assert any(c["name"]=="cpu-clock" for c in d["counters"])' 2>/dev/null
ok $? "latop probes --json is valid JSON with the probe and the counters"
echo "$out" | grep -qE "ingress \(request in\) +(fentry/tcp_v4_rcv\+tcp_v6_rcv|tp_btf/netif_receive_skb)"
ok $? "flows: ingress uses fentry/tcp_v4_rcv+tcp_v6_rcv or tp_btf/netif_receive_skb"
echo "$out" | grep -qE "egress \(response out\) +(fentry/__dev_queue_xmit|tp_btf/net_dev_queue)"
ok $? "flows: egress uses fentry/__dev_queue_xmit or tp_btf/net_dev_queue"
if echo "$out" | grep -q "ingress (request in) *tp_btf"; then
	echo "$out" | grep -q "fentry/tcp_v4_rcv+tcp_v6_rcv refused: fentry:tcp_v4_rcv: E[A-Z]* at "
	ok $? "flows: the refused fentry alternative is listed with its errno"
fi
done_testing
