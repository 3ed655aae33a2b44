#!/bin/sh
# The cache is huggingface_hub's: Python's hf_hub_download / snapshot_download
# with HF_HUB_OFFLINE=1 find what graft wrote (on a copy of the cache), and
# graft, offline, finds what huggingface_hub downloaded from the fake hub.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
# huggingface_hub: the system's, else the one the export checks' environment holds
# (scripts/pyenv.sh tokenizers: tokenizers depends on it)
PY=python3
$PY -c 'import huggingface_hub' 2>/dev/null || PY=$(sh "$GRAFT_ROOT/scripts/pyenv.sh" tokenizers 2>/dev/null) || PY=python3
$PY -c 'import huggingface_hub' 2>/dev/null || skip "the Python package huggingface_hub is not installed"
start_hub
g download karpathy/tinyllamas:stories260K/stories260K.bin --quiet
expect_ok "graft download tinyllamas"
g download graft-test/tiny-llama --json
expect_ok "graft download tiny-llama"
cp "$T/out" "$T/graft.json"
cp -a "$CACHE" "$T/copy"

HF_HUB_CACHE="$T/copy" HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 timeout 120 \
    "$PY" "$GRAFT_ROOT/tests/ref/hub_cache_check.py" "$T/graft.json" "$SHARED_BIN" || fail "huggingface_hub could not read graft's cache"

# the other way: huggingface_hub downloads from the fake hub, graft reads offline
HF_HUB_CACHE="$T/pycache" HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_PROGRESS_BARS=1 timeout 120 "$PY" - <<'PY' || fail "huggingface_hub could not download from the fake hub"
from huggingface_hub import snapshot_download
snapshot_download("graft-test/tiny-llama")
PY
HF_HUB_CACHE="$T/pycache" HF_HUB_OFFLINE=1 g download graft-test/tiny-llama
expect_ok "graft offline on huggingface_hub's cache"
[ -f "$(cat "$T/out")/model-00002-of-00002.safetensors" ] || fail "graft's path lacks the shard"
echo ok
