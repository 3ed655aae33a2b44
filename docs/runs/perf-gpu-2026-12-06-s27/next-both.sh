# For the next session (written in session 27; not run): both of session 27's untimed patches in one
# call, for when machines are scarce. Carry .carry after `cp docs/runs/perf-gpu-2026-12-06-s27/sigfast.patch
# .carry/` (the tree and .carry stay under 64 MiB without .peers; `sh tests/gpu/carry.sh --lean` if
# not). First sigfast.patch beside the head as next-sigfast.sh does (test_cuda_gdn on it on the GPU,
# bench_gdn alternating, ROUNDS_GDN (1) rounds), then gemmtune.patch applied to this call's tree and
# next-gemmtune.sh's alternation (ROUNDS 1, WHAT "forward train-hybrid" unless set) while GUARD (540)
# s of the call last, then test_cuda_ops. No make test-gpu: the call that adopts a patch runs it.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
tree_beside sigfast || exit 1
bench_trees ${ROUNDS_GDN:-1} 300 $R/bench_gdn-sigfast.jsonl head=. sigfast=/tmp/sigfast
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "prep" in r["what"] or "gated norm" in r["what"]: print(r["tree"], r["round"], r["ms"], r["what"])
' $R/bench_gdn-sigfast.jsonl | sort -k4
el sigfast
# next-gemmtune.sh sources common.sh again, whose clock starts anew: its GUARD is what is left of ours
export ROUNDS=${ROUNDS:-1} WHAT="${WHAT:-forward train-hybrid}" GUARD=$(( ${GUARD:-540} - ($(date +%s) - t0) ))
. docs/runs/perf-gpu-2026-12-06-s27/next-gemmtune.sh
