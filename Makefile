# latop — top for latency.  libbpf-tools style build:
#   .output/        everything generated (vmlinux.h, *.bpf.o, *.skel.h, objects)
#   .output/san/    the ASan+UBSan build the tests use
# make V=1 shows the commands.  VMLINUX_H=path uses a given vmlinux.h instead
# of dumping the running kernel's BTF.

OUTPUT ?= .output
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PREFIX ?= /usr/local
# Where systemd looks for system units (systemd/*.service), as its .pc file says.
SYSTEMD_UNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
VMLINUX_H ?=
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

VERSION := 0.1.0
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(CFLAGS) $(WARN) -D_GNU_SOURCE -DLATOP_VERSION='"$(VERSION)"' \
	-DLATOP_DATADIR='"$(PREFIX)/share/latop"' \
	-I$(OUTPUT) -I. $(shell pkg-config --cflags ncursesw 2>/dev/null)
LIBS := -lbpf -lelf -lz -lzstd $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw) \
	-lreadline -lm -lpthread
# DWARF file:line for user stacks (core/symbols.c) when libdw-dev is installed;
# without it symbols are function+offset.
ifneq ($(wildcard /usr/include/elfutils/libdw.h),)
ALL_CFLAGS += -DHAVE_LIBDW
LIBS += -ldw
endif
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# One folder a view: probes/VIEW/ holds VIEW.bpf.c (its BPF programs), VIEW.h
# (what they share with user space), VIEW.c (the probe: the only file there
# that uses libbpf and the skeleton) and its libbpf-free parts (VIEW_schema.c,
# joins, decoding).  The libbpf-free parts are NOBPF_SRCS: with core/ and
# queries/ they are what the fuzzers build; tests/unit/test_layers.c checks
# that none of them includes libbpf or a skeleton.
VIEWS := $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard probes/*/*.bpf.c)))))
BPF_SRCS := $(foreach v,$(VIEWS),probes/$(v)/$(v).bpf.c)
SKELS := $(patsubst %,$(OUTPUT)/%.skel.h,$(VIEWS))
PROBE_NAMES := $(VIEWS)
VIEW_PROBE_SRCS := $(foreach v,$(VIEWS),probes/$(v)/$(v).c)
NOBPF_SRCS := $(wildcard core/*.c queries/*.c) probes/views.c \
	$(filter-out %.bpf.c $(VIEW_PROBE_SRCS),$(wildcard probes/*/*.c))
LIB_SRCS := $(wildcard core/*.c) $(filter-out %.bpf.c,$(wildcard probes/*.c probes/*/*.c)) \
	$(wildcard queries/*.c) $(wildcard tui/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
SAN_OBJS := $(patsubst %.c,$(OUTPUT)/san/%.o,$(LIB_SRCS))
HDRS := $(wildcard core/*.h probes/*.h probes/*/*.h queries/*.h tui/*.h)

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(OUTPUT)/helpers/%,$(HELPER_SRCS)) \
	$(OUTPUT)/helpers/journal-nofp
FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))

.PHONY: all deps run check check-unit check-vm test fuzz bench install uninstall clean san
.DELETE_ON_ERROR:
# Keep the generated BPF objects and skeletons between builds.
.SECONDARY:

all: latop

# ---- BPF ------------------------------------------------------------------
ifeq ($(VMLINUX_H),)
$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,BTF,$@)
	$(Q)if [ ! -r /sys/kernel/btf/vmlinux ]; then \
		echo "latop: this kernel has no BTF (/sys/kernel/btf/vmlinux); pass VMLINUX_H=path" >&2; exit 1; fi
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@
else
$(OUTPUT)/vmlinux.h: $(VMLINUX_H) | $(OUTPUT)
	$(Q)cp $< $@
endif

# probes/VIEW/VIEW.bpf.c: the stem twice, so the prerequisite is expanded again.
.SECONDEXPANSION:
$(OUTPUT)/%.bpf.o: probes/$$*/$$*.bpf.c $(OUTPUT)/vmlinux.h $(wildcard probes/*.h probes/*/*.h core/lhist.h) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -Iprobes -Icore \
		-Wall -Wno-unused-function -c $< -o $@
	$(Q)llvm-strip -g $@ 2>/dev/null || true

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# The probe registry's list: one PROBE(name) per probes/NAME/NAME.bpf.c.  Rewritten
# only when the list changes, so adding a probe rebuilds just what includes it.
$(OUTPUT)/probe_list.h: FORCE | $(OUTPUT)
	$(Q)printf 'PROBE(%s)\n' $(PROBE_NAMES) > $@.new; \
		if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi
.PHONY: FORCE
FORCE:

# ---- user space -------------------------------------------------------------
$(OUTPUT)/obj/%.o: %.c $(HDRS) $(SKELS) $(OUTPUT)/probe_list.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/san/%.o: %.c $(HDRS) $(SKELS) $(OUTPUT)/probe_list.h
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUTPUT)/liblatop.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; ar rcs $@ $^

