#!/bin/sh
# The CUDA backend's attention kernels (tensor-core forward with statistics,
# its variants, backward; the exact SIMT kernels) on the CPU emulation of
# tests/gpu/attn_emu against a float64 reference, threads of each block run in
# reverse order between barriers (make tests builds it where the CUDA headers
# are; elsewhere this skips).
BIN=$(dirname "$GRAFT_BIN")/attn_emu/test_attn_emu
[ -x "$BIN" ] || { echo "SKIP: $BIN not built (no CUDA headers here)"; exit 77; }
GRAFT_EMU_ORDER=reverse "$BIN"
