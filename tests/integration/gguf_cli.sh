# GGUF files as MODEL: a file, a folder holding one .gguf (what a Hub download
# of one file leaves), a folder with several (an error), malformed files.
. "$(dirname "$0")/../lib.sh"
FIX=${GRAFT_ROOT:?}/tests/fixtures/gguf
[ -f "$FIX/qwen2.gguf" ] || fail "fixture $FIX/qwen2.gguf missing"

"$G" inspect "$FIX/qwen2.gguf" --json >"$TMP/a.json" || fail "inspect qwen2.gguf"
[ "$(json_get "$TMP/a.json" "j['format']")" = gguf ] || fail "format is not gguf: $(cat "$TMP/a.json")"
[ "$(json_get "$TMP/a.json" "j['arch']")" = qwen2 ] || fail "arch is not qwen2"

mkdir -p "$TMP/one"
cp "$FIX/llama.gguf" "$TMP/one/"
"$G" inspect "$TMP/one" --json >"$TMP/b.json" || fail "a folder holding one .gguf must load"
[ "$(json_get "$TMP/b.json" "j['arch']")" = llama ] || fail "folder: arch is not llama"

mkdir -p "$TMP/two"
cp "$FIX/llama.gguf" "$FIX/qwen3.gguf" "$TMP/two/"
expect_error "2 .gguf files and no config.json" "$G" inspect "$TMP/two"

head -c 3000 "$FIX/qwen3.gguf" >"$TMP/cut.gguf"
expect_error "truncated" "$G" inspect "$TMP/cut.gguf"
printf 'GGUF\001\000\000\000' >"$TMP/v1.gguf"
expect_error "GGUF version 1 is not supported" "$G" inspect "$TMP/v1.gguf"
printf 'not gguf at all' >"$TMP/junk.gguf"
expect_error "not a GGUF file" "$G" inspect "$TMP/junk.gguf"
exit 0
