#!/bin/sh
# graft killed with SIGKILL mid-download (slow server): nothing is linked, the
# partial stays as blobs/<etag>.<hex>.incomplete; the next run adopts it,
# resumes with Range from its size and ends with a verified file.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
slow_tinyllamas 0.1
"$GRAFT_BIN" download "$TL:$F" >"$T/out" 2>"$T/err" & # no timeout wrapper: the kill must reach graft
GPID=$!
EXTRA_CLEANUP="kill -9 $GPID 2>/dev/null"
wait_partial $GPID 200000
kill -9 $GPID
wait $GPID 2>/dev/null
[ ! -e "$(snapshot_file $TL $F)" ] || fail "a partial file was linked"
[ ! -e "$BLOBS/$SHA" ] || fail "a partial blob was renamed into place"
ls "$BLOBS/$SHA".*.incomplete >/dev/null 2>&1 || fail "no partial download left to resume"
partial=$(cat "$BLOBS/$SHA".*.incomplete | wc -c)
[ "$partial" -lt 1056540 ] || fail "the partial is already whole ($partial bytes)"

g download "$TL:$F"
expect_ok "the run after SIGKILL"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the resumed file differs"
[ "$(hubstat ranges $TL/$F)" = "- bytes=$partial-" ] || fail "expected a resume from $partial, saw: $(hubstat ranges $TL/$F)"
check_cache $TL # the partial was adopted, none left behind

# killed after the last byte but before the rename: the whole partial is
# verified and used without a GET; a whole partial with wrong bytes is discarded
rm -rf "$CACHE"
mkdir -p "$BLOBS"
cp "$SHARED_BIN" "$BLOBS/$SHA.0badf00d.incomplete"
reset_stats
g download "$TL:$F"
expect_ok "a whole partial"
[ "$(hubstat gets $TL/$F)" -eq 0 ] || fail "a whole partial was fetched again"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
rm -rf "$CACHE"
mkdir -p "$BLOBS"
head -c 1056540 /dev/zero >"$BLOBS/$SHA.0badf00d.incomplete"
g download "$TL:$F"
expect_fail "a whole partial with wrong bytes" "checksum mismatch"
check_cache $TL
g download "$TL:$F"
expect_ok "after the bad partial"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
echo ok
