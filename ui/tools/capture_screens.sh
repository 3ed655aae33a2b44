#!/bin/sh
# Regenerates docs/workbench.md from live captures of the workbench under tmux
# on two real teachers: stories260K (the default) and SmolLM2-135M
# (scripts/fetch-teachers.sh smollm2). Every job shown ran for real; the
# captures are what the terminal showed, minus colours. Takes several minutes
# on a 2-core machine. Run from the repository root after make:
#     sh ui/tools/capture_screens.sh
set -eu
cd "$(dirname "$0")/../.."
export GRAFT_BIN=${GRAFT_BIN:-$PWD/build/graft}
SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TEXT=$SHARED/data/tinystories.txt
SMOL=${GRAFT_TEACHERS:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/teachers}/SmolLM2-135M-Instruct.Q4_1.gguf
[ -r "$STORIES" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED" >&2; exit 1; }
[ -r "$SMOL" ] || { echo "SmolLM2-135M not cached: sh scripts/fetch-teachers.sh smollm2" >&2; exit 1; }
set +e
. tests/integration/lib/tui.sh
tui_setup
export XDG_DATA_HOME="$TMP/data"
OUT=docs/workbench.md.new

fail() { echo "capture_screens: $*" >&2; exit 1; }
idle() { # NAME: wait until no job runs (the job line says "elapsed" while one does; bounded: 20 minutes)
    i=0
    while tui_screen "$1" | grep -qF " elapsed" && [ $i -lt 12000 ]; do sleep 0.1; i=$((i + 1)); done
}
size() { tmux -L "$SOCK" resize-window -t "$1" -x "$2" -y "$3"; sleep 0.4; }
# shot NAME TITLE TEXT: a section with the screen as it is now
shot() {
    sleep 0.3
    { echo; echo "## $2"; echo; [ -n "$3" ] && { echo "$3"; echo; }; echo '```'; tui_screen "$1" | sed 's/ *$//'; echo '```'; } >>"$OUT"
}

cat >"$OUT" <<'EOF'
# The workbench, screen by screen

Live captures of `graft tui` on two real teachers, stories260K (the default,
5 layers) and SmolLM2-135M-Instruct (30 layers, Q4_1 GGUF), taken under tmux
while the jobs ran (`sh ui/tools/capture_screens.sh` regenerates this file;
colours are not in the text). Run settings for these captures (9 Settings):
stories260K with 60 Stage 2 steps, SmolLM2 with 20; 32 evaluation windows;
race budget 8,192 tokens per init; ablation with 5 Stage 2 steps.

The frame: the top line names the teacher (its shape parts drop whole when
the line is short, never cut mid-number) and, at the right, a meter like
htop's: CPU used by graft's threads (100 % is one core; the maximum is the
core count), resident memory, and a GPU slot ("no GPU" until a GPU backend
reports memory and utilization). Then the tabs (1-9, Tab, clicks), the screen,
the job line (the running job over its whole length: weighted phases, percent,
the phase, elapsed time and an ETA that only counts down; or the last job's
outcome; or the answer to the last key), and the keys of the screen.

Keys everywhere (except while a text entry has focus, when every key is text):
1-9 / Tab / Shift-Tab switch screens (so do Left / Right where a screen does
not use them, and clicks on tabs), Enter runs the screen's job, c cancels it
(every job stops within about a second: the engine looks between layers),
p cycles the palette (viridis, magma, light, gray), ? or F1 shows help (it
scrolls), q or F10 quits (asking while a job runs); / searches and n goes to
the next hit on the Log and Results; the mouse wheel scrolls, a click selects
a tab, a cell or a row. Everything computed belongs to the teacher it was
computed for: opening another teacher shows that teacher's plan, statistics,
numbers and results, and opening the first one again (1 Teacher, recent list)
brings its own back. Preferences go to $XDG_CONFIG_HOME/graft/config.json; the
session (every teacher's plan, scores, teacher perplexity and Results rows, the
run settings, the recent teachers, the job history) to
$XDG_STATE_HOME/graft/session.json, written atomically after every finished
job and every change, every 10 s while a job runs, and on the way out (q, a
hang-up, SIGTERM, Ctrl-C; the terminal is restored on each). A job that was
running comes back on the next start as "interrupted at step N" (the Log, its
job history h, and Recover, where R resumes a race from its checkpoints). One
process writes a session (an flock on session.json.lock): a second graft tui
opens it read-only and says so; graft tui --session NAME opens a session of
its own. The folders jobs write (students, race checkpoint folders, half-life
fixes) are locked while written, with the flock on FOLDER.lock that graft's
commands take on their --out and --ckpt-dir (src/method/place_lock.h): a job
whose folder a command (or another workbench) is writing fails at once with
one line naming the folder, and leaves it as it was. Statistics, Stage 1 / Stage 2 numbers and race curves last for the
session (statistics are recomputed when a teacher loads).

A terminal that cannot move the cursor is refused before anything starts:

    $ TERM=dumb graft tui
    graft tui: the terminal TERM=dumb cannot move the cursor; use another terminal, graft's other commands, or graft tui --snapshot
    $ echo $?
    2

When the session's last teacher cannot be opened (a Hub repo, offline, the
token gone) the default teacher opens instead, and the status line, the
Teacher screen and the Log say why.
EOF

