#!/bin/sh
# Loading a 1.5B teacher onto the GPU (issue 11's target: under 5 s from a
# warm page cache) and the host memory it holds meanwhile, from safetensors
# and from GGUF. No real teacher can be fetched on the GPU machine, so random
# weights of Qwen2.5-1.5B's shape are written once:
# - safetensors: a folder of bf16 weights (tests/bench/synthetic_teacher.py,
#   3.1 GB, into GRAFT_LOAD_DIR, default /tmp/graft-qwen2.5-1.5b);
# - gguf: one file per type in GRAFT_LOAD_GGUF_TYPES (default q4_k_m: the
#   q4_k / q6_k mix and untied output of the real Qwen2.5-Coder-1.5B-Instruct
#   Q4_K_M download, 1.12 GB; also bf16, f16, q8_0, q4_k, q6_k) by
#   tests/bench/synthetic_gguf.py (numpy only, no gguf package) into
#   GRAFT_LOAD_GGUF_DIR (default /tmp), named graft-qwen2.5-1.5b-TYPE.gguf.
# bench_load then loads each twice per staging mode (the second from a warm
# page cache) on GRAFT_BENCH_DEVICE (default cuda). GRAFT_LOAD_FORMATS picks
# the formats (default "safetensors gguf"). Run: make build/bench/bench_load,
# then sh tests/bench/bench_load_gpu.sh. Not part of make test (timing).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
CONFIG=$SHARED/configs/qwen2.5-1.5b.json
export GRAFT_BENCH_DEVICE=${GRAFT_BENCH_DEVICE:-cuda}

time_load() { # MODEL FILE: two loads per staging mode, the lines of this model only
    cat "$2" >/dev/null # warm the page cache
    for i in 1 2; do
        GRAFT_BENCH_LOAD="$1" "$BUILD/bench/bench_load" | grep -F "$1"
    done
}

for format in ${GRAFT_LOAD_FORMATS:-safetensors gguf}; do
    case $format in
    safetensors)
        DIR=${GRAFT_LOAD_DIR:-/tmp/graft-qwen2.5-1.5b}
        [ -f "$DIR/model.safetensors" ] || python3 tests/bench/synthetic_teacher.py "$CONFIG" "$DIR"
        time_load "$DIR" "$DIR/model.safetensors"
        ;;
    gguf)
        for type in ${GRAFT_LOAD_GGUF_TYPES:-q4_k_m}; do
            FILE=${GRAFT_LOAD_GGUF_DIR:-/tmp}/graft-qwen2.5-1.5b-$type.gguf
            # --untied: as the real Q4_K_M download (one more 151936 x 1536 matrix than the config's tied model)
            [ -f "$FILE" ] || python3 tests/bench/synthetic_gguf.py "$CONFIG" "$FILE" --type "$type" --untied
            time_load "$FILE" "$FILE"
        done
        ;;
    *)
        echo "bench_load_gpu.sh: GRAFT_LOAD_FORMATS: $format is not safetensors or gguf" >&2
        exit 2
        ;;
    esac
done
