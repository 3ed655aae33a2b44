# The CUDA Gated DeltaNet programs, included by the Makefile. The GPU programs
# themselves (build/gpu/test_cuda_gdn, build/gpu/bench_gdn) are ordinary
# tests/gpu programs on the real backend (the Makefile's $(BUILD)/gpu/% rules);
# this file adds
#   make gdn-gpu-build   builds the two GPU programs
#   make test-gpu-gdn    on a GPU machine: the GDN check alone
#   make bench-gpu-gdn   on a GPU machine: bench_gdn with its PyTorch / FLA peers (peer_gdn.py)
# (the same check on the CPU emulation of the kernels: make test-gdn-emu,
# tests/gpu/emu/emu.mk)
ifeq ($(GRAFT_CUDA),1)
.PHONY: test-gpu-gdn bench-gpu-gdn gdn-gpu-build
gdn-gpu-build: $(BUILD)/gpu/test_cuda_gdn $(BUILD)/gpu/bench_gdn

test-gpu-gdn: $(BUILD)/gpu/test_cuda_gdn
	$(BUILD)/gpu/test_cuda_gdn

bench-gpu-gdn: $(BUILD)/gpu/bench_gdn
	GRAFT_BENCH_ONLY=gdn sh tests/gpu/bench/run.sh $(BUILD)
endif
