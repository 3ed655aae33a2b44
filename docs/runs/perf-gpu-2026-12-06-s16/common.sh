# What session 16's lease scripts share (sourced from the repository root on the device machine):
# the carried environment, timing lines, the project's table of bench lines (tests/gpu/bench/table.py),
# and earlier trees built beside the head: tree_build NAME TARGET... makes TARGETs in /tmp/NAME, a copy
# of this tree with .carry/NAME.patch applied (base: 6de398e's engine, the states in fp32 and dh'
# sharing h's tile; mid: 60f155c's, session 15's head, before the local backward's copies moved),
# kept while the machine stays warm and the patch is the same.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
L=$(mktemp -d)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
show() { python3 tests/gpu/bench/table.py /dev/stdin; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
tree_build() {
    name=$1; shift
    d=/tmp/$name
    if [ ! -d $d/build ] || ! cmp -s .carry/$name.patch $d/.carry/$name.patch; then
        rm -rf $d; mkdir -p $d; tar --exclude=./.peers -cf - . | tar -xf - -C $d
        (cd $d && patch -s -p1 <.carry/$name.patch) || { echo "$name.patch does not apply"; return 1; }
    fi
    (cd $d && make -j8 "$@" >>$L/build-$name.log 2>&1) || { echo "$name build failed"; tail -5 $L/build-$name.log; return 1; }
}
# Added in session 23 for the scripts after it (the ones above ran without these):
# bench_trees ROUNDS BUDGET OUT NAME=DIR...: bench_gdn under each tree in turn, ROUNDS rounds, each
# line tagged with its tree and round into OUT, while more than 30 s of BUDGET (from the start) is left
bench_trees() {
    rounds=$1 budget=$2 out=$3; shift 3
    for round in $(seq $rounds); do
        for t in "$@"; do
            [ $(left $budget) -gt 30 ] || return 0
            timeout 60 ${t#*=}/build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' |
                sed "s/^{/{\"tree\":\"${t%%=*}\",\"round\":$round,/" | tee -a $out | show |
                grep -E "core bwd D|layer fwd\+bwd D" | sed "s/^/${t%%=*}: /"
        done
    done
}
# hybrid_pairs N BUDGET: the 50 % hybrid training step and torch + FLA compiled training
# (peer_train.py) alternating, N pairs, into $R/train.jsonl and $R/peer_train.jsonl
hybrid_pairs() {
    for i in $(seq $1); do
        [ $(left $2) -gt 70 ] || break
        timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' |
            sed "s/^{/{\"pair\":$i,/" | tee -a $R/train.jsonl | show | grep "^\[model"
        (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 585) python3 peer_train.py) \
            >>$R/peer_train.jsonl 2>>$L/peer_train.log
        echo "peer_train rc $?"
    done
    grep -v '^{"note' $R/peer_train.jsonl | show
}
# ncu_launch KERNEL NAME DIR OUT: Nsight Compute's speed of light of one launch of gdn KERNEL
# (a regex) in DIR's bench_gdn at 16 x 2048, appended to OUT under NAME
ncu_launch() {
    GRAFT_BENCH_GDN_TOKENS=32768 timeout 40 ncu --clock-control none -k regex:$1 --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight $3/build/gpu/bench_gdn >$L/ncu.txt 2>&1
    { echo "==== $1 under $2"; cat $L/ncu.txt; } >>$4
    grep -E "Duration|Compute \(SM\)" $L/ncu.txt | sed "s/^/$1 $2: /"
}
# Added in session 24 (its lease1.sh ran an inline form of this): pick_tree JSONL TEST BASE NEW PART...
# prints NEW when TEST's last line is "N passed, 0 failed" and, in JSONL (bench_trees' lines), NEW's mean
# over the rounds is not above BASE's for each PART ("core fwd", "core bwd", ...) at both T 2048 and
# 8192; else BASE. The means go to stderr.
pick_tree() {
    python3 - "$@" <<'PY'
import json, re, sys, statistics as st
jsonl, test, base, new, parts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
rows = [json.loads(l) for l in open(jsonl) if l.startswith("{")]
tail = (open(test).read().strip().splitlines() or [""])[-1]
passed = re.fullmatch(r"[1-9]\d* passed, 0 failed", tail) is not None
ms = {}
for r in rows:
    for p in parts:
        if r.get("what", "").startswith(f"graft GDN {p} D"):
            ms.setdefault((p, r["tree"], r["T"]), []).append(r["ms"])
keys = [(p, T) for p in parts for T in (2048, 8192)]
ok = all((p, t, T) in ms for p, T in keys for t in (base, new))
ok = ok and all(st.mean(ms[(p, new, T)]) <= st.mean(ms[(p, base, T)]) for p, T in keys)
print(" ".join(f"{k[1]} {k[0]} {k[2]}={st.mean(v):.4f}" for k, v in sorted(ms.items())), "test:", tail, file=sys.stderr)
print(new if passed and ok else base)
PY
}
# tree_beside NAME: the head's bench_gdn built, and beside it /tmp/NAME (the head + .carry/NAME.patch) with
# bench_gdn and test_cuda_gdn; test_cuda_gdn run there on the GPU into $R/test_cuda_gdn-NAME.txt
tree_beside() {
    make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; return 1; }
    tree_build $1 build/gpu/bench_gdn build/gpu/test_cuda_gdn || return 1
    el build
    /tmp/$1/build/gpu/test_cuda_gdn >$R/test_cuda_gdn-$1.txt 2>&1
    echo "test_cuda_gdn ($1) rc $?: $(tail -n 1 $R/test_cuda_gdn-$1.txt)"
}
# test_gpu_in NAME DIR: make test-gpu (tests/gpu/device_run.sh test) in DIR, its summary into $R, when the
# call has 200 s left of 585
test_gpu_in() {
    room=$(left 585)
    if [ $room -lt 200 ]; then echo "== make test-gpu not run: $room s left"; return 0; fi
    (cd $2 && OUT=$R timeout $room sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1; echo "== device_run test ($1) rc $?")
    el test
    tail -n 22 $R/test-summary.txt
}
# Added in session 25 (session 23's next.sh and session 25's call2.sh / call3.sh wrote these lines
# out): peers_warm unpacks the carried FLA (.peers/fla.tar.xz) and starts FLA's Triton autotuning and
# the compiled training peer's first run in the background (caches only: their figures are not used;
# `wait` for them); gdn_beside_fla runs bench_gdn and FLA's chunk kernel (peer_gdn.py) on the same
# shapes into $R/bench_gdn.jsonl and $R/peer_gdn.jsonl and prints the layer's lines and ratios.
peers_warm() {
    mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
    export GRAFT_FLA_PATH=$PWD/.peers/fla
    (cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 330 python3 peer_gdn.py) >$L/fla_warm.jsonl 2>$L/fla_warm.log &
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout 330 python3 peer_train.py) \
        >$L/train_warm.jsonl 2>$L/train_warm.log &
}
gdn_beside_fla() {
    timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | tee $R/bench_gdn.jsonl | show | grep -E "layer fwd\+bwd D|core"
    (cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 90 python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>>$L/peer_gdn.log
    echo "peer_gdn rc $?"; cat $R/bench_gdn.jsonl $R/peer_gdn.jsonl | grep '^{' | show | grep -E "layer fwd\+bwd D"
    el gdn
}
# Added in session 26 (session 25's and 26's next.sh wrote the loop out): ncu_sources BUDGET K...: bench_gdn
# built, then Nsight Compute's source profile (tests/gpu/bench/gdn_ncu_source.sh) of each GDN kernel K (wy,
# state, out, bwd_v, bwd_state, bwd_local) into $R while more than 60 s of BUDGET are left; the report files
# themselves are dropped (the details page and the per-line tables stay)
ncu_sources() {
    budget=$1; shift
    make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; return 1; }
    el build
    for k in "$@"; do
        [ $(left $budget) -gt 60 ] || break
        timeout 150 sh tests/gpu/bench/gdn_ncu_source.sh $k build $R >$R/top-$k.txt 2>&1
        echo "== $k rc $?"; head -n 14 $R/top-$k.txt
        rm -f $R/ncu_$k.ncu-rep
        el "ncu $k"
    done
}
# Added in session 29 (session 28's next.sh and session 29's call2.sh wrote these out):
# tuned_model KIND TUNE ROUND TIMEOUT: bench_cuda_model KIND (forward, train-hybrid, ...) once with
# GRAFT_CUDA_GEMM_TUNE=TUNE (0: unset), its model lines tagged with tune and round into
# $R/forward.jsonl (KIND forward) or $R/train.jsonl, stderr into $L/forward-TUNE.log or train-TUNE.log;
# sdpa_forward: transformers' sdpa forward (peer_forward.py) at 4 x 2048 and 1 x 8192 into $R/peer_forward.jsonl
tuned_model() {
    f=$(case $1 in forward*) echo forward ;; *) echo train ;; esac)
    GRAFT_CUDA_GEMM_TUNE=$([ $2 = 0 ] || echo $2) timeout $4 build/gpu/bench_cuda_model $1 2>>$L/$f-$2.log |
        grep '"model"' | sed "s/^{/{\"tune\":$2,\"round\":$3,/" | tee -a $R/$f.jsonl | show | grep "^\[model" |
        sed "s/^/tune $2: /"
}
sdpa_forward() {
    (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 \
        timeout 120 python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
    echo "peer_forward rc $?"; grep '^{' $R/peer_forward.jsonl | show | grep '^\[peer'
}
# Added in session 32 (its forward.sh, forward2.sh and h200.sh call the first; fold.sh wrote the second
# out): forward_rounds: the forwards of the sdpa targets under the default plan, rounds 1 and 2 around
# transformers' sdpa forward (into $R/forward.jsonl and $R/peer_forward.jsonl); attn_cfg_ab ID NAME: the attention forward's block shape ID
# against cfg 23: test_cuda_ops (every shape against the CPU backend) into $R/test_cuda_ops-NAME.txt.gz,
# bench_attention twice into $R/bench_attention-NAME.jsonl, then the forwards of the sdpa targets under
# 23 and ID, ID and 23 around sdpa into $R/forward-NAME.jsonl, while 260 s (from the start) last
forward_rounds() {
    tuned_model forward-targets 0 1 60
    sdpa_forward
    tuned_model forward-targets 0 2 60
    el forward
}
attn_cfg_ab() {
    make -j16 build/gpu/test_cuda_ops build/gpu/bench_attention build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
        { tail -20 $L/build.log; return 1; }
    el build
    timeout 60 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
    echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
    echo "cfg $1 checks passed: $(grep -cE "PASS.*cfg$1\b" $L/test_cuda_ops.txt)"
    gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-$2.txt.gz
    el tests
    for round in 1 2; do
        timeout 40 build/gpu/bench_attention 2>/dev/null | grep '^{' | sed "s/^{/{\"round\":$round,/" |
            tee -a $R/bench_attention-$2.jsonl | show | grep -E "\[cfg (23|$1)" | cut -c1-50,90-120
        el bench $round
    done
    for c in 23 $1 sdpa $1 23; do
        [ $(left 260) -gt 30 ] || break
        if [ $c = sdpa ]; then sdpa_forward; continue; fi
        GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
            grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward-$2.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
    done
    el done
}
# Added in session 36 (its call2.sh wrote these out; next.sh uses them): ncu_sum CSV TAG prints Nsight
# Compute's --csv gpu__time_duration lines per kernel name (launches, mean us); trees_turn ROUNDS BUDGET
# KIND TREE... runs bench_cuda_model KIND under each TREE in turn (head: this tree, else /tmp/TREE),
# ROUNDS rounds while more than 40 s of BUDGET are left, its model lines tagged into $R/train.jsonl
ncu_sum() {
    python3 - "$1" "$2" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
by = collections.defaultdict(list)
for r in rows:
    by[r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "")].append(
        float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]])
