# What session 15's lease scripts share (sourced from the repository root on the device machine):
# session 16's common.sh (the carried environment, timing lines, tests/gpu/bench/table.py, tree_build),
# and the base tree in its terms: /tmp/base, this tree with .carry/base.patch applied (6de398e's engine).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=/tmp/base
# base_build TARGET...: make TARGETs in the base tree (make rebuilds what the patch touched)
base_build() { tree_build base "$@"; }