# ---------------- stories260K ----------------
tui_settings '{"stage2_steps": 60, "eval_windows": 32, "race_tokens": 8192, "ablate_steps": 5}'
tui_start s 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$STORIES'" --text "'$TEXT'"
tui_wait s "5 layers" 300 >/dev/null || fail "stories260K did not load"
idle s
tui_keys s Down Down Down Right Right Right Right Right
shot s "3 Stats (stories260K, 100x30)" 'Per-head statistics of the teacher on the corpus (4 sequences of 256 tokens, as `graft stats`). The heat map is layers x heads: each cell is an upper half block whose top half is the layer on its row label and whose bottom half the next layer (the legend under the colour bar says so). Cursor on layer 3, head 5 (arrows, or a click on a cell); the panel lists every metric of that head for each initialization that has numbers; on the right the histogram (log bins on a log scale). `m` / `M` cycle metrics, `l` toggles log scale, `i` picks the initialization, `s` compares initializations side by side. Every key answers on the job line: what it did, or why it could not ("run Stage 1 first"). Half-lives, beta* and sigma* appear once Stage 1 (4 Calibrate) or Stage 2 (5 Align) ran. Kept-attention layers carry a marker next to their label.'
size s 80 24
shot s "3 Stats at 80x24" 'Smaller cells, compact tab bar; the key bar keeps help and quit visible.'
size s 100 30
tui_keys s 1
shot s "1 Teacher" 'The architecture of the teacher, the files it was loaded from, and the recent teachers (the last 8 opened, saved in the session with the path each resolved to): Up/Down pick one, Enter opens it with its own plan and results. `o` (or `/`) opens the entry: type `ORG/NAME[@REV][:PATH]` (a Hub repo, optionally a revision and a file inside it such as a llama2.c checkpoint), a local model folder, or a `.bin` / `.gguf` file; Enter opens it through a "load" job (resolve through the Hugging Face cache, download what is missing with per-file progress, load). A failed open shows its whole error under the entry (wrapped, never cut) and in the Log; the loaded teacher and its files stay.'
tui_keys s 2 s Enter
tui_wait s "ar: kept layers ranked" 600 >/dev/null || fail "ar selection"
idle s
shot s "2 Plan, ar (stories260K)" 'Which layers keep softmax attention: the strategy (uniform, ar, ga-s2, manual; `s` / `S` cycle), the ratio (`r` presets 25/50/75 %, `=` types one), one line per layer with its role and both strategies'"'"' scores as bars (ar: perplexity with that layer'"'"'s attention zeroed, keep the highest; ga-s2: perplexity with only that layer keeping attention, keep the lowest), and what the plan saves in KV cache. Enter on ar / ga-s2 runs the selection job (as `graft select`); once scores are known, switching strategy or ratio re-ranks at once. `space` toggles the layer under the cursor (manual). The plan belongs to the teacher: another teacher has its own.'

