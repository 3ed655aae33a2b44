#!/bin/sh
# The descriptor tables in README.md and docs/ (initializations, architectures,
# tensor names, the GDN layout) are printed from engine/'s tables by
# tests/tools/doc_tables, never typed: scripts/docs-tables.py finds every
# `<!-- table: NAME -->` block equal to what the tool prints now, and fails on a
# copy with one cell changed or a block removed.
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
TOOL=$(dirname "$GRAFT_BIN")/tests/tools/doc_tables
[ -x "$TOOL" ] || fail "$TOOL is not built"
python3 scripts/docs-tables.py --tool "$TOOL" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
# the tool prints the tables the code has: six inits, three architectures
[ "$("$TOOL" inits | grep -c '^| `')" -eq 6 ] || fail "doc_tables inits does not print six rows"
"$TOOL" archs | grep -q '| `qwen3` | `Qwen3ForCausalLM` |' || fail "doc_tables archs lacks qwen3"
# the one-line lists of architectures (README's first paragraph, the man page's
# DESCRIPTION) name every family of the table
"$TOOL" archs | awk -F' [|] ' 'NR > 2 { sub(/^[|] /, "", $1); print $1 }' >"$TMP/families"
[ "$(wc -l <"$TMP/families")" -ge 3 ] || fail "doc_tables archs printed no families"
head -n 6 README.md | tr '\n' ' ' >"$TMP/readme_head"
sed -n '/^\.SH DESCRIPTION/,/^\.SH /p' man/graft.1 | tr '\n' ' ' >"$TMP/man_desc"
while read -r fam; do
    grep -qF "$fam" "$TMP/readme_head" || fail "README.md's first paragraph does not name $fam (model_archs)"
    grep -qF "$fam" "$TMP/man_desc" || fail "man/graft.1's DESCRIPTION does not name $fam (model_archs)"
done <"$TMP/families"
# a typed cell fails: align-only's Stage 2 "yes" changed to "no" in a copy
sed 's/^| `align-only` | none | yes |/| `align-only` | none | no |/' docs/method.md >"$TMP/method.md"
cmp -s docs/method.md "$TMP/method.md" && fail "the negative check changed nothing in docs/method.md"
python3 scripts/docs-tables.py --tool "$TOOL" "$TMP/method.md" 2>"$TMP/err2" && fail "a typed cell in the inits table passed"
grep -q "the inits table differs" "$TMP/err2" || fail "check message: $(cat "$TMP/err2")"
# a GDN tensor row dropped from the student format fails too
grep -v '^| `A_log` |' docs/student-format.md >"$TMP/student-format.md"
python3 scripts/docs-tables.py --tool "$TOOL" "$TMP/student-format.md" 2>/dev/null && fail "a dropped GDN row passed"
# --write fills an empty block with the table
printf '<!-- table: archs -->\n<!-- /table -->\n' >"$TMP/w.md"
python3 scripts/docs-tables.py --tool "$TOOL" --write "$TMP/w.md" || fail "--write failed"
grep -q '`LlamaForCausalLM`' "$TMP/w.md" || fail "--write did not fill the archs block"
python3 scripts/docs-tables.py --tool "$TOOL" "$TMP/w.md" || fail "a block --write filled does not check"
echo "docs_tables: README.md and docs/ hold the inits, archs, tensors and gdn tables as the code prints them"
