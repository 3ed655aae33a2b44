# --ctx within 1..max_position_embeddings, for every command that takes
# --ctx: stories260K has 512 positions, so --ctx 600 is refused (exit 1, one
# line naming --ctx, the model's positions, the flag and what extrapolation
# means: RoPE positions 512..599 past the trained range), and with
# --extrapolate-positions the command runs at 600. The commands come from
# `graft --help`: one that gains --ctx without a case below fails this test.
. "$(dirname "$0")/../lib.sh"
need_stories
head -c 30000 "$SHARED/data/tinystories.txt" >"$TMP/short.txt"
T=$TMP/short.txt X=--extrapolate-positions
"$G" convert "$STORIES" --keep 0.6 --strategy uniform --init random --calib "$T" --out "$TMP/stu" >/dev/null 2>"$TMP/err" ||
    fail "convert (the student of eval and halflife): $(cat "$TMP/err")"

# args CMD: the cheapest run of CMD at --ctx 600 (the flag appended by the caller)
args() {
    case $1 in
    ablate) echo "$STORIES --calib $T --eval $T --init random --calib-seqs 1 --eval-windows 2" ;;
    convert) echo "$STORIES --keep 0.6 --strategy uniform --init random --calib $T --out $TMP/c600" ;;
    eval) echo "$TMP/stu --text $T" ;;
    halflife) echo "$TMP/stu --text $T" ;;
    inspect) echo "$STORIES" ;;
    ppl) echo "$STORIES --text $T" ;;
    race) echo "$STORIES --data $T --inits random,random --tokens 2400 --eval-seqs 1" ;;
    select) echo "$STORIES --calib $T --strategy uniform --keep 0.5" ;;
    stats) echo "$STORIES --text $T --seqs 1" ;;
    train) echo "$STORIES --teacher $STORIES --data $T --tokens 1200" ;;
    *) return 1 ;;
    esac
}
n=0
for cmd in $("$G" --help 2>&1 | awk '/^  [a-z]/ {print $1}' | sort -u); do
    "$G" "$cmd" --help >"$TMP/help" 2>&1
    grep -q -- "^  --ctx " "$TMP/help" || continue
    n=$((n + 1))
    grep -q -- "^  --extrapolate-positions .*RoPE.*not guaranteed" "$TMP/help" ||
        fail "graft $cmd takes --ctx but its help has no --extrapolate-positions line saying what it means"
    a=$(args "$cmd") || fail "graft $cmd takes --ctx: add it to this test"
    # shellcheck disable=SC2086
    expect_error "--ctx 600 is beyond the model's 512 positions (max_position_embeddings); lower --ctx, or pass --extrapolate-positions to extrapolate: RoPE then rotates positions 512..599, past the range the model was trained on, and its quality there is not guaranteed" \
        "$G" "$cmd" $a --ctx 600
    [ "$rc" -eq 1 ] || fail "graft $cmd --ctx 600 exited $rc, expected 1"
    # shellcheck disable=SC2086
    "$G" "$cmd" $a --ctx 600 $X --json >"$TMP/$cmd.json" 2>"$TMP/err" || fail "graft $cmd --ctx 600 $X: $(cat "$TMP/err")"
    # where the report names its window, it is 600
    got=$(json_get "$TMP/$cmd.json" 'j.get("ctx", "none")')
    [ "$got" = none ] || [ "$got" = 600 ] || fail "graft $cmd --ctx 600 $X ran at ctx $got"
done
[ "$n" -ge 10 ] || fail "only $n commands list --ctx (expected at least 10: the help pattern no longer matches?)"
# the bound's other end: 0 is refused, 1.. within the positions is not
expect_usage() { expect_error "$@"; [ "$rc" -eq 2 ] || fail "exit $rc, expected 2: $*"; }
expect_usage "--ctx must be in [2, " "$G" ppl "$STORIES" --text "$T" --ctx 0
"$G" ppl "$STORIES" --text "$T" --ctx 512 --json >"$TMP/p.json" 2>"$TMP/err" || fail "ppl --ctx 512: $(cat "$TMP/err")"
exit 0
