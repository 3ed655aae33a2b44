# The CPU emulation of CUDA (tests/gpu/emu), included by the Makefile: the
# backend's own kernel files (engine/backend/cuda/*.cu) built by the host C++
# compiler with -DGRAFT_CUDA_EMU and tests/gpu/emu/emu.h forced in front of
# every file (a fiber per thread; emu.h says what it checks and what it
# cannot), so their indexing, fragment layouts and barriers are checked where
# there is no GPU. One runtime (emu.cpp), two kernel families on top of it:
#
#   make test-core-emu   the core's kernels (attention, element-wise, norms,
#                        RoPE, losses, optimizer, the fixed-order sums):
#                        test_core_emu.cpp against float64 references, through
#                        the kernels' host entry points (core_stubs.cpp gives
#                        them the rest of the backend)
#   make test-gdn-emu    the Gated DeltaNet kernels (cuda_gdn*.cu):
#                        tests/gpu/test_cuda_gdn.c unchanged, through
#                        be_open("cuda") of gdn_backend.cpp
#
# make test runs both (tests/integration/cuda_core_emu.sh, cuda_gdn_emu.sh)
# and the runtime's own checks (test_emu_runtime.cpp: cuda_emu_runtime.sh);
# `make tests` builds them where the CUDA headers exist.
#
# The GDN program links the engine WITHOUT the real CUDA objects (an archive of
# its own) and no CUDA library: the emulated and the real symbols (both define
# gf_backend_cuda_open) never share a link.
ifeq ($(GRAFT_CUDA),1)
EMU_CXX   ?= g++
EMU_FLAGS  = -std=c++17 -O2 -g -DGRAFT_CUDA_EMU -include tests/gpu/emu/emu.h -I. -Iengine -I$(CUDA_HOME)/include \
             -Wall -Wextra $(HOST_WERR) -Wno-unused-parameter -Wno-unknown-pragmas -fno-strict-aliasing \
             -ffp-contract=off -MMD -MP $(SAN)
EMU_RUNTIME := $(BUILD)/emu/tests/gpu/emu/emu.o

EMU_CORE_CU  := cuda_attention cuda_attention_fwd cuda_attention_fwd_wg cuda_attention_bwd cuda_attention_bwd_wg cuda_attention_simt cuda_reduce cuda_gemv \
                cuda_elementwise cuda_norm_rope cuda_losses cuda_optim
EMU_CORE_OBJ := $(EMU_CORE_CU:%=$(BUILD)/emu/engine/backend/cuda/%.o) $(EMU_RUNTIME) \
                $(BUILD)/emu/tests/gpu/emu/core_stubs.o $(BUILD)/emu/tests/gpu/emu/test_core_emu.o
EMU_GDN_CU   := $(wildcard engine/backend/cuda/cuda_gdn*.cu)
EMU_GDN_OBJ  := $(EMU_GDN_CU:%.cu=$(BUILD)/emu/%.o) $(EMU_RUNTIME) $(BUILD)/emu/tests/gpu/emu/gdn_backend.o
EMU_ENGINE   := $(BUILD)/emu/libengine.a
EMU_BINS     := $(BUILD)/emu/test_core_emu $(BUILD)/emu/test_cuda_gdn $(BUILD)/emu/test_emu_runtime

$(BUILD)/emu/%.o: %.cu
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(EMU_CXX) $(EMU_FLAGS) -x c++ -c $< -o $@

$(BUILD)/emu/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(EMU_CXX) $(EMU_FLAGS) -c $< -o $@

$(EMU_ENGINE): $(filter-out $(CUDA_OBJ),$(ENGINE_OBJ))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(MSG) AR $@
	$(Q)ar rcs $@ $^

$(BUILD)/emu/test_core_emu: $(EMU_CORE_OBJ)
	$(MSG) LD $@
	$(Q)$(EMU_CXX) $(LDFLAGS) -o $@ $^

$(BUILD)/emu/test_emu_runtime: $(EMU_RUNTIME) $(BUILD)/emu/tests/gpu/emu/test_emu_runtime.o
	$(MSG) LD $@
	$(Q)$(EMU_CXX) $(LDFLAGS) -o $@ $^

$(BUILD)/emu/test_cuda_gdn: $(BUILD)/tests/gpu/test_cuda_gdn.o $(EMU_GDN_OBJ) $(EMU_ENGINE)
	$(MSG) LD $@
	$(Q)$(EMU_CXX) $(LDFLAGS) -o $@ $^ $(filter-out $(CUDA_LIBS),$(LDLIBS))

.PHONY: test-core-emu test-gdn-emu
test-core-emu: $(BUILD)/emu/test_core_emu
	$(BUILD)/emu/test_core_emu
	GRAFT_EMU_ORDER=reverse $(BUILD)/emu/test_core_emu

test-gdn-emu: $(BUILD)/emu/test_cuda_gdn
	GRAFT_EMU_ORDER=shuffle $(BUILD)/emu/test_cuda_gdn

ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
tests: $(EMU_BINS)
endif
endif
