# Session 24's first call (carry .carry; here first: `cp docs/runs/perf-gpu-2026-12-06-s23/nt4.patch .carry/`).
# Session 23's next1.sh (the local backward's C x d products on 16 x 32 tiles, nt4, beside the head, nt2:
# test_cuda_gdn on nt4, bench_gdn alternating two rounds, ncu of one local backward launch each), then
# make test-gpu in the tree that is to be submitted: nt4 when its test passed and its core backward is
# faster at both shapes (mean of the rounds), else the head.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
. docs/runs/perf-gpu-2026-12-06-s23/next1.sh
winner=$(python3 - "$R/bench_gdn-nt.jsonl" "$R/test_cuda_gdn-nt4.txt" <<'PY'
import json, re, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
tail = open(sys.argv[2]).read().strip().splitlines()[-1:] or [""]
passed = re.fullmatch(r"[1-9]\d* passed, 0 failed", tail[0]) is not None
ms = {}
for r in rows:
    if r.get("what", "").startswith("graft GDN core bwd D"):
        ms.setdefault((r["tree"], r["T"]), []).append(r["ms"])
faster = all(st.mean(ms[("nt4", T)]) < st.mean(ms[("nt2", T)]) for T in (2048, 8192)
             if ("nt4", T) in ms and ("nt2", T) in ms) and len(ms) == 4
print("nt4" if passed and faster else "nt2",
      " ".join(f"{k[0]}/{k[1]}={st.mean(v):.4f}" for k, v in sorted(ms.items())), "test:", tail[0], file=sys.stderr)
print("nt4" if passed and faster else "nt2")
PY
)
echo "== submitted tree: $winner"; echo $winner >/tmp/graft-winner # for lease2.sh on this machine
room=$(left 585)
if [ $room -lt 200 ]; then echo "== make test-gpu not run: $room s left"; exit 0; fi
dir=.; [ "$winner" = nt4 ] && dir=/tmp/nt4
(cd $dir && OUT=$R timeout $room sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1; echo "== device_run test ($winner) rc $?")
el test
tail -n 22 $R/test-summary.txt
