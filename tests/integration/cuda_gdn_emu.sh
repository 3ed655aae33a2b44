#!/bin/sh
# The CUDA GDN kernels (engine/backend/cuda/cuda_gdn*.cu) run on the CPU emulation
# of tests/gpu/emu against the float64 CPU GDN (small shapes, fp32 and bf16 modes,
# fibers in shuffled order so that a missing barrier shows). `make tests` builds it
# where the CUDA headers are; skipped elsewhere.
# Inputs from a fixed seed here (GRAFT_SEED overrides it), so that make test repeats
# itself; `make test-gdn-emu` and the GPU run keep fresh seeds. Fresh seeds: 40 of 40
# passed once the layer backward was measured against the reference on the device's
# activations (before, 3 of 40 failed a bf16 layer-backward check at these tiny
# shapes: the layer's conditioning at small head dims, not the kernels;
# docs/cuda-gdn.md, "Checks").
. "$(dirname "$0")/../lib.sh"
bin="$(dirname "$G")/emu/test_cuda_gdn"
[ -x "$bin" ] || skip "SKIP: $bin not built (no CUDA headers)"
GRAFT_SEED=${GRAFT_SEED:-1} GRAFT_EMU_ORDER=shuffle "$bin" || exit 1
# the sequential passes' slab height forced (docs/cuda-gdn.md): the run above
# takes 16 rows (4 warps) at these shapes; here 32 rows (8 warps)
GRAFT_SEED=${GRAFT_SEED:-1} GRAFT_EMU_ORDER=shuffle "$bin" --slab 32 || exit 1