$(OUTPUT)/san/liblatop.a: $(SAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; ar rcs $@ $^

# serve.c (latop serve) is a front end beside latop.c, the only user of
# libmicrohttpd (libmicrohttpd-dev).
MHD_LIBS := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)

latop: $(OUTPUT)/obj/latop.o $(OUTPUT)/obj/serve.o $(OUTPUT)/liblatop.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LIBS) $(MHD_LIBS) -o $@

# The sanitizer build of the binary, used by the tests.
$(OUTPUT)/san/latop: $(OUTPUT)/san/latop.o $(OUTPUT)/san/serve.o $(OUTPUT)/san/liblatop.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $^ $(LIBS) $(MHD_LIBS) -o $@

san: $(OUTPUT)/san/latop

$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(OUTPUT)/san/liblatop.a
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $< $(OUTPUT)/san/liblatop.a $(LIBS) -o $@

# Workload helpers run under probes: no sanitizers, so their syscalls are theirs.
$(OUTPUT)/helpers/%: tests/helpers/%.c tests/helpers/helper.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE $< -o $@ -lpthread

# The journal twice: with frame pointers, and with none at all (the user-stack
# unwinding test compares them).
$(OUTPUT)/helpers/journal: tests/helpers/journal.c tests/helpers/helper.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE \
		$< -o $@ -lpthread

$(OUTPUT)/helpers/journal-nofp: tests/helpers/journal.c tests/helpers/helper.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE \
		$< -o $@ -lpthread

$(OUTPUT)/bench/%: bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE $< -o $@ -lpthread -lm

$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(HDRS) $(SKELS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -D_GNU_SOURCE \
		-I$(OUTPUT) -I. $(shell pkg-config --cflags ncursesw 2>/dev/null) $< \
		$(NOBPF_SRCS) \
		$(LIBS) -o $@

$(OUTPUT):
	$(Q)mkdir -p $@

# ---- what users type ---------------------------------------------------------
deps:
	$(Q)./scripts/install-deps.sh

run: deps latop
	$(Q)if [ "$$(id -u)" -eq 0 ]; then ./latop $(ARGS); else sudo ./latop $(ARGS); fi

tests-build: $(OUTPUT)/san/latop $(UNIT_BINS) $(HELPER_BINS)

check:
	$(Q)./scripts/install-deps.sh --test
	$(Q)$(MAKE) --no-print-directory latop tests-build
	$(Q)./tests/run.sh

test: check

check-vm:
	$(Q)./scripts/install-deps.sh --test
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)./tests/run.sh vm

