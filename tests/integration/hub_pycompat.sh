#!/bin/sh
# The cache is huggingface_hub's: Python's hf_hub_download / snapshot_download
# with HF_HUB_OFFLINE=1 find what graft wrote (on a copy of the cache), and
# graft, offline, finds what huggingface_hub downloaded from the fake hub.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
python3 -c 'import huggingface_hub' 2>/dev/null || skip "the Python package huggingface_hub is not installed"
start_hub
g download karpathy/tinyllamas:stories260K/stories260K.bin --quiet
expect_ok "graft download tinyllamas"
g download graft-test/tiny-llama --json
expect_ok "graft download tiny-llama"
cp "$T/out" "$T/graft.json"
cp -a "$CACHE" "$T/copy"

HF_HUB_CACHE="$T/copy" HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 timeout 120 python3 - "$T/graft.json" "$SHARED_BIN" <<'PY' || fail "huggingface_hub could not read graft's cache"
import json, sys, os, hashlib
from huggingface_hub import hf_hub_download, snapshot_download
g = json.load(open(sys.argv[1]))
p = hf_hub_download("karpathy/tinyllamas", "stories260K/stories260K.bin")
assert open(p, "rb").read() == open(sys.argv[2], "rb").read(), p
d = snapshot_download("graft-test/tiny-llama", allow_patterns=[f["name"] for f in g["files"]])
assert os.path.basename(d) == g["commit"], (d, g["commit"])
for f in g["files"]:
    data = open(os.path.join(d, f["name"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == f["sha256"], f["name"]
print("huggingface_hub read %d files from graft's cache" % (1 + len(g["files"])))
PY

# the other way: huggingface_hub downloads from the fake hub, graft reads offline
HF_HUB_CACHE="$T/pycache" HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_PROGRESS_BARS=1 timeout 120 python3 - <<'PY' || fail "huggingface_hub could not download from the fake hub"
from huggingface_hub import snapshot_download
snapshot_download("graft-test/tiny-llama")
PY
HF_HUB_CACHE="$T/pycache" HF_HUB_OFFLINE=1 g download graft-test/tiny-llama
expect_ok "graft offline on huggingface_hub's cache"
[ -f "$(cat "$T/out")/model-00002-of-00002.safetensors" ] || fail "graft's path lacks the shard"
echo ok
