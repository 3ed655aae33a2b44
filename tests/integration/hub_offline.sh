#!/bin/sh
# A huggingface_hub-style cache built by hand (blobs, snapshots with relative
# links, refs/main): with HF_HUB_OFFLINE=1 graft finds it without any network
# (the endpoint points at a closed port); a missing repo, revision or file is
# one clear error naming HF_HUB_OFFLINE.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
export HF_HUB_OFFLINE=1
PORT=$(python3 -S -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
export HF_ENDPOINT=http://127.0.0.1:$PORT
COMMIT=0123456789abcdef0123456789abcdef01234567
STORE="$CACHE/models--karpathy--tinyllamas"
SRC="$GRAFT_SHARED/models/tinyllamas/stories260K"
mkdir -p "$STORE/blobs" "$STORE/refs" "$STORE/snapshots/$COMMIT/stories260K"
for f in stories260K.bin tok512.bin; do
    sha=$(sha256sum "$SRC/$f" | cut -d' ' -f1)
    cp "$SRC/$f" "$STORE/blobs/$sha"
    ln -s "../../../blobs/$sha" "$STORE/snapshots/$COMMIT/stories260K/$f"
done
printf '%s' $COMMIT >"$STORE/refs/main"

g download karpathy/tinyllamas:stories260K/stories260K.bin
expect_ok "offline, cached llama2.c file"
[ "$(cat "$T/out")" = "$STORE/snapshots/$COMMIT" ] || fail "printed $(cat "$T/out")"
cmp -s "$(cat "$T/out")/stories260K/stories260K.bin" "$SRC/stories260K.bin" || fail "the cached file differs"
g download "karpathy/tinyllamas@$COMMIT:stories260K/tok512.bin"
expect_ok "offline, by commit hash"

g download karpathy/tinyllamas:stories260K/absent.bin
expect_fail "offline, missing file" "HF_HUB_OFFLINE is set"
g download karpathy/tinyllamas@v2:stories260K/stories260K.bin
expect_fail "offline, unknown revision" "not in the cache"
g download graft-test/tiny-llama
expect_fail "offline, missing repo" "HF_HUB_OFFLINE is set"
HF_HUB_OFFLINE=0 g download graft-test/tiny-llama
expect_fail "HF_HUB_OFFLINE=0 goes online" "cannot connect"
echo ok
