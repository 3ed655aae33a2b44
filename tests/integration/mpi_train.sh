#!/bin/sh
# Data-parallel graft train on stories260K, two ranks of the CPU backend under mpirun:
# - two ranks with --batch 2 equal one process with --batch 2 --accum 2 (the same
#   global batch): the same corpus windows in the same order at every step
#   (--log-windows, compared byte for byte), and the loss curve and held-out
#   perplexity within 1e-4 relative. Why 1e-4: the runs differ only in the order
#   float32 gradient sums are added (two partial sums + MPI_Allreduce against one
#   accumulation), ~1e-7 per step, grown by 30 AdamW steps (measured: 2e-7);
#   a wrong loss scale or a wrong window moves the curve by more than 1e-2, which
#   the run with another global batch shows (it must differ by more than 1e-3);
# - graft train --ranks 2 (graft starts mpirun) is the same run as mpirun -np 2;
# - SIGINT to the launcher stops both ranks after the same step; rank 0 writes
#   the checkpoint, and one process resumes it (any world size, the same global
#   batch) and ends within 1e-4 of the uninterrupted run;
# - SIGKILL of one rank ends the job with one line, no hang (within 30 s);
# - a failure of rank 1 alone ends the job with one line naming rank 1; a
#   failure of every rank with one line (rank 0's);
# - commands that do not share work refuse to run as several ranks (one line).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib/mpi.sh"
need_stories
need_mpi
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
A="$STORIES --teacher $STORIES --noise 0.3 --ctx 32 --tokens 3840 --data $DATA --threads 1 --json --lr-rest 1e-3 --log-every 0"

# compare A B TOL: same steps; curves and final held-out ppl within TOL relative (fails on NaN)
compare() { python3 - "$@" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
assert a["steps"] == b["steps"] == len(a["curve"]) == len(b["curve"]), (a["steps"], b["steps"])
def rel(x, y):
    assert math.isfinite(x) and math.isfinite(y), (x, y)
    return abs(x - y) / abs(y)
worst = max(rel(x[1], y[1]) for x, y in zip(a["curve"], b["curve"]))
assert all(x[0] == y[0] for x, y in zip(a["curve"], b["curve"])), "token counts differ"
worst = max(worst, rel(a["final_eval_ppl"], b["final_eval_ppl"]))
print("worst relative difference %.3g (tolerance %g)" % (worst, tol))
sys.exit(0 if worst <= tol else 1)
PY
}

$G train $A --batch 2 --accum 2 --log-windows "$TMP/w1.log" >"$TMP/one.json" || fail "one process failed"
$MPIRUN -np 2 $G train $A --batch 2 --log-windows "$TMP/w2.log" >"$TMP/two.json" 2>"$TMP/two.err" ||
    fail "two ranks failed: $(cat "$TMP/two.err")"
[ -s "$TMP/w1.log" ] && [ "$(wc -l <"$TMP/w1.log")" -eq 30 ] || fail "window log of one process: $(wc -l <"$TMP/w1.log") lines"
cmp -s "$TMP/w1.log" "$TMP/w2.log" || fail "the ranks saw other windows than one process: $(diff "$TMP/w1.log" "$TMP/w2.log" | head -4)"
compare "$TMP/two.json" "$TMP/one.json" 1e-4 || fail "two ranks differ from one process at the same global batch"
[ ! -s "$TMP/two.err" ] || fail "two ranks wrote to stderr: $(cat "$TMP/two.err")"
# the check can fail: another global batch (4 windows per step -> 2) is a different run
$G train $A --batch 2 --tokens 1920 >"$TMP/half.json" || fail "batch-2 run failed"
python3 - "$TMP/half.json" "$TMP/one.json" <<'PY' || fail "a run with another global batch passed as equal"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
d = max(abs(x[1] - y[1]) / abs(y[1]) for x, y in zip(a["curve"][1:], b["curve"][1:]))
sys.exit(0 if d > 1e-3 else 1)
PY

# the launcher: the same two-rank run
$G train $A --batch 2 --ranks 2 >"$TMP/launch.json" 2>"$TMP/launch.err" || fail "--ranks 2 failed: $(cat "$TMP/launch.err")"
python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); sys.exit(0 if a['curve']==b['curve'] else 1)" \
    "$TMP/launch.json" "$TMP/two.json" || fail "--ranks 2 differs from mpirun -np 2"

# SIGINT: both ranks stop after one step, rank 0 checkpoints; one process resumes
$G train $A --batch 2 --ranks 2 --ckpt "$TMP/s.ckpt" --ckpt-every 5 >/dev/null 2>"$TMP/int.err" &
pid=$!
wait_for 120 ckpt_at_least "$TMP/s.ckpt" 5 ||
    { kill $pid; fail "no checkpoint from the two ranks"; }
kill -INT $pid
wait $pid
rc=$?
at=$(ckpt_step "$TMP/s.ckpt")
if [ $rc -eq 130 ]; then
    grep -q "stopped by SIGINT at step $at of 30" "$TMP/int.err" || fail "SIGINT message: $(cat "$TMP/int.err")"
    [ "$(wc -l <"$TMP/int.err")" -eq 1 ] || fail "SIGINT: not one line: $(cat "$TMP/int.err")"
