#!/bin/sh
# The include graph between modules has no cycle and keeps its layers
# (engine < src/jobs < src/workbench < ui): scripts/include-graph.py on this
# tree passes, and on a small tree with a workbench <-> ui cycle it fails.
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
ROOT=${GRAFT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(python3 "$ROOT/scripts/include-graph.py" "$ROOT") || { echo "$out"; echo "FAIL: the include graph has a cycle or a layering break"; exit 1; }
echo "$out"
echo "$out" | grep -q "^ui -> src/workbench" || { echo "FAIL: the graph lacks ui -> src/workbench (is the scan wrong?)"; exit 1; }
# the check itself can fail: a tree where the workbench includes a ui header
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/workbench" "$T/ui" "$T/engine/core"
printf '#include "view.h"\n' > "$T/src/workbench/state.h"
printf '#include "workbench/state.h"\n' > "$T/ui/view.h"
printf '/* nothing */\n' > "$T/engine/core/x.h"
if python3 "$ROOT/scripts/include-graph.py" "$T" > "$T/out.txt"; then
    cat "$T/out.txt"; echo "FAIL: a workbench <-> ui cycle was not reported"; exit 1
fi
grep -q "cycle: src/workbench -> ui -> src/workbench" "$T/out.txt" || { cat "$T/out.txt"; echo "FAIL: cycle not named"; exit 1; }
echo "include_graph: no cycle here; a planted cycle is caught"
