#!/bin/sh
# Repo ids work wherever a MODEL does: the first use downloads into the cache,
# later uses (even offline) read the cache; the default teacher resolves the same way.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
start_hub
printf 'One day, a clever fox found a shiny key under the old oak tree.' >"$T/fox.txt"
timeout 120 "$GRAFT_BIN" ppl karpathy/tinyllamas:stories260K/stories260K.bin --text "$T/fox.txt" --json >"$T/ppl.json" 2>"$T/err" \
    || fail "ppl on a repo id: $(cat "$T/err")"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['tokens']==34 and abs(j['nll']-54.4041)<1e-3, j" "$T/ppl.json" \
    || fail "ppl through the hub: $(cat "$T/ppl.json")"
HF_HUB_OFFLINE=1 timeout 60 "$GRAFT_BIN" inspect karpathy/tinyllamas:stories260K/stories260K.bin --json >"$T/i.json" 2>"$T/err" \
    || fail "offline inspect from the cache: $(cat "$T/err")"
timeout 60 "$GRAFT_BIN" inspect graft-test/qwen2-fixture --json >"$T/q.json" 2>"$T/err" || fail "HF repo id: $(cat "$T/err")"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['arch']=='qwen2' and j['layers']==2, j" "$T/q.json" || fail "qwen2 via hub"
# the default teacher: now cached, so `graft` (headless) finds it without the shared copy
GRAFT_NO_TUI=1 HF_HUB_OFFLINE=1 timeout 120 "$GRAFT_BIN" </dev/null >"$T/default.txt" 2>"$T/err" || fail "default teacher: $(cat "$T/err")"
grep -q "hf_home\|$HF_HOME" "$T/default.txt" || grep -q "models--karpathy--tinyllamas" "$T/default.txt" \
    || fail "the default teacher did not come from the cache: $(head -1 "$T/default.txt")"
echo ok
