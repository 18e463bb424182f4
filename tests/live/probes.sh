#!/bin/bash
# `latop probes` names the hook of every syscalls stage and why any alternative was refused.
. "$(dirname "$0")/../lib.sh"
need_root
out=$("$LATOP_BIN" probes 2>&1); rc=$?
ok $rc "latop probes exits 0"
echo "$out" | grep -q "syscall entry *tp_btf/sys_enter"; ok $? "syscall entry uses tp_btf/sys_enter"
echo "$out" | grep -q "off-CPU split.*tp_btf/sched_switch"; ok $? "the off-CPU split uses tp_btf/sched_switch"
if echo "$out" | grep -q "fentry/security_socket_sendmsg, fentry+fexit/sock_recvmsg"; then
	ok 0 "fentry loads here: socket time uses fentry"
else
	echo "$out" | grep -q "refused: fentry:security_socket_sendmsg: E[A-Z]* at "; ok $? "a refused fentry says which errno and at which step"
fi
json=$("$LATOP_BIN" probes --json 2>&1)
echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(p["name"]=="syscalls" for p in d["probes"]); assert any(c["name"]=="cpu-clock" for c in d["counters"])' 2>/dev/null
ok $? "latop probes --json is valid JSON with the probe and the counters"
done_testing
