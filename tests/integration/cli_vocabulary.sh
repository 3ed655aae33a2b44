# One command-line vocabulary: every command that `graft --help` lists accepts
# the shared options (--threads, --seed, --device, --tokenizer; --keep and
# --strategy where layers are chosen), proven by parsing them up to the
# --device check; the old spellings (--retention, --convert) are gone; and
# --device cpu runs. `graft download` only fetches files: it takes none of the
# model options (and must refuse them), but prints one JSON line like every
# command (tests/integration/hub_download.sh checks its --json).
. "$(dirname "$0")/../lib.sh"
need_stories

cmds=$("$G" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(printf '%s\n' $cmds | wc -l)" -ge 12 ] || fail "graft --help lists too few commands: $cmds"
for want in inspect generate ppl stats download select convert eval ablate train race tui; do
    printf '%s\n' $cmds | grep -qx "$want" || fail "graft --help does not list $want"
done

for c in $cmds; do
    "$G" "$c" --help >"$TMP/help" 2>&1 || fail "graft $c --help failed"
    grep -q -- '--retention\|--convert ' "$TMP/help" && fail "graft $c --help still lists --retention or --convert"
    if [ "$c" = download ]; then
        expect_error "unknown option --threads" "$G" download org/name --threads 2
        continue
    fi
    shared="--threads --seed --device --tokenizer"
    case $c in select|convert|ablate|race|train|tui) shared="$shared --keep --strategy" ;; esac
    for o in $shared; do grep -q -- "^  $o " "$TMP/help" || fail "graft $c --help lacks $o"; done
    # every shared option parses: the command gets as far as checking --device
    set -- --threads 1 --seed 7 --tokenizer "$TMP/tok.json" --device tpu
    case $c in
        select|convert|race|train) set -- "$@" --keep 0.5 --strategy uniform ;;
        ablate) set -- "$@" --keep 0.25,0.5 --strategy uniform,manual:0+2 ;;
        tui) set -- "$@" --keep 0.5 --strategy ar ;;
    esac
    model=$STORIES
    expect_error "unknown device 'tpu'" "$G" "$c" "$model" "$@"
done

# --device cpu (the default) works, with the other shared options
"$G" inspect "$STORIES" --device cpu --threads 1 --seed 3 --json >"$TMP/i.json" || fail "inspect --device cpu failed"
[ "$(wc -l <"$TMP/i.json")" -eq 1 ] || fail "inspect --json is not one line"
exit 0
