#!/bin/bash
# tests/live/flows.sh again with the packet headers copied
# (LATOP_FLOWS_READS=copy): the segment hooks every kernel loads, which a
# kernel with bpf_rdonly_cast would otherwise not use.
LATOP_FLOWS_READS=copy exec bash "$(dirname "$0")/flows.sh"