# Each fuzzer runs for FUZZ_SECONDS (default 30) or FUZZ_RUNS inputs (default
# no limit), whichever ends first, on inputs of up to FUZZ_MAX_LEN bytes
# (default 65536, the longest query), with tests/fuzz/NAME.dict when there is
# one.  An input that takes over 10 s or 2 GB is a finding, as are a crash
# and undefined behaviour; it is saved in $(OUTPUT)/fuzz/ and the log's end
# is shown.  The full log is
# $(OUTPUT)/fuzz/NAME.log; new inputs go to $(OUTPUT)/fuzz/corpus/NAME.
fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$$(basename $$f); echo "fuzz: $$n"; \
		mkdir -p $(OUTPUT)/fuzz/corpus/$$n; \
		dict=; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
		$$f -max_len=$${FUZZ_MAX_LEN:-65536} -rss_limit_mb=2048 -timeout=10 \
			-max_total_time=$${FUZZ_SECONDS:-30} -runs=$${FUZZ_RUNS:--1} \
			-print_final_stats=1 -artifact_prefix=$(OUTPUT)/fuzz/ $$dict \
			$(OUTPUT)/fuzz/corpus/$$n tests/fuzz/corpus/$$n > $(OUTPUT)/fuzz/$$n.log 2>&1; \
		rc=$$?; \
		runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(OUTPUT)/fuzz/$$n.log); \
		rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(OUTPUT)/fuzz/$$n.log); \
		rss=$$(sed -n 's/^stat::peak_rss_mb: *//p' $(OUTPUT)/fuzz/$$n.log); \
		echo "fuzz: $$n: $${runs:-?} executions, $${rate:-?} exec/s, peak RSS $${rss:-?} MB"; \
		if [ $$rc -ne 0 ]; then tail -n 40 $(OUTPUT)/fuzz/$$n.log; exit 1; fi; done

.PHONY: bench-nvme
bench-nvme:
	$(Q)./bench/nvme-vm.sh

.PHONY: bench-block
bench-block: latop
	$(Q)./scripts/install-deps.sh --bench
	$(Q)./bench/block.sh

bench:
	$(Q)./scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory latop $(BENCH_BINS)
	$(Q)./bench/run.sh

