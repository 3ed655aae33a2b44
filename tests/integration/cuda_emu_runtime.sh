#!/bin/sh
# The CUDA emulation's runtime itself (tests/gpu/emu/emu.cpp): tiny kernels
# through barriers, shuffles and early exits in the three fiber orders, and each
# fault it promises to stop at (a deadlock, divergent lanes, an mma in a partial
# warp, ...) stopping a child process with its message
# (tests/gpu/emu/test_emu_runtime.cpp). Skipped where the CUDA headers are not.
BIN=$(dirname "$GRAFT_BIN")/emu/test_emu_runtime
[ -x "$BIN" ] || { echo "SKIP: $BIN not built (no CUDA headers here)"; exit 77; }
"$BIN"
