# Bad flags and bad inputs: one clear line on stderr, non-zero exit, no crash.
. "$(dirname "$0")/../lib.sh"
need_stories

expect_error "unknown command" "$G" frobnicate
expect_error "unknown option --bogus" "$G" ppl "$STORIES" --bogus
expect_error "needs an integer" "$G" generate "$STORIES" -n abc
expect_error "--text FILE is required" "$G" ppl "$STORIES"
expect_error "no such file" "$G" inspect "$TMP/missing.bin"
expect_error "missing argument" "$G" inspect
# --device cuda where it cannot run: one line saying why (a build without CUDA,
# or a machine without a GPU); skipped where a GPU is there
if ! nvidia-smi -L >/dev/null 2>&1; then
    expect_error "cuda" "$G" inspect "$STORIES" --device cuda
    grep -qE "built without the CUDA backend|no NVIDIA driver|no GPU found|no usable GPU" "$TMP/err" ||
        fail "--device cuda without a GPU: $(cat "$TMP/err")"
fi
expect_error "unknown device" "$G" inspect "$STORIES" --device tpu
# every command's --device errors and the memory refusals: device_cli.sh

printf 'x' >"$TMP/one.txt"
"$G" ppl "$STORIES" --text "$TMP/one.txt" --json >/dev/null || fail "a one-character text has BOS + 2 tokens and must work"
: >"$TMP/empty.txt"
expect_error "at least 2" "$G" ppl "$STORIES" --text "$TMP/empty.txt"
expect_error "fewer than one sequence" "$G" stats "$STORIES" --text "$TMP/one.txt"
expect_error "No such file" "$G" stats "$STORIES" --text "$TMP/nope.txt"

# truncated and lying llama2.c checkpoints
head -c 20 "$STORIES" >"$TMP/short.bin"
expect_error "truncated" "$G" inspect "$TMP/short.bin"
head -c 100000 "$STORIES" >"$TMP/cut.bin"
expect_error "truncated" "$G" inspect "$TMP/cut.bin"
python3 -c "
import struct,sys
d=bytearray(open(sys.argv[1],'rb').read()); d[0:4]=struct.pack('<i',-5); open(sys.argv[2],'wb').write(d)" "$STORIES" "$TMP/neg.bin"
expect_error "not a llama2.c checkpoint" "$G" inspect "$TMP/neg.bin"
exit 0
