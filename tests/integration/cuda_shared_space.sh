#!/bin/sh
# The GDN core kernels reach shared memory through its own state space: in the PTX
# of engine/backend/cuda/cuda_gdn_core.cu and cuda_gdn_core_bwd.cu (compute_90, -O3 as
# the build) no kernel has a generic ld / st (one without .shared, .global,
# .param, .local or .const), except the general dh pass (gdn_bwd_state_kernel with
# kFix false), which carves its shared memory as it always did (cuda_gdn_dev.cuh,
# SmemCarveT). Until session 26 the select against a null base in that carve made
# every shared access of the kFix kernels (the ones every 128-wide head runs) a
# generic one (6 % of the local backward's instructions in session 24's Nsight
# Compute profile, their 64-bit address arithmetic 4 % more; docs/cuda-gdn.md,
# "Shared memory through the generic space"). On the tree before that change this
# check failed for 26 of the 32 kernels; it is shown here to fail on a planted
# generic load. Skipped without nvcc; ~16 s of nvcc.
set -u
ROOT=${GRAFT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
NVCC=$(command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || { echo "SKIP: nvcc not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in cuda_gdn_core cuda_gdn_core_bwd; do
    "$NVCC" -std=c++17 -O3 -gencode=arch=compute_90,code=compute_90 -DGRAFT_WITH_CUDA -I"$ROOT" -I"$ROOT/engine" \
        -ptx "$ROOT/engine/backend/cuda/$f.cu" -o "$T/$f.ptx" || { echo "FAIL: nvcc -ptx $f.cu"; exit 1; }
done
# check.py PTX...: prints each kernel's generic and shared access counts; exits 1 when a kernel
# other than the general dh pass has a generic one, or when no kernel was found
cat >"$T/check.py" <<'EOF'
import re, sys
generic = re.compile(r'^\s*(?:@!?%p\d+\s+)?(ld|st)(?:\.(?:volatile|relaxed|weak))?\.(?!shared|global|param|local|const)[\w.]*\s', re.M)
shared = re.compile(r'^\s*(?:@!?%p\d+\s+)?(?:ld|st)\.shared', re.M)
bad = kernels = 0
for path in sys.argv[1:]:
    text = open(path).read()
    for body in re.split(r'^(?=(?:\.visible\s+)?\.entry\s)', text, flags=re.M)[1:]:
        name = re.search(r'\.entry\s+(\w+)', body).group(1)
        kernels += 1
        g, s = len(generic.findall(body)), len(shared.findall(body))
        # the general dh pass: gdn_bwd_state_kernel<T, kWarps, false>
        exempt = re.match(r'_Z\d+gdn_bwd_state_kernelI.*Li\d+ELb0EE', name) is not None
        print(f"{'exempt ' if exempt else ''}{name[:72]}: generic {g}, shared {s}")
        if g and not exempt:
            bad += 1
print(f"{kernels} kernels, {bad} with generic shared-memory accesses")
sys.exit(1 if bad or not kernels else 0)
EOF
python3 "$T/check.py" "$T/cuda_gdn_core.ptx" "$T/cuda_gdn_core_bwd.ptx" >"$T/out" || { cat "$T/out"; echo "FAIL: a GDN kernel accesses shared memory through the generic space"; exit 1; }
tail -n 1 "$T/out"
grep -q "gdn_bwd_local_kernelI13__nv_bfloat16Lb1EE.*shared [1-9]" "$T/out" || { cat "$T/out"; echo "FAIL: the bf16 kFix local backward is not in the PTX (is the scan wrong?)"; exit 1; }
# the check itself can fail: a kernel whose load goes through the generic space
printf '.visible .entry _Z13gdn_wy_kernelI13__nv_bfloat16Lb1EEv(\n)\n{\n\tld.u32 \t%%r1, [%%rd1];\n\tld.shared.u32 \t%%r2, [%%r3];\n}\n' >"$T/bad.ptx"
if python3 "$T/check.py" "$T/bad.ptx" >"$T/bad.out"; then cat "$T/bad.out"; echo "FAIL: a generic load was not reported"; exit 1; fi
grep -q "1 with generic" "$T/bad.out" || { cat "$T/bad.out"; echo "FAIL: the planted generic load not counted"; exit 1; }
echo "PASS"
