#!/bin/sh
# The connection drops in the middle of an LFS file: graft retries, resumes
# with Range from what it has, verifies sha256, and a second run fetches nothing.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "drop", "after": 400000, "times": 1}]'
g download "$TL:$F"
expect_ok "download through a dropped connection"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the resumed file differs"
[ "$(hubstat gets $TL/$F)" -eq 2 ] || fail "expected 2 GETs, got $(hubstat gets $TL/$F)"
[ "$(hubstat ranges $TL/$F)" = "- bytes=400000-" ] || fail "expected a resume from byte 400000, saw: $(hubstat ranges $TL/$F)"
check_cache $TL
reset_stats
g download "$TL:$F"
expect_ok "second run"
[ "$(hubstat gets $TL/$F)" -eq 0 ] || fail "the verified blob was fetched again"
echo ok
