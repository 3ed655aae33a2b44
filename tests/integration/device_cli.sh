# --device for every command: a bad name, CUDA where there is none, a job
# that does not fit the memory allowed: one line, non-zero exit, nothing
# written. The memory estimate is in every command's --json output.
. "$(dirname "$0")/../lib.sh"
need_stories
TEXT=$SHARED/data/tinystories.txt
[ -f "$TEXT" ] || skip "no tinystories text under \$GRAFT_SHARED"

# each command with the arguments it needs to get as far as opening the device
cmds() {
    echo "inspect $STORIES"
    echo "stats $STORIES --text $TEXT"
    echo "ppl $STORIES --text $TEXT"
    echo "eval $STORIES --text $TEXT"
    echo "generate $STORIES -n 4"
    echo "convert $STORIES --keep 0.5 --strategy uniform --init random --calib $TEXT --out $TMP/never"
    echo "select $STORIES --strategy uniform --keep 0.5"
    echo "ablate $STORIES --calib $TEXT --eval $TEXT"
    echo "train $STORIES --teacher $STORIES --tokens 256"
    echo "race $STORIES --tokens 256"
}

cmds | while read -r line; do
    # shellcheck disable=SC2086
    expect_error "unknown device 'cuda:x'" "$G" $line --device cuda:x
    rc=0
    # shellcheck disable=SC2086
    "$G" $line --device cuda --json >"$TMP/out" 2>"$TMP/err" || rc=$?
    if [ $rc -eq 0 ]; then
        echo "(a GPU is here: $line ran on --device cuda)"
        continue
    fi
    [ $rc -eq 2 ] || fail "$line --device cuda: exit $rc, expected 2: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$line --device cuda: not one line: $(cat "$TMP/err")"
    grep -qE "no NVIDIA driver|no GPU found|driver supports CUDA|built without the CUDA backend" "$TMP/err" ||
        fail "$line --device cuda: $(cat "$TMP/err")"
done || exit 1
[ -e "$TMP/never" ] && fail "a refused convert wrote its folder"

# a job larger than GRAFT_MEM_LIMIT, with recomputed activations too, is refused before anything is allocated
expect_error "recomputing activations); lower --batch or --ctx" env GRAFT_MEM_LIMIT=20M "$G" train "$STORIES" \
    --teacher "$STORIES" --strategy manual:0,1,3 --ctx 512 --batch 32 --tokens 32768 --ckpt "$TMP/never.ckpt"
grep -qE "^graft train: needs [0-9.]+ MB on cpu, 20.0 MB allowed by GRAFT_MEM_LIMIT \([0-9.]+ MB recomputing activations\); lower --batch or --ctx$" \
    "$TMP/err" || fail "the refusal: $(cat "$TMP/err")"
[ -e "$TMP/never.ckpt" ] && fail "a refused train wrote a checkpoint"
expect_error "lower --ctx or --seqs" env GRAFT_MEM_LIMIT=2M "$G" stats "$STORIES" --text "$TEXT" --ctx 512 --seqs 64
expect_error "GRAFT_MEM_LIMIT='lots'" env GRAFT_MEM_LIMIT=lots "$G" inspect "$STORIES"
# the same train under a limit it fits in runs
GRAFT_MEM_LIMIT=2G "$G" train "$STORIES" --teacher "$STORIES" --strategy manual:0,1,3 --ctx 64 --batch 2 --tokens 256 \
    --eval-seqs 1 --log-every 0 --json >"$TMP/train.json" 2>"$TMP/err" || fail "a train within the limit: $(cat "$TMP/err")"

# --json: the estimate, its parts adding up (what stays + the largest phase + scratch)
check_memory() { # file what
    python3 - "$1" "$2" <<'PY' || fail "memory in $2's JSON"
import json, sys
j = json.load(open(sys.argv[1]))
m = j["memory"]
p = m["parts"]
phase = {"run": p["activations"], "build": p["build"], "train": p["train_blocks"] + p["moments"] + p["train_runs"], "load": 0}
assert m["peak_phase"] in phase, m
want = p["weights"] + p["gdn_layers"] + phase[m["peak_phase"]] + p["scratch"]
assert m["estimate_bytes"] == want, (m["estimate_bytes"], want)
assert p["weights"] > 0 and m["device"].startswith("cpu"), m
assert m["free_bytes"] > 0 and m["total_bytes"] >= m["free_bytes"], m
print(sys.argv[2], m["peak_phase"], m["estimate_bytes"])
PY
}
check_memory "$TMP/train.json" train
"$G" stats "$STORIES" --text "$TEXT" --json >"$TMP/stats.json" || fail "stats"
check_memory "$TMP/stats.json" stats
"$G" generate "$STORIES" -n 4 --json >"$TMP/gen.json" || fail "generate"
check_memory "$TMP/gen.json" generate
"$G" inspect "$STORIES" --json >"$TMP/inspect.json" || fail "inspect"
check_memory "$TMP/inspect.json" inspect
json_get "$TMP/inspect.json" "j['memory']['estimates']['train']['bytes'] > j['memory']['estimates']['load']['bytes']" |
    grep -q True || fail "inspect's train estimate is not above its load estimate"
"$G" inspect "$STORIES" | grep -qE "^memory +load [0-9.]+ [kM]B; eval at ctx 512" || fail "inspect's memory line"
exit 0
