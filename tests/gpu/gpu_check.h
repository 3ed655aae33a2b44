/* Helpers for the GPU checks (tests/gpu/test_*.c): the same op run on the CPU
 * backend (float32, the reference) and on a CUDA backend, through backend.h
 * only, and compared.
 *
 * A `pair` is one tensor on both backends. Inputs are drawn fresh each run
 * (the seed is printed; GRAFT_TEST_SEED repeats a run), never zeros; when the
 * CUDA backend stores bf16 the host values are rounded to bf16 first, so both
 * backends see the same numbers and the comparison measures only the
 * computation. Outputs on the GPU are poisoned with NaN before each op, so an
 * element the op did not write fails the check.
 *
 * A check passes when ||gpu - cpu|| / ||cpu|| <= tol and nothing is NaN or
 * Inf; every line prints the relative error, the largest absolute error and
 * the tolerance. */
#ifndef GRAFT_TESTS_GPU_CHECK_H
#define GRAFT_TESTS_GPU_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/backend_impl.h" /* be_open_variants: the kernel variants forced */
#include "core/error.h"
#include "gpu_open.h"

typedef struct {
    gf_backend *cpu, *gpu;
    int passed, failed;
    uint64_t rng;
    const char *mode; /* "fp32" or "bf16" */
} gpu_ctx;

static gpu_ctx G;

/* ------------------------------------------------------------- random */

static uint64_t rng_next(void) { /* xorshift64* */
    G.rng ^= G.rng >> 12;
    G.rng ^= G.rng << 25;
    G.rng ^= G.rng >> 27;
    return G.rng * 2685821657736338717ull;
}
static float rng_uniform(void) { return (float)((rng_next() >> 11) * (1.0 / 9007199254740992.0)); }
/* Uniform in [-a, a], never exactly 0. */
static float rng_sym(float a) {
    float x;
    do x = (2.0f * rng_uniform() - 1.0f) * a;
    while (x == 0.0f);
    return x;
}