# half-lives on text and the fix of one head: a session of their own (a random student, 120x40)
mkdir -p "$TMP/hl-state/graft"
printf '{"version": 2, "settings": {"stage2_steps": 10, "eval_windows": 4}}\n' >"$TMP/hl-state/graft/session.json"
tui_start h 120 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" XDG_STATE_HOME="$TMP/hl-state" -- "'$STORIES'" --text "'$TEXT'"
tui_wait h "5 layers" 300 >/dev/null || fail "stories260K did not load (half-lives)"
idle h
tui_keys h 7 i
tui_wait h "Enter builds the student under random" 50 >/dev/null || fail "i on Results (half-lives)"
tui_keys h Enter
tui_wait h "hl mean" 900 >/dev/null || fail "the random student (half-lives)"
idle h
tui_keys h 3 h
tui_wait h "flagged heads, worst first" 600 >/dev/null || fail "h on Stats"
idle h
tui_keys h f
shot h "3 Stats: half-lives on text (stories260K, 120x40)" '`h` measures the half-lives of a student on the corpus: the selected Results
row'"'"'s student folder (else the newest row that has one), 4 sequences of 256
tokens, the same numbers as `graft halflife STUDENT --text CORPUS --ctx 256
--seqs 4 --json` (the Log gives the command; `c` stops it). Two metrics join
the cycle under the student'"'"'s initialization: *half-life p50 on text* (the
median over tokens of ln 2 / -g_t) and *log2(p50 / teacher distance)* (0: the
head keeps what its teacher head looked at; attention layers stay blank). On
the right, under the head'"'"'s numbers: its histogram over the tokens (30 log
bins from 0.1 to 1e5 tokens) with `i` its idle half-life, `|` its median and
`T` the target Stage 1 aimed at marked under it, its flags'"'"' reasons, and the
flagged heads, worst first (severity: how far past its worst line, 1 at the
line); `f` moves the cursor to the next one. The targets come from the
student'"'"'s report.json, else from this screen'"'"'s teacher statistics (students
the workbench writes carry none). Here a random-init student (Results, `i`
to random, Enter), the cursor on its worst flagged head (`f`).'
tui_keys h 4 x
tui_wait h "fixed layer" 900 >/dev/null || fail "the half-life fix"
idle h
shot h "4 Calibrate: fixing one head (stories260K, 120x40)" 'After `h` on Stats, the bottom of Calibrate (all of it when no Stage 1 layer is
shown) names the head a fix works on: the head under this screen'"'"'s cursor
when a calibrated layer is shown, else the Stats cursor'"'"'s. `x` sets it to its
teacher distance without the first key (through Stage 1'"'"'s clamp), `X` to a
typed half-life (Stage 1'"'"'s decay for one head: A_log = 0, dt_bias =
softplus^-1(ln 2 / N)); then Stage 2 runs on that layer alone with the
Settings'"'"' steps, teacher-forced on the corpus (the `halflife-fix` job, the same
engine call as `graft halflife --fix L:H=N`). The panel shows the perplexity
of the evaluation slice before and after, the new folder (the original is
never written), and the head'"'"'s histogram before and after. Here the worst
flagged head of the random student (`f` on Stats, then `x`), 10 Stage 2 steps.'
tui_keys h q
tui_screen h | grep -qF "Quit anyway" && tui_keys h y

