#!/bin/sh
# SIGTERM (or Ctrl-C's SIGINT, which a background job of this script would
# ignore) during a download sets the cancel flag the transfers check:
# graft stops with "download cancelled", links nothing, keeps the partial
# file, and the next run resumes it.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
slow_tinyllamas 0.1
"$GRAFT_BIN" download "$TL:$F" >"$T/out" 2>"$T/err" &
GPID=$!
EXTRA_CLEANUP="kill -9 $GPID 2>/dev/null"
wait_partial $GPID 100000
term_and_wait $GPID "graft download"
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
