#!/bin/sh
# Where a training step's GPU time goes: Nsight Compute (ncu; the GPU machine
# has it, not Nsight Systems) times every kernel of bench_cuda_model's plain
# and hybrid qwen2.5-1.5b steps (B 4 x T 2048, bf16), the clocks left alone,
# one replay pass each; one whole step (from an embedding kernel to the next:
# a step has one) is summed per kernel name, cuBLAS's GEMMs as one row
# (profile_steps.sh does the work).
#   sh tests/gpu/bench/profile_train.sh [BUILD] [OUTDIR]
#     -> OUTDIR/{plain,hybrid}_kernels.csv (ncu's CSV) and a table on stdout
# The sum is kernel time only: the step's wall time (bench_cuda_model's figure)
# also holds the gaps between launches.
set -eu
export BUILD=${1:-build}
export OUTDIR=${2:-$BUILD/gpu/profile}
here=$(dirname "$0")
for kind in plain hybrid; do
    # skip the GEMM and copy ceilings measured first; a step is < 2000 launches
    sh "$here/profile_steps.sh" "$kind" embedding_kernel 400 4500 "train-$kind"
done
