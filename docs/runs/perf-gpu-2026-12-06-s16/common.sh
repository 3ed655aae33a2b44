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
