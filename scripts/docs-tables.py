#!/usr/bin/env python3
"""The descriptor tables in the docs are printed from the code, never typed.

Every `<!-- table: NAME -->` ... `<!-- /table -->` block of README.md and
docs/*.md must hold exactly what `doc_tables NAME` prints (tests/tools/
doc_tables.c reads the initialization, architecture, tensor-name and GDN
layout tables of engine/), and each table must appear in the docs at least
once. --write fills the blocks instead of checking them.

usage: docs-tables.py [--write] [--tool PATH] [FILE...]
"""
import glob
import os
import re
import subprocess
import sys

TABLES = ("inits", "archs", "tensors", "gdn")
BLOCK = re.compile(r"(<!-- table: ([a-z]+) -->\n)(.*?)(<!-- /table -->)", re.S)


def main(argv):
    write = "--write" in argv
    argv = [a for a in argv if a != "--write"]
    tool = "build/tests/tools/doc_tables"
    if "--tool" in argv:
        i = argv.index("--tool")
        tool = argv[i + 1]
        del argv[i:i + 2]
    files = argv or ["README.md"] + sorted(glob.glob("docs/*.md"))
    if not os.access(tool, os.X_OK):
        sys.exit(f"docs-tables: {tool} is not built (make {tool})")
    printed = {t: subprocess.run([tool, t], check=True, capture_output=True, text=True).stdout for t in TABLES}
    seen, bad = set(), []
    for path in files:
        text = open(path).read()

        def fill(m):
            name = m.group(2)
            if name not in printed:
                bad.append(f"{path}: unknown table '{name}' (known: {', '.join(TABLES)})")
                return m.group(0)
            seen.add(name)
            if m.group(3) != printed[name] and not write:
                bad.append(f"{path}: the {name} table differs from what {tool} {name} prints "
                           f"(scripts/docs-tables.py --write fills it)")
            return m.group(1) + printed[name] + m.group(4)

        new = BLOCK.sub(fill, text)
        if write and new != text:
            with open(path, "w") as f:
                f.write(new)
    if not argv:
        bad += [f"no '<!-- table: {t} -->' block in README.md or docs/*.md" for t in TABLES if t not in seen]
    if bad:
        sys.exit("\n".join(bad))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
