#!/bin/sh
# Prepares .carry/ for a run on the GPU machine: ../shared/tools/gpu-carry.sh
# (headers and the libraries that machine lacks, copies of ../shared), plus what
# graft needs beyond that script's list: OpenSSL's headers (libcrypto itself is
# there) and utf8proc (headers and library). Run from the repository root; then
# every device command starts with `. .carry/env.sh &&` and carries .carry.
#   sh tests/gpu/carry.sh [--lean]
# --lean leaves out ../shared's 23 MB Gutenberg text (data/gutenberg-60.txt), which only the
# real-teacher runs (tests/gpu/paper, recall, halflife, runs/smollm2.sh) and the decode bench read:
# a call carries 64 MiB at most, and the tree with .carry and .peers (FLA) came to more.
set -eu
case "${1:-}" in
'') lean=0 ;;
--lean) lean=1 ;;
*) echo "tests/gpu/carry.sh: unknown argument '$1' (--lean or nothing)" >&2; exit 2 ;;
esac
[ -f Makefile ] && [ -d engine ] || { echo "tests/gpu/carry.sh: run it from the repository root" >&2; exit 2; }
sh ../shared/tools/gpu-carry.sh
dest=$(pwd)/.carry
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq libssl-dev libutf8proc-dev libutf8proc2 2>/dev/null) ||
    { echo "tests/gpu/carry.sh: apt-get download failed (libssl-dev libutf8proc-dev libutf8proc2)" >&2; exit 1; }
for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/x"; done
cp -r "$tmp"/x/usr/include/. "$dest/sysroot/include/"
cp -P "$tmp"/x/usr/lib/x86_64-linux-gnu/libutf8proc.so* "$dest/sysroot/lib/"
# libcrypto: link to the GPU machine's own libcrypto.so.3 at run time (env.sh)
cat >> "$dest/env.sh" <<'ENV'
[ -e "$_s/lib/libcrypto.so" ] || ln -sf "$_sys/libcrypto.so.3" "$_s/lib/libcrypto.so"
ENV
if [ $lean = 1 ] && [ -e "$dest/shared/data/gutenberg-60.txt" ]; then
    chmod u+w "$dest/shared/data" && rm -f "$dest/shared/data/gutenberg-60.txt"
    echo ".carry: --lean: shared/data/gutenberg-60.txt left out"
fi
du -sh "$dest" | sed 's/^/.carry: /'
