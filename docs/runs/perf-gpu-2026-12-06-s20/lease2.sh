# lease 2 of session 20: every training-side ratio again on the head, as session 17's lease 2 took
# it: the hybrid step (Qwen2.5-1.5B shape, 4 x 2048, 50 % GDN) twice, Stage 2 twice (its whole
# bench now with session 18's host set-up of a layer: the normals drawn on several threads, the
# gates' download only; never timed on a GPU), the plain step, then torch + FLA compiled training
# of the same hybrid (peer_train.py); then the teacher forward with statistics and transformers'
# sdpa forward (peer_forward.py) in the same call. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s17/lease2.sh # that call unchanged (its body ran here as a copy)
