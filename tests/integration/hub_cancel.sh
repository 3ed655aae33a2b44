#!/bin/sh
# SIGTERM (or Ctrl-C's SIGINT, which a background job of this script would
# ignore) during a download sets the cancel flag the transfers check:
# graft stops with "download cancelled", links nothing, keeps the partial
# file, and the next run resumes it.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
SHA=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
BLOBS="$CACHE/models--karpathy--tinyllamas/blobs"
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "slow", "chunk": 32768, "delay": 0.1, "times": 1}]'
"$GRAFT_BIN" download "$TL:$F" >"$T/out" 2>"$T/err" &
GPID=$!
EXTRA_CLEANUP="kill -9 $GPID 2>/dev/null"
i=0
until [ "$(cat "$BLOBS/$SHA".*.incomplete 2>/dev/null | wc -c)" -gt 100000 ]; do
    i=$((i + 1))
    [ $i -gt 400 ] && fail "the download never got going"
    sleep 0.05
done
kill -TERM $GPID
i=0
while kill -0 $GPID 2>/dev/null; do # cancellation must be prompt
    i=$((i + 1))
    [ $i -gt 100 ] && fail "graft did not stop within 5 s of SIGTERM"
    sleep 0.05
done
wait $GPID
RC=$?
expect_fail "cancelled" "download cancelled"
[ "$RC" -eq 143 ] || fail "a download stopped by SIGTERM should end by that signal (143), got $RC"
[ ! -e "$(snapshot_file $TL $F)" ] || fail "a cancelled file was linked"
partial=$(cat "$BLOBS/$SHA".*.incomplete | wc -c)
[ "$partial" -gt 0 ] || fail "the partial file was not kept"
g download "$TL:$F"
expect_ok "the run after cancelling"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the resumed file differs"
[ "$(hubstat ranges $TL/$F)" = "- bytes=$partial-" ] || fail "expected a resume from $partial, saw: $(hubstat ranges $TL/$F)"
check_cache $TL
echo ok
