#!/bin/sh
# Regenerates docs/workbench.md from headless snapshots of `graft tui --demo`.
# Run from the repository root after make.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp" XDG_STATE_HOME="$tmp"; G=./build/graft
{
echo '# The workbench, screen by screen'
echo
echo 'Text captures of `graft tui --demo` (synthetic statistics, no model), made with the'
echo 'headless snapshot mode, which renders exactly what the terminal shows minus colours:'
echo
echo '    graft tui --demo --snapshot SCREEN --size 100x30 [--keys KEYS]'
echo
echo 'KEYS are the keys pressed before the capture (`<down>`, `<right>`, `<tab>`, `<enter>` or'
echo 'characters). Colours are not in the text: the heat map cells are upper half blocks'
echo 'whose foreground is the upper layer and background the lower layer. With `--json`'
echo 'the snapshot is a JSON object: the text lines and, on Stats, the cursor with every'
echo 'known value of that head.'
echo
echo 'Keys everywhere (except while a text entry has focus, when every key is text): 1-8 / Tab /'
echo 'Shift-Tab switch screens (so do ←→ where a screen does not'
echo 'use them, and mouse clicks on tabs), Enter runs the screen'"'"'s job, c cancels it,'
echo 'p cycles the palette (viridis, magma, light, gray), ? or F1 shows help, q quits'
echo '(asking while a job runs). Settings go to $XDG_CONFIG_HOME/graft/config.json, the'
echo 'session to $XDG_STATE_HOME/graft/session.json. Regenerate this file with'
echo '`sh ui/tools/capture_screens.sh`.'
shot() { echo; echo "## $1"; echo; [ -n "$2" ] && { echo "$2"; echo; }; echo '```'; shift 2; LANG=C.UTF-8 $G tui --demo --snapshot "$@"; echo '```'; }
shot "3 Stats (100x30)" 'Cursor on layer 17, head 5 (arrows, or a click on a cell); the panel lists every metric of that head for each initialization; under the map the colour bar with its range, on the right the histogram of the metric (log bins on a log scale). `m` / `M` cycle metrics, `l` toggles log scale, `i` picks the initialization, `s` compares initializations side by side. Kept-attention layers carry a marker next to their label (upper / lower half block for the upper / lower layer of a row pair).' stats --size 100x30 --keys "$(printf '<down>%.0s' $(seq 17))<right><right><right><right><right>"
shot "3 Stats, side by side (idle half-life, 120x34)" 'The same metric under each initialization that has it, on one common colour scale, each with its histogram and mean / median / max; the first line shows the value of the head under the cursor in each.' stats --size 120x34 --keys 'mmmms'
shot "3 Stats at 160x40" 'With room for a line per layer, each layer gets its own row of full blocks; the histogram grows under the values.' stats --size 160x40
shot "3 Stats at 80x24" 'Smaller cells, compact tab bar; the key bar keeps help and quit visible.' stats --size 80x24
echo; echo '## 3 Stats, ASCII and no colour (LANG=C, NO_COLOR=1)'; echo; echo 'One layer per line, values as shades `.:-=+*#%@`, box drawing as `+-|`.'; echo; echo '```'; LANG=C NO_COLOR=1 $G tui --demo --snapshot stats --size 80x24; echo '```'
shot "1 Teacher" 'The architecture summary of the loaded teacher (demo data here). `o` (or `/`) opens the entry: type `ORG/NAME[@REV][:PATH]` (a Hub repo, optionally a revision and a file inside it such as a llama2.c checkpoint), a local model folder, or a `.bin` / `.gguf` file, and Enter opens it through a "load" job (resolve through the Hugging Face cache, download what is missing, load); Esc cancels. While the entry has focus every key is text (q, digits and ? included): ←→ Home End move, Backspace deletes, Ctrl-U deletes to the start, Ctrl-K to the end. A failed open (unknown repo, gated repo, offline and not cached, a corrupt file) shows as one `error:` line under the entry and in the Log; the loaded teacher stays.' teacher --size 100x30
shot "1 Teacher, typing a repo id" '' teacher --size 100x30 --keys 'okarpathy/tinyllamas:stories260K/stories260K.bin'
echo; echo '## 1 Teacher, downloading'; echo
echo 'Captured live (tmux, the fake Hub of tests/fakehub serving the checkpoint slowly; see tests/integration/tui_teacher.sh), while the checkpoint downloads: the total (files done, bytes, a bar, speed, ETA), each file (a bar with its bytes while it transfers, else done / cached / failed with its size), and the recent teachers (the last 8 opened, most recent first, saved in session.json with the path each resolved to): ↑↓ pick one, Enter opens it. `graft` / `graft tui` without MODEL reopen the most recent one ($GRAFT_TEACHER, when set, wins). Files already in the cache are listed as cached.'
echo; echo '```'
cat <<'CAPTURE'
 graft  graft-test/qwen2-fixture · 2 layers · 5 heads (1 KV) · d  ● load 530515/1062767  50% eta 2s
┌ 1 Teacher ┬ 2 Plan ┬ 3 Stats ┬ 4 Calibrate ┬ 5 Align ┬ 6 Recover ┬ 7 Results ┬ 8 Log ┐

  o: open ORG/NAME[@REV][:PATH], a model folder, or a .bin / .gguf file
  opening karpathy/tinyllamas:stories260K/stories260K.bin ...

  graft-test/qwen2-fixture                          Files 1/2  530.5 kB / 1.1 MB
  2 layers · 5 heads (1 KV) · d 40                  ███████████··········· 336.7 kB/s  eta 2s
                                                    → stories260K/stories260K.bin
  path        …44177f16f4d619db80ca0b1f31b3698cbf2    █████····· 524.3 kB / 1.1 MB
  format      huggingface (f16 weights)             done      6.2 kB  stories260K/tok512.bin
  arch        qwen2
  layers      2                                     Recent teachers
  hidden      40 (MLP 88)                           → graft-test/qwen2-fixture
  heads       5 query, 1 key/value, head_dim 8        …ts/8338c44177f16f4d619db80ca0b1f31b3698cbf2
  vocab       143   context 256
  rope        theta 10000, half-split pairs
  parameters  40552
  tokenizer   none found









 opening karpathy/tinyllamas:stories260K/stories260K.bin
 o open  ↑↓ recent  ⏎ open recent  ? help  q quit  c cancel  ⏎ run  p palette  1-8 screens
CAPTURE
echo '```'
# Plan and Results from a real session: stories260K, scores and rows measured by the workbench's
# jobs (ui/tools/session_stories260k.json, GRAFT_TUI_STEPS=60, 32 evaluation windows of 256 tokens)
real() { mkdir -p "$tmp/graft"; cp ui/tools/session_stories260k.json "$tmp/graft/session.json"; echo; echo "## $1"; echo; [ -n "$2" ] && { echo "$2"; echo; }; echo '```'; shift 2; LANG=C.UTF-8 $G tui --snapshot "$@"; echo '```'; rm -f "$tmp/graft/session.json"; }
real "2 Plan (stories260K, 100x30)" 'The strategy (`s` / `S`: uniform, ar, ga-s2, manual), the retention ratio (`r`: 25/50/75 %, `=`: type a percentage), the cost line (KV cache of the attention layers at 32k tokens, 2 x KV heads x head_dim x bytes per value per token and layer, before and after, plus the fixed GDN state of the converted layers; the same numbers as `graft select --json` under `kv_cache`), then one line per layer: its role under the plan and the two strategies'"'"' scores as bars (ar: held-out perplexity with that layer'"'"'s attention zeroed, keep the highest; ga-s2: zero-shot perplexity with only that layer keeping attention, keep the lowest), the chosen strategy'"'"'s column highlighted. Enter on ar / ga-s2 runs the selection job (as `graft select`); once scores are known, switching strategy or ratio re-ranks at once. `space` toggles the layer under the cursor and makes the plan manual.' plan --size 100x30
real "2 Plan, ar chosen, 80x24" 'Under ar the plan keeps the layers whose removal hurts most; at 80 columns the cost line uses shorter words.' plan --size 80x24 --keys 's'
real "2 Plan, manual (space on layer 2), 80x24" '' plan --size 80x24 --keys '<down><down> ' 
shot "4 Calibrate" 'Stage 1 (taylor-only) stepped layer by layer: space calibrates the next converted layer, Enter all remaining ones (the `calibrate` job; the teacher capture of the calibration slice is made once and kept). The layer list marks kept attention (`attn`), `pending` and `done` layers (`<` the one shown, Up/Down to change); the table holds every number Stage 1 computed per head: d_h, H_h, c_h, beta*, logit(beta*) and the mean write logit after the Wb rescale, sigma* before and after clamping, the target decay, dt_bias and the idle half-life; then alpha*. The same numbers are in `graft convert ... --init taylor-only --json` (layers[].stage1); Stats gets beta*, sigma* and the half-lives under taylor-only and random.' calibrate --size 100x30
shot "4 Calibrate at 80x24" 'Heads that do not fit scroll with Left/Right.' calibrate --size 80x24 --keys '<right><right><right><right><right><right><right><right><right><right><right>'
shot "5 Align" 'Stage 2 on the converted layers (Enter; `a` switches taylor-calibrate / align-only). A line per layer: steps done, the kept best step, the loss of the first and the kept state, the change of mean |Wb| and mean |Wg| (after / before), the mean and median idle half-life before > after. Under it live calibration and held-out MSE curves: a small chart per layer when they fit, else the chosen layer (Up/Down). c cancels mid-training; the line then says `last run: cancelled`. Steps per layer: GRAFT_ALIGN_STEPS (default 300). After a run Stats shows the half-lives, beta* and sigma* under the init that ran.' align --size 100x30
shot "5 Align, one layer (Down), 80x24" 'Down picks layer 1; its line is highlighted and its chart gets the room.' align --size 80x24 --keys '<down>'
shot "7 Results (demo)" '' results --size 100x30
real "7 Results (stories260K, 100x30)" 'Enter evaluates the current plan: builds its student under the init shown (`i` cycles the six), measures zero-shot perplexity on the evaluation slice of the corpus next to the teacher'"'"'s (top line), the idle half-lives of the GDN heads (mean / median / max), and writes the student to `$XDG_DATA_HOME/graft/students/<teacher>-<strategy>-<keep>-<init>/` (the newest one in full under the table). `graft eval FOLDER --text CORPUS --split --eval-windows 32 --json` prints the same perplexity and half-lives. `a` runs the ablation table (uniform, ar, ga-s2 x 25/50/75 % x six inits, Stage 2 at most 50 steps) with rows streamed in; `c` cancels it. At 80 columns init names are abbreviated and long cells cut (the path from the left).' results --size 100x30
real "7 Results at 80x24" '' results --size 80x24
echo; echo '## 7 Results after `a`: the ablation table (200x60)'; echo
echo 'A live tmux capture (tests/integration/lib/tui.sh) of stories260K after `a` ran to the end with'
echo 'GRAFT_TUI_STEPS=5 and GRAFT_TUI_EVAL_WINDOWS=2 (tiny settings, so the numbers differ from the rows'
echo 'above): 54 rows, the newest at the bottom; the student column is `-` because ablation rows are not saved.'
echo 'At 200 columns the init names and kept lists are whole. The same table headless:'
echo '`graft ablate MODEL --calib CORPUS --eval CORPUS --steps 5 --eval-windows 2`.'
echo; echo '```'; cat ui/tools/results_ablation_200x60.txt; echo '```' 
echo; echo '## 6 Recover'; echo
echo 'The race between initializations, as `graft race MODEL --data CORPUS --ctx 128 --batch 4 --lr-mixer 1e-3 --lr-rest 1e-4 --tokens N --keep KEEP` (the same code, src/cli/race_run.c, and the same numbers): Enter builds a random and a taylor-calibrate student of the open teacher (uniform selection keeping the Plan'"'"'s fraction of attention layers, default 0.5, calibrated on the corpus) and trains each in turn on the same data order and budget. The chart shows both KL-per-token curves against training tokens as they arrive, with the target loss (the random run'"'"'s smoothed final loss) as a flat line once known; above it the budget, the running step with tokens/s, percent and ETA, the last checkpoint (every 8 steps and at the end, under $XDG_STATE_HOME/graft/race/INIT.ckpt) and, at the end, the tokens each init needs to reach the target and their ratio; both held-out perplexities go to Results. Keys: Enter starts, `+` / `-` double / halve the budget per init (default 51,200 tokens, or $GRAFT_RACE_TOKENS), `c` cancels (the running init checkpoints and stops). Captured live (tmux, stories260K, tinystories.txt, GRAFT_RACE_TOKENS=8192; see tests/integration/tui_recover.sh) after the race:'
echo; echo '```'
cat <<'CAPTURE'
 graft  stories260K.bin · 5 layers · 8 heads (4 KV) · d 64
┌ 1 Teacher ┬ 2 Plan ┬ 3 Stats ┬ 4 Calibrate ┬ 5 Align ┬ 6 Recover ┬ 7 Results ┬ 8 Log ┐
 recovery race  budget 8192 tokens/init (+/-)  keep 0.50 uniform
 Enter: race random vs taylor-calibrate (ctx 128, batch 4, lr 1e-3/1e-4)
 last checkpoint: taylor-calibrate step 16: …/graft/race/taylor-calibrate.ckpt
 target reached: random 2560, taylor-calibrate 512 -> ratio 5.00
 y: KL per token (teacher || student)   x: training tokens
 ─── random   ─── taylor-calibrate   ─── target 0.3333
 0.457┤⠱⡀
      │ ⠱⡀
      │  ⠱⡀
      │   ⠘⡄
      │    ⠘⡄  ⢀⡠⠔⠊⠑⢄
      │     ⠘⠔⠊⠁     ⠑⢄
      │                ⠑⢄
      │                  ⠑⢄
      │⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣑⣄⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀⣀
      │                     ⠈⠢⡀           ⣀⣀⡠⠤⠔⠒⠊⠉⠑⠢⠤⣀⡀                               ⡔⠤⣀      ⢀⠤⠊⠁
      │                       ⠈⠢⠤⠤⠔⠒⠒⠒⠒⠉⠉⠉            ⠈⠑⠒⠤⣀                         ⢀⠎   ⠉⠒⠤⣀⠤⠊⠁  ⡠
      │⢢          ⡰⠑⠢⢄⡀                                    ⠉⠑⠢⠤⢄⣀⣀⡀                ⡠⠃ ⢀          ⡔⠁
      │ ⠱⡀       ⡔⠁   ⠈⠑⠢⢄                                        ⠈⠉⠑⢄           ⢀⠜  ⢠⠃⠑⡄      ⢀⠜
      │  ⠑⡄    ⢀⠜         ⠑⠤⡀                 ⣀⡠⠤⠒⠤⣀                  ⠑⠤⡀       ⢠⠊  ⢠⠃  ⠈⠢⡀   ⢠⠊
      │   ⠈⢆  ⢀⠎            ⠈⠢⣀  ⢀⡠⠤⠒⠉⠉⠉⠑⠒⠒⠒⠊⠉      ⠑⠢⣀                 ⠈⠢⣀⠤⠤⠒⠒⠉⠁  ⢠⠃     ⠈⢆ ⡠⠃
      │    ⠈⢢⢠⠃                ⠑⠊⠁                     ⠉⠒⠒⠒⠒⠒⠒⠒⠒⠒⠉⠉⠉⠑⠤⡀           ⡰⠁        ⠑⠁
      │      ⠁                                                        ⠈⠒⢄        ⡰⠁
 0.206┤                                                                  ⠉⠒⠢⠤⠤⢄⣀⡰⠁
      └────────────────────────────────────────────────────────────────────────────────────────────
       512                                                                              tokens 8192
 started race
 + double budget  - halve budget  ? help  q quit  ⏎ run  p palette  1-8 screens
CAPTURE
echo '```'
shot "6 Recover at 80x24 (demo curves)" '' recover --size 80x24
shot "7 Results" '' results --size 100x30
shot "8 Log" '' log --size 100x30
shot "Help (?)" '' stats --size 100x30 --keys '?'
echo; echo '## Without data'; echo; echo '`graft tui` with nothing loaded yet:'; echo; echo '```'; LANG=C.UTF-8 $G tui --snapshot stats --size 100x24; echo '```'
} > docs/workbench.md
