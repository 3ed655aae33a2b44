#!/bin/sh
# graft download against the fake hub: a llama2.c file with its tokenizer, a
# Hugging Face repo's default file set, --include, revisions, --json, the cache
# layout (relative links, refs, locks), no token leaked to the CDN, and a
# second run that fetches nothing.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
start_hub
TL=karpathy/tinyllamas
C=$(hub_commit $TL)

g download "$TL:stories260K/stories260K.bin"
expect_ok "llama2.c download"
SNAP="$CACHE/models--karpathy--tinyllamas/snapshots/$C"
[ "$(cat "$T/out")" = "$SNAP" ] || fail "printed '$(cat "$T/out")', expected $SNAP"
cmp -s "$SNAP/stories260K/stories260K.bin" "$SHARED_BIN" || fail "stories260K.bin differs from the original"
cmp -s "$SNAP/stories260K/tok512.bin" "$GRAFT_SHARED/models/tinyllamas/stories260K/tok512.bin" || fail "tok512.bin differs"
[ ! -e "$SNAP/README.md" ] || fail "README.md was not asked for"
[ "$(readlink "$SNAP/stories260K/stories260K.bin")" = "../../../blobs/b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696" ] ||
    fail "unexpected link $(readlink "$SNAP/stories260K/stories260K.bin")"
[ "$(cat "$CACHE/models--karpathy--tinyllamas/refs/main")" = "$C" ] || fail "refs/main does not hold the commit"
[ -f "$CACHE/.locks/models--karpathy--tinyllamas/b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696.lock" ] ||
    fail "no lock file where huggingface_hub keeps it"
[ "$(hubstat auth_leaks)" -eq 0 ] || fail "Authorization reached the CDN"
check_cache $TL
# the progress on a non-terminal stderr: one line per file
grep -q "stories260K/tok512.bin" "$T/err" || fail "no progress line for tok512.bin"

! grep -q "$(printf '\033')" "$T/err" || fail "terminal escapes written to a non-terminal stderr"
# on a terminal: a redrawn bar with percent, speed and ETA, cleared at the end
if command -v script >/dev/null 2>&1; then
    HF_HOME="$T/hf-tty" timeout 60 script -qec "'$GRAFT_BIN' download '$TL:stories260K/stories260K.bin'" /dev/null >"$T/tty" 2>&1 </dev/null ||
        { cat "$T/tty"; fail "download on a terminal failed"; }
    grep -qi "eta" "$T/tty" && grep -q "%" "$T/tty" || { cat -v "$T/tty"; fail "no progress bar on a terminal"; }
    grep -q "$(printf '\r')" "$T/tty" || fail "the bar is not redrawn in place"
fi

# a second run fetches nothing (and asks the Hub no HEAD)
reset_stats
g download "$TL:stories260K/stories260K.bin" --quiet
expect_ok "second llama2.c download"
[ "$(hubstat gets $TL/stories260K/stories260K.bin)" -eq 0 ] || fail "a cached blob was fetched again"
[ "$(hubstat heads $TL/stories260K/stories260K.bin)" -eq 0 ] || fail "a cached file was HEADed again"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "--quiet printed something"; }

# a Hugging Face repo: the default set, not README.md or onnx/
R=graft-test/tiny-llama
g download $R --json
expect_ok "HF download"
python3 - "$T/out" <<'PY' || fail "bad --json output"
import json, os, sys, hashlib
o = json.load(open(sys.argv[1]))
names = sorted(f["name"] for f in o["files"])
want = sorted(["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
               "model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"])
assert names == want, names
assert len(o["commit"]) == 40 and o["path"].endswith(o["commit"])
for f in o["files"]:
    data = open(os.path.join(o["path"], f["name"]), "rb").read()
    assert len(data) == f["size"], f
    assert hashlib.sha256(data).hexdigest() == f["sha256"], f
PY
SNAP=$(snapshot_file $R "")
[ ! -e "$SNAP/README.md" ] && [ ! -e "$SNAP/onnx" ] || fail "files outside the default set were fetched"
check_cache $R

# the callback API's events (--events prints them): per file started ->
# verified -> done, byte counts that add up, a final whole-download done
rm -rf "$CACHE/models--graft-test--tiny-llama"
g download $R --events
expect_ok "--events"
python3 -S - "$T/err" <<'PY' || { cat "$T/err"; fail "bad event stream"; }
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
files = {}
for e in ev:
    if e["file"] is not None:
        files.setdefault(e["file"], []).append(e["state"])
assert len(files) == 7, files
for name, states in files.items():
    seq = [s for s in states if s != "progress"]
    assert seq == ["started", "verified", "done"], (name, states)
last = ev[-1]
assert last["file"] is None and last["state"] == "done", last
assert last["files_done"] == last["files_total"] == 7, last
assert last["total_done"] == last["total_total"] > 140000, last
dones = [e for e in ev if e["state"] == "done" and e["file"]]
assert all(e["file_done"] == e["file_total"] > 0 for e in dones), dones
totals = [e["total_done"] for e in ev]
assert totals == sorted(totals), "total_done went backwards without a restart"
PY

# --include (repeatable) and a nested path: links get one ../ per folder
g download $R --include 'extras/*' --include README.md
expect_ok "--include"
case $(readlink "$SNAP/extras/notes/deep.txt") in
../../../../blobs/*) ;;
*) fail "nested link is $(readlink "$SNAP/extras/notes/deep.txt")" ;;
esac
[ "$(cat "$SNAP/extras/notes/deep.txt")" = "a file three folders deep" ] || fail "deep.txt content"
[ -f "$SNAP/README.md" ] || fail "README.md not fetched with --include"
g download $R --include 'nothing-*'
expect_fail "--include matching nothing" "no file matches"

# revisions: a tag by @ and by --revision, and the commit itself
g download "$R@v1.0" --quiet
expect_ok "@v1.0"
[ "$(cat "$CACHE/models--graft-test--tiny-llama/refs/v1.0")" = "$(hub_commit $R)" ] || fail "refs/v1.0"
g download $R --revision "$(hub_commit $R)" --quiet
expect_ok "--revision COMMIT"
[ ! -e "$CACHE/models--graft-test--tiny-llama/refs/$(hub_commit $R)" ] || fail "a ref named by a commit hash was written"
g download "$R@v1.0" --revision main
[ "$RC" -eq 2 ] || fail "conflicting revisions should be a usage error"
check_cache $R
echo "ok"
