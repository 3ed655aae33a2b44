#!/usr/bin/env python3
"""The recall tables of a doc are printed, never typed: every block between
`<!-- printed by: python3 scripts/recall-X.py ARGS -->` and `<!-- /printed -->`
must equal what that command prints now (run from the repository root), and a
PNG it draws must hold the same pixels as the committed one.

  recall-docs.py DOC.md [...]            check: 0 when every block and PNG matches, else 1
  recall-docs.py DOC.md [...] --write    run the commands, fill the blocks, draw the PNGs

Only scripts/recall-*.py commands are run (other printed-by blocks are left
to their own checks). The PNGs are compared by their pixels (the IDAT data
inflated), not their bytes, so another zlib's compression does not matter.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import zlib

BLOCK = re.compile(r"(<!-- printed by: (python3 scripts/recall-[a-z-]+\.py [^\n]*?) -->\n)(.*?)(<!-- /printed -->)", re.S)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    i, head, idat = 8, b"", b""
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            head = body
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    return head, zlib.decompress(idat)


def run(cmd, write, tmp):
    """stdout of cmd; on a check its PNG goes to tmp and is compared with the committed one."""
    args = shlex.split(cmd)
    png = [a for a in args if a.endswith(".png")]
    if png and not write:
        args[args.index(png[0])] = tmp
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"`{cmd}` failed: {out.stderr.strip()}")
    same = True
    if png and not write:
        committed = os.path.join(ROOT, png[0])
        same = os.path.exists(committed) and pixels(committed) == pixels(tmp)
    return out.stdout, (png[0] if png else None), same


def main():
    docs = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    if not docs:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    with tempfile.TemporaryDirectory() as t:
        for doc in docs:
            text = open(doc).read()
            found = 0

            def regen(m):
                nonlocal bad, found
                found += 1
                block, png, same = run(m.group(2), write, os.path.join(t, "check.png"))
                if not same:
                    print(f"{doc}: {png} differs from what `{m.group(2)}` draws", file=sys.stderr)
                    bad = 1
                if block != m.group(3) and not write:
                    print(f"{doc}: the block of `{m.group(2)}` differs from what it prints now", file=sys.stderr)
                    bad = 1
                return m.group(1) + block + m.group(4)

            new = BLOCK.sub(regen, text)
            if not found:
                print(f"{doc}: no `printed by: python3 scripts/recall-*.py` block", file=sys.stderr)
                bad = 1
            if write and new != text:
                open(doc, "w").write(new)
    return bad


if __name__ == "__main__":
    sys.exit(main())
