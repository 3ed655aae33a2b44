# For the next session (not run: written after session 26's device time was spent). One call, carry
# .carry: Nsight Compute's source profile (tests/gpu/bench/gdn_ncu_source.sh) of the GDN kernels that
# sit furthest above their bytes after 466678f, on the head: the WY kernel (260 us a launch on the
# H200 at 16 x 2048, ~2.5x its 72 KB a chunk; L1 / shared 82 % busy in session 25 while its shared
# accesses were still generic), the forward's state pass (326 us, ~2.2x its 96 KB) and the dh pass
# (547 us, ~2.3x its 160 KB). The local backward had its profile in session 26
# (ncu_bwd_local_src.csv.gz here).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
ncu_sources 560 wy state bwd_state
