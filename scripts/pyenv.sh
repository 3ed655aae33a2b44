#!/bin/sh
# Creates (once) the Python environment the Hugging Face export checks run in
# and prints its python. Test-only: graft never runs Python.
#   sh scripts/pyenv.sh tokenizers      tokenizers only (a few MB)
#   sh scripts/pyenv.sh transformers    + torch, transformers, safetensors (~3 GB download)
# The environment lives in build/pyenv (GRAFT_PYENV=DIR to use another; an
# existing python with the packages can be named with GRAFT_PYTHON=PATH).
# Versions: scripts/pyenv-requirements.txt. A stamp per tier records what was
# installed, so later runs cost nothing. Exit 1 with one line when pip fails.
set -eu
tier=${1:-tokenizers}
root=$(cd "$(dirname "$0")/.." && pwd)
req=$root/scripts/pyenv-requirements.txt
if [ -n "${GRAFT_PYTHON:-}" ]; then
    echo "$GRAFT_PYTHON"
    exit 0
fi
env=${GRAFT_PYENV:-$root/build/pyenv}
case $tier in
tokenizers) pkgs=$(grep -E '^tokenizers==' "$req") ;;
transformers) pkgs=$(grep -vE '^\s*(#|$)' "$req") ;;
*) echo "pyenv.sh: unknown tier $tier (tokenizers, transformers)" >&2; exit 2 ;;
esac
stamp=$env/.graft-$tier
want=$(printf '%s\n' "$pkgs" | tr '\n' ' ')
if [ -x "$env/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "$env/bin/python"
    exit 0
fi
mkdir -p "$(dirname "$env")"
log=$env.log
if [ ! -x "$env/bin/python" ]; then
    python3 -m venv "$env" >"$log" 2>&1 || { echo "pyenv.sh: python3 -m venv failed: $(tail -n 1 "$log")" >&2; exit 1; }
fi
echo "pyenv.sh: installing $want into $env (log: $log)" >&2
# shellcheck disable=SC2086
if ! "$env/bin/python" -m pip install --disable-pip-version-check -q $pkgs >>"$log" 2>&1; then
    echo "pyenv.sh: pip install failed: $(grep -v '^\s*$' "$log" | tail -n 1)" >&2
    exit 1
fi
printf '%s' "$want" >"$stamp"
echo "$env/bin/python"
