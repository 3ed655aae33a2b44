# graft: build, test, bench, install.
#   make            build ./graft
#   make run        install missing packages, build, open graft on the default teacher
#   make test       install missing packages, build, run every test (unit, integration)
#   make sanitize   the same tests under ASan + UBSan, float-to-int casts included (build-san/)
#   make fuzz       every libFuzzer harness for FUZZ_SECONDS (build-fuzz/, clang)
#   make bench      CPU benchmarks (timings live here, never in tests)
#   make install    PREFIX=/usr/local

PREFIX   ?= /usr/local
BUILD    ?= build
CC       ?= cc
OPT      ?= -O2 -march=x86-64-v2
SAN      ?=
PKGS      = ncursesw libcurl libcjson libpcre2-8 cmocka libcrypto libutf8proc
# OpenBLAS built for OpenMP shares graft's OpenMP thread pool; the pthread
# build would run its own pool beside it and the two spin against each other.
BLAS_DIR ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/$(shell uname -m)-linux-gnu/openblas-openmp))
ifneq ($(BLAS_DIR),)
BLAS_CFLAGS = -I$(subst /lib/,/include/,$(BLAS_DIR))
BLAS_LIBS   = -L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -lopenblas
else
BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(or $(shell pkg-config --libs openblas 2>/dev/null),-lopenblas)
endif

# Where pkg-config or the packages' .pc files are missing (the GPU machine
# builds from .carry's headers, tests/gpu/carry.sh), the flags pkg-config gives
# on Debian are used as they are.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ifeq ($(strip $(PKG_LIBS)),)
PKG_CFLAGS := -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600
PKG_LIBS   := -lncursesw -ltinfo -lcurl -lcjson -lpcre2-8 -lcmocka -lcrypto -lutf8proc
endif

CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
            -fopenmp -MMD -MP $(SAN) -I. -Iengine -Isrc -Iui $(PKG_CFLAGS) $(BLAS_CFLAGS)
LDFLAGS  += -fopenmp $(SAN)
LDLIBS   += $(PKG_LIBS) $(BLAS_LIBS) -lpthread -lm

rwildcard = $(foreach d,$(wildcard $(1:=/*)),$(call rwildcard,$d,$2) $(filter $(subst *,%,$2),$d))

ENGINE_SRC := $(call rwildcard,engine,*.c)
APP_SRC    := $(filter-out src/main.c,$(call rwildcard,src,*.c)) $(call rwildcard,ui,*.c)
TEST_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard tests/bench/bench_*.c)
TOOL_SRC   := $(wildcard tests/tools/*.c)

# Export artifacts (the transformers modeling file) compiled into the program as byte arrays.
EXPORT_ASSETS := $(wildcard assets/export/*.py)
ASSET_OBJ  := $(BUILD)/gen/export_assets.o
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(ASSET_OBJ)
APP_OBJ    := $(APP_SRC:%.c=$(BUILD)/%.o)
TEST_BIN   := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN  := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
TOOL_BIN   := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
LIB        := $(BUILD)/libgraft.a

.SECONDARY:
.PHONY: all graft run test sanitize bench install clean deps tests fuzz fuzzers fuzz-replay
all: graft

deps:
	@sh scripts/install-deps.sh

V ?= 0
ifeq ($(V),0)
Q = @
MSG = @printf '  %-6s %s\n'
else
Q =
MSG = @true
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(MSG) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/gen/export_assets.c: $(EXPORT_ASSETS) scripts/embed-assets.sh
	@mkdir -p $(dir $@)
	$(MSG) EMBED $@
	$(Q)sh scripts/embed-assets.sh $@ $(EXPORT_ASSETS)

$(ASSET_OBJ): $(BUILD)/gen/export_assets.c
	$(MSG) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(ENGINE_OBJ) $(APP_OBJ)
	@rm -f $@
	$(MSG) AR $@
	$(Q)ar rcs $@ $^

$(BUILD)/graft: $(BUILD)/src/main.o $(LIB)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

graft: $(BUILD)/graft
	@ln -sf $(BUILD)/graft graft

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIB)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(BUILD)/graft $(TEST_BIN) $(TOOL_BIN) fuzz-replay

run: deps
	@$(MAKE) --no-print-directory graft
	./graft

test: deps
	@$(MAKE) --no-print-directory tests
	@sh tests/run.sh $(BUILD)

# float-cast-overflow is not part of -fsanitize=undefined (gcc and clang):
# it catches float -> int conversions of out-of-range values (1e30 -> int).
sanitize: deps
	@$(MAKE) --no-print-directory BUILD=build-san OPT=-O1 \
	    SAN="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all" tests
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    sh tests/run.sh build-san

bench: deps
	@$(MAKE) --no-print-directory graft $(BENCH_BIN)
	@sh tests/bench/run.sh $(BUILD)

install: graft
	install -Dm755 graft $(DESTDIR)$(PREFIX)/bin/graft
	install -Dm644 man/graft.1 $(DESTDIR)$(PREFIX)/share/man/man1/graft.1

# ---- fuzzing ---------------------------------------------------------------
# tests/fuzz/fuzz_*.c are libFuzzer harnesses, one per parser. `make fuzz`
# builds them with clang (libFuzzer + ASan + UBSan + float-to-int overflow) in
# build-fuzz/ and runs each for FUZZ_SECONDS (tests/fuzz/run.sh). The same
# harnesses linked with tests/fuzz/replay_main.c (any compiler) replay the seed
# corpora and the kept crashing inputs (tests/fuzz/regress/) in `make test`.
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN      = -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow \
                -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_HARNESS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_HARNESS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_REPLAY  := $(FUZZ_HARNESS:tests/fuzz/fuzz_%.c=$(BUILD)/fuzz/replay_%)

$(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/harness.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz/replay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/harness.o \
                        $(BUILD)/tests/fuzz/replay_main.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

fuzzers: $(FUZZ_BIN)
fuzz-replay: $(FUZZ_REPLAY)

fuzz: deps
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) \
	    OPT="-O1 -gline-tables-only -Wno-pass-failed" SAN="$(FUZZ_SAN)" fuzzers
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
# ---- end of fuzzing ---------------------------------------------------------

clean:
	rm -rf build build-san build-fuzz graft

-include $(call rwildcard,$(BUILD),*.d)
