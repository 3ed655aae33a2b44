#!/bin/sh
# Installs the Debian packages graft needs to build, test and run.
#   sh scripts/install-deps.sh        build, make test, make run (what `make test` installs)
#   sh scripts/install-deps.sh fuzz   also clang, libclang-rt-14-dev (libFuzzer, sanitizer
#                                     runtimes) and libomp-dev (clang's OpenMP): `make fuzz`
#                                     (~340 MB installed that a first `make test` does not need)
# Idempotent: does nothing when everything is present. Uses sudo when not root.
set -eu
# python3-numpy runs the synthetic GGUF writer (tests/bench/synthetic_gguf.py,
# checked by tests/integration/gguf_synthetic.sh); the rest builds and tests graft.
pkgs="build-essential pkg-config libncurses-dev libcurl4-openssl-dev libcjson-dev
      libopenblas-dev libopenblas-openmp-dev libpcre2-dev libcmocka-dev libssl-dev libutf8proc-dev
      libopenmpi-dev openmpi-bin tmux python3 python3-venv python3-numpy
      ca-certificates"
case ${1:-} in
"") ;;
fuzz) pkgs="$pkgs clang libclang-rt-14-dev libomp-dev" ;;
*) echo "usage: sh scripts/install-deps.sh [fuzz]" >&2; exit 2 ;;
esac
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