tui_keys s S
tui_keys s 4 " "
tui_wait s "1 of 2 converted layers calibrated" 600 >/dev/null || fail "Stage 1, one layer"
idle s
tui_keys s Enter
tui_wait s "2 of 2 converted layers calibrated" 600 >/dev/null || fail "Stage 1"
idle s
shot s "4 Calibrate (stories260K)" 'Stage 1 (taylor-only) stepped layer by layer: space calibrates the next converted layer, Enter all remaining ones (the teacher capture of the calibration slice is made once and kept). The layer list marks kept attention (`attn`), `pending` and `done` layers (`<` the one shown, Up/Down to change). Under it the teacher'"'"'s Stage 1 options: which of the four components run (`d` decay, `b` beta, `s` sigma, `g` gate switch them), what the decay reads (`n`: the mean distance over all keys or without the first key, the attention sink; `h` types a half-life override that gives every head the same idle half-life) and how the value scale is fitted (`f` cycles `reference`, `scaled`, `gated`, as `--sigma-fit`; it counts only with sigma on: the job line says so otherwise). Every build, ablation and race of the teacher uses these options, and each Results row and its command say them (`--sigma-fit gated`); the gated fit is the one that did best in the 1.5B race ([paper-1.5b.md](paper-1.5b.md)). The table groups every number Stage 1 computed per head: the teacher statistics (d_h, the no-sink distance, the share of attention on the first key, H_h, c_h), then per component: the decay (the distance it used, target decay, dt_bias, the idle half-life), the write gate (beta*, logit(beta*), the mean write logit after the Wb rescale), the value scale (sigma* before and after clamping) and the output gate (alpha*). The same numbers are in `graft convert ... --init taylor-only --json` (layers[].stage1).'

