# GeoTrain — build, test, bench, experiments.
#
#   make              libgeotrain.a and ./geotrain (installs missing packages first)
#   make test         cmocka suite, the README's commands (doc-test), the suite
#                     under ASan + UBSan, the bad-input corpus through an ASan +
#                     UBSan geotrain, the installed library, a clang build
#   make bench        speed figures (printed, never asserted)
#   make experiments  every experiment of experiments/README.md + figures + report
#   make memcheck     the suite under valgrind memcheck
#   make fuzz         libFuzzer targets (clang), FUZZ_SECONDS each
#   make install      PREFIX=/usr/local
#
# CC=clang make works; warnings are errors.

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
MPI      ?= 0
PKGS     := gsl jansson zlib
OPT      ?= -O2
CSTD     := -std=c17 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Wpedantic -Werror
OMP      := -fopenmp
# gcc's format-truncation warns about deliberately bounded error messages
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null)),)
  WARN += -Wno-format-truncation
endif
CFLAGS   += $(CSTD) $(OPT) -g $(WARN) $(OMP) -I. $(EXTRA_CFLAGS)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS   += $(PKG_LIBS) -lm $(OMP)

ifeq ($(MPI),1)
  CC := mpicc
  CFLAGS += -DGT_MPI=1
  # MPI objects differ (GT_MPI): keep them, and the deps stamp, apart
  BUILD := $(BUILD)-mpi
endif

