#!/bin/sh
# The GPU plan of the lease of 2026-12-03 13:44-14:10 UTC, kept as it ran (lease-2026-12-03-s4.md). Run from /tmp/g on the device.
#   sh LEASE-PLAN.sh start     tracks: T1 build, test-gpu, SmolLM2 (hf recall ref, race + drift);
#                              T2 1.5B halflife; T3 (after both) 1.5B race with recall
#   sh LEASE-PLAN.sh poll S    wait up to S s (or until done), print progress, tar /tmp/res into $OUT
cd /tmp/g || exit 1
. .carry/env.sh
export GRAFT_SHARED
SMOL=/tmp/ship/SmolLM2-135M-Instruct.Q4_1.gguf
QWEN=/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
R=/tmp/res
mkdir -p $R
STUDENTS4="random taylor-calibrate:gate taylor-calibrate@gated taylor-calibrate"

waitf() { while [ ! -f "$1" ]; do sleep 2; done; }
join() { # DIR N FINAL SHA
    while [ "$(ls "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do sleep 1; done
    cat "$1"/* >"$3.tmp" && echo "$4  $3.tmp" | sha256sum -c - && mv "$3.tmp" "$3" && rm -rf "$1"
}
mark() { echo "$(date +%T) $*" >>$R/progress.txt; }

build() {
    mark "build"
    make -k -j16 build/graft >$R/build-werror.log 2>&1 || { mark "build: -Werror failed"; grep -B2 -A3 "error:" $R/build-werror.log | head -40 >$R/build-warnings.txt; }
    make -j16 build/graft SAN=-Wno-error >$R/build.log 2>&1 || { mark "BUILD FAILED"; return 1; }
    mark "built"
    touch /tmp/built
}

drift() { # PAPER_DIR OUT_DIR TEXT DEVICE: graft halflife over each student's kept race checkpoints
    pd=$1 od=$2 tx=$3 dv=$4
    rd=$(ls -d "$pd"/race-* | head -1)
    mkdir -p "$od"
    for pair in "student-random|random" "student-taylor-calibrate_gate|taylor-calibrate[gate]" \
        "student-taylor-calibrate_gated|taylor-calibrate[decay,beta,sigma,gate,sigma gated]" \
        "student-taylor-calibrate|taylor-calibrate"; do
        n=${pair%%|*} c="$rd/${pair#*|}.ckpt"
        [ -f "$c" ] || { echo "drift: no $c" >>"$od/drift.log"; continue; }
        set --
        for k in $(ls "$c".step-* | sed 's/.*step-//' | sort -n); do set -- "$@" --ckpt "$c.step-$k"; done
        t0=$(date +%s)
        timeout 150 ./build/graft halflife "$pd/$n" --text "$tx" --ctx 256 --seqs 8 "$@" --device "$dv" --json \
            >"$od/drift-$n.json" 2>>"$od/drift.log" || { echo "drift $n: failed" >>"$od/drift.log"; rm -f "$od/drift-$n.json"; }
        echo "drift $n: $(($(date +%s) - t0)) s, $# args" >>"$od/drift.log"
    done
}

smol() {
    waitf $SMOL
    mark "smol recall + hf reference"
    OUT=$R/smol-recall RUN_S=300 GRAFT_TEACHER_1B5=$SMOL RECALL_LENGTHS=1k,2k,4k sh tests/gpu/recall/run.sh >>$R/smol.out 2>&1
    mark "smol race"
    # checkpoints every 120 of the 366 steps, each kept (--ckpt-keep) for the drift; recall every 108 steps
    OUT=$R/smol-race GRAFT_QWEN=$SMOL GRAFT_PAPER_DIR=/tmp/paper-smol GRAFT_RACE_STUDENTS="$STUDENTS4" GRAFT_RACE_CKPT_GB=30 \
        GRAFT_RUN_S=400 GRAFT_RACE_ARGS="--ckpt-keep --ckpt-every 120 --recall-every 108 --recall-lengths 1024,2048 --recall-tasks niah-number,multikey" \
        sh tests/gpu/paper/run.sh race 1e-3 3000000 >>$R/smol.out 2>&1
    mark "smol drift"
    size=$(wc -c <"$GRAFT_SHARED/data/gutenberg-60.txt")
    tail -c $((size / 2)) "$GRAFT_SHARED/data/gutenberg-60.txt" | head -c 200000 >/tmp/heldout.txt
    drift /tmp/paper-smol $R/smol-drift /tmp/heldout.txt cuda
    rm -rf /tmp/paper-smol
    mark "smol done"
}

t1() {
    build || { touch /tmp/doneT1 /tmp/doneB; return; }
    mark "test-gpu"
    OUT=$R/testgpu sh tests/gpu/device_run.sh test >$R/testgpu.out 2>&1
    mark "test-gpu exit $?"
    smol
    touch /tmp/doneT1
}

t2() {
    waitf /tmp/built
    waitf $QWEN
    mark "halflife 1.5B"
    OUT=$R/halflife GRAFT_RUN_S=800 sh tests/gpu/halflife/run.sh >>$R/halflife.out 2>&1
    mark "halflife exit $?"
    touch /tmp/doneT2
}

t3() {
    waitf /tmp/doneT1
    waitf /tmp/doneT2
    [ -f /tmp/built ] || { touch /tmp/doneB; return; }
    mark "race 1.5B"
    OUT=$R/race15 GRAFT_PAPER_DIR=/tmp/paper-15 GRAFT_RACE_STUDENTS="$STUDENTS4" GRAFT_RUN_S=1500 \
        GRAFT_RACE_ARGS="--recall-every 122 --recall-lengths 1024,4096,16384" \
        sh tests/gpu/paper/run.sh race 1e-3 5000000 >>$R/race15.out 2>&1
    mark "race exit $?"
    touch /tmp/doneB
}

case $1 in
start)
    rm -f /tmp/built /tmp/doneB /tmp/doneT1 /tmp/doneT2
    (join /tmp/ship/sparts 2 $SMOL b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 >>$R/join.log 2>&1 &&
        mark "smol joined") &
    (join /tmp/ship/qparts 20 $QWEN cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 >>$R/join.log 2>&1 &&
        mark "qwen joined") &
    t1 &
    t2 &
    t3
    wait
    ;;
poll)
    end=$(($(date +%s) + ${2:-500}))
    while [ "$(date +%s)" -lt $end ]; do
        [ -f /tmp/doneB ] && break
        sleep 3
    done
    cat $R/progress.txt
    grep -hE "exit|passed|failed" $R/testgpu/test-summary.txt $R/halflife/halflife.log $R/race15/paper.log $R/smol-race/paper.log 2>/dev/null | tail -12
    grep -h "tokens" $R/race15/paper.log 2>/dev/null | tail -2
    df -h /tmp | tail -1
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    tar -C $R -czf "$OUT/res.tar.gz" --exclude='*.dump.jsonl' . && ls -la "$OUT"
    ;;
esac
