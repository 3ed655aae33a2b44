#!/bin/sh
# Out of memory is an error, not a crash: graft train at a size that cannot
# fit under an address-space limit (RLIMIT_AS, ulimit -v) prints one line
# naming the size and exits 1; nothing is left half-written.
. "$(dirname "$0")/../lib.sh"
need_stories
# AddressSanitizer reserves terabytes of shadow address space: no address-space limit fits under it
if [ -n "${ASAN_OPTIONS:-}" ] || (ulimit -v 1572864 && "$G" --help >/dev/null 2>&1; [ $? -ge 128 ]); then
    skip "an address-space limit cannot run under AddressSanitizer"
fi
# 1.5 GiB of address space: the program and the teacher fit, 64 x 4096 tokens
# of training activations (about 5 GiB for stories260K) do not
LIMIT_KB=1572864
run_limited() { ( ulimit -v $LIMIT_KB && exec "$@" ); }
expect_error "out of memory" run_limited "$G" train "$STORIES" --teacher "$STORIES" --strategy manual:0,1,3 --ctx 4096 --extrapolate-positions \
    --batch 64 --tokens 262144 --eval-seqs 1 --threads 1 --ckpt "$TMP/never.ckpt"
rc_line=$(cat "$TMP/err")
case $rc_line in *"GiB asked"*) ;; *) fail "the message does not say how much was asked: $rc_line" ;; esac
[ -e "$TMP/never.ckpt" ] && fail "a failed run wrote a checkpoint"
# and the same run within the limit at a size that fits works
run_limited "$G" train "$STORIES" --teacher "$STORIES" --strategy manual:0,1,3 --ctx 64 --batch 2 --tokens 256 \
    --eval-seqs 1 --threads 1 --log-every 0 >/dev/null 2>"$TMP/ok.err" || fail "a small run under the same limit failed: $(cat "$TMP/ok.err")"
exit 0
