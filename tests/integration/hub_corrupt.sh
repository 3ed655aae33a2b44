#!/bin/sh
# Wrong bytes: the sha256 check fails, the blob is discarded and never linked,
# the error says so; the next run downloads it again and verifies it.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "corrupt", "times": 1}]'
g download "$TL:$F"
expect_fail "corrupt bytes" "checksum mismatch"
[ ! -e "$(snapshot_file $TL $F)" ] && [ ! -L "$(snapshot_file $TL $F)" ] || fail "the corrupt file was linked"
[ ! -e "$CACHE/models--karpathy--tinyllamas/blobs/b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696" ] ||
    fail "the corrupt blob was kept"
check_cache $TL # no partial left either
# the tokenizer, fetched alongside, is complete and stays
cmp -s "$(snapshot_file $TL stories260K/tok512.bin)" "$GRAFT_SHARED/models/tinyllamas/stories260K/tok512.bin" ||
    fail "the good file fetched alongside is missing"
reset_stats
g download "$TL:$F"
expect_ok "second run"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
[ "$(hubstat gets $TL/$F)" -eq 1 ] || fail "expected one GET for the discarded blob, got $(hubstat gets $TL/$F)"
[ "$(hubstat gets $TL/stories260K/tok512.bin)" -eq 0 ] || fail "the verified tokenizer was fetched again"
check_cache $TL

# a regular (non-LFS) file with the right size but wrong bytes: its ETag is
# the git blob id, which graft checks too
R=graft-test/tiny-llama
set_faults '[{"file": "graft-test/tiny-llama/config.json", "kind": "corrupt", "times": 1}]'
g download $R --include config.json
expect_fail "corrupt regular file" "checksum mismatch"
[ ! -e "$CACHE/models--graft-test--tiny-llama/snapshots/$(hub_commit $R)/config.json" ] || fail "the corrupt config.json was linked"
check_cache $R
g download $R --include config.json
expect_ok "config.json again"
grep -q '"model_type"' "$(cat "$T/out")/config.json" || fail "config.json content"
echo ok
