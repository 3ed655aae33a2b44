#!/bin/sh
# The prompt box on Results under tmux, on the real stories260K teacher:
# convert it in the workbench (Enter on Results writes the student folder),
# open the box on that row (g), type a prompt with a quote in it, generate
# greedily, and check the text in the box against `graft generate STUDENT
# --prompt P -n N` on the same folder (the same call, so the same text); then
# sampled (against --temp 0.8 --seed 1), the teacher (^T) against `graft
# generate MODEL`, the KV-cache line against --json, and the Log's headless
# command run as it is.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
W=100 H=30
PROMPT="Tom's dog ran"

# the box's text: the rows between "last run:" and the line that says how it went, inside the frame
box_text() {
    tui_screen g | python3 -c '
import re, sys
rows = sys.stdin.read().split("\n")
top = [i for i, r in enumerate(rows) if "last run:" in r][0]
end = [i for i, r in enumerate(rows) if i > top and re.match(r"│ ([0-9]+ of [0-9]+ tokens|generating|cancelled|failed|no tokens)", r)][0]
lines = [r[2:int(sys.argv[1]) - 2].rstrip() for r in rows[top + 1:end]]
while lines and not lines[-1]: lines.pop()
print("\n".join(lines))' "$W"
}

# graft generate's text output, wrapped as the box wraps it (prompt_box.c: widgets/wrap.h)
cli_wrapped() {
    "$@" >"$TMP/cli.out" 2>"$TMP/cli.err" || { cat "$TMP/cli.err"; fail "graft generate $*"; }
    python3 -c '
import sys
out = open(sys.argv[1], encoding="utf-8").read()
text = out[:out.rindex("\n[kv cache")]
w = int(sys.argv[2]) - 4
lines = []
for p in text.split("\n"):
    while len(p) > w:
        if p[w] == " ": lines.append(p[:w]); p = p[w + 1:]; continue
        j = p.rfind(" ", 0, w)
        if j > 0: lines.append(p[:j]); p = p[j + 1:]
        else: lines.append(p[:w]); p = p[w:]
    lines.append(p)
lines = [l.rstrip() for l in lines]
while lines and not lines[-1]: lines.pop()
print("\n".join(lines))' "$TMP/cli.out" "$W"
}

# wait_done LAST-RUN: the run the box names has ended (its line says how many tokens, not "generating"),
# on two captures alike 0.1 s apart: tmux can capture the pane while the workbench is still writing a
# frame, and one such capture had the new run's title and cleared rows over the last run's token line
wait_done() {
    i=0 prev=
    while [ $i -lt 300 ]; do
        scr=$(tui_screen g) cur=
        if printf '%s\n' "$scr" | grep -qF "last run: $1" && printf '%s\n' "$scr" | grep -qE '│ [0-9]+ of [0-9]+ tokens in'; then
            cur=$scr
        fi
        [ -n "$cur" ] && [ "$cur" = "$prev" ] && return 0
        prev=$cur
        sleep 0.1
        i=$((i + 1))
    done
    printf '%s\n' "$scr"
    fail "the run '$1' did not end"
}

same_text() { # label, box text, cli text
    if [ "$2" != "$3" ]; then
        printf 'box:\n%s\ngraft generate:\n%s\n' "$2" "$3"
        fail "$1: the box's text differs from graft generate's"
    fi
    echo "$1: the box shows graft generate's text ($(printf '%s' "$3" | wc -c) bytes)"
}

tui_settings '{"stage2_steps": 10, "eval_windows": 8}'
tui_start g $W $H TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait g "5 layers" 200 || fail "teacher did not load"
tui_keys g 8
i=0
while [ $i -lt 300 ] && ! tui_screen g | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done

