#!/usr/bin/env python3
"""The include graph between graft's modules, and whether it has a cycle.

Modules: each folder of engine (engine/core, engine/backend, ...: the
numerical library), src/jobs, src/hub, src/method (the method layer:
requests, their validation, runners and artifacts), src/cli, src/workbench,
src (the commands: main.c, commands.c, cmd_*.c) and ui. Each quoted #include
of a .c, .h, .cu or .cuh file is resolved as the compiler does (the file's
own folder, then -I. -Iengine -Isrc -Iui, in the Makefile's order). Prints
one line per edge ("ui -> src/workbench  (12 includes)"), then the cycles
found, if any. Exits 1 on a cycle between modules (engine's folders
included: they form a directed acyclic graph, docs/architecture.md draws
it), or when a layer includes one above it (engine -> method -> cli |
workbench -> ui): engine includes nothing of src or ui; src/jobs and src/hub
nothing of src/method, src/cli, src/workbench, the commands or ui;
src/method nothing of src/cli, src/workbench, the commands or ui; src/cli
and src/workbench nothing of each other or ui; src/workbench nothing of the
commands; and no product file (engine, src, ui) includes anything under
tests/.

Usage: python3 scripts/include-graph.py [ROOT]     (ROOT: the repository, default .)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
SEARCH = [".", "engine", "src", "ui"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(rel):
    parts = rel.split(os.sep)
    if parts[0] == "engine":
        return "engine/" + parts[1] if len(parts) > 2 else "engine"
    if parts[0] == "tests":
        return "tests"
    if parts[0] == "ui":
        return "ui"
    if parts[0] == "src":
        return "src/" + parts[1] if len(parts) > 2 else "src"
    return None


def resolve(src_rel, name):
    here = os.path.dirname(os.path.join(ROOT, src_rel))
    for d in [here] + [os.path.join(ROOT, s) for s in SEARCH]:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return os.path.relpath(p, ROOT)
    return None


edges = {}  # (a, b) -> [(file, include)]
for top in ("engine", "src", "ui"):
    for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
        for f in files:
            if not f.endswith((".c", ".h", ".cu", ".cuh")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
            a = module(rel)
            text = open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace").read()
            for name in INCLUDE.findall(text):
                target = resolve(rel, name)
                b = module(target) if target else None
                if b and b != a:
                    edges.setdefault((a, b), []).append((rel, name))

graph = {}
for (a, b), uses in sorted(edges.items()):
    graph.setdefault(a, set()).add(b)
    print(f"{a} -> {b}  ({len(uses)} include{'s' if len(uses) != 1 else ''})")

# cycles: depth-first search over the module graph
cycles, state = [], {}


def visit(n, path):
    state[n] = 1
    for m in sorted(graph.get(n, ())):
        if state.get(m) == 1:
            cycles.append(path[path.index(m):] + [m])
        elif not state.get(m):
            visit(m, path + [m])
    state[n] = 2


for n in sorted(graph):
    if not state.get(n):
        visit(n, [n])

FACES = ("src/method", "src/cli", "src/workbench", "src", "ui", "tests")
forbidden = {
    "engine": ("src", "ui", "tests"), "src": ("tests",), "ui": ("tests",),
    "src/jobs": FACES,
    "src/hub": FACES,
    "src/method": ("src/cli", "src/workbench", "src", "ui", "tests"),
    "src/cli": ("src/workbench", "src", "ui", "tests"),
    "src/workbench": ("src/cli", "src", "ui", "tests"),
}
bad = []
for (a, b), uses in sorted(edges.items()):
    layer = "engine" if a.startswith("engine/") else a
    for f in forbidden.get(layer, ()):
        if b == f or (f != "src" and b.startswith(f + "/")):
            bad.append(f"{a} must not include {b}: " + ", ".join(f"{u} ({n})" for u, n in uses[:3]))

for c in cycles:
    print("cycle: " + " -> ".join(c))
    for a, b in zip(c, c[1:]):
        print(f"  {a} -> {b}: " + ", ".join(f"{u} ({n})" for u, n in edges[(a, b)][:3]))
for b in bad:
    print("layering: " + b)
if cycles or bad:
    sys.exit(1)
print("no cycle between modules")
