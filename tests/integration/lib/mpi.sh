# Shared by the data-parallel checks (sourced after tests/lib.sh): graft as
# several ranks under Open MPI's mpirun, on the CPU backend.

# need_mpi: skips without mpirun or when graft was built without MPI; sets MPIRUN.
need_mpi() {
    command -v mpirun >/dev/null 2>&1 || skip "SKIP: mpirun not found (Debian: openmpi-bin)"
    ldd "$G" 2>/dev/null | grep -q 'libmpi' || skip "SKIP: graft was built without MPI (libopenmpi-dev)"
    # -q: mpirun's own banners stay out of stderr (graft prints the one line);
    # ranks share the two cores (no pinning, more ranks than cores allowed)
    MPIRUN="mpirun -q --oversubscribe --bind-to none"
    [ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
    # Open MPI allocates for the life of the process; LeakSanitizer (make sanitize)
    # reports it. Its plugins are unloaded by then, so only the slow unwinder's
    # full stacks (through libmpi, libopen-rte, ...) match the suppressions
    export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GRAFT_ROOT/tests/integration/lib/lsan-mpi.supp:print_suppressions=0"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
    return 0
}

# rank_pid N: the pid of graft's rank N among this test's processes (Open MPI's environment)
rank_pid() {
    for p in $(pgrep -f "$G" 2>/dev/null); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
           tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "GRAFT_TEST_TMP=$TMP"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
export GRAFT_TEST_TMP="$TMP" # marks this test's ranks for rank_pid

# ckpt_step FILE: the step a training checkpoint holds (0 when absent)
ckpt_step() { python3 -c "import struct,sys; print(struct.unpack('<8sQq', open(sys.argv[1],'rb').read(24))[2])" "$1" 2>/dev/null || echo 0; }

ckpt_at_least() { [ "$(ckpt_step "$1")" -ge "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# wait_for SECONDS CMD...: polls CMD every 0.1 s; 1 when it never succeeded
wait_for() {
    n=$(($1 * 10)); shift
    while [ $n -gt 0 ]; do
        "$@" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
