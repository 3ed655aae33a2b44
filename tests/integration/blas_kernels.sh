#!/bin/sh
# graft's OpenBLAS kernels (src/cli/load_env.c): on a CPU with AVX2 and FMA,
# `graft --version` names a kernel set with AVX, whatever OpenBLAS chose on its
# own (Debian 12's 0.3.21 falls back to SSE3 Prescott on CPUs newer than it,
# and graft then sets OPENBLAS_CORETYPE and re-executes); a set the user
# names stays; a forced set that did not take is a warning on stderr.
set -u
. "$(dirname "$0")/../lib.sh"
G=$GRAFT_BIN
flags=$(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { printf '%s\n' "$flags" | grep -qw "$1"; }

# a forced set that did not take (as if OpenBLAS ignored graft's choice): one warning line, exit 0
out=$(env OPENBLAS_CORETYPE=Prescott GRAFT_OPENBLAS_CHOSE=Prescott "$G" --version 2>"$TMP/err") ||
    fail "graft --version failed"
grep -q "warning: OpenBLAS runs its Prescott kernels (no AVX)" "$TMP/err" || { cat "$TMP/err"; fail "no warning when the forced set did not take"; }
[ "$(wc -l <"$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "more than one line of warning"; }
printf '%s\n' "$out" | head -n 1 | grep -q '^graft ' || fail "the version line moved: $out"

if ! has avx2 || ! has fma || [ "$(uname -m)" != x86_64 ]; then
    echo "this CPU has no AVX2 + FMA (or is not x86-64): graft leaves OpenBLAS's choice alone; the warning checked"
    exit 77
fi
line=$(env -u OPENBLAS_CORETYPE -u GRAFT_OPENBLAS_CHOSE "$G" --version | sed -n 2p)
echo "$line"
set -- $line
case "$3" in
    Prescott|Core2|Penryn|Dunnington|Nehalem|Atom|Opteron|Opteron_SSE3|Barcelona|Bobcat|Nano|Katmai|Coppermine|Northwood|Banias)
        fail "graft runs OpenBLAS's $3 kernels (no AVX) on a CPU with AVX2 and FMA" ;;
    "") fail "no kernel set named: $line" ;;
esac
# the user's choice stays, and the line says it was the user's
line=$(OPENBLAS_CORETYPE=Haswell "$G" --version | sed -n 2p)
[ "$line" = "OpenBLAS kernels: Haswell, OPENBLAS_CORETYPE=Haswell" ] || fail "OPENBLAS_CORETYPE=Haswell gave: $line"
echo "blas_kernels: AVX kernels on this AVX2 CPU, the user's set kept, a failed force warned"
