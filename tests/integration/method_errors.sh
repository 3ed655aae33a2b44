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
c = json.load(open(sys.argv[1])); c["graft_student"]["gdn_layers"] = [1, 2, 4]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "config.json lists layer 1 as GDN but model.safetensors lacks" "$G" eval "$TMP/bad" --text "$TMP/short.txt"
cp -r "$TMP/stu" "$TMP/bad2"
python3 - "$TMP/bad2/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["graft_student"]["gdn_layers"] = [2]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "lists layer 4 as attention but model.safetensors has GDN tensors" "$G" ppl "$TMP/bad2" --text "$TMP/short.txt"
cp -r "$TMP/stu" "$TMP/bad3"
python3 - "$TMP/bad3/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["graft_student"]["gdn"]["head_k_dim"] = 4; c["num_attention_heads"] = 16; c["head_dim"] = 4
json.dump(c, open(sys.argv[1], "w"))
PY
expect_error "shape" "$G" eval "$TMP/bad3" --text "$TMP/short.txt"

# a failing convert over an existing folder leaves its files as they were
sum_before=$(cat "$TMP/stu"/* | md5sum)
expect_error "fewer than" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TMP/short.txt" --out "$TMP/stu"
[ "$(cat "$TMP/stu"/* | md5sum)" = "$sum_before" ] || fail "a failed convert changed an existing student folder"
ls "$TMP/stu" | grep -q tmp && fail "temporary files left behind"
exit 0
