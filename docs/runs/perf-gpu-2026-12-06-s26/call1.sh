# Session 26's first call (carry .carry, with .carry/base26.patch = `git diff -R engine/` of the working
# tree: the head's engine, 919e311). The working tree's GDN kernels (1) carve shared memory with no
# select against a null base, so their shared accesses are ld.shared / st.shared again (the PTX of the
# kFix kernels had none: every shared access a generic ld / st with 64-bit address arithmetic), and (2)
# step the fragments' addresses by a constant in the k loops that are not unrolled (the local
# backward's). Builds the head's engine beside it (/tmp/base26), runs test_cuda_gdn on the GPU, times
# both trees with bench_gdn alternating (two rounds), the general kernels once each
# (GRAFT_BENCH_GDN_GENERAL=1), Nsight Compute's duration of one launch of each core kernel under both,
# and the local backward's source profile on the new tree, while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j8 build/gpu/bench_gdn build/gpu/test_cuda_gdn >$L/build.log 2>&1 &
tree_build base26 build/gpu/bench_gdn &
wait
[ -x build/gpu/test_cuda_gdn ] && [ -x /tmp/base26/build/gpu/bench_gdn ] || { tail -20 $L/build*.log; exit 1; }
el build
build/gpu/test_cuda_gdn >$R/test_cuda_gdn-new.txt 2>&1; echo "test_cuda_gdn (new) rc $?: $(tail -n 1 $R/test_cuda_gdn-new.txt)"
gzip -9 $R/test_cuda_gdn-new.txt
el test
bench_trees 2 430 $R/bench_gdn-trees.jsonl base=/tmp/base26 new=.
for t in base=/tmp/base26 new=.; do
    [ $(left 470) -gt 30 ] || break
    GRAFT_BENCH_GDN_GENERAL=1 timeout 60 ${t#*=}/build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' |
        sed "s/^{/{\"tree\":\"${t%%=*}\",\"kernels\":\"general\",/" | tee -a $R/bench_gdn-general.jsonl | show |
        grep -E "core (fwd|bwd) D|layer fwd\+bwd D" | sed "s/^/${t%%=*} general: /"
done
el general
for k in gdn_bwd_local gdn_bwd_state gdn_state gdn_wy gdn_out gdn_bwd_v; do # while 150 s are left for the source profile
    for t in base=/tmp/base26 new=.; do
        [ $(left 585) -gt 150 ] || break 2
        ncu_launch ${k}_kernel ${t%%=*} ${t#*=} $R/ncu-trees.txt
    done
done
el ncu
if [ $(left 585) -gt 100 ]; then # where the local backward's time goes now, line by line
    timeout $(( $(left 585) - 15 )) sh tests/gpu/bench/gdn_ncu_source.sh bwd_local build $R >$R/top-bwd_local.txt 2>&1
    echo "== source bwd_local rc $?"; head -n 12 $R/top-bwd_local.txt; rm -f $R/ncu_bwd_local.ncu-rep
fi
nvidia-smi --query-gpu=name,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader
tar -C $L -czf $R/misc.tar.gz .
