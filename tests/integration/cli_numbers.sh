# Every number an option takes: non-finite values, values out of range and
# integers past any range are refused before anything runs, with exit 2 and
# one line naming the option and its range; --ctx against the model's
# positions; --threads capped at the processors there are.
. "$(dirname "$0")/../lib.sh"
need_stories

# expect_usage "substring" cmd...: exit 2 (a usage error) with one line
expect_usage() {
    want=$1; shift
    rc=0
    "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "expected exit 2, got $rc: $* ($(cat "$TMP/err"))"
    grep -qF -- "$want" "$TMP/err" || fail "stderr of '$*' lacks '$want': $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "stderr of '$*' is not one line: $(cat "$TMP/err")"
}

# the cases of the issue, each with the range in its line
expect_usage "--clip must be in [0, 1000000]" "$G" train "$STORIES" --teacher "$STORIES" --clip nan
expect_usage "--clip must be in [0, 1000000] (0: off), got -1" "$G" train "$STORIES" --teacher "$STORIES" --clip -1
expect_usage "--lr-mixer must be in [0, 1e+30]" "$G" train "$STORIES" --teacher "$STORIES" --lr-mixer nan
expect_usage "--temp must be in [0, 100]" "$G" generate "$STORIES" --temp nan
expect_usage "--damping must be in (0, 1000000], got inf" "$G" convert "$STORIES" --keep 0.5 --damping inf --out "$TMP/s"
[ -e "$TMP/s" ] && fail "a refused convert left $TMP/s"
expect_usage "--ctx must be in [2, 1048576]" "$G" ppl "$STORIES" --text "$SHARED/data/tinystories.txt" --ctx 0
expect_usage "--lr-rest must be in [0, 1e+30] (0 freezes), got inf" "$G" train "$STORIES" --teacher "$STORIES" --lr-rest 1e999
expect_usage "--keep must be in (0, 1), got 1" "$G" select "$STORIES" --keep 1
expect_usage "--threads must be in [0, 65536]" "$G" inspect "$STORIES" --threads 2147483648
expect_usage "--threads must be in [0, 65536]" "$G" inspect "$STORIES" --threads 99999999999999999999999

# every numeric option of every command has a row in the range table
# (tests/unit/test_opt_limits.c checks every row's bounds, NaN and the
# infinities): nan for numbers, -1 for integers (every range starts at 0 or
# above), once per option name (one parser and one table serve every command)
seen=" "
for cmd in inspect generate bench-decode ppl stats halflife select convert recall eval ablate train race; do
    "$G" "$cmd" --help 2>"$TMP/help" >/dev/null || fail "graft $cmd --help failed"
    n=0
    for opt in $(sed -n 's/^  --\([a-z0-9-]*\) [XN] .*/\1/p' "$TMP/help"); do
        n=$((n + 1))
        case $seen in *" $opt "*) continue ;; esac
        seen="$seen$opt "
        v=nan
        grep -q "^  --$opt N " "$TMP/help" && v=-1
        expect_usage "--$opt must be in " "$G" "$cmd" "$STORIES" "--$opt=$v"
    done
    [ "$n" -gt 0 ] || fail "graft $cmd --help lists no numeric option (the pattern no longer matches)"
done

# --ctx beyond the model's 512 positions: refused with the flag that allows it
expect_error "--ctx 600 is beyond the model's 512 positions" "$G" stats "$STORIES" \
    --text "$SHARED/data/tinystories.txt" --ctx 600
grep -qF -- "--extrapolate-positions" "$TMP/err" || fail "the --ctx refusal does not name --extrapolate-positions"
expect_error "--ctx 513 is beyond" "$G" train "$STORIES" --teacher "$STORIES" --ctx 513 --tokens 513
"$G" stats "$STORIES" --text "$SHARED/data/tinystories.txt" --ctx 600 --seqs 1 --threads 1 \
    --extrapolate-positions --json >"$TMP/s.json" 2>"$TMP/err" || fail "--extrapolate-positions: $(cat "$TMP/err")"
[ "$(json_get "$TMP/s.json" 'j["ctx"]')" = 600 ] || fail "stats --ctx 600 --extrapolate-positions did not run at 600"

# --threads past the processors: capped with a line, and the command runs
"$G" inspect "$STORIES" --threads 60000 --json >"$TMP/i.json" 2>"$TMP/err" || fail "inspect --threads 60000: $(cat "$TMP/err")"
grep -q "^graft inspect: --threads 60000 capped at the [0-9]* processors there are$" "$TMP/err" ||
    fail "no line saying --threads was capped: $(cat "$TMP/err")"
exit 0
