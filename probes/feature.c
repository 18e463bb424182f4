/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Decide which hooks work by loading and attaching minimal programs. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "feature.h"

#define FEATURE_CACHE 64
#define ENOTSUPP_KERNEL 524	/* the kernel's internal ENOTSUPP, seen by BPF loads */

struct feature_answer {
	char key[80];		/* "fentry:vfs_read", "tp_btf:sys_enter" */
	bool ok;
	char why[160];
};

static struct feature_answer cache[FEATURE_CACHE];
static size_t ncache;
static struct btf *vmlinux_btf;
static int vmlinux_err;

/* Return the cached answer for key, or NULL. */
static const struct feature_answer *cache_find(const char *key)
{
	size_t i;

	for (i = 0; i < ncache; i++)
		if (!strcmp(cache[i].key, key))
			return &cache[i];
	return NULL;
}

/* Remember an answer (the cache is small; past its size answers are not kept). */
static void cache_put(const char *key, bool ok, const char *why)
{
	struct feature_answer *a;

	if (ncache == FEATURE_CACHE)
		return;
	a = &cache[ncache++];
	snprintf(a->key, sizeof(a->key), "%s", key);
	a->ok = ok;
	snprintf(a->why, sizeof(a->why), "%s", why);
}

/* Return the running kernel's BTF, loading it once. */
static struct btf *kernel_btf(void)
{
	if (!vmlinux_btf && !vmlinux_err) {
		vmlinux_btf = btf__load_vmlinux_btf();
		if (!vmlinux_btf)
			vmlinux_err = errno ? errno : ENOENT;
	}
	return vmlinux_btf;
}

/* When key has an answer, copy its why and return true with *ok set. */
static bool cached(const char *key, char *why, size_t len, bool *ok)
{
	const struct feature_answer *a = cache_find(key);

	if (!a)
		return false;
	snprintf(why, len, "%s", a->why);
	*ok = a->ok;
	return true;
}

/* Return the running kernel's BTF, or NULL with msg saying so for key. */
static struct btf *btf_for(const char *key, char *msg, size_t len)
{
	struct btf *btf = kernel_btf();

	if (!btf)
		snprintf(msg, len, "%s: no kernel BTF (%s)", key, strerror(vmlinux_err));
	return btf;
}

/* Return the errno name of err ("EPERM"), or its number. */
static const char *errno_name(int err, char *buf, size_t len)
{
	switch (err) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case ENOTSUPP_KERNEL: return "ENOTSUPP";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EBUSY: return "EBUSY";
	case E2BIG: return "E2BIG";
	case ESRCH: return "ESRCH";
	default:
		snprintf(buf, len, "errno %d", err);
		return buf;
	}
}

/*
 * Load "return 0" as a tracing program of attach type at on BTF id, then
 * attach it.  Return 0, or fill why with the step that failed and its errno.
 */
static int try_tracing(const char *what, int btf_id, enum bpf_attach_type at,
		       char *why, size_t len)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = at,
		    .attach_btf_id = btf_id);
	char num[24];
	int fd, link, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "latop_feature", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0) {
		err = errno;
		snprintf(why, len, "%s: %s at load (%s)", what, errno_name(err, num, sizeof(num)),
			 strerror(err));
		return -1;
	}
	link = at == BPF_TRACE_RAW_TP ? bpf_raw_tracepoint_open(NULL, fd)
				      : bpf_link_create(fd, 0, at, NULL);
	if (link < 0) {
		err = errno;
		close(fd);
		snprintf(why, len, "%s: %s at attach (%s)", what, errno_name(err, num, sizeof(num)),
			 strerror(err));
		return -1;
	}
	close(link);
	close(fd);
	return 0;
}

/* Answer whether a tracing hook on BTF name (of kind) works, with caching. */
static bool feature_tracing(const char *prefix, const char *name, const char *btf_name,
			    int kind, enum bpf_attach_type at, char *why, size_t len)
{
	char key[80], msg[160];
	struct btf *btf;
	int id;
	bool ok;

	snprintf(key, sizeof(key), "%s:%s", prefix, name);
	if (cached(key, why, len, &ok))
		return ok;
	btf = btf_for(key, msg, sizeof(msg));
	if (!btf) {
		ok = false;
	} else if ((id = btf__find_by_name_kind(btf, btf_name, kind)) < 0) {
		snprintf(msg, sizeof(msg), "%s: not in this kernel's BTF", key);
		ok = false;
	} else {
		ok = try_tracing(key, id, at, msg, sizeof(msg)) == 0;
		if (ok)
			snprintf(msg, sizeof(msg), "%s: loads and attaches", key);
	}
	cache_put(key, ok, msg);
	snprintf(why, len, "%s", msg);
	return ok;
}

bool feature_fentry(const char *func, char *why, size_t len)
{
	return feature_tracing("fentry", func, func, BTF_KIND_FUNC, BPF_TRACE_FENTRY, why, len);
}

bool feature_tp_btf(const char *tp, char *why, size_t len)
{
	char btf_name[96];

	snprintf(btf_name, sizeof(btf_name), "btf_trace_%s", tp);
	return feature_tracing("tp_btf", tp, btf_name, BTF_KIND_TYPEDEF, BPF_TRACE_RAW_TP,
			       why, len);
}

bool feature_btf(char *why, size_t len)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0 && kernel_btf())
		return true;
	snprintf(why, len, "this kernel has no BTF (/sys/kernel/btf/vmlinux: %s); "
		 "latop needs CONFIG_DEBUG_INFO_BTF=y", strerror(errno ? errno : ENOENT));
	return false;
}

