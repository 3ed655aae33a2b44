#!/bin/sh
# A hostile Hub: a GET announcing a Content-Length of 1e18, a body that never
# ends with no size announced, a HEAD announcing 1e18 bytes. graft stops at the
# announced size (or at GRAFT_HUB_MAX_UNANNOUNCED), removes what it wrote and
# links nothing; a snapshot it could not finish is marked incomplete, so an
# offline run refuses it; a clean run afterwards works.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
FILE=$TL/$F
SHA=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
BLOBS="$CACHE/models--karpathy--tinyllamas/blobs"
nothing_kept() { # what
    ! ls "$BLOBS"/*.incomplete >/dev/null 2>&1 || fail "$1: a partial file was left: $(ls "$BLOBS")"
    [ ! -e "$BLOBS/$SHA" ] || fail "$1: the blob was kept"
    [ ! -L "$(snapshot_file $TL $F)" ] || fail "$1: the file was linked"
}

# 1. the model info gives the size; the GET announces 1e18 bytes and sends zeros after the file
start_hub "[{\"file\": \"$FILE\", \"kind\": \"huge\", \"times\": 10}]"
g download "$TL:$F"
expect_fail "Content-Length 1e18" "more than the 1056540 bytes the Hub gives as its size"
grep -q "partial download was removed" "$T/err" || fail "the error does not say the partial was removed"
nothing_kept "Content-Length 1e18"
[ "$(hubstat gets $FILE)" -eq 1 ] || fail "the oversized answer was retried: $(hubstat gets $FILE) GETs"

# 2. no size anywhere, a body that does not end: stopped at GRAFT_HUB_MAX_UNANNOUNCED
set_faults "[{\"file\": \"$FILE\", \"kind\": \"hide_size\"}, {\"file\": \"$FILE\", \"kind\": \"huge\", \"announce\": false}]"
GRAFT_HUB_MAX_UNANNOUNCED=3000000 g download "$TL:$F"
expect_fail "an endless body" "no size was announced and the server sent more than 3000000 bytes"
nothing_kept "an endless body"

# 3. the HEAD announces 1e18 bytes (the model info none): refused before any GET
reset_stats
set_faults "[{\"file\": \"$FILE\", \"kind\": \"hide_size\", \"head_size\": 1000000000000000000}]"
g download "$TL:$F"
expect_fail "HEAD of 1e18" "the Hub announces 1000000000000000000 bytes"
[ "$(hubstat gets $FILE)" -eq 0 ] || fail "a file announced at 1e18 bytes was fetched"
nothing_kept "HEAD of 1e18"

# 4. a folder download that fails half-way: the snapshot is marked incomplete
#    and refused offline; the next run completes it and lifts the mark
R=graft-test/tiny-llama
set_faults "[{\"file\": \"$R/model-00002-of-00002.safetensors\", \"kind\": \"corrupt\", \"times\": 10}]"
g download $R
expect_fail "a corrupt shard" "checksum mismatch"
COMMIT=$(hub_commit $R)
[ -e "$CACHE/.locks/models--graft-test--tiny-llama/$COMMIT.incomplete" ] || fail "the half snapshot is not marked incomplete"
HF_HUB_OFFLINE=1 g download $R
expect_fail "offline, half a snapshot" "is incomplete (an interrupted download)"
set_faults '[]'
g download $R
expect_ok "the run after the fault"
[ ! -e "$CACHE/.locks/models--graft-test--tiny-llama/$COMMIT.incomplete" ] || fail "the mark outlived the complete download"
HF_HUB_OFFLINE=1 g download $R
expect_ok "offline, the whole snapshot"
check_cache $R

# and the clean single file
set_faults '[]'
g download "$TL:$F"
expect_ok "the clean run"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
check_cache $TL
echo ok
