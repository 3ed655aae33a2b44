#!/bin/sh
# A server that ignores Range: after a dropped connection graft asks for the
# rest, gets the whole file with 200, restarts from byte 0 and ends verified.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "drop", "after": 500000, "times": 1},
            {"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "ignore_range", "times": 1}]'
g download "$TL:$F"
expect_ok "download from a server that ignores Range"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs (appended a full body to the partial?)"
[ "$(hubstat ranges $TL/$F)" = "- bytes=500000-" ] || fail "unexpected requests: $(hubstat ranges $TL/$F)"
check_cache $TL
reset_stats
g download "$TL:$F"
expect_ok "second run"
[ "$(hubstat gets $TL/$F)" -eq 0 ] || fail "the verified blob was fetched again"
echo ok
