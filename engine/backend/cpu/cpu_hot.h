/* What the CPU backend's hot element loops share.
 *
 * CPU_HOT: a loop's function built twice, for x86-64-v2 (the build's target)
 * and for AVX2 + FMA (x86-64-v3), and picked at run time by GCC's function
 * multi-versioning. With libmvec's exps declared simd in the file, its omp
 * simd loops then call the 4-double / 8-float AVX2 forms. Not under clang (the
 * fuzzers) nor ASan (whose interceptors the resolver runs before).
 *
 * CPU_LANES running values (sums, maxima) instead of one serial chain: a
 * chain of double adds waits ~4 cycles an element. Eight is AVX2's floats a
 * vector (x86-64-v2's four divide it); the lanes' sums meet in a fixed tree,
 * so the bits do not depend on the vector width or the threads. */
#ifndef GRAFT_BACKEND_CPU_HOT_H
#define GRAFT_BACKEND_CPU_HOT_H

#include <math.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CPU_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CPU_HOT
#endif

/* CPU_VECTOR_MATH(declaration): declares a libm function simd ("notinbranch"),
 * as glibc's math.h itself does under -ffast-math, so that GCC's vectorizer
 * calls libmvec's vector form (linked by the Makefile; within 4 ulp) in the
 * file's omp simd loops. Each file declares the functions it wants vectorized,
 * so the others' loops keep the scalar calls and their bits. Other compilers
 * (clang builds the fuzzers) keep the scalar calls. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CPU_VECTOR_MATH(decl) decl __attribute__((simd("notinbranch")));
#else
#define CPU_VECTOR_MATH(decl)
#endif

#define CPU_LANES 8

static inline double cpu_lanes_sum(const double lane[CPU_LANES]) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* The largest of z[0, n) (NaN skipped), in CPU_LANES running maxima: the
 * largest value does not depend on the order it is found in (only which of +0
 * and -0 wins a tie, which no exp or sum after it can see). */
static inline float cpu_row_max(const float *z, int n) {
    float lane[CPU_LANES];
    for (int l = 0; l < CPU_LANES; l++) lane[l] = -INFINITY;
    int j = 0;
    for (; j + CPU_LANES <= n; j += CPU_LANES)
        for (int l = 0; l < CPU_LANES; l++) lane[l] = z[j + l] > lane[l] ? z[j + l] : lane[l];
    for (int l = 0; j < n; j++, l++) lane[l] = z[j] > lane[l] ? z[j] : lane[l];
    float m = -INFINITY;
    for (int l = 0; l < CPU_LANES; l++) m = lane[l] > m ? lane[l] : m;
    return m;
}

#endif