LIB_SRC  := $(sort $(wildcard sim/*/*.c planner/*.c planner/baselines/*.c topologies/*.c \
	                      traces/*.c experiments/*.c study/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libgeotrain.a
# cli/: the commands and the option parser, linked into the binary and the
# tests that run commands (never into the library: library code parses no argv)
CLI_SRC  := $(sort $(wildcard cli/*.c))
CLI_LIB  := $(BUILD)/libgeotrain-cli.a
BIN      := geotrain
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC:= $(sort $(wildcard tests/bench_*.c))
BENCH_BIN:= $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
DEPS_OK  := $(BUILD)/.deps-ok

# Builds run one job per CPU unless -j is given on the command line (which
# wins: make -j1 builds one file at a time). make test runs its phases one
# after another (its recipe below), each phase using every CPU.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

.PHONY: FORCE all deps test doc-test test-unit test-asan test-corpus-san test-corpus-ubsan test-clang test-mpi test-mpi-if-built build-asan/geotrain-asan-tests bench experiments plots install clean memcheck fuzz

all: $(BIN)

# Find missing system packages and install them (tools/deps.sh says how).
deps: $(DEPS_OK)
$(DEPS_OK): tools/deps.sh
	@sh tools/deps.sh
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# `geotrain --version`: VERSION, the git commit (only when this folder is the
# top of a git work tree, else "unknown": a tarball) and the build flags. They
# reach cli/version.c alone, through a stamp rewritten only when they change.
GT_VERSION := $(shell cat VERSION 2>/dev/null || echo unknown)
GT_COMMIT  := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
                c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
                { git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; echo $$c; } || echo unknown)
GT_FLAGS   := $(strip $(CC) $(OPT) $(EXTRA_CFLAGS)$(if $(filter 1,$(MPI)), MPI=1))
$(BUILD)/cli/version.o: CFLAGS += -DGT_VERSION='"$(GT_VERSION)"' -DGT_COMMIT='"$(GT_COMMIT)"' \
                                  -DGT_BUILD_FLAGS='"$(GT_FLAGS)"'
$(BUILD)/cli/version.o: $(BUILD)/version.stamp
$(BUILD)/version.stamp: FORCE | $(DEPS_OK)
	@echo '$(GT_VERSION) $(GT_COMMIT) $(GT_FLAGS)' | cmp -s - $@ || \
	    echo '$(GT_VERSION) $(GT_COMMIT) $(GT_FLAGS)' > $@
FORCE:

$(CLI_LIB): $(CLI_SRC:%.c=$(BUILD)/%.o)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/geotrain.o $(CLI_LIB) $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Counts every allocation the library makes (test_estimator_alloc.c), or
# makes one fail (test_dp_overlap.c).
$(BUILD)/tests/test_estimator_alloc $(BUILD)/tests/test_dp_overlap: LDLIBS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

$(BUILD)/tests/%: tests/%.c $(CLI_LIB) $(LIB) tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(shell pkg-config --cflags cmocka) -o $@ $< $(CLI_LIB) $(LIB) \
	    $(shell pkg-config --libs cmocka) $(LDLIBS)

# One phase after another (not as prerequisites, which -j would run at once
# and interleave): each phase builds what it needs in parallel.
TEST_PHASES := test-unit doc-test test-asan test-clang test-mpi-if-built test-lib
test:
	@for p in $(TEST_PHASES); do $(MAKE) --no-print-directory $$p || exit 1; done

# Every command of the README's tour, run and compared with what the README shows.
doc-test: $(BIN)
	@sh tests/doc_test.sh

# The MPI checks (tests/mpi_test.sh: study and plan --islands on 2 ranks =
# one process) need `make MPI=1` and Open MPI; `make test` runs them when
# that build exists, `make test-mpi` always (it builds build-mpi first).
test-mpi:
	@sh tests/mpi_test.sh

test-mpi-if-built:
	@if [ -x build-mpi/geotrain ] && command -v mpirun >/dev/null 2>&1; then \
	    echo "== MPI (build-mpi exists) =="; sh tests/mpi_test.sh; \
	else echo "no MPI build (make MPI=1): skipping the MPI checks (make test-mpi)"; fi

# Warnings are errors with both compilers: build everything with clang too.
# The clang binary is linked beside the gcc one (BIN=build-clang/geotrain-clang,
# ./geotrain is not touched) and must give the same seeded plans.
test-clang: $(DEPS_OK) $(BIN)
	@if command -v clang >/dev/null 2>&1; then \
	    echo "== clang build (-Werror) =="; \
	    $(MAKE) --no-print-directory -s BUILD=build-clang CC=clang BIN=build-clang/geotrain-clang \
	        build-clang/libgeotrain.a build-clang/libgeotrain-cli.a build-clang/geotrain-clang >/dev/null && \
	    echo "clang build: ok" && sh tests/compiler_same.sh ./$(BIN) build-clang/geotrain-clang; \
	else echo "clang not installed: skipping the clang build"; fi

# The bench binaries are built here too (not run: make bench does), so that a
# change cannot break make bench unseen.
test-unit: $(BIN) $(TEST_BIN) $(BENCH_BIN)
	@sh tests/check_runner.sh
	@sh tests/run.sh $(BUILD)/tests

# The same suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" build-asan/geotrain-asan-tests

build-asan/geotrain-asan-tests: $(TEST_BIN) $(BUILD)/geotrain
	@echo "== the suite under AddressSanitizer + UBSan =="
	@GEOTRAIN_TEST_STRIDE=5 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 sh tests/run.sh build-asan/tests
	@$(MAKE) --no-print-directory test-corpus-san

# The bad-input corpus (tests/bad/, test_bad_inputs) replayed through a geotrain
# binary built in $(BUILD) — under test-asan that is ASan + UBSan with
# -fno-sanitize-recover=all, so any overflow or UB in a refused input's path
# aborts the binary and fails the test (the suite above runs ./geotrain).
$(BUILD)/geotrain: $(BUILD)/geotrain.o $(CLI_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test-corpus-san: $(BUILD)/geotrain $(BUILD)/tests/test_bad_inputs
	@echo "== the bad-input corpus through $(BUILD)/geotrain =="
	@GEOTRAIN_BIN=$(BUILD)/geotrain ASAN_OPTIONS=detect_leaks=1:exitcode=86 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 $(BUILD)/tests/test_bad_inputs

test-corpus-ubsan: $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" test-corpus-san

memcheck: $(TEST_BIN)
	@GEOTRAIN_TEST_STRIDE=5 sh tests/run.sh $(BUILD)/tests valgrind

bench: $(BIN) $(BENCH_BIN)
	@for b in $(BENCH_BIN); do ./$$b || exit 1; done

experiments: $(BIN)
	@QUICK=$(QUICK) ONLY=$(ONLY) sh experiments/run.sh

plots:
	@sh plots/render.sh

fuzz:
	@$(MAKE) --no-print-directory -f tests/fuzz/Makefile FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/geotrain/topologies
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/$(BIN)
	cp -r topologies/. $(DESTDIR)$(PREFIX)/share/geotrain/topologies/
	cp -r traces $(DESTDIR)$(PREFIX)/share/geotrain/

clean:
	rm -rf build build-asan build-clang build-fuzz build-mpi $(BIN)

-include $(LIB_OBJ:.o=.d) $(CLI_SRC:%.c=$(BUILD)/%.d) $(BUILD)/geotrain.d

# --- library API, shared library, pkg-config, man page (docs/library.md) ---
# The public API is api/geotrain.h (installed alone); api/geotrain.c joins the
# static library. The shared library is built from -fPIC objects in their own
# tree (build-pic) so the normal objects stay non-PIC.
LIB_VERSION := $(GT_VERSION)
LIB_MAJOR   := 0
LIBDIR      ?= $(PREFIX)/lib
INCDIR      ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
PIC_BUILD   := build-pic
SO_REAL     := $(PIC_BUILD)/libgeotrain.so.$(LIB_VERSION)
API_OBJ     := $(BUILD)/api/geotrain.o


.PHONY: shared install-lib test-lib man clean-lib
shared: $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=$(PIC_BUILD) EXTRA_CFLAGS="-fPIC $(EXTRA_CFLAGS)" \
	    $(PIC_BUILD)/libgeotrain.a $(PIC_BUILD)/libgeotrain-cli.a $(PIC_BUILD)/api/geotrain.o
	@$(MAKE) --no-print-directory $(SO_REAL)

# The API loads jobs and topologies as the command line does (cli/cli.c), so
# the shared library holds the CLI objects too.
$(SO_REAL): $(PIC_BUILD)/libgeotrain.a $(PIC_BUILD)/libgeotrain-cli.a $(PIC_BUILD)/api/geotrain.o
	$(CC) -shared -Wl,-soname,libgeotrain.so.$(LIB_MAJOR) -o $@ $(PIC_BUILD)/api/geotrain.o \
	    -Wl,--whole-archive $(PIC_BUILD)/libgeotrain.a $(PIC_BUILD)/libgeotrain-cli.a \
	    -Wl,--no-whole-archive $(LDFLAGS) $(LDLIBS)
	ln -sf libgeotrain.so.$(LIB_VERSION) $(PIC_BUILD)/libgeotrain.so.$(LIB_MAJOR)
	ln -sf libgeotrain.so.$(LIB_MAJOR) $(PIC_BUILD)/libgeotrain.so

$(BUILD)/geotrain.pc: Makefile
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: geotrain' \
	    'Description: plan and simulate pipeline-parallel training on geo-distributed GPUs' \
	    'Version: $(LIB_VERSION)' 'Requires.private: $(PKGS)' \
	    'Libs: -L$${libdir} -lgeotrain' 'Libs.private: -lm -fopenmp' \
	    'Cflags: -I$${includedir}' > $@

# geotrain(1) from the binary's --help texts: it cannot drift from the program.
man: $(BUILD)/geotrain.1
$(BUILD)/geotrain.1: $(BIN) tools/man.sh
	sh tools/man.sh ./$(BIN) > $@.tmp && mv $@.tmp $@

install: install-lib
install-lib: shared $(BUILD)/geotrain.pc $(BUILD)/geotrain.1
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(PREFIX)/share/geotrain/python
	install -m 755 $(SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf libgeotrain.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/libgeotrain.so.$(LIB_MAJOR)
	ln -sf libgeotrain.so.$(LIB_MAJOR) $(DESTDIR)$(LIBDIR)/libgeotrain.so
	install -m 644 api/geotrain.h $(DESTDIR)$(INCDIR)/geotrain.h
	install -m 644 $(BUILD)/geotrain.pc $(DESTDIR)$(LIBDIR)/pkgconfig/geotrain.pc
	install -m 644 $(BUILD)/geotrain.1 $(DESTDIR)$(MANDIR)/man1/geotrain.1
	install -m 644 python/geotrain.py $(DESTDIR)$(PREFIX)/share/geotrain/python/geotrain.py

# make install into a temporary DESTDIR, a C program via pkg-config, python3
# (the last phase of make test).
test-lib: $(BIN)
	@echo "== installed library, pkg-config, Python module =="
	@MAKE="$(MAKE)" sh tests/lib_test.sh

-include $(API_OBJ:.o=.d)
clean: clean-lib
clean-lib:
	rm -rf $(PIC_BUILD)
