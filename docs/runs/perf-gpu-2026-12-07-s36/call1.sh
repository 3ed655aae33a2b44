# Session 36, call 1 (carry .carry): make test-gpu on the head (fb93fbb: 8549205's RMSNorm kernels
# had run only test_cuda_ops and test_cuda_train on a GPU), through tests/gpu/device_run.sh.
. .carry/env.sh && sh tests/gpu/device_run.sh test
rc=$?
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv
exit $rc