tui_keys s b n Enter
tui_wait s "numbers below" 50 >/dev/null # the old numbers, marked, until the re-run replaces them
tui_wait s "last run: done" 600 >/dev/null
idle s
shot s "4 Calibrate, beta off and the no-sink distance (stories260K)" 'The options belong to the teacher (saved with the session) and every job that builds a student with Stage 1 uses them: Calibrate, Align, Results'"'"' Enter, the ga-s2 selection, the ablation, the race (`graft convert --stage1 decay,sigma,gate --distance no-sink` is this run). After a change the numbers shown are marked as made with the old options until space or Enter runs Stage 1 again on every converted layer. A component that did not run says `off` under its name and shows `-`: its tensors stay at the random init (Wb here; the mean write logit is the random one). The decay now reads d no-sink.'
tui_keys s b n Enter
tui_wait s "last run: done" 600 >/dev/null
idle s
tui_keys s 5 Enter
tui_wait s "● align" 100 >/dev/null || fail "align did not start"
sleep 2
shot s "5 Align while it runs" 'Stage 2 on the converted layers (Enter; `a` switches taylor-calibrate / align-only; steps per layer: 9 Settings). The job line at the bottom follows the whole job: its phases are weighted by their cost, so the percent and the ETA move evenly from the teacher pass to the last Stage 2 step; the ETA counts down and never jumps back up.'
idle s
shot s "5 Align (done)" 'A line per layer: steps done, the kept best step, the loss of the first and the kept state, the change of mean |Wb| and mean |Wg| (after / before), the mean and median idle half-life before > after. Under it the calibration and held-out MSE curves: a small chart per layer when they fit, else the chosen layer (Up/Down). c cancels mid-training; the line then says `last run: cancelled`.'
tui_keys s 3 s
shot s "3 Stats, inits side by side (100x30)" 'After Stage 1 and Stage 2, `s` shows the idle half-lives of every initialization that has them on one colour scale, each with its histogram; the first line of each map gives the head under the cursor. On a metric only the teacher has, `s` says so and switches to one several inits have.'
size s 80 24
shot s "3 Stats, side by side at 80x24" ''
size s 100 30
tui_keys s 7 Enter
tui_wait s "headless: graft eval" 900 >/dev/null || fail "evaluate"
idle s
tui_keys s 6 Enter
tui_wait s "target reached: random" 3000 >/dev/null || fail "the race"
idle s
shot s "6 Recover (stories260K, 8,192 tokens per init)" 'The race between initializations, as `graft race MODEL --data CORPUS --ctx 128 --batch 4 --tokens N --lr-mixer A --lr-rest B --keep KEEP` (the same code, the same numbers; budget and learning rates in 9 Settings, `+` / `-` double / halve the budget): Enter builds a random and a taylor-calibrate student of the teacher (uniform selection keeping the Plan'"'"'s fraction of attention layers, calibrated on the corpus) and trains each in turn on the same data order. The chart shows both KL-per-token curves against training tokens, with the target loss (the random run'"'"'s smoothed final loss) as a flat line; above it the budget, the last checkpoint (every 8 steps, at the end and on cancel, under $XDG_STATE_HOME/graft/race/INIT.ckpt) and the tokens each init needs to reach the target and their ratio. Both runs become Results rows.'
tui_keys s 7
shot s "7 Results (stories260K, 100x30)" 'The teacher'"'"'s runs, one row each: Enter evaluates the plan (builds its student under the init shown, `i` cycles the six; measures zero-shot perplexity on the evaluation slice next to the teacher'"'"'s on the first line; writes the student to `$XDG_DATA_HOME/graft/students/<teacher>-<strategy>-<keep>-<init>-<digest>/`, named by the build'"'"'s request: building the same plan again reuses the folder), `a` runs the ablation table, race runs come from 6 Recover. When the folder holds a student of another request (its `config.json` records another digest, or graft recorded none there), the build stops before writing anything and a box asks `folder X holds a student of another request (digest D; this build'"'"'s: E); overwrite? y/N`: `y` builds again and replaces that folder (as `graft convert --force`), any other key keeps it as it is and builds nothing; the Log records the answer. Columns say how each row was made: run, strategy, keep, init, Stage 2 steps (`(h)`: the state with the lowest held-out loss was kept, 9 Settings), the evaluation slice (race rows: the race'"'"'s own held-out text, named apart so that its perplexity is never read against the teacher'"'"'s), then perplexity, half-lives, kept layers, tokens to target and the student folder. `o` sorts by the next column, `O` reverses; Up/Down select a row, whose headless command is under the table, whole: the row'"'"'s request as graft prints it, which reads back as the same request (`graft eval --split` on an evaluated student'"'"'s folder, with a comment naming the Stage 1 options and the request that built it; `graft ablate` of that one row; the race of a race row, with their --seed); `g` opens the prompt box on it (below). Columns that do not fit are dropped by priority and named; cut cells end in an ellipsis.'
size s 200 30
shot s "7 Results at 200 columns" ''
size s 100 30
tui_keys s Up Up g
tui_wait s "prompt box: student" 50 >/dev/null || fail "the prompt box"
tui_keys s -l "Once upon a time, Tom's dog"
tui_keys s Enter
tui_wait s "last run: student" 100 >/dev/null || fail "generate"
idle s
shot s "7 Results: the prompt box (g)" '`g` opens a box on the selected row'"'"'s student folder (here the evaluated plan: 3 of 5 layers keep attention): a one-line prompt (every key is text, UTF-8 included, with the editing keys of the Teacher screen'"'"'s entry), and Enter runs a "generate" job through the same call as `graft generate DIR --prompt P -n N --temp T --seed S`: attention layers through their KV cache, GDN layers through their recurrent state. The continuation streams in under the prompt (the prompt in the accent colour) with tokens/s, then the KV-cache bytes per token of this student against its teacher'"'"'s and the total for the tokens so far, with the GDN layers'"'"' fixed state. When the text is done, the job decodes again with both models (the student and its teacher) holding a cache of that many tokens, 16 greedy steps timed after a warm-up step (engine/eval/bench_decode.h, `graft bench-decode`'"'"'s code), and the last line gives each one'"'"'s decode tokens/s and the memory per sequence its decode run allocated (KV cache + GDN state): measured, not computed. On stories260K the 64-wide student is no faster on the CPU (its layers are too small for the attention it saves to matter); docs/benchmarks.md has the figures at real sizes. `Tab` switches greedy / sampled, PgUp / PgDn the temperature, Up / Down double / halve the tokens, `^R` the seed, `^T` the teacher instead (a row without a folder, an ablation or race row, has only the teacher: their students live only while their job runs). While it generates, c stops it (between tokens); Esc closes the box. The Log gets each run'"'"'s line with its headless command.'
tui_keys s Escape
tui_keys s a
tui_wait s "● ablate" 100 >/dev/null || fail "ablate did not start"
sleep 3
shot s "7 Results while the ablation runs" 'Rows stream in as the ablation table (uniform, ar, ga-s2 x 25/50/75 % x six inits) is built; its Stage 2 steps (here 5) are a setting of their own and show in the S2 steps column.'
idle s
i=0
while ! tui_screen s | grep -qF "sorted by ppl ascending" && [ $i -lt 20 ]; do tui_keys s o; sleep 0.1; i=$((i + 1)); done
size s 200 60
shot s "7 Results after the ablation, sorted by perplexity (200x60)" ''
size s 100 30
i=0
while ! tui_screen s | grep -qF "in run order" && [ $i -lt 20 ]; do tui_keys s o; sleep 0.1; i=$((i + 1)); done
tui_keys s O # newest first
tui_keys s 9 Down Down Right 7 a
tui_wait s "● ablate" 100 >/dev/null || fail "the component ablation did not start"
sleep 12
size s 200 30
shot s "7 Results while the Stage 1 component ablation runs (200x30)" 'With 9 Settings `ablation compares: Stage 1 components`, `a` runs `graft ablate --stage1-subsets`'"'"'s table instead: one init with Stage 1 (taylor-calibrate, or taylor-only when that is the Results init) under all four components, none, each alone and each left out (and the override row when the teacher has a half-life override), with the teacher'"'"'s distance choice. The init detail column says each row'"'"'s components (`S1 -beta`: all but beta); its command carries `--stage1 ...`.'
size s 100 30
idle s
tui_keys s 9 Left 7
tui_keys s 8
shot s "8 Log" 'Every line with its time; errors stand out. Left / Right scroll long lines sideways, `/` filters (case-insensitive, time stamps included; Esc clears), `h` shows the job history, End the newest lines. Every Results row that is not an ablation row logs its headless command in full, and so does every run of the prompt box.'
tui_keys s h
shot s "8 Log, job history (h)" 'Each job: when it started, how long it ran, how it ended (a cancel says how long the job took to stop after c), and the teacher it ran for.'
tui_keys s h 9
shot s "9 Settings" 'What jobs run with, saved in the session; every Results row records its own. Up/Down pick, Left/Right halve / double (or switch), Enter types a value, d restores the default. The device is the CPU until graft has a GPU backend.'
tui_keys s 3 '?'
shot s "Help (?)" ''
tui_keys s x q
sleep 0.3
tui_screen s | grep -qF "Quit anyway" && tui_keys s y

