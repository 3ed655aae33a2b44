#!/bin/sh
# The server stops sending mid-file: graft gives up on the stalled transfer
# after HF_HUB_DOWNLOAD_TIMEOUT seconds without data (CURLOPT_LOW_SPEED_*),
# retries with Range, and ends with a verified file.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
export HF_HUB_DOWNLOAD_TIMEOUT=1
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "stall", "after": 300000, "seconds": 30}]'
g download "$TL:$F"
expect_ok "download through a stall"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the resumed file differs"
[ "$(hubstat gets $TL/$F)" -eq 2 ] || fail "expected 2 GETs, got $(hubstat gets $TL/$F)"
[ "$(hubstat ranges $TL/$F)" = "- bytes=300000-" ] || fail "expected a resume from byte 300000, saw: $(hubstat ranges $TL/$F)"
check_cache $TL
reset_stats
g download "$TL:$F"
expect_ok "second run"
[ "$(hubstat gets $TL/$F)" -eq 0 ] || fail "the verified blob was fetched again"
echo ok
