#!/bin/sh
# A command that catches SIGINT / SIGTERM to clean up (train here: its
# checkpoint, its claims) stops a teacher's download from the Hub at once, as
# `graft download` does: ends by the signal, links nothing, keeps the partial
# file. Until session 39 the loaders gave the download no cancel flag, so the
# whole file came down first (here ~16 s at 64 kB/s) and the run stopped after.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
TL=karpathy/tinyllamas
F=stories260K/stories260K.bin
SHA=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
BLOBS="$CACHE/models--karpathy--tinyllamas/blobs"
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "slow", "chunk": 32768, "delay": 0.5, "times": 1}]'
printf 'One day, a clever fox found a shiny key under the old oak tree. ' >"$T/fox.txt"
"$GRAFT_BIN" train "$TL:$F" --teacher "$TL:$F" --keep 0.5 --data "$T/fox.txt" --ctx 16 --tokens 64 --threads 1 \
    >"$T/out" 2>"$T/err" &
GPID=$!
EXTRA_CLEANUP="kill -9 $GPID 2>/dev/null"
i=0
until [ "$(cat "$BLOBS/$SHA".*.incomplete 2>/dev/null | wc -c)" -gt 60000 ]; do
    i=$((i + 1))
    [ $i -gt 400 ] && fail "the download never got going: $(cat "$T/err")"
    sleep 0.05
done
kill -TERM $GPID
i=0
while kill -0 $GPID 2>/dev/null; do # a hang guard: the rest of the file takes ~15 s
    i=$((i + 1))
    [ $i -gt 100 ] && fail "graft train did not stop within 5 s of SIGTERM during its teacher's download"
    sleep 0.05
done
wait $GPID
RC=$?
[ "$RC" -eq 143 ] || fail "a train stopped by SIGTERM should end by that signal (143), got $RC: $(cat "$T/err")"
grep -q "cancelled" "$T/err" || fail "the stopped download said: $(cat "$T/err")"
[ ! -e "$(snapshot_file $TL $F)" ] || fail "the download ran to its end and was linked"
partial=$(cat "$BLOBS/$SHA".*.incomplete | wc -c)
[ "$partial" -gt 0 ] || fail "the partial file was not kept"
echo ok
