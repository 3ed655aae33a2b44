# The CUDA Gated DeltaNet kernels' emulated check (tests/gpu/emu), included by
# the Makefile. The GPU programs themselves (build/gpu/test_cuda_gdn,
# build/gpu/bench_gdn) are ordinary tests/gpu programs on the real backend
# (the Makefile's $(BUILD)/gpu/% rules); this file adds
#   make test-gdn-emu    anywhere: tests/gpu/test_cuda_gdn.c on the CPU emulation
#                        of engine/backend/cuda/cuda_gdn*.cu (small shapes)
#   make gdn-gpu-build   builds the two GPU programs
#   make test-gpu-gdn    on a GPU machine: the GDN check alone
#   make bench-gpu-gdn   on a GPU machine: bench_gdn with its PyTorch / FLA peers (peer_gdn.py)
#
# The emulated program links test_cuda_gdn.o with the GDN files compiled as host
# C++ (-DGDN_EMULATE), tests/gpu/emu/gdn_emu_backend.cpp (which defines
# gf_backend_cuda_open: be_open("cuda") there opens the emulation) and an
# archive of the engine WITHOUT the real CUDA objects, and no CUDA library:
# the emulated and the real symbols never share a link.
ifeq ($(GRAFT_CUDA),1)
CXX_EMU   ?= g++
GDN_CU    := $(wildcard engine/backend/cuda/cuda_gdn*.cu)
GDN_EMU_FLAGS = -std=c++17 -O2 -g -DGDN_EMULATE -Wall -Wextra $(HOST_WERR) -Wno-unused-parameter -I. -Iengine \
                -Wno-unknown-pragmas -I$(CUDA_HOME)/include -include tests/gpu/emu/gdn_emu.h -MMD -MP $(SAN)
GDN_EMU_OBJ := $(GDN_CU:%.cu=$(BUILD)/emu/%.o) $(BUILD)/emu/tests/gpu/emu/gdn_emu.o \
               $(BUILD)/emu/tests/gpu/emu/gdn_emu_backend.o
GDN_EMU_ENGINE := $(BUILD)/emu/libengine.a
GDN_EMU_LIBS = $(filter-out $(CUDA_LIBS),$(LDLIBS))

$(BUILD)/emu/%.o: %.cu
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(CXX_EMU) $(GDN_EMU_FLAGS) -x c++ -c $< -o $@

$(BUILD)/emu/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(CXX_EMU) $(GDN_EMU_FLAGS) -c $< -o $@

$(GDN_EMU_ENGINE): $(filter-out $(CUDA_OBJ),$(ENGINE_OBJ))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(MSG) AR $@
	$(Q)ar rcs $@ $^

$(BUILD)/emu/test_cuda_gdn: $(BUILD)/tests/gpu/test_cuda_gdn.o $(GDN_EMU_OBJ) $(GDN_EMU_ENGINE)
	$(MSG) LD $@
	$(Q)$(CXX_EMU) $(LDFLAGS) -o $@ $^ $(GDN_EMU_LIBS)

.PHONY: test-gpu-gdn bench-gpu-gdn test-gdn-emu gdn-gpu-build
gdn-gpu-build: $(BUILD)/gpu/test_cuda_gdn $(BUILD)/gpu/bench_gdn

test-gpu-gdn: $(BUILD)/gpu/test_cuda_gdn
	$(BUILD)/gpu/test_cuda_gdn

test-gdn-emu: $(BUILD)/emu/test_cuda_gdn
	GDN_EMU_ORDER=shuffle $(BUILD)/emu/test_cuda_gdn

bench-gpu-gdn: $(BUILD)/gpu/bench_gdn
	GRAFT_BENCH_ONLY=gdn sh tests/gpu/bench/run.sh $(BUILD)

# `make tests` (and so `make test`, `make sanitize`) builds the emulated test
# where the CUDA headers exist; tests/integration/cuda_gdn_emu.sh runs it.
ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
tests: $(BUILD)/emu/test_cuda_gdn
endif
endif
