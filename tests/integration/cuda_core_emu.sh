#!/bin/sh
# The CUDA backend's core kernels (attention: tensor-core forward with
# statistics, its block shapes, backward, the exact SIMT kernels; embedding,
# SwiGLU, add, scale, RMSNorm, RoPE, losses, sumsq, AdamW) on the CPU emulation
# of tests/gpu/emu against float64 references, the threads of each block run
# in reverse order between barriers, then shuffled (seconds each since the
# fibers switch without a system call). make tests builds it where the CUDA
# headers are; elsewhere this skips.
BIN=$(dirname "$GRAFT_BIN")/emu/test_core_emu
[ -x "$BIN" ] || { echo "SKIP: $BIN not built (no CUDA headers here)"; exit 77; }
GRAFT_EMU_ORDER=reverse "$BIN" || exit 1
# and in a fresh random order at every round (the runtime's fixed seed: the same
# orders each run), which reaches interleavings neither fixed order does
GRAFT_EMU_ORDER=shuffle "$BIN"
