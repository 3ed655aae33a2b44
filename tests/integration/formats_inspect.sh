# Teacher formats through the CLI: the committed HF and llama2.c fixtures load
# with the right shapes; broken folders and files fail with one clear line.
. "$(dirname "$0")/../lib.sh"
FX=${GRAFT_ROOT:?}/tests/fixtures

"$G" inspect "$FX/hf/qwen3" --json >"$TMP/q3.json" || fail "inspect qwen3 fixture"
[ "$(json_get "$TMP/q3.json" "j['arch'], j['head_dim'], j['hidden_size'], j['qk_norm'], j['dtype']")" = \
  "qwen3 16 36 True f32" ] || fail "qwen3 fixture: $(cat "$TMP/q3.json")"
"$G" inspect "$FX/hf/qwen2" --json >"$TMP/q2.json" || fail "inspect sharded qwen2 fixture"
[ "$(json_get "$TMP/q2.json" "j['arch'], j['qkv_bias'], j['tied_embeddings'], j['dtype']")" = \
  "qwen2 True False f16" ] || fail "qwen2 fixture: $(cat "$TMP/q2.json")"
"$G" inspect "$FX/hf/llama" --json >"$TMP/ll.json" || fail "inspect llama fixture"
[ "$(json_get "$TMP/ll.json" "j['arch'], j['tied_embeddings'], j['dtype']")" = "llama True bf16" ] ||
  fail "llama fixture: $(cat "$TMP/ll.json")"
"$G" inspect "$FX/llama2c/tiny_v2.bin" --json >"$TMP/v2.json" || fail "inspect llama2.c v2 fixture"
[ "$(json_get "$TMP/v2.json" "j['dtype'], j['hidden_size'], j['tied_embeddings']")" = "q8_0 8 False" ] ||
  fail "v2 fixture: $(cat "$TMP/v2.json")"

# a copy of the llama fixture, broken in turn
cp -r "$FX/hf/llama" "$TMP/m"
expect_error "name the model folder" "$G" inspect "$TMP/m/model.safetensors"
python3 - "$TMP/m/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["num_key_value_heads"] = 3; c["num_attention_heads"] = 6
json.dump(c, open(sys.argv[1], "w"))
PY
# the config disagrees with the weights: refused naming both (weights_agree.c)
expect_error "num_key_value_heads = 3, but model.layers.0.self_attn.k_proj.weight has 16 rows" "$G" inspect "$TMP/m"
printf '{"model_type": "gpt2"}' >"$TMP/m/config.json"
expect_error "unknown architecture 'gpt2'" "$G" inspect "$TMP/m"
cp "$FX/hf/llama/config.json" "$TMP/m/config.json"
head -c 3000 "$FX/hf/llama/model.safetensors" >"$TMP/m/model.safetensors"
expect_error "run past the end" "$G" inspect "$TMP/m"
printf '\377\377\377\377\0\0\0\0{}' >"$TMP/m/model.safetensors"
expect_error "exceeds file size" "$G" inspect "$TMP/m"
rm "$TMP/m/model.safetensors"
expect_error "no model.safetensors" "$G" inspect "$TMP/m"
head -c 300 "$FX/llama2c/tiny_v1.bin" >"$TMP/v1cut.bin"
expect_error "truncated v1 checkpoint" "$G" inspect "$TMP/v1cut.bin"
exit 0