for k, v in sorted(by.items()):
    print(f"{sys.argv[2]}: {k}: {len(v)} launches, mean {sum(v) / len(v):.2f} us")
PY
}
trees_turn() {
    rounds=$1 budget=$2 kind=$3; shift 3
    for round in $(seq $rounds); do
        for t in "$@"; do
            [ $(left $budget) -gt 40 ] || return 0
            d=.; [ $t = head ] || d=/tmp/$t
            timeout 40 $d/build/gpu/bench_cuda_model $kind 2>>$L/train-$t.log | grep '"model"' |
                sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
                sed "s/^/$t: /" | cut -c1-150
        done
    done
}
# Added in session 37 (session 36's next.sh wrote the loop out): attn_bwd_parts TREE...: the attention
# backward's launches (the kernel, its conversions, group_sum where a tree has it, rowdot) in one
# hybrid step of bench_cuda_model under each TREE (head: this tree, else /tmp/TREE), Nsight Compute
# with the caches left alone as in a step, into $R/ncu-attn-TREE.csv, summed per kernel by ncu_sum
attn_bwd_parts() {
    for t in "$@"; do
        d=.; [ $t = head ] || d=/tmp/$t
        timeout 90 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
            -k "regex:attn_bwd|convert|group_sum|rowdot" --launch-skip 80 --launch-count 80 \
            $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-attn-$t.csv
        ncu_sum $R/ncu-attn-$t.csv $t
        el ncu $t
    done
}
