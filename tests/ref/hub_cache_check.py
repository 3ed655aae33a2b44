"""Reads a Hugging Face cache written by `graft download` with huggingface_hub,
offline, and checks every file against what graft reported.

usage: HF_HUB_CACHE=CACHE HF_HUB_OFFLINE=1 python3 hub_cache_check.py GRAFT_JSON TEACHER_BIN
GRAFT_JSON is `graft download graft-test/tiny-llama --json` output; TEACHER_BIN the
original stories260K.bin. Used by tests/integration/hub_pycompat.sh here and run
once on the GPU machine (tests/ref/README.md)."""
import hashlib
import json
import os
import sys

import huggingface_hub
from huggingface_hub import hf_hub_download, snapshot_download

g = json.load(open(sys.argv[1]))
p = hf_hub_download("karpathy/tinyllamas", "stories260K/stories260K.bin")
assert open(p, "rb").read() == open(sys.argv[2], "rb").read(), p
d = snapshot_download("graft-test/tiny-llama", allow_patterns=[f["name"] for f in g["files"]])
assert os.path.basename(d) == g["commit"], (d, g["commit"])
for f in g["files"]:
    data = open(os.path.join(d, f["name"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == f["sha256"], f["name"]
print("huggingface_hub %s read %d files from graft's cache" % (huggingface_hub.__version__, 1 + len(g["files"])))
