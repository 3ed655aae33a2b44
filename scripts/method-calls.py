#!/usr/bin/env python3
"""Which files of the faces call the method's engine steps directly.

The layers (docs/architecture.md): the command line (src/cmd_*.c) and the
workbench (src/workbench/) reach the engine's calibrate, align, train and
select functions (and the student builder that runs Stage 1 and Stage 2)
only through src/method/. This lists every function declared in those
engine headers, finds calls to them in src/cmd_*.c and src/workbench/*.c,
prints each, and exits 1 when there is one.

Usage: python3 scripts/method-calls.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
HEADERS = ["engine/calibrate", "engine/align", "engine/train", "engine/select", "engine/convert/build.h"]
VOCABULARY = re.compile(r"(_name|_parse|_free|_index|_label|^kv_format_bytes|^kv_dtype_bytes)$")
DECL = re.compile(r"^[A-Za-z_][\w\s\*]*?\b([a-z_][a-z0-9_]*)\s*\(", re.M)

names = set()
for h in HEADERS:
    p = os.path.join(ROOT, h)
    files = [p] if p.endswith(".h") else [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".h")]
    for f in files:
        text = open(f, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in DECL.finditer(text):
            line = text[m.start():text.find("\n", m.start())]
            if line.lstrip().startswith(("typedef", "#", "return")) or "(*" in line:
                continue
            if not VOCABULARY.search(m.group(1)):
                names.add(m.group(1))

faces = [os.path.join("src", f) for f in sorted(os.listdir(os.path.join(ROOT, "src"))) if re.match(r"cmd_.*\.c$", f)]
faces += [os.path.join("src/workbench", f) for f in sorted(os.listdir(os.path.join(ROOT, "src/workbench"))) if f.endswith(".c")]
call = re.compile(r"\b(" + "|".join(sorted(names)) + r")\s*\(") if names else None
bad = 0
for f in faces:
    text = open(os.path.join(ROOT, f), encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for n, line in enumerate(text.split("\n"), 1):
        for m in call.finditer(line) if call else []:
            print(f"{f}:{n}: {m.group(1)}")
            bad += 1
print(f"{len(names)} engine functions of calibrate, align, train, select and the student builder; "
      f"{bad} direct call{'s' if bad != 1 else ''} from src/cmd_*.c and src/workbench/")
sys.exit(1 if bad else 0)
