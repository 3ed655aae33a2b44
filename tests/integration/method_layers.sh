#!/bin/sh
# The faces reach the method only through src/method/: no file in
# src/cmd_*.c or src/workbench/ calls the engine's calibrate, align, train,
# select or student-builder functions (scripts/method-calls.py), and the check
# itself fails on a tree where a workbench file calls select_layers.
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
ROOT=${GRAFT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(python3 "$ROOT/scripts/method-calls.py" "$ROOT") || { echo "$out"; echo "FAIL: direct calls of the method's engine steps"; exit 1; }
echo "$out"
echo "$out" | grep -qE "^[0-9]+ engine functions" || { echo "FAIL: no engine functions found (is the scan wrong?)"; exit 1; }
n=$(echo "$out" | grep -oE "^[0-9]+")
[ "$n" -ge 10 ] || { echo "FAIL: only $n engine functions found"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/engine/select" "$T/engine/calibrate" "$T/engine/align" "$T/engine/train" "$T/engine/convert" "$T/src/workbench"
printf 'int select_layers(void *sel, int k);\n' > "$T/engine/select/select.h"
printf 'int student_build_layers(void *s);\n' > "$T/engine/convert/build.h"
printf 'int f(void) { return select_layers(0, 1); }\n' > "$T/src/workbench/jobs.c"
printf 'int g(void);\n' > "$T/src/cmd_x.c"
if python3 "$ROOT/scripts/method-calls.py" "$T" > "$T/out.txt"; then
    cat "$T/out.txt"; echo "FAIL: a planted call was not reported"; exit 1
fi
grep -q "src/workbench/jobs.c:1: select_layers" "$T/out.txt" || { cat "$T/out.txt"; echo "FAIL: the planted call is not named"; exit 1; }
echo "method_layers: no direct call from the faces; a planted one is caught"
