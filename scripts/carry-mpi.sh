#!/bin/sh
# Open MPI for a GPU machine that has none (the lent GPU machines have NCCL but
# no mpirun and no package registry): Debian's Open MPI 4.1 and the libraries
# under it, unpacked into .carry/mpi/ and relocated there, so that
# `make bench-gpu-dp` / `graft train --gpus N` can start their ranks.
# Run from the repository root after tests/gpu/carry.sh (or any time: it only
# touches .carry/mpi); carry .carry; on the GPU machine:
#   . .carry/env.sh && . .carry/mpi/env.sh && make gpu-tests && sh tests/gpu/bench/dp_scaling.sh
# env.sh puts mpirun on PATH, the libraries on LD_LIBRARY_PATH, sets
# OPAL_PREFIX (Open MPI's relocation), and points pkg-config at a copy of
# ompi-c.pc with the carried prefix, so the Makefile builds graft with MPI.
# Checked on the Debian machine with the system's Open MPI and PMIx folders
# hidden (a mount namespace): mpirun -np 2 runs from .carry/mpi alone.
set -eu
[ -f Makefile ] && [ -d engine ] || { echo "scripts/carry-mpi.sh: run it from the repository root" >&2; exit 2; }
dest=$(pwd)/.carry/mpi
exclude=$(git rev-parse --git-path info/exclude)
grep -qx '/.carry/' "$exclude" 2>/dev/null || echo '/.carry/' >> "$exclude"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkgs="openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
      libhwloc15 libfabric1 libucx0 libpsm-infinipath1 libpsm2-2 libibverbs1 ibverbs-providers librdmacm1
      libnl-3-200 libnl-route-3-200 libmunge2 libnuma1"
[ -n "$(ls /var/lib/apt/lists 2>/dev/null | grep -v lock | head -1)" ] || apt-get update -qq
# shellcheck disable=SC2086
(cd "$tmp" && apt-get download -qq $pkgs 2>/dev/null) || { echo "scripts/carry-mpi.sh: apt-get download failed ($pkgs)" >&2; exit 1; }
for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/x"; done
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$tmp/x/usr" "$dest/usr"
# what a C program and mpirun do not need
rm -rf "$dest/usr/share/doc" "$dest/usr/share/man" "$dest/usr/share/lintian" "$dest/usr/lib/x86_64-linux-gnu/fortran" \
       "$dest"/usr/lib/x86_64-linux-gnu/openmpi/lib/*java* "$dest"/usr/lib/x86_64-linux-gnu/openmpi/lib/*mpifh* \
       "$dest"/usr/lib/x86_64-linux-gnu/openmpi/lib/*usempi* "$dest"/usr/lib/x86_64-linux-gnu/*mpi_java* \
       "$dest"/usr/lib/x86_64-linux-gnu/*mpifh* "$dest"/usr/lib/x86_64-linux-gnu/*usempi*
ln -sf mpirun.openmpi "$dest/usr/bin/mpirun"
cat > "$dest/env.sh" <<'EOF'
# Source from the repository root (after .carry/env.sh): the carried Open MPI.
_x=$(pwd)/.carry/mpi/usr
_l=$_x/lib/x86_64-linux-gnu
export OPAL_PREFIX="$_x"
export PATH="$_x/bin:$PATH"
export LD_LIBRARY_PATH="$_l:$_l/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# PMIx looks for its plugins at Debian's absolute path; without them it only warns
export PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_MCA_mca_base_component_show_load_errors=0
mkdir -p "$(pwd)/.carry/mpi/pkgconfig"
sed "s|^prefix=.*|prefix=$_x|" "$_l/openmpi/lib/pkgconfig/ompi-c.pc" > "$(pwd)/.carry/mpi/pkgconfig/ompi-c.pc"
export PKG_CONFIG_PATH="$(pwd)/.carry/mpi/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
EOF
du -sh "$dest" | sed 's/^/.carry\/mpi: /'
