#!/bin/sh
# The initializations are one table (engine/student/student.c, student_inits):
# `graft convert --help` prints its names, and README.md and man/graft.1 must
# list the same names in the same order; a doc that drops or reorders one
# fails (checked on a copy with one name removed).
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
"$G" convert --help >"$TMP/help" 2>&1 || true
# the --init line: "--init ...  random | zero-gate | ..."
names=$(grep -- '^ *--init ' "$TMP/help" | head -n 1 | sed 's/.*  //' | tr -d ' ' | tr '|' ' ')
[ "$(echo $names | wc -w)" -eq 6 ] || fail "convert --help's --init line does not name six inits: $(grep -- '^ *--init ' "$TMP/help")"
# in_order FILE TEXT: the names appear in TEXT (one paragraph of FILE) in table order
in_order() {
    python3 - "$1" "$2" $names <<'PY' || return 1
import re, sys
text, names = open(sys.argv[1]).read(), sys.argv[3:]
text = text.replace("\\-", "-")
at = text.find(sys.argv[2])
if at < 0:
    sys.exit(f"{sys.argv[1]}: no '{sys.argv[2]}'")
para = text[at:at + 400]
pos = [m.start() if (m := re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", para)) else -1 for n in names]
if -1 in pos or pos != sorted(pos):
    sys.exit(f"{sys.argv[1]}: the inits after '{sys.argv[2]}' are not {', '.join(names)} in that order")
PY
}
in_order README.md 'Initializations (`--init`)' || fail "README.md differs from the init table"
in_order man/graft.1 'Inits:' || fail "man/graft.1 differs from the init table"
# the check can fail: README without align-only
sed 's/`align-only` (Stage 2 from random), //' README.md >"$TMP/README.md"
cmp -s README.md "$TMP/README.md" && fail "the negative check changed nothing in README.md"
in_order "$TMP/README.md" 'Initializations (`--init`)' 2>/dev/null && fail "a README without align-only passed"
echo "init_docs: README.md and man/graft.1 list the init table ($(echo $names | tr ' ' ','))"
