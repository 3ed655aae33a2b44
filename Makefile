# graft: build, test, bench, install.
#   make            build ./graft
#   make run        install missing packages, build, open graft on the default teacher
#   make test       install missing packages, build, run every test (unit, integration), in parallel
#   make test-interop  the checks against torch + transformers (tests/interop; ~3 GB of Python the first time)
#   make sanitize   the same tests under ASan + UBSan, float-to-int casts included (build-san/)
#   make fuzz       every libFuzzer harness for FUZZ_SECONDS (build-fuzz/, clang)
#   make bench      CPU benchmarks (timings live here, never in tests)
#   make test-gpu   GPU checks (tests/gpu; each skips itself without a GPU)
#   make bench-gpu  GPU benchmarks and their PyTorch peers (tests/gpu/bench)
#   make bench-gpu-dp  several GPUs under mpirun: scaling, all-reduce bandwidth
#   make install    PREFIX=/usr/local
# The CUDA backend is built when nvcc is found (PATH or /usr/local/cuda/bin);
# `make GRAFT_CUDA=0` builds without it.

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

# OpenMPI (Debian's libopenmpi-dev) for data-parallel jobs over several
# ranks (engine/backend/comm.h); `make GRAFT_MPI=0` builds without it (then a
# process that mpirun started as one of several ranks says so and stops).
MPI_PC   ?= ompi-c
GRAFT_MPI ?= $(shell pkg-config --exists $(MPI_PC) 2>/dev/null && echo 1 || echo 0)
ifeq ($(GRAFT_MPI),1)
MPI_CFLAGS = $(shell pkg-config --cflags $(MPI_PC)) -DGRAFT_WITH_MPI
MPI_LIBS   = $(shell pkg-config --libs $(MPI_PC)) \
             $(patsubst -L%,-Wl$(comma)-rpath$(comma)%,$(filter -L%,$(shell pkg-config --libs $(MPI_PC))))
endif
comma := ,

CFLAGS   ?= $(OPT) -g
# -fno-math-errno: no code reads errno after a math function, and with it sqrtf is one instruction that
# the CPU optimizer's loop vectorizes (the results are the same: IEEE square roots are exact-rounded)
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -fno-math-errno \
            -fopenmp -MMD -MP $(SAN) -I. -Iengine -Isrc -Iui $(PKG_CFLAGS) $(BLAS_CFLAGS) $(MPI_CFLAGS)
LDFLAGS  += -fopenmp $(SAN)
# glibc's vector math library (libc6-dev on amd64): the exps of the CPU losses' softmaxes
# (engine/backend/cpu/cpu_loss.c says how GCC calls it)
MVEC_LIBS = $(if $(filter x86_64,$(shell uname -m)),-lmvec)
LDLIBS   += $(PKG_LIBS) $(BLAS_LIBS) $(MPI_LIBS) $(MVEC_LIBS) -lpthread -lm