install: latop
	install -D -m 0755 latop $(DESTDIR)$(PREFIX)/bin/latop
	install -D -m 0644 man/latop.1 $(DESTDIR)$(PREFIX)/share/man/man1/latop.1
	install -D -m 0644 man/latop-query.7 $(DESTDIR)$(PREFIX)/share/man/man7/latop-query.7
	install -D -m 0644 completion/latop.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/latop
	install -d $(DESTDIR)$(PREFIX)/share/latop/themes
	install -m 0644 themes/*.theme $(DESTDIR)$(PREFIX)/share/latop/themes/
	install -d $(DESTDIR)$(SYSTEMD_UNITDIR)
	for u in systemd/*.service; do \
		sed 's|@BINDIR@|$(PREFIX)/bin|g' $$u > $(DESTDIR)$(SYSTEMD_UNITDIR)/$${u#systemd/} && \
		chmod 0644 $(DESTDIR)$(SYSTEMD_UNITDIR)/$${u#systemd/} || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/latop $(DESTDIR)$(PREFIX)/share/man/man1/latop.1 \
		$(DESTDIR)$(PREFIX)/share/man/man7/latop-query.7 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/latop
	rm -rf $(DESTDIR)$(PREFIX)/share/latop
	rm -f $(patsubst systemd/%,$(DESTDIR)$(SYSTEMD_UNITDIR)/%,$(wildcard systemd/*.service))

clean:
	rm -rf $(OUTPUT) latop

# ---- bench: programs that need more than the bench/%.c rule above ------------
# floor: empty BPF programs on the syscalls probe's hooks (bench/floor.bpf.c).
# Its BPF object is $(OUTPUT)/bench/floor.bpf, the name bench/*.c gives it.
# mksnap: writes large recordings through core/snapshot.h for bench/replay.sh.
# The floors' BPF objects (floor, netfloor, pathsfloor) share this rule; the
# bench/%.c rule above would build them with the host compiler.
FLOOR_BPFS := $(addprefix $(OUTPUT)/bench/,floor.bpf netfloor.bpf pathsfloor.bpf)
$(FLOOR_BPFS): $(OUTPUT)/bench/%.bpf: bench/%.bpf.c bench/floor.bpf.h $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -Wall -c $< -o $@
	$(Q)llvm-strip -g $@ 2>/dev/null || true

$(OUTPUT)/bench/floor.skel.h: $(OUTPUT)/bench/floor.bpf
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(OUTPUT)/bench/floor: bench/floor.c $(OUTPUT)/bench/floor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(OUTPUT)/bench $< \
		-lbpf -lelf -lz -o $@

$(OUTPUT)/bench/mksnap: bench/mksnap.c $(OUTPUT)/liblatop.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblatop.a $(LIBS) -o $@

# ---- static builds for the VM tests (tests/vm/) ------------------------------
# latop-static: latop linked fully static against libbpf.a, libelf.a, libz.a,
# libzstd.a, libreadline.a, libncursesw.a and libtinfo.a (all in Debian 12's
# -dev packages), so it runs in a busybox initramfs on another kernel.  Its
# BPF objects are the same CO-RE ones as latop's.  helpers-static: the test
# workloads, static for the same guest.  Outputs go to $(OUTPUT)/static/.
STATIC_LIBS := -lbpf -lelf -lz -lzstd -lreadline -lncursesw -ltinfo -lm -lpthread
ifneq ($(wildcard /usr/include/elfutils/libdw.h),)
# libdw.a before what it uses (libelf, and its compressed-section readers:
# liblzma-dev and libbz2-dev, which install-deps.sh --vm installs).
STATIC_LIBS := -ldw $(STATIC_LIBS) -llzma -lbz2
endif
STATIC_HELPERS := $(patsubst tests/helpers/%.c,$(OUTPUT)/static/%,$(HELPER_SRCS))
.PHONY: latop-static helpers-static

latop-static: $(OUTPUT)/static/latop

helpers-static: $(STATIC_HELPERS)

$(OUTPUT)/static/latop: $(OUTPUT)/obj/latop.o $(OUTPUT)/static/serve.o $(OUTPUT)/liblatop.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -static $^ $(STATIC_LIBS) -o $@

# Without libmicrohttpd: its latop serve says it is not built in.
$(OUTPUT)/static/serve.o: serve.c $(HDRS) $(SKELS) $(OUTPUT)/probe_list.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DLATOP_NO_SERVE -c $< -o $@

$(OUTPUT)/static/%: tests/helpers/%.c tests/helpers/helper.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -static $< -o $@ -lpthread

# ---- bench-flows: the flows probe's overhead on a 1-byte TCP ping-pong -------
# netfloor: empty programs on the flows probe's hooks (bench/netfloor.bpf.c),
# loaded from its object file by bench/netfloor.c.  pcapmatch: the same
# request/response matching done on a libpcap capture (libpcap-dev).
# ---- bench-paths: the paths probe's overhead (bench/paths.sh) ----------------
# pathsfloor: bench/floor.c's loader over bench/pathsfloor.bpf.c, the empty
# programs on the paths probe's hooks.  Its BPF object is
# $(OUTPUT)/bench/pathsfloor.bpf (the name bench/*.c gives it); its skeleton
# is named floor_bpf, in a directory of its own, so floor.c builds unchanged.
.PHONY: bench-paths

$(OUTPUT)/bench/netfloor: bench/netfloor.c $(OUTPUT)/bench/netfloor.bpf
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE $< -lbpf -lelf -lz -o $@

$(OUTPUT)/bench/pcapmatch: bench/pcapmatch.c probes/flows/flowq.h core/lhist.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I. $< -lpcap -o $@

.PHONY: bench-scale
bench-scale:
	$(Q)$(MAKE) --no-print-directory latop tests-build
	$(Q)./bench/scale.sh

.PHONY: bench-flows
bench-flows:
	$(Q)./scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory latop $(OUTPUT)/bench/pingpong $(OUTPUT)/bench/netfloor \
		$(OUTPUT)/bench/pcapmatch
	$(Q)./bench/flows.sh
$(OUTPUT)/bench/pathsfloor/floor.skel.h: $(OUTPUT)/bench/pathsfloor.bpf
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(OUTPUT)/bench/pathsfloor-bin: bench/floor.c $(OUTPUT)/bench/pathsfloor/floor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I$(OUTPUT)/bench/pathsfloor $< -lbpf -lelf -lz -o $@

bench-paths: latop $(OUTPUT)/helpers/tiers $(OUTPUT)/bench/pathsfloor-bin
	$(Q)./bench/paths.sh
# ---- locks: the lock workload keeps frame pointers, so holder stacks unwind --
$(OUTPUT)/helpers/lockdemo: tests/helpers/lockdemo.c tests/helpers/helper.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE \
		$< -o $@ -lpthread

# bench-locks: lock tracing's cost to a mutex-heavy program (bench/locks.sh).
.PHONY: bench-locks
bench-locks:
	$(Q)./scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory latop $(OUTPUT)/helpers/lockdemo
	$(Q)./bench/locks.sh
