# Shared by the Hugging Face export checks (sourced after tests/lib.sh).
TOOL=$(dirname "$G")/tests/tools/student_tool
[ -x "$TOOL" ] || fail "$TOOL is not built (make tests builds it)"
REF=$GRAFT_ROOT/tests/ref

# need_pyenv TIER: sets PY to a python with the tier's packages
# (scripts/pyenv.sh; the first run on a machine downloads them). Without it the
# check skips, except in CI (CI=true), where that is a failure: the check must run there.
need_pyenv() {
    if PY=$(sh "$GRAFT_ROOT/scripts/pyenv.sh" "$1" 2>"$TMP/pyenv.err"); then
        return 0
    fi
    why=$(tail -n 1 "$TMP/pyenv.err")
    [ "${CI:-}" = true ] && fail "no Python environment for the $1 checks: $why"
    skip "no Python environment for the $1 checks ($why)"
}

# random_ids FILE VOCAB SEED LEN...: {"ids": [[...], ...]} with one sequence per LEN
random_ids() {
    python3 - "$@" <<'PY'
import json, random, sys
out, vocab, seed, lens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
r = random.Random(seed)
json.dump({"ids": [[r.randrange(vocab) for _ in range(int(n))] for n in lens]}, open(out, "w"))
PY
}

# test texts: valid.txt (valid UTF-8) and all.txt (plus the ill-formed bytes of the torture case)
write_texts() {
    python3 - "$1" "$GRAFT_ROOT/tests/fixtures/tokenizers/goldens.json" "$SHARED/data" <<'PY'
import json, sys
out, goldens, data = sys.argv[1:]
torture = bytes.fromhex(json.load(open(goldens))["cases"]["torture"])
valid = torture[: torture.index(b"invalid:")]
def head(path, offset, n):  # whole characters only
    return open(path, "rb").read()[offset : offset + n].decode("utf-8", "ignore").encode()
extra = head(f"{data}/gutenberg-60.txt", 810000, 16384) + b"\n" + head(f"{data}/tinystories.txt", 0, 8192)
open(f"{out}/valid.txt", "wb").write(valid + b"\n" + extra)
open(f"{out}/all.txt", "wb").write(torture + b"\n" + extra)
PY
}
