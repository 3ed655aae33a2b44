# --tokenizer: the format comes from the file's content, not its name, and a
# tokenizer that does not fit the model is refused in words.
. "$(dirname "$0")/../lib.sh"
need_stories
ROOT=${GRAFT_ROOT:-.}
TOK512=$(dirname "$STORIES")/tok512.bin
SP=$ROOT/tests/fixtures/tokenizers/sp-legacy/tokenizer.json

# a tokenizer.json beside a llama2.c teacher is read as JSON (it used to be
# read as a tokenizer.bin: "token 0 has length 1852795251")
expect_error "the tokenizer has 800 tokens but the model's embedding only 512 rows" \
    "$G" inspect "$STORIES" --tokenizer "$SP"
# names that lie: a tokenizer.bin called .json, a tokenizer.json called .bin
cp "$TOK512" "$TMP/named.json"
"$G" inspect "$STORIES" --tokenizer "$TMP/named.json" --json >"$TMP/a.json" 2>"$TMP/err" ||
    fail "a tokenizer.bin named .json: $(cat "$TMP/err")"
[ "$(json_get "$TMP/a.json" "j['tokenizer']['kind']")" = "llama2c" ] || fail "tok512.bin named .json is not read as llama2.c"
cp "$SP" "$TMP/named.bin"
expect_error "the tokenizer has 800 tokens" "$G" inspect "$STORIES" --tokenizer "$TMP/named.bin"
# a llama2.c tokenizer too small for the byte fallback
head -c 300 "$TOK512" >"$TMP/short.bin"
expect_error "cannot hold the 512 tokens" "$G" inspect "$STORIES" --tokenizer "$TMP/short.bin"
exit 0