/*
 * Load "r0 = bpf_rdonly_cast(0, <sk_buff>); return 0" as a tp_btf program of
 * btf (not attached).  Return 0, or fill msg with the failure for key.
 */
static int try_rdonly_cast(struct btf *btf, const char *key, char *msg, size_t len)
{
	int tp = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	int fn = btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC);
	int ty = btf__find_by_name_kind(btf, "sk_buff", BTF_KIND_STRUCT);
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = ty },
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = fn },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = tp);
	char num[24];
	int fd, err;

	if (fn < 0) {
		snprintf(msg, len, "%s: not in this kernel (6.2 and later have it)", key);
		return -1;
	}
	if (tp < 0 || ty < 0) {
		snprintf(msg, len, "%s: no sched_switch tracepoint or sk_buff in BTF", key);
		return -1;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "latop_feature", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0) {
		err = errno;
		snprintf(msg, len, "%s: %s at load (%s)", key, errno_name(err, num, sizeof(num)),
			 strerror(err));
		return -1;
	}
	close(fd);
	snprintf(msg, len, "%s: loads", key);
	return 0;
}

bool feature_read_in_place(char *why, size_t len)
{
	static const char key[] = "kfunc:bpf_rdonly_cast";
	struct btf *btf;
	char msg[160];
	bool ok;

	if (cached(key, why, len, &ok))
		return ok;
	btf = btf_for(key, msg, sizeof(msg));
	ok = btf && try_rdonly_cast(btf, key, msg, sizeof(msg)) == 0;
	cache_put(key, ok, msg);
	snprintf(why, len, "%s", msg);
	return ok;
}

/* Return the fd of loaded module BTF object module ("nvme_tcp"), or -1. */
static int module_btf_fd(const char *module, __u32 *id_out)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, module)) {
			*id_out = id;
			return fd;
		}
		close(fd);
	}
	return -1;
}

/*
 * Answer whether a tracing hook on btf_name (of kind) in kernel module
 * module works: the program is loaded against the module's BTF object.
 */
static bool feature_tracing_mod(const char *prefix, const char *module, const char *name,
				const char *btf_name, int kind, enum bpf_attach_type at,
				char *why, size_t len)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char key[80], msg[160], num[24];
	struct btf *base, *mod = NULL;
	int fd = -1, prog = -1, link, id, err;
	__u32 btf_id;
	bool ok = false;

	snprintf(key, sizeof(key), "%s:%s:%s", prefix, module, name);
	if (cached(key, why, len, &ok))
		return ok;
	if (!(base = kernel_btf())) {
		snprintf(msg, sizeof(msg), "%s:%s: no kernel BTF (%s)", prefix, name,
			 strerror(vmlinux_err));
		goto out;
	}
	if ((fd = module_btf_fd(module, &btf_id)) < 0) {
		snprintf(msg, sizeof(msg), "%s:%s: module %s is not loaded (no /sys/kernel/btf/%s)",
			 prefix, name, module, module);
		goto out;
	}
	mod = btf__load_from_kernel_by_id_split(btf_id, base);
	if (!mod || (id = btf__find_by_name_kind(mod, btf_name, kind)) < 0) {
		snprintf(msg, sizeof(msg), "%s:%s: not in %s's BTF", prefix, name, module);
		goto out;
	}
	{
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = at,
			    .attach_btf_id = id, .attach_btf_obj_fd = fd);

		prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "latop_feature", "GPL", insns,
				     sizeof(insns) / sizeof(insns[0]), &opts);
	}
	if (prog < 0) {
		err = errno;
		snprintf(msg, sizeof(msg), "%s:%s: %s at load (%s)", prefix, name,
			 errno_name(err, num, sizeof(num)), strerror(err));
		goto out;
	}
	link = at == BPF_TRACE_RAW_TP ? bpf_raw_tracepoint_open(NULL, prog)
				      : bpf_link_create(prog, 0, at, NULL);
	if (link < 0) {
		err = errno;
		snprintf(msg, sizeof(msg), "%s:%s: %s at attach (%s)", prefix, name,
			 errno_name(err, num, sizeof(num)), strerror(err));
		goto out;
	}
	close(link);
	ok = true;
	snprintf(msg, sizeof(msg), "%s:%s: loads and attaches", prefix, name);
out:
	if (prog >= 0)
		close(prog);
	if (fd >= 0)
		close(fd);
	btf__free(mod);
	cache_put(key, ok, msg);
	snprintf(why, len, "%s", msg);
	return ok;
}

bool feature_fentry_mod(const char *module, const char *func, char *why, size_t len)
{
	return feature_tracing_mod("fentry", module, func, func, BTF_KIND_FUNC,
				   BPF_TRACE_FENTRY, why, len);
}

/* Return true when a tp_btf program loads and attaches on tp of module; else fill why. */
bool feature_tp_btf_mod(const char *module, const char *tp, char *why, size_t len)
{
	char btf_name[96];

	snprintf(btf_name, sizeof(btf_name), "btf_trace_%s", tp);
	return feature_tracing_mod("tp_btf", module, tp, btf_name, BTF_KIND_TYPEDEF,
				   BPF_TRACE_RAW_TP, why, len);
}

bool feature_module(const char *module)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
	return access(path, R_OK) == 0;
}

bool feature_tracepoint(const char *event, char *why, size_t len)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[256];
	size_t i;

	/* A perf tracepoint attaches by the id tracefs gives it: no tracefs,
	 * no id, however the kernel was built. */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
		if (!access(path, R_OK))
			return true;
	}
	snprintf(why, len, "tp:%s: tracefs gives it no id (no events/%s/id under "
		 "/sys/kernel/tracing or /sys/kernel/debug/tracing)", event, event);
	return false;
}
