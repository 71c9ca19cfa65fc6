# abiscope: a plain Makefile.
#
#   make            builds ./abiscope
#   make test       builds and runs every test (unit, end-to-end, differential)
#   make asan       builds the ASan+UBSan variant in build-asan/
#   make test-asan  runs the whole suite against the sanitizer build
#   make fuzz       builds one libFuzzer target per parser in build-fuzz/
#   make fuzz-run   runs each fuzz target for FUZZ_SECONDS (default 30)
#   make demo       builds the bundled demo environment and runs abiscope on it
#   make bench      runs the benchmark script (see bench/README.md)
#   make readme     regenerates README.md's generated blocks
#   make wheel      builds dist/abiscope-VERSION-py3-none-manylinux_2_17_{x86_64,aarch64}.whl
#   make install    installs the binary, man pages and bash/zsh completion
#                   under $(DESTDIR)$(PREFIX) (default /usr/local)
#   make test-aarch64  compares abiscope with the real aarch64 loader under qemu
#                   (docs/aarch64.md; builds the oracle with make aarch64-oracle)
#
# Before anything compiles, mk/deps.sh checks the Debian packages that the goal
# needs (the list is mk/deps.txt) and installs the missing ones with apt-get
# when it can, or stops with the command to run.  DEPS=skip skips the check.

CC      ?= cc
LINK    ?= $(CC)
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
BUILD   ?= build
WERROR  ?= -Werror
OPT     ?= -O2
CFLAGS_WARN = -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wwrite-strings -Wvla -Wformat=2 -Wno-format-nonliteral \
	-Wimplicit-fallthrough -Wundef
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Isrc -g $(OPT) $(CFLAGS_WARN)
LDLIBS_BASE = -lstdc++ -lpthread -ldl -lzip -ljansson -lz
CFLAGS  += $(CFLAGS_BASE) $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
LDLIBS  += $(LDLIBS_BASE)

