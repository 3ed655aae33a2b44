#!/bin/sh
# 429 with Retry-After and 500s: graft waits as told, retries, succeeds; when
# 500s outlast the retries it fails with one clear line and links nothing.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "status", "status": 429, "retry_after": 1, "times": 1},
            {"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "status", "status": 500, "times": 2},
            {"file": "@api", "kind": "status", "status": 503, "times": 1}]'
g download "$TL:$F"
expect_ok "download through 429 and 500s"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
[ "$(hubstat gets $TL/$F)" -eq 4 ] || fail "expected 4 GETs (429, 500, 500, 200), got $(hubstat gets $TL/$F)"
[ "$(hubstat api)" -eq 2 ] || fail "the model-info API was not retried after a 503"
# Retry-After: 1 was honoured (the backoff alone would be 50 ms): the server's clock
python3 -S -c 'import sys; t=[float(x) for x in sys.argv[1].split()]; sys.exit(0 if t[1]-t[0] >= 0.9 else 1)' \
    "$(hubstat times $TL/$F)" || fail "Retry-After was not honoured: $(hubstat times $TL/$F)"
check_cache $TL

# 500 forever on a fresh cache: a clear error, nothing linked, nothing half-written
rm -rf "$CACHE"
set_faults '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "status", "status": 500, "times": 100}]'
g download "$TL:$F"
expect_fail "500s beyond the retries" "HTTP 500"
[ ! -e "$(snapshot_file $TL $F)" ] || fail "a file was linked despite the error"
check_cache $TL partial-ok
echo ok
