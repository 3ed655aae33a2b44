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
echo 'Keys everywhere: 1-8 / Tab / Shift-Tab switch screens (so do ←→ where a screen does not'
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
shot "1 Teacher" '' teacher --size 100x30
shot "2 Plan" 'Per-layer strategy score as bars, kept layers marked (demo data).' plan --size 100x30
shot "4 Calibrate" 'Waiting for the engine: a panel says what is needed.' calibrate --size 100x30
shot "5 Align" 'Loss series from `loss` events, braille line chart with labelled axes and a legend.' align --size 100x30
shot "7 Results" '' results --size 100x30
shot "8 Log" '' log --size 100x30
shot "Help (?)" '' stats --size 100x30 --keys '?'
echo; echo '## Without data'; echo; echo '`graft tui` with nothing loaded yet:'; echo; echo '```'; LANG=C.UTF-8 $G tui --snapshot stats --size 100x24; echo '```'
} > docs/workbench.md
