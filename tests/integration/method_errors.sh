# Bad requests to select / convert / eval / ablate: one clear line, non-zero exit.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"

expect_error "--keep must be in (0, 1)" "$G" convert "$STORIES" --keep 1.5 --strategy uniform --init random --calib "$TS"
expect_error "--keep must be in (0, 1)" "$G" convert "$STORIES" --keep 0 --strategy uniform --init random --calib "$TS"
expect_error "--keep must be in (0, 1)" "$G" select "$STORIES" --keep 1 --strategy uniform
expect_error "retention ratio must be in (0, 1)" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5,2
expect_error "manual layer 9 is out of range" "$G" select "$STORIES" --strategy manual:0,9
expect_error "manual layer 7 is out of range" "$G" convert "$STORIES" --strategy manual:7 --init random --calib "$TS" --out "$TMP/x"
expect_error "unknown init 'warm'" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init warm --calib "$TS"
expect_error "unknown init 'warm'" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --init random,warm
expect_error "unknown strategy 'best'" "$G" select "$STORIES" --keep 0.5 --strategy best
expect_error "unknown strategy 'best'" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --strategy uniform,best
expect_error "unknown write-gate mode" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --write-gate odd
expect_error "--text FILE is required for ar" "$G" select "$STORIES" --keep 0.5 --strategy ar

printf 'Once upon a time.' >"$TMP/short.txt"
expect_error "fewer than 4 sequences of 256" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-only --calib "$TMP/short.txt" --out "$TMP/s"
[ -e "$TMP/s" ] && fail "a failed convert created its output folder"
expect_error "fewer than 1 sequence of 256" "$G" ablate "$STORIES" --calib "$TMP/short.txt" --eval "$TS" --calib-seqs 1

# a student folder whose config and tensors disagree
"$G" convert "$STORIES" --keep 0.5 --strategy manual:0,1,3 --init random --calib "$TS" --out "$TMP/stu" >/dev/null 2>&1 ||
    fail "convert --init random failed"
"$G" eval "$TMP/stu" --text "$TMP/short.txt" --json >/dev/null || fail "eval of a fresh student failed"
"$G" generate "$TMP/stu" -n 4 --json >"$TMP/gen.json" || fail "generate from a student folder failed"
expect_error "is a student folder" "$G" convert "$TMP/stu" --keep 0.5 --strategy uniform --init random --calib "$TS"
cp -r "$TMP/stu" "$TMP/bad"
python3 - "$TMP/bad/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["graft_student"]["gdn_layers"] = [1, 2, 4]; c["graft_student"]["attention_layers"] = [0, 3]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "config.json lists layer 1 as GDN but model.safetensors lacks" "$G" eval "$TMP/bad" --text "$TMP/short.txt"
cp -r "$TMP/stu" "$TMP/bad2"
python3 - "$TMP/bad2/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["graft_student"]["gdn_layers"] = [2]; c["graft_student"]["attention_layers"] = [0, 1, 3, 4]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "lists layer 4 as attention but model.safetensors has GDN tensors" "$G" ppl "$TMP/bad2" --text "$TMP/short.txt"
cp -r "$TMP/stu" "$TMP/bad3"
python3 - "$TMP/bad3/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); g = c["graft_student"]["gdn"]
g["head_k_dim"] = 4; g["head_v_dim"] = 4; g["num_heads"] = 16; c["num_attention_heads"] = 16; c["num_key_value_heads"] = 8; c["head_dim"] = 4
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "shape" "$G" eval "$TMP/bad3" --text "$TMP/short.txt"

# the student's config field by field, and a config that does not describe its weights
bad_config() { # NAME PYTHON-STATEMENTS-ON-c: a copy of the student with config.json edited
    cp -r "$TMP/stu" "$TMP/$1"
    python3 -c "import json, sys
c = json.load(open(sys.argv[1])); g = c['graft_student']
$2
json.dump(c, open(sys.argv[1], 'w'))" "$TMP/$1/config.json"
}
bad_config v99 'g["format_version"] = 99'
expect_error "graft_student.format_version is 99; this graft reads version 1" "$G" eval "$TMP/v99" --text "$TMP/short.txt"
bad_config nov 'del g["format_version"]'
expect_error "missing or non-numeric 'format_version'" "$G" eval "$TMP/nov" --text "$TMP/short.txt"
bad_config twice 'g["gdn_layers"] = [2, 2, 4]'
expect_error "layer 2 is listed twice (in gdn_layers and gdn_layers)" "$G" eval "$TMP/twice" --text "$TMP/short.txt"
bad_config both 'g["gdn_layers"] = [0, 2, 4]'
expect_error "layer 0 is listed twice (in gdn_layers and attention_layers)" "$G" eval "$TMP/both" --text "$TMP/short.txt"
bad_config frac 'g["attention_layers"] = [0, 1.5, 3]'
expect_error "graft_student.attention_layers holds 1.5, not a layer of this 5-layer model" "$G" eval "$TMP/frac" --text "$TMP/short.txt"
bad_config chunk 'g["gdn"]["chunk_size"] = 48'
expect_error "graft_student.gdn.chunk_size is 48, not 16, 32 or 64" "$G" eval "$TMP/chunk" --text "$TMP/short.txt"
bad_config heads 'g["gdn"]["num_heads"] = 4'
expect_error "graft_student.gdn.num_heads is 4; the teacher and settings give 8" "$G" eval "$TMP/heads" --text "$TMP/short.txt"
bad_config eps 'g["gdn"]["norm_eps"] = -1'
expect_error "graft_student.gdn.norm_eps is -1, not a number in (0, 1)" "$G" eval "$TMP/eps" --text "$TMP/short.txt"
bad_config damp 'g["init"]["damping"] = 0'
expect_error "graft_student.init.damping is 0, not a positive number" "$G" eval "$TMP/damp" --text "$TMP/short.txt"
bad_config layers 'c["num_hidden_layers"] = 4; g["attention_layers"] = [0, 1, 3]; g["gdn_layers"] = [2]'
expect_error "config.json: num_hidden_layers = 4, but the weights hold 5 layers (model.layers.0 .. model.layers.4)" "$G" eval "$TMP/layers" --text "$TMP/short.txt"
# a teacher folder whose config.json has fewer layers than its weights
cp -r "$GRAFT_ROOT/tests/fixtures/hf/llama" "$TMP/teacher"
python3 -c "import json, sys
c = json.load(open(sys.argv[1])); c['num_hidden_layers'] = 2; json.dump(c, open(sys.argv[1], 'w'))" "$TMP/teacher/config.json"
expect_error "$TMP/teacher/config.json: num_hidden_layers = 2, but the weights hold 3 layers (model.layers.0 .. model.layers.2)" "$G" inspect "$TMP/teacher"

# a failing convert over an existing folder leaves its files as they were
sum_before=$(cat "$TMP/stu"/* | md5sum)
expect_error "fewer than" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TMP/short.txt" --out "$TMP/stu" --force
[ "$(cat "$TMP/stu"/* | md5sum)" = "$sum_before" ] || fail "a failed convert changed an existing student folder"
ls "$TMP/stu" | grep -q tmp && fail "temporary files left behind"
exit 0
