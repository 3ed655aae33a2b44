# Replays every fuzz seed (tests/fuzz/corpus/) and every kept crashing input
# (tests/fuzz/regress/) through the harnesses built without libFuzzer
# (BUILD/fuzz/replay_*): none may crash or trip a sanitizer, and each input
# listed in tests/fuzz/regress/EXPECT must be refused with its message (an
# empty message: it must load, and not be refused).
. "$(dirname "$0")/../lib.sh"
ROOT=${GRAFT_ROOT:-.}
BUILD=$(dirname "$G")
[ -x "$BUILD/fuzz/replay_gguf" ] || fail "no replay binaries in $BUILD/fuzz (make tests builds them)"
for bin in "$BUILD"/fuzz/replay_*; do
    h=${bin##*/replay_}
    for d in "$ROOT/tests/fuzz/corpus/$h" "$ROOT/tests/fuzz/regress/$h"; do
        [ -d "$d" ] || continue
        "$bin" "$d" >"$TMP/out" 2>&1 || fail "$h: replaying $d failed (exit $?): $(tail -n 20 "$TMP/out")"
    done
done
n=0
while IFS='	' read -r input want; do
    case $input in ''|'#'*) continue ;; esac
    h=${input%%/*}
    f="$ROOT/tests/fuzz/regress/$input"
    [ -f "$f" ] || fail "EXPECT names $input, which does not exist"
    GRAFT_FUZZ_VERBOSE=1 "$BUILD/fuzz/replay_$h" "$f" >"$TMP/out" 2>"$TMP/err" || fail "$input crashed: $(cat "$TMP/err")"
    first=$(grep -m1 'refused' "$TMP/err")
    if [ -z "$want" ]; then
        [ -z "$first" ] || fail "$input should load, but: $first"
    else
        printf '%s\n' "$first" | grep -qF -- "$want" || fail "$input: expected a refusal with '$want', got '${first:-nothing}'"
    fi
    n=$((n + 1))
done <"$ROOT/tests/fuzz/regress/EXPECT"
[ "$n" -ge 10 ] || fail "only $n expectations read from EXPECT"
exit 0
