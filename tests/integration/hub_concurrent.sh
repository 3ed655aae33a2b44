#!/bin/sh
# Two graft processes fetch the same repo at once: the per-blob lock
# (.locks/models--ORG--NAME/<etag>.lock) lets one download each blob while
# the other waits and then links it: every file is fetched exactly once.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "slow", "chunk": 131072, "delay": 0.1, "times": 1}]'
timeout 120 "$GRAFT_BIN" download "$TL:$F" >"$T/out1" 2>"$T/err1" &
P1=$!
timeout 120 "$GRAFT_BIN" download "$TL:$F" >"$T/out2" 2>"$T/err2" &
P2=$!
wait $P1 || { cat "$T/err1"; fail "first process failed"; }
wait $P2 || { cat "$T/err2"; fail "second process failed"; }
cmp -s "$T/out1" "$T/out2" || fail "the two processes printed different folders"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
[ "$(hubstat gets $TL/$F)" -eq 1 ] || fail "expected one GET for the shared blob, got $(hubstat gets $TL/$F)"
[ "$(hubstat gets $TL/stories260K/tok512.bin)" -eq 1 ] || fail "expected one GET for the tokenizer"
check_cache $TL
echo ok
