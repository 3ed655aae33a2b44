# Session 31, call 5 (carry .carry; ~60 s): which instructions the attention forward's warps stall
# at, for cfg 23 and cfg 30 at 1 x 8192 with statistics. ncu_attn.sh's reports (its misc.tar.gz
# brought them back; carried here as .carry/ncu/attn-cfgN.ncu-rep) already hold the full set's
# warp-state sampling per SASS instruction; this prints their source page as CSV and the ten
# instructions with the most samples, each with its largest stall reasons.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
for c in 23 30; do
    ncu --import .carry/ncu/attn-cfg$c.ncu-rep --page source --csv --print-source sass 2>&1 | gzip >$R/ncu-source-cfg$c.csv.gz
    zcat $R/ncu-source-cfg$c.csv.gz | python3 tests/gpu/bench/ncu_top_stalls.py 12
    el cfg $c
done
