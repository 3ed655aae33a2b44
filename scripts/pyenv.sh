#!/bin/sh
# Creates (once) the Python environment the Hugging Face export checks run in
# and prints its python. Test-only: graft never runs Python.
#   sh scripts/pyenv.sh tokenizers      tokenizers only (a few MB)
#   sh scripts/pyenv.sh transformers    + torch, transformers, safetensors (~3 GB download)
# The environment lives in the user's cache, one per requirements file
# ($XDG_CACHE_HOME/graft/pyenv-<hash>), so every build folder and worktree of
# a machine shares one 5.6 GB install; GRAFT_PYENV=DIR puts it elsewhere, and
# GRAFT_PYTHON=PATH names an existing python that has the packages (the GPU
# machine's). GRAFT_NO_PYENV=1: install nothing (the checks then skip).
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
if [ "${GRAFT_NO_PYENV:-}" = 1 ]; then
    echo "pyenv.sh: GRAFT_NO_PYENV=1" >&2
    exit 1
fi
hash=$(cksum <"$req" | cut -d' ' -f1)
env=${GRAFT_PYENV:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/pyenv-$hash}
case $tier in
tokenizers) pkgs=$(grep -E '^tokenizers==' "$req") ;;
transformers) pkgs=$(grep -vE '^\s*(#|$)' "$req") ;;
*) echo "pyenv.sh: unknown tier $tier (tokenizers, transformers)" >&2; exit 2 ;;
esac
want=$(printf '%s\n' "$pkgs" | tr '\n' ' ')
ready() { # the tier's stamp (or the larger tier's, which includes it) matches
    [ -x "$env/bin/python" ] || return 1
    [ -f "$env/.graft-$tier" ] && [ "$(cat "$env/.graft-$tier")" = "$want" ] && return 0
    [ "$tier" = tokenizers ] && [ -f "$env/.graft-transformers" ] &&
        [ "$(cat "$env/.graft-transformers")" = "$(grep -vE '^\s*(#|$)' "$req" | tr '\n' ' ')" ]
}
if ready; then
    echo "$env/bin/python"
    exit 0
fi
mkdir -p "$(dirname "$env")"
# one installer at a time (parallel test runs, several worktrees)
if command -v flock >/dev/null 2>&1; then
    exec 9>"$env.lock"
    flock 9
    if ready; then
        echo "$env/bin/python"
        exit 0
    fi
fi
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
printf '%s' "$want" >"$env/.graft-$tier"
echo "$env/bin/python"
