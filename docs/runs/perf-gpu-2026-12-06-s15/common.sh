# What session 15's lease scripts share (sourced from the repository root on the device machine):
# the carried environment, timing lines, the project's table of bench lines (tests/gpu/bench/table.py),
# and the base tree: a copy of this one with .carry/base.patch applied (6de398e's engine), kept in
# /tmp/base while the machine stays warm and the patch is the same.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
L=$(mktemp -d)
B=/tmp/base
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
show() { python3 tests/gpu/bench/table.py /dev/stdin; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
# base_build TARGET...: make TARGETs in the base tree (make rebuilds what the patch touched)
base_build() {
    if [ ! -d $B/build ] || ! cmp -s .carry/base.patch $B/.carry/base.patch; then
        rm -rf $B; mkdir -p $B; tar --exclude=./.peers -cf - . | tar -xf - -C $B
        (cd $B && patch -s -p1 <.carry/base.patch) || { echo "base.patch does not apply"; return 1; }
    fi
    (cd $B && make -j14 "$@" >>$L/build-base.log 2>&1) || { echo "base build failed"; tail -5 $L/build-base.log; return 1; }
}
