# tether: `make` builds build/tether, one static binary with the BPF objects
# embedded as libbpf skeletons.  `make V=1` shows the commands.
#
#   make                 build/tether
#   make test-unit       criterion unit tests (host); SANITIZE=1 for ASan+UBSan
#   make test-host       integration tests on the build host (root)
#   make test-syslog     export into a real rsyslogd on loopback (TCP, TLS, spool)
#   make test-vm         end-to-end tests in qemu on kernels 6.1 and 6.12
#   make test-toolchain  agent toolchains (git, python, gcc, npm...) in runs, on a
#                        Debian 12 root image in qemu, kernels 6.1 and 6.12
#   make test            all of the above
#   make fuzz            fuzz policyc (libFuzzer, ASan, UBSan) for FUZZ_TIME s (600)
#   make fuzz-smoke      the same for FUZZ_TIME s (30), small inputs; fails on any finding
#   make fuzz-nodelog    fuzz tether audit verify's reading of node log files
#   make bench-policyc   time and measure policyc on 10,000 path and 10,000 CIDR rules
#   make bench-fs        open, stat and fork+exec in runs of 10 and 10,000 rules vs none (VM)
#   make bench-net       TCP connect, UDP sendto, DNS in runs of 10 and 10,000 CIDR rules vs none (VM)
#   make bench-start     start latency and /bin/true run of tether run vs bwrap vs plain (VM, host)
#   make bench-workspace setup and teardown of fresh workspaces and verified inputs vs a plain directory (VM)
#   make bench-agent     runs/s, create-to-first-instruction and memory of tether daemon vs tether run (VM)
#   make bench-audit     records/s and CPU of the controller's sinks (node log, jsonl, OCSF, syslog) vs write(2) (host, root)
#   make vmlinux         regenerate vmlinux/vmlinux.h from /sys/kernel/btf/vmlinux
#   make clean

# SANITIZE=1: a separate debug build (build/asan) with ASan and UBSan, for the
# unit tests: `make SANITIZE=1 test-unit`.
ifeq ($(SANITIZE),1)
OUTPUT      ?= build/asan
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
OUTPUT      ?= build
endif
CC          ?= cc
CLANG       ?= clang
BPFTOOL     ?= bpftool
LLVM_STRIP  ?= llvm-strip
ARCH        := x86

CFLAGS      ?= -O2 -g
CFLAGS      += -std=gnu17 -Wall -Wextra -Werror -Wno-unused-parameter \
	       -Wshadow -Wformat=2 -fno-strict-aliasing -D_GNU_SOURCE \
	       -I. -I$(OUTPUT) $(SAN_FLAGS)
