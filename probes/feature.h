/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Which hooks this kernel really gives: each answer comes from loading (and
 * attaching) a minimal program, never from bpftool feature probe.  Answers
 * are cached for the life of the process.
 */
#ifndef LATOP_FEATURE_H
#define LATOP_FEATURE_H

#include <stdbool.h>
#include <stddef.h>

/* Return true when fentry programs load and attach on func; else fill why. */
bool feature_fentry(const char *func, char *why, size_t len);
/* Return true when a tp_btf program loads and attaches on tracepoint tp; else fill why. */
bool feature_tp_btf(const char *tp, char *why, size_t len);
/* Return true when the kernel exposes BTF (/sys/kernel/btf/vmlinux); else fill why. */
bool feature_btf(char *why, size_t len);

/* Return true when a tracing program may read kernel memory in place through
 * a typed read-only pointer (the bpf_rdonly_cast kfunc, 6.2+); else fill why. */
bool feature_read_in_place(char *why, size_t len);

/* The same for a function or tracepoint of a loaded kernel module ("nvme_tcp"). */
bool feature_fentry_mod(const char *module, const char *func, char *why, size_t len);
bool feature_tp_btf_mod(const char *module, const char *tp, char *why, size_t len);
/* Return true when kernel module module is loaded with BTF (/sys/kernel/btf/MODULE). */
bool feature_module(const char *module);

/* Return true when tracefs gives tracepoint event ("syscalls/sys_enter_futex")
 * an id, so a perf tracepoint program can attach to it; else fill why. */
bool feature_tracepoint(const char *event, char *why, size_t len);

#endif
