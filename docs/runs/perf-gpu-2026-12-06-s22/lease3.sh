# Session 22, call 3, on lease2.sh's warm machine (FLA's Triton cache filled; carry .carry, .peers):
# the GDN layer forward + backward at 16 x 2048 and 4 x 8192 (bench_gdn) with the slab chosen and
# with 16-row slabs forced, then FLA's chunk kernel and the naive peer on the same shapes (peer_gdn).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
[ -x build/gpu/bench_gdn ] || make -j16 gpu-tests >$L/build.log 2>&1
for slab in 0 16; do
    [ $(left 560) -gt 90 ] || break
    GRAFT_BENCH_GDN_SLAB=$slab timeout 120 build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' |
        sed "s/^{/{\"gdn_slab\":$slab,/" | tee -a $R/bench_gdn.jsonl | show | grep -E "layer|core" | sed "s/^/slab $slab: /"
done
el bench_gdn
(cd tests/gpu/peers && timeout $(left 585) python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$L/peer_gdn.log
echo "peer_gdn rc $?"
grep '^{' $R/peer_gdn.jsonl | show
el peer
tar -C $L -czf $R/misc.tar.gz .