BPF_CFLAGS  := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	       -I. -Ivmlinux -I/usr/include/$(shell uname -m)-linux-gnu
STATIC_LIBS := -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto
LDFLAGS_STATIC := -static

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS      := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.skel.h,$(BPF_SRCS))
LIB_SRCS   := $(wildcard policyc/*.c) $(wildcard loader/*.c) $(wildcard runtime/*/*.c) \
	      $(filter-out runtime/main.c,$(wildcard runtime/*.c))
LIB_OBJS   := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
HDRS       := $(wildcard common/*.h bpf/abi/*.h policyc/*.h loader/*.h runtime/*.h runtime/*/*.h)
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))
VMPROG_SRCS := $(wildcard tests/vm/progs/*.c)
VMPROG_BINS := $(patsubst tests/vm/progs/%.c,$(OUTPUT)/tests/vm/%,$(VMPROG_SRCS))

.PHONY: all clean test test-unit test-host test-syslog test-vm test-toolchain vmlinux vm-progs fuzz fuzz-smoke \
	fuzz-corpus bench-policyc bench-fs bench-net
.DELETE_ON_ERROR:
.SECONDARY:

all: $(OUTPUT)/tether

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h bpf/abi/*.h bpf/lib/*.h) vmlinux/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	@# DWARF is for people; libbpf needs only BTF.  Every tether run opens the
	@# embedded object's tables: 3 MB becomes 1.8.
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/bpf/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# The pin directory's name (loader/loader.c, tl_pin_dir): the objects'
# identity, hashed here once instead of at every run (2 MB through a hash
# cost each run 2 ms under TCG).  Any change to a program or a map layout
# names another set.
$(OUTPUT)/bpf/pin_id.h: $(BPF_OBJS)
	$(call msg,GEN,$@)
	$(Q)printf '#define TL_PIN_ID "%s"\n' "$$(cat $(BPF_OBJS) | sha256sum | cut -c1-16)" > $@

# Only loader/ includes skeletons.  An explicit prerequisite, not a pattern
# rule: make would otherwise pick the generic rule below before the skeletons
# exist.
$(patsubst %.c,$(OUTPUT)/obj/%.o,$(wildcard loader/*.c)): $(SKELS) $(OUTPUT)/bpf/pin_id.h

$(OUTPUT)/obj/%.o: %.c $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/libtether.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/tether: $(OUTPUT)/obj/runtime/main.o $(OUTPUT)/libtether.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS_STATIC) -o $@ $^ $(STATIC_LIBS)

# Unit tests link the same library dynamically against criterion.
$(OUTPUT)/tests/unit/%: tests/unit/%.c $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lcriterion -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

# Programs run inside the VM: static, no libc surprises in the initramfs.
$(OUTPUT)/tests/vm/%: tests/vm/progs/%.c $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

# Drivers run in the VM too, but hold runs themselves: linked with the library,
# static like tether.
VMDRV_SRCS := $(wildcard tests/vm/drivers/*.c)
VMDRV_BINS := $(patsubst tests/vm/drivers/%.c,$(OUTPUT)/tests/vm/%,$(VMDRV_SRCS))

$(OUTPUT)/tests/vm/%: tests/vm/drivers/%.c $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS_STATIC) -o $@ $< $(OUTPUT)/libtether.a $(STATIC_LIBS)

vm-progs: $(VMPROG_BINS) $(VMDRV_BINS)

test-unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t --jobs 1; done

# Host-tier programs link the library like the unit tests.
$(OUTPUT)/tests/host/%: tests/host/%.c $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

test-host: $(OUTPUT)/tether $(OUTPUT)/tests/host/netconfine
	$(Q)tests/host/run-host-tests $(OUTPUT)/tether

# Export into a real rsyslogd on loopback (TCP, TLS, unix socket, spool).
test-syslog: $(OUTPUT)/tests/host/syslogdrive
	$(Q)tests/host/syslog-export $(OUTPUT)/tests/host/syslogdrive

# SUITES="fs dac": only those suites (tests/vm/suite/NAME.sh), on both kernels
test-vm: $(OUTPUT)/tether vm-progs
	$(Q)TETHER_VM_SUITES="$(SUITES)" tests/vm/run-suite

test-toolchain: $(OUTPUT)/tether
	$(Q)tests/vm/run-toolchain

test: test-unit test-host test-vm test-toolchain

# Fuzzing: policyc compiled again with clang and libFuzzer's coverage
# instrumentation into one binary, in its own tree (build/fuzz), so the normal
# build is untouched.  Warnings in the library are not fatal here (the normal
# build gates them with gcc; clang's set differs).  The corpus is a copy
# in build/fuzz/corpus (seeds refreshed, discoveries kept); a crash, leak or
# sanitizer report makes libFuzzer exit non-zero and leaves the input in
# build/fuzz/crash-* (or leak-*, timeout-*).
FUZZ_DIR    := build/fuzz
FUZZ_BIN    := $(FUZZ_DIR)/fuzz_envelope
FUZZ_SAN    := address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -std=gnu17 -Wall -Wextra -Wno-unused-parameter -fno-strict-aliasing \
	       -D_GNU_SOURCE -I.
FUZZ_OBJS   := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard policyc/*.c))
FUZZ_ARGS   := -dict=tests/fuzz/envelope.dict -timeout=10 -print_final_stats=1 \
	       -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus

$(FUZZ_DIR)/obj/%.o: %.c $(HDRS)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

$(FUZZ_BIN): tests/fuzz/fuzz_envelope.c $(FUZZ_OBJS) $(HDRS)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< \
		$(FUZZ_OBJS) -lyaml -lcrypto

fuzz-corpus:
	$(Q)mkdir -p $(FUZZ_DIR)/corpus
	$(Q)cp tests/fuzz/corpus/envelope/* $(FUZZ_DIR)/corpus/

# The DNS proxy's wire format parsers (runtime/dns.c): queries come from the
# confined agent, responses from the network.  Same tree and flags; findings
# are saved as build/fuzz/dns-crash-* (dns-leak-*, dns-timeout-*).
FUZZ_DNS_BIN  := $(FUZZ_DIR)/fuzz_dns
# dns.c classifies answers with policyc's special-range table (ranges.c).
FUZZ_DNS_OBJS := $(FUZZ_DIR)/obj/runtime/dns.o $(FUZZ_DIR)/obj/policyc/ranges.o
FUZZ_DNS_ARGS := -timeout=10 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/dns- \
		 $(FUZZ_DIR)/corpus-dns

.PHONY: fuzz-dns fuzz-dns-corpus

$(FUZZ_DNS_BIN): tests/fuzz/fuzz_dns.c $(FUZZ_DNS_OBJS) $(HDRS)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(FUZZ_DNS_OBJS)

fuzz-dns-corpus:
	$(Q)mkdir -p $(FUZZ_DIR)/corpus-dns
	$(Q)cp tests/fuzz/corpus-dns/* $(FUZZ_DIR)/corpus-dns/

fuzz-dns: $(FUZZ_DNS_BIN) fuzz-dns-corpus
	$(Q)$(FUZZ_DNS_BIN) -max_total_time=$(or $(FUZZ_TIME),600) $(FUZZ_DNS_ARGS)

# tether audit verify (runtime/sink/nodelog_verify.c): the node log files it
# reads are what an attacker may have changed.  Findings: build/fuzz/nodelog-*.
FUZZ_NL_BIN  := $(FUZZ_DIR)/fuzz_nodelog
FUZZ_NL_OBJS := $(FUZZ_DIR)/obj/runtime/sink/nodelog_verify.o \
		$(FUZZ_DIR)/obj/runtime/sink/nodelog_key.o $(FUZZ_DIR)/obj/runtime/base64.o
FUZZ_NL_ARGS := -timeout=10 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/nodelog- \
		$(FUZZ_DIR)/corpus-nodelog

.PHONY: fuzz-nodelog fuzz-nodelog-corpus

$(FUZZ_NL_BIN): tests/fuzz/fuzz_nodelog.c $(FUZZ_NL_OBJS) $(HDRS)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(FUZZ_NL_OBJS) \
		-ljansson -lcrypto

fuzz-nodelog-corpus:
	$(Q)mkdir -p $(FUZZ_DIR)/corpus-nodelog
	$(Q)cp tests/fuzz/corpus-nodelog/* $(FUZZ_DIR)/corpus-nodelog/

fuzz-nodelog: $(FUZZ_NL_BIN) fuzz-nodelog-corpus
	$(Q)$(FUZZ_NL_BIN) -max_total_time=$(or $(FUZZ_TIME),600) $(FUZZ_NL_ARGS)

fuzz: $(FUZZ_BIN) fuzz-corpus
	$(Q)$(FUZZ_BIN) -max_total_time=$(or $(FUZZ_TIME),600) $(FUZZ_ARGS)

# Short enough for every CI run; the log keeps libFuzzer's chatter off the
# terminal unless something was found.
fuzz-smoke: $(FUZZ_BIN) fuzz-corpus $(FUZZ_DNS_BIN) fuzz-dns-corpus $(FUZZ_NL_BIN) fuzz-nodelog-corpus
	$(Q)log=$(FUZZ_DIR)/smoke.log; \
	if ! $(FUZZ_BIN) -max_total_time=$(or $(FUZZ_TIME),30) -max_len=65536 \
		$(FUZZ_ARGS) > $$log 2>&1; then \
		tail -n 60 $$log; \
		echo "fuzz-smoke: FAILED: see $$log (findings are saved as $(FUZZ_DIR)/crash-*, leak-*, timeout-*)"; \
		exit 1; \
	fi; \
	runs=$$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' $$log); \
	echo "fuzz-smoke: $${runs:-?} executions in $(or $(FUZZ_TIME),30) s, no crash"
	$(Q)log=$(FUZZ_DIR)/smoke-dns.log; \
	if ! $(FUZZ_DNS_BIN) -max_total_time=$(or $(FUZZ_TIME),30) -max_len=4096 \
		$(FUZZ_DNS_ARGS) > $$log 2>&1; then \
		tail -n 60 $$log; \
		echo "fuzz-smoke: dns: FAILED: see $$log (findings are saved as $(FUZZ_DIR)/dns-crash-*, dns-leak-*, dns-timeout-*)"; \
		exit 1; \
	fi; \
	runs=$$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' $$log); \
	echo "fuzz-smoke: dns: $${runs:-?} executions in $(or $(FUZZ_TIME),30) s, no crash"
	$(Q)log=$(FUZZ_DIR)/smoke-nodelog.log; \
	if ! $(FUZZ_NL_BIN) -max_total_time=$(or $(FUZZ_TIME),30) -max_len=16384 \
		$(FUZZ_NL_ARGS) > $$log 2>&1; then \
		tail -n 60 $$log; \
		echo "fuzz-smoke: nodelog: FAILED: see $$log (findings are saved as $(FUZZ_DIR)/nodelog-crash-*, nodelog-leak-*, nodelog-timeout-*)"; \
		exit 1; \
	fi; \
	runs=$$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' $$log); \
	echo "fuzz-smoke: nodelog: $${runs:-?} executions in $(or $(FUZZ_TIME),30) s, no crash"

# The policyc benchmark: a generated envelope, then the driver against the
# library.  It reports figures and PASS/MISS against the targets; it never
# fails on a miss.  BENCH_ITER sets the number of timed iterations.
BENCH_DIR   := $(OUTPUT)/bench/policyc
BENCH_ITER  ?= 31

$(BENCH_DIR)/gen: bench/policyc/gen.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $<

$(BENCH_DIR)/bench: bench/policyc/bench.c bench/common/stats.h $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

$(BENCH_DIR)/envelope.yaml: $(BENCH_DIR)/gen
	$(call msg,GEN,$@)
	$(Q)$< > $@

bench-policyc: $(BENCH_DIR)/bench $(BENCH_DIR)/envelope.yaml
	$(Q)$(BENCH_DIR)/bench $(BENCH_DIR)/envelope.yaml $(BENCH_ITER)

# The filesystem hooks' cost: bench/fs/loops (static, run in the VM) inside
# runs of 10 and 10,000 rules and outside any run, one boot per kernel.
# BENCH_KERNELS, BENCH_N, BENCH_FORK_N, BENCH_BATCHES, BENCH_ROUNDS: see
# bench/README.md.  It never fails on a miss.
BENCH_FS_DIR := $(OUTPUT)/bench/fs

$(BENCH_FS_DIR)/loops: bench/fs/loops.c bench/common/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

$(BENCH_FS_DIR)/envelope: bench/fs/envelope.c $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

bench-fs: $(OUTPUT)/tether $(BENCH_FS_DIR)/loops $(BENCH_FS_DIR)/envelope
	$(Q)bench/fs/bench-fs $(OUTPUT)

# The network hooks' cost: bench/net/loops (static, run in the VM) inside
# runs of 10 and 10,000 address rules and outside any run, and the DNS
# proxy's latency, one boot per kernel.  BENCH_KERNELS, BENCH_BATCHES,
# BENCH_ROUNDS, BENCH_NET_*: see bench/README.md.  It never fails on a miss.
BENCH_NET_DIR := $(OUTPUT)/bench/net

$(BENCH_NET_DIR)/loops: bench/net/loops.c bench/common/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

$(BENCH_NET_DIR)/envelope: bench/net/envelope.c $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

bench-net: $(OUTPUT)/tether $(BENCH_NET_DIR)/loops $(BENCH_NET_DIR)/envelope
	$(Q)bench/net/bench-net $(OUTPUT)

# Start latency: `tether run`, bwrap and a plain fork+exec of a static probe
# (to its main()) and of /bin/true (whole run), interleaved, one boot per
# kernel, plus bwrap and plain on the build host.  BENCH_KERNELS,
# BENCH_START_*: see bench/README.md.  It never fails on a miss.
.PHONY: bench-start
BENCH_START_DIR := $(OUTPUT)/bench/start

$(BENCH_START_DIR)/startprobe: bench/start/startprobe.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

$(BENCH_START_DIR)/driver: bench/start/driver.c bench/common/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

$(BENCH_START_DIR)/cmdtime: bench/start/cmdtime.c bench/common/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

bench-start: $(OUTPUT)/tether $(BENCH_START_DIR)/startprobe $(BENCH_START_DIR)/driver \
		$(BENCH_START_DIR)/cmdtime
	$(Q)bench/start/bench-start $(OUTPUT)

# Governed workspaces: the whole run of /bin/true and tether's setup with a
# fresh workspace, with disk limits, and with a 10,000-file input with and
# without its digest, next to an existing directory, one boot per kernel.
# Reuses bench-start's probe and driver.  BENCH_KERNELS,
# BENCH_WORKSPACE_*: see bench/README.md.  It reports; it has no targets.
.PHONY: bench-workspace
bench-workspace: $(OUTPUT)/tether $(BENCH_START_DIR)/startprobe $(BENCH_START_DIR)/driver
	$(Q)bench/workspace/bench-workspace $(OUTPUT)

# The node agent: runs per second through the API, create to the probe's
# first instruction, and the daemon's memory with 64 live runs, next to
# tether run --standalone, one boot per kernel.  Reuses bench-start's probe.
# BENCH_KERNELS, BENCH_AGENT_*: see bench/README.md.  It reports; it has no
# targets.
.PHONY: bench-agent
BENCH_AGENT_DIR := $(OUTPUT)/bench/agent

$(BENCH_AGENT_DIR)/driver: bench/agent/driver.c bench/common/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

bench-agent: $(OUTPUT)/tether $(BENCH_START_DIR)/startprobe $(BENCH_AGENT_DIR)/driver
	$(Q)bench/agent/bench-agent $(OUTPUT)

# The audit stream: denial records flooded through the controller's sinks
# (jsonl, OCSF, the node log, syslog-unix, the daemon's fan-out) against
# write(2) of the same lines, on the build host, as root (the node log's key
# must be root's).  BENCH_AUDIT_N records per case (1000000),
# BENCH_AUDIT_REPS repetitions (5; 3 from 1000000 records): see
# bench/audit/README.md.  It reports; it fails only when a record is
# unaccounted (generated != delivered + counted lost) or it cannot measure.
.PHONY: bench-audit
BENCH_AUDIT_DIR := $(OUTPUT)/bench/audit

$(BENCH_AUDIT_DIR)/sinkbench: bench/audit/sinkbench.c bench/common/stats.h $(OUTPUT)/libtether.a $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OUTPUT)/libtether.a -lbpf -lelf -lz -lyaml -levent -ljansson -lssl -lcrypto

bench-audit: $(BENCH_AUDIT_DIR)/sinkbench
	$(Q)$< $(if $(BENCH_AUDIT_N),-n $(BENCH_AUDIT_N)) $(if $(BENCH_AUDIT_REPS),-r $(BENCH_AUDIT_REPS))

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h.tmp
	mv vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h
	@echo "regenerated from $$(uname -r); update vmlinux/README.md"

clean:
	rm -rf $(OUTPUT)
