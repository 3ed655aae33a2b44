# Session 29, call 1 (carry .carry without shared/data/gutenberg-60.txt, as `carry.sh --lean` leaves
# it, and .peers): session 28's next.sh with test_cuda_convert after test_cuda_ops (the two GPU
# programs session 28's review commits changed: the choice file's and the refused values' checks, and
# gpu_open_refused). Its steps, as next.sh said:
# 1. test_cuda_ops (the choice file's first GPU run) and test_cuda_convert;
# 2. while graft builds, FLA's autotuning and the compiled training peer's first run (caches only);
# 3. the GDN layer beside FLA's chunk kernel (the first FLA ratio with 2f8ce24's sigmoid);
# 4. the 50 % hybrid step untuned, with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by one run
#    before the pairs, so the timed runs take the kept choices), and torch + FLA compiled, in turn,
#    ROUNDS (4) rounds while the call's BUDGET (585) s last; the forward beside sdpa the same way once.
TESTS="test_cuda_ops test_cuda_convert" . docs/runs/perf-gpu-2026-12-07-s28/next.sh
