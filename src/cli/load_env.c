/* The one re-exec that sets what libraries read at load (load_env.h). */
#include "cli/load_env.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/cpu/blas_kernels.h"

/* what OpenBLAS had chosen before graft set OPENBLAS_CORETYPE (set with it) */
#define CHOSE_VAR "GRAFT_OPENBLAS_CHOSE"

void load_env_reexec(char **argv) {
    bool again = false;
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        again = true;
    }
    const char *better = blas_kernels_better();
    if (better) {
        setenv(CHOSE_VAR, blas_kernels_name(), 1);
        setenv("OPENBLAS_CORETYPE", better, 1);
        again = true;
    }
    if (again) {
        /* exec the real path, not /proc/self/exe, so the process keeps its name */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            execv(self, argv);
        }
        /* exec failed (no /proc): carry on as loaded, saying so below */
    }
    const char *chose = getenv(CHOSE_VAR), *forced = getenv("OPENBLAS_CORETYPE");
    if (chose && forced && blas_kernels_lack_avx(blas_kernels_name()))
        fprintf(stderr,
                "graft: warning: OpenBLAS runs its %s kernels (no AVX) on a CPU with AVX2, although graft set "
                "OPENBLAS_CORETYPE=%s; CPU matrix products run several times slower than they could\n",
                blas_kernels_name(), forced);
}

void load_env_blas_line(char *buf, size_t n) {
    const char *chose = getenv(CHOSE_VAR), *forced = getenv("OPENBLAS_CORETYPE");
    if (chose && forced)
        snprintf(buf, n, "OpenBLAS kernels: %s (OpenBLAS chose %s, which has no AVX, on this CPU; graft set "
                         "OPENBLAS_CORETYPE=%s)", blas_kernels_name(), chose, forced);
    else
        snprintf(buf, n, "OpenBLAS kernels: %s%s%s", blas_kernels_name(), forced ? ", OPENBLAS_CORETYPE=" : "",
                 forced ? forced : "");
}
