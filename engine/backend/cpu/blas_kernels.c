/* OpenBLAS's kernel set against the CPU's features (blas_kernels.h). */
#include "backend/cpu/blas_kernels.h"

#include <stdlib.h>
#include <strings.h>

char *openblas_get_corename(void); /* OpenBLAS's own, declared here: not every cblas.h has it */

const char *blas_kernels_name(void) {
    const char *n = openblas_get_corename();
    return n ? n : "unknown";
}

bool blas_kernels_lack_avx(const char *name) {
    /* OpenBLAS's x86 targets older than Sandy Bridge / Bulldozer (its DYNAMIC_ARCH list) */
    static const char *const sse_only[] = {"Katmai",  "Coppermine", "Northwood", "Prescott", "Banias",
                                           "Core2",   "Penryn",     "Dunnington", "Nehalem", "Atom",
                                           "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Nano"};
    for (size_t i = 0; i < sizeof sse_only / sizeof *sse_only; i++)
        if (!strcasecmp(name, sse_only[i])) return true;
    return false;
}

const char *blas_kernels_for_cpu(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    if (avx512 && __builtin_cpu_supports("avx512bf16")) return "Cooperlake";
    if (avx512) return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

const char *blas_kernels_pick(const char *chosen, const char *coretype_env, const char *for_cpu) {
    if (coretype_env) return NULL; /* the user's (or an earlier exec's) choice stands, even an empty one */
    if (!chosen || !blas_kernels_lack_avx(chosen)) return NULL; /* OpenBLAS knew the CPU well enough */
    return for_cpu;
}

const char *blas_kernels_better(void) {
    return blas_kernels_pick(blas_kernels_name(), getenv("OPENBLAS_CORETYPE"), blas_kernels_for_cpu());
}
