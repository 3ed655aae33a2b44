#!/bin/sh
# The GPU plan of the lease of 2026-12-03 (session 5), kept as it ran. Run from /tmp/g on the device.
#   sh LEASE-PLAN.sh start     build; once the 1.5B teacher is joined: T1 the 1.5B race at lr 3e-4 with
#                              recall at 1k-32k (niah-number, multikey, vt) and every answer dumped;
#                              T2 beside it: the Stage 1 component table and the ablation with the gated fit
#   sh LEASE-PLAN.sh poll S    wait up to S s (or until done), print progress, tar /tmp/res into $OUT
cd /tmp/g || exit 1
. .carry/env.sh
export GRAFT_SHARED
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

t1() {
    waitf /tmp/built
    waitf $QWEN
    mark "race 1.5B lr 3e-4"
    OUT=$R/race15 GRAFT_PAPER_DIR=/tmp/paper-15 GRAFT_RACE_STUDENTS="$STUDENTS4" GRAFT_RUN_S=1500 \
        GRAFT_RACE_ARGS="--recall-every 244 --recall-lengths 1024,4096,16384,32000 --recall-tasks niah-number,multikey,vt --recall-dump $R/race15/recall.jsonl" \
        sh tests/gpu/paper/run.sh race 3e-4 5000000 >>$R/race15.out 2>&1
    mark "race exit $?"
    [ -f $R/race15/recall.jsonl ] && gzip -9 $R/race15/recall.jsonl
    touch /tmp/doneT1
}

t2() {
    waitf /tmp/built
    waitf $QWEN
    mark "stage1 gated"
    OUT=$R/stage1g GRAFT_RUN_S=500 sh tests/gpu/paper/run.sh stage1 gated >>$R/side.out 2>&1
    mark "stage1 exit $?"
    mark "ablate gated"
    OUT=$R/ablateg GRAFT_RUN_S=500 GRAFT_ABLATE_FITS=gated sh tests/gpu/paper/run.sh ablate >>$R/side.out 2>&1
    mark "ablate exit $?"
    touch /tmp/doneT2
}

case $1 in
start)
    rm -f /tmp/built /tmp/doneT1 /tmp/doneT2
    mkdir -p $R/race15
    (join /tmp/ship/qparts 20 $QWEN cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 >>$R/join.log 2>&1 &&
        mark "qwen joined") &
    build &
    t1 &
    t2 &
    wait
    ;;
poll)
    end=$(($(date +%s) + ${2:-500}))
    while [ "$(date +%s)" -lt $end ]; do
        [ -f /tmp/doneT1 ] && [ -f /tmp/doneT2 ] && break
        sleep 3
    done
    cat $R/progress.txt
    grep -hE "exit|recall at" $R/race15/paper.log $R/stage1g/paper.log $R/ablateg/paper.log 2>/dev/null | tail -14
    grep -h "tokens" $R/race15/paper.log 2>/dev/null | tail -2
    df -h /tmp | tail -1
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    tar -C $R -czf "$OUT/res.tar.gz" --exclude='recall.jsonl' . && ls -la "$OUT"
    ;;
esac
