# For the next session (not run: written after session 25's device time was spent). One call, carry
# .carry: where the GDN forward's WY and output kernels (16 x 32 tiles since 66ec96e) and the
# backward's V' kernel spend their time, line by line, on the head: the output and V' kernels have
# had no source profile, the WY kernel none since its blocked inverse (2026-12-02, on the H200; the
# state passes and the local backward had theirs in sessions 22 and 24). By
# session 25's speed-of-light runs the WY kernel (291 us a launch at 16 x 2048, twice its 72 KB a
# chunk) is bound by L1 / shared memory (L1/TEX 82 %, SM 36 %): its fp32 inverse runs on 2 warps
# for the diagonal blocks and 6, 4, 2 for the three subdiagonal stages, a barrier after each. The
# V' kernel's 16 x 32 form was 1.5 % slower a launch (session 25, call 1).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
ncu_sources 560 wy out bwd_v
