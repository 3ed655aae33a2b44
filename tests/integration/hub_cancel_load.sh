#!/bin/sh
# A command that catches SIGINT / SIGTERM to clean up (train here: its
# checkpoint, its claims) stops a teacher's download from the Hub at once, as
# `graft download` does: ends by the signal, links nothing, keeps the partial
# file. Until session 39 the loaders gave the download no cancel flag, so the
# whole file came down first (here ~16 s at 64 kB/s) and the run stopped after.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
slow_tinyllamas 0.5
printf 'One day, a clever fox found a shiny key under the old oak tree. ' >"$T/fox.txt"
"$GRAFT_BIN" train "$TL:$F" --teacher "$TL:$F" --keep 0.5 --data "$T/fox.txt" --ctx 16 --tokens 64 --threads 1 \
    >"$T/out" 2>"$T/err" &
GPID=$!
EXTRA_CLEANUP="kill -9 $GPID 2>/dev/null"
wait_partial $GPID 60000
term_and_wait $GPID "graft train, in its teacher's download (the rest of the file takes ~15 s),"
[ "$RC" -eq 143 ] || fail "a train stopped by SIGTERM should end by that signal (143), got $RC: $(cat "$T/err")"
grep -q "cancelled" "$T/err" || fail "the stopped download said: $(cat "$T/err")"
[ ! -e "$(snapshot_file $TL $F)" ] || fail "the download ran to its end and was linked"
partial=$(cat "$BLOBS/$SHA".*.incomplete | wc -c)
[ "$partial" -gt 0 ] || fail "the partial file was not kept"
echo ok
