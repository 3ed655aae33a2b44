# tests/gpu/runs/hf_gguf_ppl.py (transformers' perplexity of a GGUF, the
# reference for graft ppl) scores graft's windows: ctx tokens each, the next
# starting on the last token of the one before (engine/eval/perplexity.c).
# 1. the window layout, pure Python: counts as graft's (n - 2) / (ctx - 1) + 1,
#    every token after the first predicted once, overlap of one, none longer
#    than ctx (the old windows, ctx + 1 tokens every ctx, fail the count and length);
# The model comparison against transformers is in tests/interop/hf_gguf_ppl.sh
# (make test-interop: it needs torch).
. "$(dirname "$0")/../lib.sh"
SCRIPT=$GRAFT_ROOT/tests/gpu/runs/hf_gguf_ppl.py
python3 - "$SCRIPT" <<'PY' || fail "hf_gguf_ppl.py windows differ from graft's"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("hf_gguf_ppl", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
for n in range(2, 300):
    for ctx in (2, 3, 7, 64, 512):
        w = m.windows(n, ctx)
        assert len(w) == (n - 2) // (ctx - 1) + 1, (n, ctx, w)
        assert w[0][0] == 0 and w[-1][1] == n and all(2 <= e - s <= ctx for s, e in w), (n, ctx, w)
        assert all(a[1] - 1 == b[0] for a, b in zip(w, w[1:])), (n, ctx, w)  # overlap of one
        assert sum(e - s - 1 for s, e in w) == n - 1, (n, ctx, w)  # each token after the first once
try:
    m.windows(10, 1)
    raise SystemExit("ctx 1 accepted")
except ValueError:
    pass
PY