# ---------------- SmolLM2-135M ----------------
tui_settings '{"stage2_steps": 20, "eval_windows": 32}'
tui_start m 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$SMOL'" --text "'$TEXT'"
tui_wait m "30 layers" 600 >/dev/null || fail "SmolLM2 did not load"
sleep 3
shot m "SmolLM2-135M: statistics running" 'Opening a teacher starts its statistics at once (unless it has them for this corpus already). The job line: the whole job, its phase (tokenizing, then the teacher over 4 x 256 tokens), elapsed time, ETA.'
idle m
shot m "3 Stats (SmolLM2-135M, 100x30)" '30 layers x 9 heads: fifteen rows of half blocks.'
i=0
while ! tui_screen m | grep -qF "metric: attention on the first key" && [ $i -lt 12 ]; do tui_keys m m; sleep 0.2; i=$((i + 1)); done
shot m "3 Stats: the sink share (SmolLM2-135M)" 'The share of attention on the first key (the attention sink) per head, with the mean distance without that key (`m` before it): SmolLM2'"'"'s heads put a third of their attention on the first token on average, some nearly all of it, which makes their plain mean distance, and the decay Stage 1 sets from it, long. `n` on 4 Calibrate makes the decay read the no-sink distance.'
tui_keys m M M M M M
tui_keys m 1
shot m "1 Teacher (SmolLM2-135M)" 'A GGUF file carries its tokenizer: only the file itself is listed.'
tui_keys m 2
shot m "2 Plan (SmolLM2-135M)" 'Its own plan: uniform, 15 of 30 layers; no scores until its selection job runs.'
tui_keys m 4 Enter
tui_wait m "15 of 15 converted layers calibrated" 3000 >/dev/null || fail "Stage 1 on SmolLM2"
idle m
shot m "4 Calibrate (SmolLM2-135M)" 'Heads that do not fit scroll with Left/Right.'
tui_keys m 3 s Down
shot m "3 Stats side by side (SmolLM2-135M, 100x30)" 'After Stage 1: the random and taylor-only idle half-lives of the converted layers (kept-attention layers have none: blank), cursor on layer 1.'
size m 80 24
shot m "3 Stats side by side (SmolLM2-135M, 80x24)" ''
size m 100 30
tui_keys m 7 Enter
tui_wait m "headless: graft eval" 6000 >/dev/null || fail "evaluate on SmolLM2"
idle m
shot m "7 Results (SmolLM2-135M)" 'The plan evaluated with 20 Stage 2 steps per layer (9 Settings). Only this teacher'"'"'s rows are here; stories260K'"'"'s stay with stories260K.'
tui_keys m g C-t
tui_wait m "prompt box: teacher" 50 >/dev/null || fail "the prompt box on SmolLM2"
tui_keys m -l "The capital of France is"
tui_keys m Down Enter
tui_wait m "last run: teacher" 600 >/dev/null || fail "generate on SmolLM2"
idle m
shot m "7 Results: the prompt box on SmolLM2-135M" 'The teacher itself (`^T` from the row'"'"'s student), greedy, 32 tokens: every layer keeps a KV cache (30 layers x 3 KV heads x 64 dims x K and V, float32), which the total under it multiplies by the tokens so far.'
tui_keys m Escape
tui_keys m q
sleep 0.3
tui_screen m | grep -qF "Quit anyway" && tui_keys m y

