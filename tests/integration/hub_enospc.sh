#!/bin/sh
# The disk fills up while a blob is written (the cache on a small tmpfs that
# the test fills mid-transfer): graft stops with a disk-full error, removes
# the partial file and links nothing; with space back, the next run works.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
SHA=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
MNT="$T/small"
mkdir -p "$MNT"
mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null || skip "cannot mount a tmpfs here"
EXTRA_CLEANUP="umount '$MNT'"
export HF_HUB_CACHE="$MNT/hub"
CACHE=$HF_HUB_CACHE
BLOBS="$CACHE/models--karpathy--tinyllamas/blobs"
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "slow", "chunk": 65536, "delay": 0.15, "times": 1}]'
timeout 120 "$GRAFT_BIN" download "$TL:$F" >"$T/out" 2>"$T/err" &
GPID=$!
i=0
until [ "$(cat "$BLOBS/$SHA".*.incomplete 2>/dev/null | wc -c)" -gt 0 ]; do
    i=$((i + 1))
    [ $i -gt 400 ] && { kill -9 $GPID; fail "the download never started"; }
    sleep 0.05
done
dd if=/dev/zero of="$MNT/filler" bs=16k 2>/dev/null # until the file system is full
wait $GPID
RC=$?
expect_fail "disk full" "No space left on device"
grep -q "partial download was removed" "$T/err" || fail "the error does not say the partial was removed"
! ls "$BLOBS/$SHA".*.incomplete >/dev/null 2>&1 || fail "the partial file was left behind"
[ ! -e "$BLOBS/$SHA" ] && [ ! -e "$(snapshot_file $TL $F)" ] || fail "something was linked"
rm -f "$MNT/filler"
g download "$TL:$F"
expect_ok "the run with space back"
cmp -s "$(snapshot_file $TL $F)" "$SHARED_BIN" || fail "the file differs"
check_cache $TL
echo ok
