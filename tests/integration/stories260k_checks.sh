# The shared README's checks of the real teacher: greedy ids, teacher-forced NLL, statistics.
. "$(dirname "$0")/../lib.sh"
need_stories

"$G" generate "$STORIES" -n 16 --json >"$TMP/gen.json" || fail "generate failed"
ids=$(json_get "$TMP/gen.json" "' '.join(map(str, j['ids']))")
[ "$ids" = "403 407 261 378 432 383 286 261 376 298 315 421 395 317 426 338" ] || fail "greedy ids: $ids"
case "$(json_get "$TMP/gen.json" "j['text']")" in "Once upon a time, there was a little girl named Lily"*) ;; *) fail "text: $(cat "$TMP/gen.json")" ;; esac

printf 'One day, a clever fox found a shiny key under the old oak tree.' >"$TMP/fox.txt"
"$G" ppl "$STORIES" --text "$TMP/fox.txt" --json >"$TMP/ppl.json" || fail "ppl failed"
json_get "$TMP/ppl.json" "j['tokens'] == 34 or exit('tokens %s' % j['tokens'])" >/dev/null || fail "token count: $(cat "$TMP/ppl.json")"
json_get "$TMP/ppl.json" "abs(j['nll'] - 54.4041) < 1e-3 or exit('nll %r' % j['nll'])" >/dev/null || fail "nll: $(cat "$TMP/ppl.json")"
json_get "$TMP/ppl.json" "abs(j['ppl'] - 4.9536) < 1e-3 or exit('ppl %r' % j['ppl'])" >/dev/null || fail "ppl: $(cat "$TMP/ppl.json")"

# ppl with windows shorter than the text: every token still predicted once
"$G" ppl "$STORIES" --text "$TMP/fox.txt" --ctx 8 --json >"$TMP/ppl8.json" || fail "ppl --ctx 8 failed"
json_get "$TMP/ppl8.json" "j['tokens'] == 34 or exit(1)" >/dev/null || fail "windowed token count: $(cat "$TMP/ppl8.json")"

"$G" stats "$STORIES" --text "$SHARED/data/tinystories.txt" --json >"$TMP/stats.json" || fail "stats failed"
python3 - "$TMP/stats.json" <<'PY' || fail "stats shape"
import json, math, sys
j = json.load(open(sys.argv[1]))
L = j["layers"]
assert len(L) == 5, len(L)
for l, layer in enumerate(L):
    assert layer["layer"] == l
    assert len(layer["heads"]) == 8
    for h, head in enumerate(layer["heads"]):
        assert head["head"] == h
        for k in ("mean_distance", "entropy", "output_rms"):
            assert math.isfinite(head[k]), (l, h, k)
        assert head["mean_distance"] >= 0.5
        assert head["entropy"] >= 0 and head["output_rms"] > 0
        assert 0 <= head["concentration"] <= 1
PY
