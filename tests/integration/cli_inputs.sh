# Every input a command reads is a regular file or a folder of them: a FIFO
# (no writer: it would block), /dev/zero (it never ends) or a folder where a
# file is wanted are refused at once with one line naming the path; nothing
# hangs (each run under a timeout: exit 124 fails the test) and nothing is
# written.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
mkfifo "$TMP/fifo.txt" || skip "mkfifo is not available"
T="timeout 30"

for bad in /dev/zero "$TMP/fifo.txt"; do
    expect_error "$bad is a" $T "$G" ppl "$STORIES" --text "$bad"
    expect_error "$bad is a" $T "$G" stats "$STORIES" --text "$bad"
    expect_error "$bad is a" $T "$G" train "$STORIES" --teacher "$STORIES" --data "$bad" --ctx 32 --tokens 64
    expect_error "$bad is a" $T "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$bad" --out "$TMP/s"
    expect_error "$bad is a" $T "$G" ablate "$STORIES" --calib "$TS" --eval "$bad" --init random
    expect_error "$bad is a" $T "$G" ppl "$STORIES" --text "$TS" --tokenizer "$bad"
    expect_error "$bad is a" $T "$G" inspect "$bad"
done
grep -q "is a FIFO, not a regular file" "$TMP/err" || fail "the refusal does not say what the path is: $(cat "$TMP/err")"
[ -e "$TMP/s" ] && fail "a refused convert left its output folder"
expect_error "$TMP is a folder, not a regular file" $T "$G" ppl "$STORIES" --text "$TMP"

# a --data folder: its .txt files must be regular files too
mkdir "$TMP/data"
cp "$TS" "$TMP/data/a.txt"
ln -s /dev/zero "$TMP/data/b.txt"
expect_error "$TMP/data/b.txt is a character device" $T "$G" train "$STORIES" --teacher "$STORIES" --data "$TMP/data" --ctx 32 --tokens 64
exit 0
