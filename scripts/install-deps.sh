#!/bin/sh
# Installs the Debian packages graft needs to build, test and run.
# Idempotent: does nothing when everything is present. Uses sudo when not root.
set -eu
# clang, libclang-rt-14-dev (libFuzzer, sanitizer runtimes) and libomp-dev
# (clang's OpenMP) build `make fuzz`; python3-numpy runs the synthetic GGUF writer
# (tests/bench/synthetic_gguf.py, checked by tests/integration/gguf_synthetic.sh);
# the rest builds and tests graft.
pkgs="build-essential pkg-config libncurses-dev libcurl4-openssl-dev libcjson-dev
      libopenblas-dev libopenblas-openmp-dev libpcre2-dev libcmocka-dev libssl-dev libutf8proc-dev
      libopenmpi-dev openmpi-bin clang libclang-rt-14-dev libomp-dev tmux python3 python3-venv python3-numpy
      ca-certificates"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "graft: installing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >&2