rwildcard = $(foreach d,$(wildcard $(1:=/*)),$(call rwildcard,$d,$2) $(filter $(subst *,%,$2),$d))

ENGINE_SRC := $(call rwildcard,engine,*.c)
APP_SRC    := $(filter-out src/main.c,$(call rwildcard,src,*.c)) $(call rwildcard,ui,*.c)
TEST_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard tests/bench/bench_*.c)
TOOL_SRC   := $(wildcard tests/tools/*.c)

# ---------------------------------------------------------------- CUDA
# engine/backend/cuda/*.cu (every file there, the GDN kernels' included) for
# Hopper (sm_90 machine code) plus compute_90 PTX for newer GPUs; one file
# for sm_90a (below).
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(strip $(NVCC)),)
GRAFT_CUDA ?= 0
else
GRAFT_CUDA ?= 1
endif
ifeq ($(GRAFT_CUDA),1)
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH  ?= -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90
# The attention kernels on wgmma (the forward's Hopper shapes, the backward's
# wgmma kernel) need sm_90a (H100 / H200, no other GPU): those two files are
# built for it alone, and the backend takes them only on compute capability 9.0.
CUDA_ARCH_WG ?= -gencode=arch=compute_90a,code=sm_90a
CUDA_ARCH_OBJ = $(CUDA_ARCH)
$(BUILD)/engine/backend/cuda/cuda_attention_fwd_wg.o: CUDA_ARCH_OBJ = $(CUDA_ARCH_WG)
$(BUILD)/engine/backend/cuda/cuda_attention_bwd_wg.o: CUDA_ARCH_OBJ = $(CUDA_ARCH_WG)
NVCC_OPT   ?= -O3 -lineinfo
# CUDA_WERROR=0 keeps warnings warnings (tests/gpu/device_run.sh retries so,
# loudly, when another host compiler warns where this one does not)
CUDA_WERROR ?= 1
NVCC_WERR   = $(if $(filter 1,$(CUDA_WERROR)),-Werror all-warnings,)
HOST_WERR   = $(if $(filter 1,$(CUDA_WERROR)),-Werror,-Wno-error)
NVCCFLAGS  += -std=c++17 $(NVCC_OPT) $(CUDA_ARCH_OBJ) $(NVCC_WERR) \
              -Xcompiler -Wall,-Wextra,$(HOST_WERR),-Wno-unused-parameter,-fno-strict-aliasing \
              -DGRAFT_WITH_CUDA -I. -Iengine -MMD -MP
CUDA_SRC   := $(wildcard engine/backend/cuda/*.cu)
CUDA_OBJ   := $(CUDA_SRC:%.cu=$(BUILD)/%.o)
CFLAGS     += -DGRAFT_WITH_CUDA
CUDA_LIBS   = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart -lstdc++
# NCCL (the CUDA backend's collectives, engine/backend/cuda/cuda_comm.cu) when
# its header is beside CUDA's or the system's; `make GRAFT_NCCL=0` leaves it out.
NCCL_HOME  ?= $(patsubst %/include/nccl.h,%,$(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h)))
GRAFT_NCCL ?= $(if $(NCCL_HOME),1,0)
ifeq ($(GRAFT_NCCL),1)
NVCCFLAGS  += -DGRAFT_WITH_NCCL -I$(NCCL_HOME)/include
CFLAGS     += -DGRAFT_WITH_NCCL
# (pip's nvidia-nccl wheels ship only libnccl.so.2: NCCL_HOME=.../site-packages/nvidia/nccl works too)
NCCL_LIB   ?= $(firstword $(foreach d,lib64 lib/x86_64-linux-gnu lib,$(wildcard $(NCCL_HOME)/$(d)/libnccl.so $(NCCL_HOME)/$(d)/libnccl.so.2)) \
                $(wildcard /usr/lib/x86_64-linux-gnu/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so.2))
CUDA_LIBS  += $(if $(NCCL_LIB),-L$(dir $(NCCL_LIB)) -Wl$(comma)-rpath$(comma)$(dir $(NCCL_LIB)) -l:$(notdir $(NCCL_LIB)),-lnccl)
endif
LDLIBS     += $(CUDA_LIBS)

else
CUDA_OBJ   :=
endif

# Export artifacts (the transformers modeling file) compiled into the program as byte arrays.
EXPORT_ASSETS := $(wildcard assets/export/*.py)
ASSET_OBJ  := $(BUILD)/gen/export_assets.o
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(ASSET_OBJ) $(CUDA_OBJ)
APP_OBJ    := $(APP_SRC:%.c=$(BUILD)/%.o)
TEST_BIN   := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN  := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
TOOL_BIN   := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
# GPU programs use backend.h, whose be_* functions live in engine/backend/backend.c
ifneq ($(wildcard engine/backend/backend.c),)
GPU_TEST_BIN  := $(patsubst tests/gpu/%.c,$(BUILD)/gpu/%,$(wildcard tests/gpu/test_*.c))
GPU_BENCH_BIN := $(patsubst tests/gpu/bench/%.c,$(BUILD)/gpu/%,$(wildcard tests/gpu/bench/bench_*.c))
endif
# the whole teacher and training on the GPU: they need the one transformer (engine/model/transformer.h)
ifneq ($(wildcard engine/model/transformer.h),)
GPU_TEST_BIN  += $(patsubst tests/gpu/model/%.c,$(BUILD)/gpu/%,$(wildcard tests/gpu/model/test_*.c))
GPU_BENCH_BIN += $(patsubst tests/gpu/model/%.c,$(BUILD)/gpu/%,$(wildcard tests/gpu/model/bench_*.c))
endif
LIB        := $(BUILD)/libgraft.a

.SECONDARY:
.PHONY: all graft run test sanitize bench install clean deps deps-fuzz tests fuzz fuzzers fuzz-replay \
        test-gpu bench-gpu bench-gpu-dp gpu-tests test-interop
all: graft

# The targets that build before they run (test, run, sanitize, ...) build on
# every CPU unless make was given -j itself.
NPROC := $(shell nproc 2>/dev/null || echo 2)
PAR    = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))

deps:
	@sh scripts/install-deps.sh

deps-fuzz:
	@sh scripts/install-deps.sh fuzz

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

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(MSG) NVCC $<
	$(Q)$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/gen/export_assets.c: $(EXPORT_ASSETS) scripts/embed-assets.sh
	@mkdir -p $(dir $@)
	$(MSG) EMBED $@
	$(Q)sh scripts/embed-assets.sh $@ $(EXPORT_ASSETS)

$(ASSET_OBJ): $(BUILD)/gen/export_assets.c
	$(MSG) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# ($(CUDA_OBJ) first: the long nvcc compiles start at once and overlap the short C files)
$(LIB): $(CUDA_OBJ) $(ENGINE_OBJ) $(APP_OBJ)
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

$(BUILD)/gpu/%: $(BUILD)/tests/gpu/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gpu/%: $(BUILD)/tests/gpu/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gpu/%: $(BUILD)/tests/gpu/model/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(BUILD)/graft $(TEST_BIN) $(TOOL_BIN) fuzz-replay

# what tests/gpu/run.sh runs besides the GPU programs: graft (tests/gpu/cli)
# and the unit tests it runs on the device
GPU_UNIT_BIN := $(addprefix $(BUILD)/tests/,test_transformer test_train_ref test_train_grad test_calibrate)
gpu-tests: $(BUILD)/graft $(GPU_UNIT_BIN) $(GPU_TEST_BIN) $(GPU_BENCH_BIN)

run: deps
	@$(MAKE) $(PAR) --no-print-directory graft
	./graft

test: deps
	@$(MAKE) $(PAR) --no-print-directory tests
	@sh tests/run.sh $(BUILD)

# Students and tokenizers in Hugging Face transformers (torch): scripts/pyenv.sh
# installs them once per machine (about 3 GB), which is why these are apart from
# `make test`; .ci/run runs both.
test-interop: deps
	@$(MAKE) $(PAR) --no-print-directory $(BUILD)/graft $(BUILD)/tests/tools/student_tool
	@sh tests/run.sh $(BUILD) tests/interop

# float-cast-overflow is not part of -fsanitize=undefined (gcc and clang):
# it catches float -> int conversions of out-of-range values (1e30 -> int).
# protect_shadow_gap=0: the CUDA runtime maps memory where ASan keeps its shadow
# gap, so on a GPU machine every CUDA init failed under ASan (no usable GPU).
sanitize: deps
	@$(MAKE) $(PAR) --no-print-directory BUILD=build-san OPT=-O1 \
	    SAN="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all" tests
	@ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    sh tests/run.sh build-san

bench: deps
	@$(MAKE) $(PAR) --no-print-directory graft $(BENCH_BIN)
	@sh tests/bench/run.sh $(BUILD)

# GPU checks and benchmarks: only the programs under tests/gpu (they skip
# themselves, exit 77, where there is no GPU or no CUDA in the build).
test-gpu:
	@$(MAKE) --no-print-directory $(BUILD)/graft $(GPU_UNIT_BIN) $(GPU_TEST_BIN)
	@sh tests/gpu/run.sh $(BUILD)

bench-gpu:
	@$(MAKE) --no-print-directory $(GPU_BENCH_BIN)
	@sh tests/gpu/bench/run.sh $(BUILD)

# several GPUs of one machine (docs/distributed.md): scaling efficiency at 1/2/4/8
# GPUs for the 1.5B-shaped hybrid, the 8B teacher's statistics, all-reduce bus bandwidth
bench-gpu-dp:
	@$(MAKE) --no-print-directory $(BUILD)/gpu/bench_dp
	@sh tests/gpu/bench/dp_scaling.sh $(BUILD)

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

fuzz: deps-fuzz
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) \
	    OPT="-O1 -gline-tables-only -Wno-pass-failed" SAN="$(FUZZ_SAN)" fuzzers
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
# ---- end of fuzzing ---------------------------------------------------------

clean:
	rm -rf build build-san build-fuzz graft

include tests/gpu/emu/emu.mk
include tests/gpu/gdn.mk

-include $(call rwildcard,$(BUILD),*.d)
