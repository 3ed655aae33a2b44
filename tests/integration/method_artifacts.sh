# graft convert's folders belong to their requests: without --out, two runs
# that differ only in --steps leave two folders (student-<teacher>-<init>-<digest>),
# the same run twice reuses one and says so; --out on a folder another request
# made is refused with a line naming that request, and --force replaces it;
# the folder's config.json records the request, and that command makes the
# same digest again; graft train --out keeps the same rule.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
cd "$TMP" || fail "cd $TMP"
ARGS="--keep 0.5 --strategy uniform --init taylor-calibrate --calib $TS --threads 1"

"$G" convert "$STORIES" $ARGS --steps 2 --json >a.json 2>a.err || fail "convert --steps 2: $(cat a.err)"
"$G" convert "$STORIES" $ARGS --steps 3 --json >b.json 2>b.err || fail "convert --steps 3: $(cat b.err)"
n=$(ls -d student-stories260K-taylor-calibrate-* | wc -l)
[ "$n" -eq 2 ] || fail "two requests left $n folders: $(ls)"
A=$(json_get a.json 'j["out"]')
B=$(json_get b.json 'j["out"]')
[ "$A" != "$B" ] || fail "one folder for two requests"
[ "$(json_get a.json 'j["folder"]')" = new ] || fail "the first folder is not new"
for d in "$A" "$B"; do
    case "$d" in student-stories260K-taylor-calibrate-??????????) ;; *) fail "folder name without its digest: $d";; esac
done

# the same request again: the same folder, said so
"$G" convert "$STORIES" $ARGS --steps 2 --json >c.json 2>c.err || fail "convert again: $(cat c.err)"
[ "$(json_get c.json 'j["out"]')" = "$A" ] || fail "the same request went to $(json_get c.json 'j["out"]')"
[ "$(json_get c.json 'j["folder"]')" = reused ] || fail "the folder is not reported reused"
grep -qF "$A: reused (the same request made it" c.err || fail "no line says the folder is reused: $(cat c.err)"
[ "$(ls -d student-stories260K-* | wc -l)" -eq 2 ] || fail "the same request made a third folder"

# the record: the request's command and its digest; the command makes the same digest
python3 - "$A" a.json <<'PY' || fail "config.json lacks the request"
import json, sys
rec = json.load(open(sys.argv[1] + "/config.json"))["graft_request"]
assert rec["digest"].startswith(sys.argv[1][-10:]), rec["digest"]
assert rec["digest"] == json.load(open(sys.argv[2]))["request_digest"]
assert rec["command"].startswith("graft convert ") and "--steps 2" in rec["command"], rec["command"]
ident = rec["identity"]
assert ident["options"]["steps"] == 2 and ident["inputs"][0]["content"]["hashed"] == "whole", ident
assert len(ident["options"]["calib"]["content"]["sha256"]) == 64, ident["options"]["calib"]
assert rec["graft_version"], rec
PY
cmd=$(json_get "$A/config.json" 'j["graft_request"]["command"]' | sed 's/^graft //')
eval "set -- $cmd"
"$G" "$@" --json >d.json 2>d.err || fail "the recorded command does not run: $cmd: $(cat d.err)"
[ "$(json_get d.json 'j["request_digest"]')" = "$(json_get a.json 'j["request_digest"]')" ] || fail "the recorded command makes another digest"

# --out on another request's folder: refused (one line, naming it), nothing written; --force replaces
before=$(cat "$A/config.json")
expect_error "$A holds what another request made, with other options or inputs (" "$G" convert "$STORIES" $ARGS --steps 3 --out "$A"
grep -qF -- "--steps 2" "$TMP/err" || fail "the refusal does not name the other request: $(cat "$TMP/err")"
grep -qF -- "--force" "$TMP/err" || fail "the refusal does not say how to replace it"
[ "$(cat "$A/config.json")" = "$before" ] || fail "a refused convert changed the folder"
mkdir other && echo x >other/notes.txt
expect_error "holds files no recorded request made" "$G" convert "$STORIES" $ARGS --steps 3 --out other
"$G" convert "$STORIES" $ARGS --steps 3 --out "$A" --force --json >e.json 2>e.err || fail "--force: $(cat e.err)"
[ "$(json_get e.json 'j["folder"]')" = replaced ] || fail "--force did not replace"
[ "$(json_get "$A/config.json" 'j["graft_request"]["digest"]')" = "$(json_get e.json 'j["request_digest"]')" ] || fail "the replaced folder records the old request"
# graft train --out: the trained folder records the training request; another request's folder is refused
TRAIN="--teacher $STORIES --data $TS --ctx 32 --batch 1 --tokens 64 --threads 1 --log-every 0"
expect_error "$B holds what another request made" "$G" train "$A" $TRAIN --out "$B"
"$G" train "$A" $TRAIN --out trained --json >t.json 2>t.err || fail "train --out: $(cat t.err)"
python3 -c 'import json,sys; c=json.load(open("trained/config.json"))["graft_request"]["command"]; assert c.startswith("graft train ") and "--tokens 64" in c, c' \
    || fail "the trained folder does not record its request"
"$G" train "$A" $TRAIN --out trained --json >/dev/null 2>t.err || fail "the same training request again: $(cat t.err)"
echo "method_artifacts: all checks passed"
