# The CUDA Gated DeltaNet kernels' checks and benchmarks (tests/gpu), included by
# the Makefile. Until the CUDA backend core (branch `cuda`) brings the product's
# nvcc rules, these targets build engine/backend/cuda/cuda_gdn*.cu themselves
# with a stand-in backend (tests/gpu/gdn_harness.cu).
#   make test-gpu-gdn    on a GPU machine: the kernels against the float64 CPU GDN (77 = no GPU)
#   make bench-gpu-gdn   on a GPU machine: core and layer tok/s, PyTorch and FLA peers, one table
#   make test-gdn-emu    anywhere: the same test on the CPU emulation (tests/gpu/emu), small shapes
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) nvcc)
CXX_EMU   ?= g++
GDN_CU    := $(wildcard engine/backend/cuda/cuda_gdn*.cu)
GDN_HDR   := $(wildcard engine/backend/cuda/*.cuh engine/backend/cuda/cuda_gdn.h tests/gpu/*.h tests/gpu/emu/*.h)
GDN_NVFLAGS = -std=c++17 -O3 -lineinfo -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90 \
              -Xcompiler -Wall,-Wextra,-Werror -I. -Iengine
GDN_CUDA_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
GDN_EMU_FLAGS = -std=c++17 -O2 -g -DGDN_EMULATE -Wall -Wextra -Werror -Wno-unused-parameter -I. -Iengine \
                -Wno-unknown-pragmas -I$(CUDA_HOME)/include -include tests/gpu/emu/config_shim.h $(SAN)

GDN_GPU_OBJ := $(GDN_CU:%.cu=$(BUILD)/gpu/%.o) $(BUILD)/gpu/tests/gpu/gdn_harness.o
GDN_EMU_OBJ := $(GDN_CU:%.cu=$(BUILD)/emu/%.o) $(BUILD)/emu/tests/gpu/gdn_harness.o $(BUILD)/emu/tests/gpu/emu/gdn_emu.o

$(BUILD)/gpu/%.o: %.cu $(GDN_HDR)
	@mkdir -p $(dir $@)
	$(MSG) NVCC $<
	$(Q)$(NVCC) $(GDN_NVFLAGS) -c $< -o $@

$(BUILD)/emu/%.o: %.cu $(GDN_HDR)
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(CXX_EMU) $(GDN_EMU_FLAGS) -x c++ -c $< -o $@

$(BUILD)/emu/%.o: %.cpp $(GDN_HDR)
	@mkdir -p $(dir $@)
	$(MSG) EMU $<
	$(Q)$(CXX_EMU) $(GDN_EMU_FLAGS) -c $< -o $@

$(BUILD)/gpu/test_cuda_gdn: $(BUILD)/tests/gpu/test_cuda_gdn.o $(GDN_GPU_OBJ) $(LIB)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(GDN_CUDA_LIBS)

$(BUILD)/emu/test_cuda_gdn: $(BUILD)/tests/gpu/test_cuda_gdn.o $(GDN_EMU_OBJ) $(LIB)
	$(MSG) LD $@
	$(Q)$(CXX_EMU) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gpu/bench_gdn: $(BUILD)/tests/gpu/bench/bench_gdn.o $(GDN_GPU_OBJ) $(LIB)
	$(MSG) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(GDN_CUDA_LIBS)

.PHONY: test-gpu-gdn bench-gpu-gdn test-gdn-emu gdn-gpu-build
gdn-gpu-build: $(BUILD)/gpu/test_cuda_gdn $(BUILD)/gpu/bench_gdn

test-gpu-gdn: $(BUILD)/gpu/test_cuda_gdn
	$(BUILD)/gpu/test_cuda_gdn

test-gdn-emu: $(BUILD)/emu/test_cuda_gdn
	$(BUILD)/emu/test_cuda_gdn

bench-gpu-gdn: $(BUILD)/gpu/bench_gdn
	sh tests/gpu/bench/run_gdn.sh $(BUILD)

# `make tests` (and so `make test`, `make sanitize`) builds the emulated test
# where the CUDA headers exist; tests/integration/cuda_gdn_emu.sh runs it.
ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
tests: $(BUILD)/emu/test_cuda_gdn
endif

# Binaries to carry to a GPU machine whose image lacks graft's Debian packages:
# only the GDN objects and the engine objects they need (libgraft.a members),
# OpenBLAS, OpenMP, the C++ runtime and cudart linked statically; cuBLAS from
# $(CUDA_HOME)/lib64 there. `make gdn-gpu-portable`, then carry build/gpu-portable.
GDN_STATIC_LIBS = -Wl,-Bstatic -L$(BLAS_DIR) -lopenblas -lgfortran -lquadmath -lgomp -Wl,-Bdynamic \
                  -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart_static -lcublas \
                  -static-libstdc++ -static-libgcc -lstdc++ -lpthread -ldl -lrt -lm
GDN_ENGINE_OBJ = $(BUILD)/engine/gdn/gdn_f64.o $(BUILD)/engine/gdn/gdn_config.o $(BUILD)/engine/core/error.o

$(BUILD)/gpu-portable/%: $(BUILD)/tests/gpu/%.o $(GDN_GPU_OBJ) $(GDN_ENGINE_OBJ)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CXX_EMU) -s -o $@ $^ $(GDN_STATIC_LIBS)

$(BUILD)/gpu-portable/bench_gdn: $(BUILD)/tests/gpu/bench/bench_gdn.o $(GDN_GPU_OBJ)
	@mkdir -p $(dir $@)
	$(MSG) LD $@
	$(Q)$(CXX_EMU) -s -o $@ $^ $(GDN_STATIC_LIBS)

.PHONY: gdn-gpu-portable
gdn-gpu-portable: $(BUILD)/gpu-portable/test_cuda_gdn $(BUILD)/gpu-portable/bench_gdn