static float bf16_round(float x) { /* round to nearest even, like __float2bfloat16 */
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* ------------------------------------------------------------- pairs */

typedef struct {
    gf_buf c, g;  /* CPU, GPU */
    size_t n;
    gf_dtype t;   /* GF_BF16 stands for "ACT": F32 on the CPU, the CUDA backend's type on the GPU */
} pair;

#define ACT GF_BF16

static void die(const char *what) {
    fprintf(stderr, "FATAL %s: %s\n", what, gf_last_error());
    exit(1);
}

static pair mk(size_t n, gf_dtype t) {
    pair p = {gf_none(), gf_none(), n, t};
    if (be_alloc(G.cpu, &p.c, n ? n : 1, t == ACT ? GF_F32 : t) < 0) die("cpu alloc");
    if (be_alloc(G.gpu, &p.g, n ? n : 1, t == ACT ? be_act(G.gpu) : t) < 0) die("gpu alloc");
    return p;
}
static void drop(pair *p) {
    be_free(G.cpu, &p->c);
    be_free(G.gpu, &p->g);
}

/* Same host values on both sides (F32 host array; rounded to bf16 when the GPU stores bf16). */
static void put(pair *p, float *host) {
    if (p->t == ACT && be_act(G.gpu) == GF_BF16)
        for (size_t i = 0; i < p->n; i++) host[i] = bf16_round(host[i]);
    if (p->t == GF_F64) {
        double *d = malloc(p->n * sizeof *d);
        for (size_t i = 0; i < p->n; i++) d[i] = host[i];
        if (be_upload(G.cpu, p->c, d, GF_F64, p->n) < 0 || be_upload(G.gpu, p->g, d, GF_F64, p->n) < 0) die("upload");
        free(d);
        return;
    }
    if (be_upload(G.cpu, p->c, host, GF_F32, p->n) < 0 || be_upload(G.gpu, p->g, host, GF_F32, p->n) < 0)
        die("upload");
}
static void put_i32(pair *p, const int *host) {
    if (be_upload(G.cpu, p->c, host, GF_I32, p->n) < 0 || be_upload(G.gpu, p->g, host, GF_I32, p->n) < 0)
        die("upload");
}
/* Random values in [-a, a] on both sides. */
static void rand_put(pair *p, float a) {
    float *h = malloc(p->n * sizeof *h);
    for (size_t i = 0; i < p->n; i++) h[i] = rng_sym(a);
    put(p, h);
    free(h);
}
static pair mk_rand(size_t n, gf_dtype t, float a) {
    pair p = mk(n, t);
    rand_put(&p, a);
    return p;
}

/* NaN into the GPU copy (an output the op must overwrite completely). */
static void poison(pair *p) {
    if (p->t == GF_I32) return;
    if (p->t == GF_F64) {
        double *h = malloc(p->n * sizeof *h);
        for (size_t i = 0; i < p->n; i++) h[i] = NAN;
        if (be_upload(G.gpu, p->g, h, GF_F64, p->n) < 0) die("poison");
        free(h);
        return;
    }
    float *h = malloc(p->n * sizeof *h);
    for (size_t i = 0; i < p->n; i++) h[i] = NAN;
    if (be_upload(G.gpu, p->g, h, GF_F32, p->n) < 0) die("poison");
    free(h);
}

static double *fetch(gf_backend *be, gf_buf b, size_t n, gf_dtype t) {
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (t == GF_F64) {
        if (be_download(be, d, GF_F64, b, n) < 0) die("download");
        return d;
    }
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (be_download(be, f, GF_F32, b, n) < 0) die("download");
    for (size_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
    return d;
}

/* Compares elements [off, off + n) of both copies; prints one line; returns 1 when it passed. */
static int cmp_range(const char *what, const pair *p, size_t off, size_t n, double tol) {
    if (be_sync(G.gpu) < 0 || be_sync(G.cpu) < 0) {
        printf("FAIL  %-5s %-44s backend error: %s\n", G.mode, what, gf_last_error());
        G.failed++;
        return 0;
    }
    double *c = fetch(G.cpu, p->c, p->n, p->t), *g = fetch(G.gpu, p->g, p->n, p->t);
    double num = 0, den = 0, maxe = 0;
    size_t bad = 0, first_bad = 0;
    for (size_t i = off; i < off + n; i++) {
        if (!isfinite(g[i]) || !isfinite(c[i])) {
            if (!bad) first_bad = i;
            bad++;
            continue;
        }
        const double e = fabs(g[i] - c[i]);
        num += e * e;
        den += c[i] * c[i];
        if (e > maxe) maxe = e;
    }
    const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    const int ok = !bad && rel <= tol && isfinite(rel);
    if (bad)
        printf("%s  %-5s %-44s %zu of %zu not finite (first at %zu: gpu %g cpu %g)\n", ok ? "PASS" : "FAIL", G.mode,
               what, bad, n, first_bad, g[first_bad], c[first_bad]);
    else
        printf("%s  %-5s %-44s rel %.2e  max %.2e  tol %.0e\n", ok ? "PASS" : "FAIL", G.mode, what, rel, maxe, tol);
    free(c);
    free(g);
    if (ok) G.passed++;
    else G.failed++;
    return ok;
}
static int cmp(const char *what, const pair *p, double tol) { return cmp_range(what, p, 0, p->n, tol); }

/* Tolerances (relative L2). f32: both sides compute in float with different
 * summation orders and exp implementations: ~1e-6 per op, 1e-5 leaves room;
 * products over a long inner dimension (k up to a few thousand): 2e-5.
 * bf16: outputs are rounded to 8 significant bits (RMS relative error about
 * 2.3e-3) and attention also rounds its probabilities to bf16 before P V:
 * 1e-2. */
static double tol_ew(void) { return be_act(G.gpu) == GF_BF16 ? 1e-2 : 1e-5; }
static double tol_mm(void) { return be_act(G.gpu) == GF_BF16 ? 1e-2 : 2e-5; }

/* Opens the CUDA backend or exits: 77 (skipped) where no CUDA device exists, 1
 * where one does (gpu_open.h), with the reason. */
/* v: kernel variants to force (NULL: the backend chooses). */
static gf_backend *open_gpu_variants_or_skip(bool fp32, const gf_backend_variants *v) {
    gf_backend_opts o = {"cuda", 0, fp32};
    gf_backend *be = NULL;
    if (be_open_variants(&be, &o, v) < 0) exit(gpu_open_failed("cuda"));
    return be;
}
static gf_backend *open_gpu_or_skip(bool fp32) { return open_gpu_variants_or_skip(fp32, NULL); }

static void seed_from_env(void) {
    const char *s = getenv("GRAFT_TEST_SEED");
    G.rng = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (!G.rng) G.rng = 88172645463325252ull;
    printf("seed %llu (GRAFT_TEST_SEED=%llu repeats this run)\n", (unsigned long long)G.rng,
           (unsigned long long)G.rng);
}

#endif
