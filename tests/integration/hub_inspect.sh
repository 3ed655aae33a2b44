#!/bin/sh
# What graft downloads loads: the Hugging Face fixtures (tests/fixtures/hf/*)
# served as repos and the llama2.c teacher, fetched into the cache, read by
# `graft inspect` through the snapshot's symlinks exactly like the originals.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
start_hub
for name in $(ls "$GRAFT_ROOT/tests/fixtures/hf"); do
    g download "graft-test/$name-fixture" --quiet
    expect_ok "download $name"
    DIR=$(cat "$T/out")
    [ -L "$DIR/config.json" ] && ls "$DIR"/*.safetensors >/dev/null 2>&1 || fail "$name: no linked config and weights"
    timeout 60 "$GRAFT_BIN" inspect "$DIR" 2>&1 | grep -v '^model ' >"$T/got" || fail "$name: inspect of the download failed"
    timeout 60 "$GRAFT_BIN" inspect "$GRAFT_ROOT/tests/fixtures/hf/$name" 2>&1 | grep -v '^model ' >"$T/want"
    cmp -s "$T/got" "$T/want" || { diff "$T/want" "$T/got" | head; fail "$name: inspect differs from the original"; }
    check_cache "graft-test/$name-fixture"
done
g download karpathy/tinyllamas:stories260K/stories260K.bin --quiet
expect_ok "download the teacher"
timeout 60 "$GRAFT_BIN" inspect "$(cat "$T/out")/stories260K/stories260K.bin" 2>&1 | grep -v '^model ' >"$T/got"
timeout 60 "$GRAFT_BIN" inspect "$SHARED_BIN" 2>&1 | grep -v '^model ' >"$T/want"
cmp -s "$T/got" "$T/want" || { diff "$T/want" "$T/got" | head; fail "the downloaded teacher inspects differently"; }
echo ok