LIB_SRC := $(sort $(wildcard src/*.c src/core/*.c src/elf/*.c src/loader/*.c src/cxx/*.c \
	src/cuda/*.c src/diagnose/*.c src/pyenv/*.c src/host/*.c src/advice/*.c src/report/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
DEPFILES := $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPFILES += $(UNIT_BIN:=.d)	# a test may include the .c it tests (cli/termsafe.c)
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)
PRELOAD_SRC := $(sort $(wildcard tests/tools/preload/*.c))
PRELOAD_BIN := $(PRELOAD_SRC:tests/tools/preload/%.c=$(BUILD)/tools/%.so)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)
DEVTOOL_SRC := $(sort $(wildcard tools/*.c))
DEVTOOL_BIN := $(DEVTOOL_SRC:tools/%.c=$(BUILD)/devtools/%)

# The dependency check runs while make reads this file, before it builds
# anything, so a missing header is reported before a compile error; its
# stamp is redone when the list changes.
DEPS_GOALS := $(if $(MAKECMDGOALS),$(MAKECMDGOALS),all)
DEPS_KINDS := build $(if $(filter test test-asan,$(DEPS_GOALS)),test) \
	$(if $(filter fuzz fuzz-run,$(DEPS_GOALS)),fuzz) $(if $(filter wheel,$(DEPS_GOALS)),wheel) \
	$(if $(filter aarch64-oracle test-aarch64,$(DEPS_GOALS)),aarch64)
DEPS_STAMP := $(BUILD)/deps-$(subst $(eval) ,-,$(strip $(DEPS_KINDS))).ok
ifneq ($(DEPS),skip)
ifneq ($(filter-out clean lint uninstall,$(DEPS_GOALS)),)
ifeq ($(shell [ $(DEPS_STAMP) -nt mk/deps.txt ] && [ $(DEPS_STAMP) -nt mk/deps.sh ] && echo fresh),)
DEPS_FAILURE := $(shell mkdir -p $(BUILD) && CC="$(CC)" DEPS_RECORD=$(BUILD)/deps-installed.txt \
	sh mk/deps.sh --make check $(DEPS_KINDS) && echo "$(DEPS_KINDS)" >$(DEPS_STAMP))
ifneq ($(DEPS_FAILURE),)
$(error $(DEPS_FAILURE))
endif
endif
endif
endif

.PHONY: all test unit asan test-asan fuzz fuzz-run demo bench bench-tools bench-compare devtools clean lint readme docs install uninstall wheel field field-fixes aarch64-oracle test-aarch64

all: abiscope

abiscope: $(BUILD)/abiscope
	@if [ "$(BUILD)" = "build" ]; then ln -sf $(BUILD)/abiscope abiscope; fi

$(BUILD)/abiscope: $(CLI_OBJ) $(BUILD)/libabiscope.a
	$(LINK) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libabiscope.a $(LDLIBS)

# The library may not print or read the environment (src/core/banned.h).
$(LIB_OBJ): CFLAGS += -DABISCOPE_LIBRARY

$(BUILD)/libabiscope.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libabiscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -MMD -MP $(LDFLAGS) -o $@ $< $(BUILD)/libabiscope.a $(LDLIBS)

# Test helpers (the dlopen driver) are built without sanitizers: they
# stand in for the real process and must load objects exactly as it does.
$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -rdynamic -o $@ $< -Wl,--as-needed -ldl

# LD_PRELOAD shims of the tests (what a test does to abiscope from outside,
# such as shrinking a file it has mapped): test builds only.
$(BUILD)/tools/%.so: tests/tools/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -shared -fPIC -o $@ $< -ldl

unit: $(UNIT_BIN)

test: all unit $(TOOL_BIN) $(PRELOAD_BIN) $(BENCH_BIN) $(FUZZ_REPLAY_BIN) $(DEVTOOL_BIN) lint
	@ABISCOPE=$(CURDIR)/$(BUILD)/abiscope BUILD=$(CURDIR)/$(BUILD) sh tests/run.sh

# One sub-make builds the binary and the unit tests: with -j, two (the
# binary's and unit-asan's) wrote build-asan/libabiscope.a at once.
asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" build-asan/abiscope unit

unit-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" unit

test-asan: asan
	$(MAKE) BUILD=build-asan OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" test


# Each fuzz target also links with a plain main() that replays files
# (tests/fuzz/replay.sh runs the seeds and regressions in make test).
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(BUILD)/libabiscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay_main.c $(BUILD)/libabiscope.a $(LDLIBS)
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 30

fuzz:
	@mkdir -p build-fuzz
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	  build-fuzz/libabiscope.a
	@for f in $(FUZZ_SRC); do \
	  n=$$(basename $$f .c); \
	  echo "  FUZZ $$n"; \
	  $(FUZZ_CC) -std=c11 -D_GNU_SOURCE -Isrc -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o build-fuzz/$$n $$f build-fuzz/libabiscope.a $(LDLIBS) || exit 1; \
	done

fuzz-run: fuzz
	@sh tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

demo: all
	@sh demo/run.sh

# Benchmark helpers (bench/*.c) link the library like the unit tests do.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libabiscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libabiscope.a $(LDLIBS)

bench-tools: $(BENCH_BIN)

# abiscope on the real stacks (bench/run's bench-* field envs) against the
# figures recorded in bench/figures.json: fails on a row over 1.5x their CPU
# time.  Needs the envs (tests/field/build_envs.py bench-t2.15-vllm ...): not CI.
bench-compare: all bench-tools
	python3 bench/run --no-build --tools check-libs,check --compare bench/figures.json \
		$(foreach e,bench-t2.15-vllm bench-t2.9-xformers bench-t2.10-stack bench-t2.9-te bench-tf-cuda,--corpus $(e))

# Maintainer programs (tools/*.c: the torch ABI index builder's reader) link the library too.
$(BUILD)/devtools/%: tools/%.c $(BUILD)/libabiscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libabiscope.a $(LDLIBS)

devtools: $(DEVTOOL_BIN)

bench: all bench-tools
	@BUILD=$(BUILD) python3 bench/run

lint:
	@python3 tests/lint.py

# Man pages and completion, printed by the binary from its command table
docs: $(BUILD)/share/.stamp

$(BUILD)/share/.stamp: $(BUILD)/abiscope mk/docs.sh
	@sh mk/docs.sh $(BUILD)/abiscope $(BUILD)/share
	@touch $@

install: $(BUILD)/abiscope docs
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BUILD)/abiscope $(DESTDIR)$(BINDIR)/abiscope
	install -m 644 $(BUILD)/share/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/share/bash-completion/abiscope $(DESTDIR)$(BASHCOMPDIR)/abiscope
	install -m 644 $(BUILD)/share/zsh/_abiscope $(DESTDIR)$(ZSHCOMPDIR)/_abiscope

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/abiscope $(DESTDIR)$(MANDIR)/man1/abiscope.1 \
	  $(DESTDIR)$(MANDIR)/man1/abiscope-*.1 $(DESTDIR)$(BASHCOMPDIR)/abiscope $(DESTDIR)$(ZSHCOMPDIR)/_abiscope

# The manylinux_2_17 wheel (mk/wheel.sh says how): dist/abiscope-*.whl
wheel:
	@sh mk/wheel.sh

# README.md's generated blocks (the package list, the synopses)
readme: abiscope
	@ABISCOPE=$(CURDIR)/$(BUILD)/abiscope sh mk/readme.sh

clean:
	rm -rf build build-asan build-fuzz abiscope dist

# Objects that embed a data file with .incbin
$(BUILD)/src/pyenv/providers.o: data/pyenv/providers.tsv
$(BUILD)/src/cxx/torchabi.o: data/torch/abi.idx
$(BUILD)/src/advice/pins.o: data/torch/pins.tsv

-include $(DEPFILES)

# The aarch64 oracle (tests/diff/aarch64.py, docs/aarch64.md): Debian 12 and
# 13 arm64 roots and the unpacked aarch64 cross gcc under $(ABISCOPE_ARM_DIR)
# (default ~/.cache/abiscope/aarch64), built when absent (root, network,
# ~3 minutes, ~1 GB); test-aarch64 compares abiscope with the real aarch64
# loader under qemu, live (~16 minutes on 2 cores), AARCH64_RECORD=1 also
# rewrites the goldens make test compares with.
aarch64-oracle:
	sh tests/diff/aarch64/setup.sh

test-aarch64: all aarch64-oracle
	ABISCOPE=$(CURDIR)/$(BUILD)/abiscope python3 tests/diff/aarch64.py oracle \
	  $(if $(filter 1,$(AARCH64_RECORD)),--record) fixtures system

# The field matrix (tests/field/manifest.toml): builds the real PyPI envs
# that are missing (outside the repository, gigabytes, network), runs the
# oracle in each and prints the table.  Not part of test or CI.
# Then the fix oracle (tests/field/fixoracle.py, issue 24): each broken env
# of tests/field/fixcases.toml built from those envs, abiscope's fix applied
# for real in a copy, the real import again; `make field-fixes` alone.
field: all
	python3 tests/field/matrix.py --pipeline $(FIELD_ENVS)
	python3 tests/field/matrix.py --from-results --markdown $(BUILD)/field.md $(FIELD_ENVS)
	$(MAKE) field-fixes

field-fixes: all
	python3 tests/field/build_envs.py t2.9 t2.10 t2.12 t2.15
	python3 tests/field/fixoracle.py --chroot
	python3 tests/field/fixoracle.py -j 2 --markdown $(BUILD)/field-fixes.md --notes $(BUILD)/field-fixes-notes.md $(FIX_CASES)