# convert: Enter on Results builds, evaluates and saves the plan's student
tui_keys g 7
tui_wait g "g prompt box" || fail "Results does not name g in its key bar"
tui_keys g Enter
tui_wait g "hl mean" 900 || fail "no results row"
dir=$(ls -d "$XDG_DATA_HOME"/graft/students/*uniform-50* 2>/dev/null | head -n 1)
[ -n "$dir" ] && [ -e "$dir/config.json" ] || fail "no student folder under $XDG_DATA_HOME/graft/students"

# the box on that row: a prompt with a quote, greedy
tui_keys g g
tui_wait g "prompt box: student uniform 50% t-calib" || fail "the box did not open on the row's student"
tui_wait g "│ folder " || fail "the box does not name the folder"
tui_screen g | grep -F "│ folder " | grep -qF "$(basename "$dir")" || fail "the box names another folder"
tui_wait g "Tab greedy/sampled" || fail "the key bar does not show the box's keys"
tui_keys g -l "$PROMPT"
tui_keys g Down       # 64 -> 32 tokens
tui_wait g "greedy · 32 tokens · seed 1" || fail "Down did not halve the tokens"
tui_keys g Up Up Down # 64 -> 128 -> 64
tui_wait g "greedy · 64 tokens · seed 1" || fail "Up did not double the tokens"
tui_keys g Enter
wait_done "student uniform 50% t-calib · greedy · 64 tokens · seed 1"
got=$(box_text)
want=$(cli_wrapped "$GRAFT_BIN" generate "$dir" --prompt "$PROMPT" -n 64)
same_text "greedy, student" "$got" "$want"
case "$got" in "$PROMPT"*) ;; *) fail "the box's text does not start with the prompt";; esac

# the KV-cache line against --json: 3 of 5 layers keep attention
"$GRAFT_BIN" generate "$dir" --prompt "$PROMPT" -n 64 --json >"$TMP/gen.json" || fail "graft generate --json"
lines=$(tui_screen g | grep -F -e "KV cache per token:" -e "GDN state (fixed)")
python3 - "$TMP/gen.json" "$lines" <<'PY' || fail "the KV-cache lines differ from graft generate --json"
import json, sys
d = json.load(open(sys.argv[1])); shown = sys.argv[2]
def fmt(b):  # kv_format_bytes
    u = 0; units = ["B", "KB", "MB", "GB", "TB"]
    while b >= 1024 and u < 4: b /= 1024; u += 1
    if u == 0: return "%.0f B" % b
    return ("%.2f %s" if b < 10 else "%.1f %s" if b < 100 else "%.0f %s") % (b, units[u])
kv = d["kv_bytes_per_token"]
assert kv["student"] < kv["teacher"] and d["gdn_state_bytes"] > 0, d
ctx = 1 + d["prompt_tokens"] + d["generated_tokens"]  # BOS, the prompt, the continuation
want = ["KV cache per token: student %s vs teacher %s (3 of 5 layers attention)" % (fmt(kv["student"]), fmt(kv["teacher"])),
        "at %d tokens: student %s + %s GDN state (fixed), teacher %s" % (
            ctx, fmt(kv["student"] * ctx), fmt(d["gdn_state_bytes"]), fmt(kv["teacher"] * ctx))]
for w in want:
    assert w in shown, (w, shown)
    print(w)
PY

# the measured line: both models decoded again at the generation's context; the memory per sequence
# equals what graft bench-decode allocates at that context (speed is only looked at, never compared)
ctx=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(1 + j["prompt_tokens"] + j["generated_tokens"])' "$TMP/gen.json")
# (a prefill of ctx - 17 positions, a warm-up step and 16 timed ones: a cache of ctx positions)
"$GRAFT_BIN" bench-decode "$dir" --contexts $((ctx - 17)) --batch 1 --tokens 16 --json >"$TMP/bs.json" ||
    fail "bench-decode student"
"$GRAFT_BIN" bench-decode "$MODEL" --contexts $((ctx - 17)) --batch 1 --tokens 16 --json >"$TMP/bt.json" ||
    fail "bench-decode teacher"
line=$(tui_screen g | grep -F "measured at")
python3 - "$TMP/bs.json" "$TMP/bt.json" "$line" <<'PY' || fail "the measured line differs from graft bench-decode --json"
import json, re, sys
s, t, shown = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def fmt(b):  # kv_format_bytes
    u = 0; units = ["B", "KB", "MB", "GB", "TB"]
    while b >= 1024 and u < 4: b /= 1024; u += 1
    if u == 0: return "%.0f B" % b
    return ("%.2f %s" if b < 10 else "%.1f %s" if b < 100 else "%.0f %s") % (b, units[u])
ms, mt = s["points"][0]["memory_per_seq"]["total"], t["points"][0]["memory_per_seq"]["total"]
assert ms < mt, (ms, mt)
pat = r"measured at %d tokens: student [0-9]+ tok/s, %s; teacher [0-9]+ tok/s, %s" % (
    s["points"][0]["context"] + 17, re.escape(fmt(ms)), re.escape(fmt(mt)))
assert re.search(pat, shown), (pat, shown)
print(shown.strip(" │"))
PY

# sampled at 0.8, seed 1
tui_keys g Tab
tui_wait g "sampled at temperature 0.8 · 64 tokens · seed 1" || fail "Tab did not switch to sampled"
tui_keys g Enter
wait_done "student uniform 50% t-calib · sampled at temperature 0.8 · 64 tokens · seed 1"
same_text "sampled, student" "$(box_text)" "$(cli_wrapped "$GRAFT_BIN" generate "$dir" --prompt "$PROMPT" -n 64 --temp 0.8 --seed 1)"

# the teacher (^T), greedy again, 32 tokens
tui_keys g Tab C-t
tui_wait g "prompt box: teacher stories260K.bin" || fail "^T did not switch to the teacher"
tui_keys g Down
tui_wait g "greedy · 32 tokens · seed 1" || fail "greedy, 32 tokens"
tui_keys g Enter
wait_done "teacher stories260K.bin · greedy · 32 tokens · seed 1"
tui_wait g "KV cache per token: 1.25 KB (every layer attention)" || fail "the teacher's KV line"
same_text "greedy, teacher" "$(box_text)" "$(cli_wrapped "$GRAFT_BIN" generate "$MODEL" --prompt "$PROMPT" -n 32)"

# Esc closes the box; the Log has each run's headless command, which repeats it
tui_keys g C-t Escape
tui_wait g "g prompt box" || fail "Esc did not close the box"
tmux -L "$SOCK" resize-window -t g -x 400 -y $H
tui_keys g 8
q=$(printf '%s' "$PROMPT" | sed "s/'/'\\\\''/g")
tui_wait g "headless: graft generate '$dir' --prompt '$q'" || fail "the Log lacks the greedy command"
tui_wait g "headless: graft generate '$dir' --prompt '$q' --temp 0.8" || fail "the Log lacks the sampled command"
cmd=$(tui_screen g | grep -F "headless: graft generate '$dir'" | head -n 1 | sed 's/.*headless: graft //; s/ *$//')
eval "set -- $cmd"
"$GRAFT_BIN" "$@" --json >"$TMP/log.json" || fail "the Log's command does not run: $cmd"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["ids"] == b["ids"], (a["ids"], b["ids"])' "$TMP/log.json" "$TMP/gen.json" || fail "the Log's command makes other tokens"
echo "the Log's command repeats the greedy run"

tui_keys g q
tui_wait g "GRAFT_EXIT=0" 50 || fail "quit"
echo "tui_generate: all checks passed"