# ---------------- runs imported from another machine (snapshots of the committed JSON) ----------------
RUNS=docs/runs/smollm2-135m-h200
imported() { # TITLE TEXT SCREEN KEYS FILE... (files under docs/runs/)
    title=$1 text=$2 screen=$3 keys=$4
    shift 4
    args=""
    for f in "$@"; do args="$args --import docs/runs/$f"; done
    { echo; echo "## $title"; echo; echo "$text"; echo; echo '```'
      XDG_STATE_HOME="$TMP/imported" LANG=C.UTF-8 "$GRAFT_BIN" tui $args --snapshot "$screen" --keys "$keys" --size 100x30 |
          sed 's/ *$//'
      echo '```'; } >>"$OUT"
}
imported "7 Results: runs imported from an H200 (SmolLM2-135M, 100x30)" 'Runs made headless on another machine open here: `graft tui --import RUN.json` (repeat it for several files) or `I` on 7 Results and a path. The JSON of `graft ablate --json` (six inits, any sigma fit: reference, scaled or gated, `--stage1-subsets` rows), `graft race --json` and `graft stats --json` becomes Results rows, the race'"'"'s curves on 6 Recover and the teacher'"'"'s statistics on 3 Stats (`graft halflife --json`: a student'"'"'s per-head half-lives there, under its init), under the teacher the file names (`meta.model`, `model`; an older race or stats file takes the teacher of the ablate JSON beside it), matched by path, else by file name. A teacher that is not in the session gets an entry: 1 Teacher'"'"'s recent list opens it (loading it when its file is here; else showing its imported runs without loading, as here, where the top line says "not loaded"; its jobs then say the teacher is not loaded). Every imported row names its file in the `from` column; the footer gives the file'"'"'s path, the row'"'"'s place in it and the command as it ran there (a row'"'"'s sigma fit as `--sigma-fit`, a race'"'"'s `--inits` as it raced them; the session keeps both); `g` and `R` on such a row refuse (its student is on the other machine). A race'\''s tokens to target are graft'\''s rule applied to the file'\''s loss curves (a run counts from its first full smoothing window, docs/training.md): where the file, written by an older graft, says otherwise, its rows and the Recover line show the recomputed numbers and the line says what the file said (the 1.5B race of docs/paper-1.5b.md: the gated student'\''s 114688 becomes 3907584). Importing a file again replaces its rows; the session keeps them. A malformed or unknown file is refused whole with one line naming the file and the field (`ablate.json: rows[3].ppl should be a number`). The line above the table says which variant measured best for this teacher against the paper'"'"'s method among rows measured the same way (strategy, ratio, evaluation slice, Stage 2 steps and kept state; a file whose text was not recorded shares a slice whose teacher perplexity is the same), by how much, and which rows (run order) show it; 4 Calibrate repeats it. These are the committed SmolLM2-135M runs (`graft tui --import docs/runs/smollm2-135m-h200/ablate_train.json --import .../ablate_stage1.json --import .../race_lr1e-4_20M.json --snapshot results`): made before `--sigma-fit`, their sigma is the scaled fit, which the labels say; they do not record the text file, hence `text not recorded`.' results "" smollm2-135m-h200/ablate_train.json smollm2-135m-h200/ablate_stage1.json smollm2-135m-h200/race_lr1e-4_20M.json
imported "6 Recover: an imported race (SmolLM2-135M, 100x30)" 'The imported race (`race_lr1e-4_20M.json`): its curves, its target and the tokens each run needed, with the file named above the chart.' recover "" smollm2-135m-h200/race_lr1e-4_20M.json
imported "3 Stats: imported half-lives of five students (SmolLM2-135M, 100x30)" \
    'The per-head half-lives that `graft halflife --json` measured on five SmolLM2-135M students (the committed docs/runs/half-life/smollm2-135m: `--import` each halflife-*.json), side by side (`m` to the half-life p50 on text, `s`): each under its init, the best Stage 1 subset apart as `taylor-calibrate (best-subset)`; the teacher and its shape come from the student'"'"'s `graft convert --json` beside each file (30 layers, 9 heads), nothing loads.' stats mmmmmms half-life/smollm2-135m/halflife-align-only.json \
    half-life/smollm2-135m/halflife-best-subset.json half-life/smollm2-135m/halflife-random.json \
    half-life/smollm2-135m/halflife-taylor-calibrate.json half-life/smollm2-135m/halflife-taylor-only.json

# ---------------- ASCII, no colour ----------------
tui_settings '{}'
tui_start a 80 24 TERM=xterm-256color LANG=C LC_ALL=C NO_COLOR=1 -- "'$STORIES'" --text "'$TEXT'"
tui_wait a "5 layers" 300 >/dev/null || fail "ASCII start"
idle a
{ echo; echo '## 3 Stats, ASCII and no colour (LANG=C, NO_COLOR=1)'; echo
  echo 'One layer per line, values as shades `.:-=+*#%@`, box drawing as `+-|`, `~` where text is cut.'; echo
  echo '```'; tui_screen a | sed 's/ *$//'; echo '```'; } >>"$OUT"
tui_keys a q

# ---------------- without data ----------------
{ echo; echo '## Without data'; echo; echo '`graft tui --snapshot stats` with no session: what each screen shows before its job ran.'; echo
  echo '```'; XDG_STATE_HOME="$TMP/empty" LANG=C.UTF-8 "$GRAFT_BIN" tui --snapshot stats --size 100x24 | sed 's/ *$//'; echo '```'; } >>"$OUT"
mv "$OUT" docs/workbench.md
echo "docs/workbench.md written"
