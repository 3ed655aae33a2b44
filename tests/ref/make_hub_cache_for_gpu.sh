#!/bin/sh
# Writes a Hugging Face cache with `graft download` from the fake hub into
# .gpucheck/ (ignored), for tests/ref/hub_cache_check.py on the GPU machine:
#   sh tests/ref/make_hub_cache_for_gpu.sh          (here, after make)
#   device: cd .gpucheck && HF_HUB_CACHE=$PWD/cache HF_HUB_OFFLINE=1 python3 ../tests/ref/hub_cache_check.py graft.json stories260K.bin
set -eu
export GRAFT_ROOT=${GRAFT_ROOT:-$(pwd)} GRAFT_BIN=${GRAFT_BIN:-$(pwd)/build/graft} GRAFT_SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
start_hub
g download karpathy/tinyllamas:stories260K/stories260K.bin --quiet
expect_ok "download tinyllamas"
g download graft-test/tiny-llama --json
expect_ok "download tiny-llama"
rm -rf "$GRAFT_ROOT/.gpucheck" && mkdir -p "$GRAFT_ROOT/.gpucheck"
cp "$T/out" "$GRAFT_ROOT/.gpucheck/graft.json"
cp -a "$CACHE" "$GRAFT_ROOT/.gpucheck/cache"
cp "$SHARED_BIN" "$GRAFT_ROOT/.gpucheck/stories260K.bin"
echo "wrote $GRAFT_ROOT/.gpucheck"
