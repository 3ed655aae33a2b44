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

# lines that once named no file or no value: each names what to fix
head -c 200 "$SHARED/data/tinystories.txt" >"$TMP/tiny.txt"
expect_error "graft stats: $TMP/tiny.txt: the text holds " "$G" stats "$STORIES" --text "$TMP/tiny.txt"
grep -q "fewer than one sequence of 256" "$TMP/err" || fail "stats on a short text: $(cat "$TMP/err")"
head -c 30000 "$SHARED/data/tinystories.txt" >"$TMP/short.txt"
"$G" convert "$STORIES" --keep 0.6 --strategy uniform --init random --calib "$TMP/short.txt" --out "$TMP/stu" \
    >/dev/null 2>"$TMP/err" || fail "convert: $(cat "$TMP/err")"
expect_error "graft halflife: $TMP/tiny.txt: the text holds " "$G" halflife "$TMP/stu" --text "$TMP/tiny.txt"
# halflife --fix: the one condition that is not met, with its value
expect_error "--fix needs --out DIR (the fixed student's folder)" "$G" halflife "$TMP/stu" --fix 2:0=64
expect_error "--eval-windows must be >= 1 with --fix, got 0" "$G" halflife "$TMP/stu" --fix 2:0=64 --out "$TMP/fx" --eval-windows 0
expect_error "--fix and --ckpt do not go together" "$G" halflife "$TMP/stu" --fix 2:0=64 --out "$TMP/fx" --ckpt "$TMP/x.ckpt"
[ -e "$TMP/fx" ] && fail "a refused halflife --fix made its folder"
exit 0