else
    [ $rc -eq 0 ] || fail "SIGINT run exited $rc: $(cat "$TMP/int.err")"
fi
$G train $A --batch 4 --ckpt "$TMP/s.ckpt" --resume >"$TMP/resumed.json" || fail "one process could not resume the two ranks' checkpoint"
[ "$(json_get "$TMP/resumed.json" 'j["resumed_from"]')" -eq "$at" ] || fail "resumed from the wrong step"
compare "$TMP/resumed.json" "$TMP/one.json" 1e-4 || fail "two ranks + resume on one differs from one process"
expect_error "other options or inputs" $G train $A --batch 2 --ckpt "$TMP/s.ckpt" --resume # another global batch

# SIGKILL of rank 1: the job ends, one line
$G train $A --batch 2 --tokens 3000000 --ranks 2 >/dev/null 2>"$TMP/kill.err" &
pid=$!
wait_for 60 rank_pid 1 >/dev/null || { kill $pid; fail "rank 1 never started"; }
sleep 1
kill -9 "$(rank_pid 1)"
wait_for 30 gone $pid || { kill -9 $pid; fail "the job hangs after rank 1 was killed"; }
wait $pid
rc=$?
[ $rc -ne 0 ] || fail "the job succeeded although rank 1 was killed"
grep -q "rank 1 of 2 ended by signal 9" "$TMP/kill.err" || fail "kill message: $(cat "$TMP/kill.err")"
[ "$(wc -l <"$TMP/kill.err")" -eq 1 ] || fail "kill: not one line: $(cat "$TMP/kill.err")"
for r in 0 1; do rank_pid $r >/dev/null && fail "rank $r outlived the job"; done

# rank 1 alone fails (its own --data): one line naming it; every rank fails: rank 0's line
rc=0
timeout 60 $MPIRUN -np 1 $G train $A --batch 2 : -np 1 $G train $A --batch 2 --data "$TMP/absent.txt" \
    >/dev/null 2>"$TMP/r1.err" || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "rank 1's failure: exit $rc"
grep -q "graft train: rank 1 of 2: .*absent.txt" "$TMP/r1.err" || fail "rank 1's line: $(cat "$TMP/r1.err")"
[ "$(wc -l <"$TMP/r1.err")" -eq 1 ] || fail "rank 1's failure: not one line: $(cat "$TMP/r1.err")"
rc=0
timeout 60 $MPIRUN -np 2 $G train $A --batch 2 --data "$TMP/absent.txt" >/dev/null 2>"$TMP/all.err" || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "every rank failing: exit $rc"
grep -q "graft train: .*absent.txt" "$TMP/all.err" || fail "every rank failing: $(cat "$TMP/all.err")"
grep -q "rank 1" "$TMP/all.err" && fail "every rank failing: rank 1 spoke: $(cat "$TMP/all.err")"
[ "$(wc -l <"$TMP/all.err")" -eq 1 ] || fail "every rank failing: not one line: $(cat "$TMP/all.err")"

# race: the same runs as one process (each init's training shares its steps)
R="$STORIES --inits random,zero-gate --strategy manual:0,2,4 --data $DATA --ctx 32 --tokens 1920 --threads 1 --json --log-every 0"
$G race $R --batch 2 --accum 2 >"$TMP/race1.json" || fail "race, one process"
$MPIRUN -np 2 $G race $R --batch 2 >"$TMP/race2.json" 2>"$TMP/race2.err" || fail "race, two ranks: $(cat "$TMP/race2.err")"
python3 - "$TMP/race2.json" "$TMP/race1.json" <<'PY' || fail "race: two ranks differ from one process"
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert len(a["runs"]) == len(b["runs"]) == 2
for x, y in zip(a["runs"], b["runs"]):
    assert x["init"] == y["init"] and len(x["curve"]) == len(y["curve"]) == 15
    for (tx, lx), (ty, ly) in zip(x["curve"], y["curve"]):
        assert tx == ty and math.isfinite(lx) and abs(lx - ly) <= 1e-4 * abs(ly), (x["init"], lx, ly)
PY

# the launcher: no mpirun, no GPU
expect_error "needs mpirun" env GRAFT_MPIRUN=/nonexistent/mpirun $G train $A --ranks 2
rc=0
$G stats "$STORIES" --text "$DATA" --gpus 2 >/dev/null 2>"$TMP/gpus.err" || rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <"$TMP/gpus.err")" -eq 1 ] && grep -q "graft stats: .*cuda" "$TMP/gpus.err" ||
    fail "--gpus 2 without GPUs: exit $rc, $(cat "$TMP/gpus.err")"

# a command that does not share work
rc=0
$MPIRUN -np 2 $G ppl "$STORIES" --text "$DATA" >/dev/null 2>"$TMP/ppl.err" || rc=$?
[ $rc -eq 2 ] || fail "ppl as two ranks: exit $rc"
grep -q "graft ppl: runs as one process" "$TMP/ppl.err" && [ "$(wc -l <"$TMP/ppl.err")" -eq 1 ] ||
    fail "ppl as two ranks: $(cat "$TMP/ppl.err")"
expect_error "--ranks must be in [1, " $G train $A --ranks -1
echo "ok"
