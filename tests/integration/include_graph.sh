#!/bin/sh
# The include graph between modules has no cycle and keeps its layers
# (engine -> src/method -> src/cli | src/workbench -> ui; engine's folders are
# modules of their own and form an acyclic graph; no product file includes
# tests/): scripts/include-graph.py on this tree passes, and it fails on small
# trees with a workbench <-> ui cycle, an engine/backend <-> engine/model
# cycle, an engine header that includes a test header, and src/method
# including src/workbench.
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
# caught TREE LINE WHAT: the script fails on TREE and prints LINE
caught() {
    if python3 "$ROOT/scripts/include-graph.py" "$1" > "$1.out"; then
        cat "$1.out"; echo "FAIL: $3 was not reported"; exit 1
    fi
    grep -q "$2" "$1.out" || { cat "$1.out"; echo "FAIL: $3 not named"; exit 1; }
}
caught "$T" "cycle: src/workbench -> ui -> src/workbench" "a workbench <-> ui cycle"
echo "$out" | grep -q "^engine/model -> engine/backend" || { echo "FAIL: the graph lacks engine/model -> engine/backend (engine's folders not split?)"; exit 1; }
# a cycle between two engine folders
E=$T/e
mkdir -p "$E/engine/backend" "$E/engine/model"
printf '#include "model/config.h"\n' > "$E/engine/backend/backend.h"
printf '#include "backend/backend.h"\n' > "$E/engine/model/config.h"
caught "$E" "cycle: engine/backend -> engine/model -> engine/backend" "an engine/backend <-> engine/model cycle"
# a product file (a .cuh, which the scan reads too) that includes a test header
P=$T/p
mkdir -p "$P/engine/backend/cuda" "$P/tests/gpu/emu"
printf '#include "tests/gpu/emu/emu.h"\n' > "$P/engine/backend/cuda/dev.cuh"
printf '/* test */\n' > "$P/tests/gpu/emu/emu.h"
caught "$P" "engine/backend must not include tests" "engine including tests/"
# the method layer is below both faces: method -> workbench is a layering break
M=$T/m
mkdir -p "$M/src/method" "$M/src/workbench" "$M/engine/core"
printf '#include "workbench/state.h"\n' > "$M/src/method/run.h"
printf '/* nothing */\n' > "$M/src/workbench/state.h"
printf '/* nothing */\n' > "$M/engine/core/x.h"
caught "$M" "layering: src/method must not include src/workbench" "src/method including src/workbench"
echo "$out" | grep -q "^src/workbench -> src/method" || { echo "FAIL: the graph lacks src/workbench -> src/method"; exit 1; }
echo "include_graph: no cycle here; planted cycles (ui, engine folders), a tests/ include and a method -> workbench include are caught"
