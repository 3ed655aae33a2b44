#!/bin/sh
# The CUDA GDN kernels (engine/backend/cuda/cuda_gdn*.cu) run on the CPU emulation
# of tests/gpu/emu against the float64 CPU GDN (small shapes, fp32 and bf16 modes,
# fibers in shuffled order so that a missing barrier shows). `make tests` builds it
# where the CUDA headers are; skipped elsewhere.
. "$(dirname "$0")/../lib.sh"
bin="$(dirname "$G")/emu/test_cuda_gdn"
[ -x "$bin" ] || skip "SKIP: $bin not built (no CUDA headers)"
GDN_EMU_ORDER=shuffle "$bin"
