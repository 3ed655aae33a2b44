#!/bin/sh
# Every key the workbench names (each screen's key bar and the prompt box: the key_hint
# tables in ui/screens/*.c, and the help's global keys in ui/ui.c) is in the KEYS section
# of man/graft.1, under the screen that uses it (global keys anywhere in the section).
set -u
ROOT=${GRAFT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v man >/dev/null 2>&1 || { echo "man is not installed"; exit 77; }
MANWIDTH=400 LANG=C.UTF-8 LC_ALL=C.UTF-8 man -l "$ROOT/man/graft.1" 2>/dev/null >/tmp/graft_man_$$.txt || { echo "man could not render man/graft.1"; exit 77; }
python3 - "$ROOT" /tmp/graft_man_$$.txt <<'PY'
import re, sys, pathlib
root, rendered = pathlib.Path(sys.argv[1]), open(sys.argv[2], encoding="utf-8").read()
rm = lambda s: re.sub(r"\x08.", "", s)  # overstrike from man's formatting
text = rm(rendered)
keys_sec = text[text.index("KEYS"):text.index("ENVIRONMENT")]
# the man page's paragraph per screen: "Results (7)" ... up to the next "Name (N)" heading
paras = {}
heads = [(m.start(), m.group(1)) for m in re.finditer(r"^ {7}([A-Z]\w+) \(\d\)", keys_sec, re.M)]
for i, (at, name) in enumerate(heads):
    end = heads[i + 1][0] if i + 1 < len(heads) else len(keys_sec)
    paras[name] = keys_sec[at:end]
glob = keys_sec[:heads[0][0]]  # the keys of every screen and of every text entry
words = {"\u2191": "Up", "\u2193": "Down", "\u2190": "Left", "\u2192": "Right"}
screen_of = {"teacher": "Teacher", "plan": "Plan", "stats": "Stats", "calibrate": "Calibrate", "align": "Align",
             "recover": "Recover", "results": "Results", "prompt_box": "Results", "recall_box": "Results", "log": "Log", "settings": "Settings"}
def named(t, hay):  # t as a key of its own: not a letter inside a word ("R", not the R of "Recover")
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(t) + r"(?![A-Za-z0-9])", hay) is not None
def tokens(key):
    key = key.encode().decode("unicode_escape") if "\\u" in key else key
    key = key.replace("PgUp/Dn", "PgUp PgDn").replace("Home/End", "Home End")
    out = []
    for t in re.split(r"[ /]+", key):
        if not t: continue
        if t == "\u23ce": t = "Enter"
        if t == "space": t = "Space"
        if len(t) > 1 and all(ch in "\u2190\u2191\u2192\u2193" for ch in t): out += list(t); continue
        out.append(t)
    return out
missing = []
for f in sorted((root / "ui/screens").glob("*.c")):
    src = f.read_text()
    for table in re.findall(r"static const key_hint \w+\[\] = \{(.*?)\n\};", src, re.S):
        for key in re.findall(r'\{"((?:[^"\\]|\\.)*)",', table):
            key = key.replace('\\\\', '\\')
            para = paras.get(screen_of.get(f.stem, ""), keys_sec) + glob
            for t in tokens(key):
                hay = para.lower() if t.lower() == "space" else para
                if not named(t.lower() if t.lower() == "space" else t, hay) and not named(words.get(t, "\0"), hay):
                    missing.append(f"{f.name}: '{t}' (from '{key}') not under {screen_of.get(f.stem)}")
ui = (root / "ui/ui.c").read_text()
table = re.search(r"global_help\[\] = \{(.*?)\n\};", ui, re.S).group(1)
for line in re.findall(r'"([^"]*)"', table):
    keypart = line[:21].strip()
    if keypart == "mouse": keypart = "mouse"
    for t in re.split(r"[ ,/]+", keypart.replace("Shift-Tab", "Shift-Tab")):
        if t and not named(t, keys_sec):
            missing.append(f"ui.c global: '{t}' not in KEYS")
if missing:
    print("\n".join(missing)); sys.exit(1)
print(f"every key of {len(paras)} screens and the global help is in the man page")
PY
rc=$?
rm -f /tmp/graft_man_$$.txt
[ $rc -eq 0 ] && echo "tui_keys_man: all checks passed"
exit $rc
