/* The Transformer block's dense ops on CPU, forward and backward side by side:
 * embedding, linear (OpenBLAS sgemm), RMSNorm, RoPE, SwiGLU, add, scale. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_hot.h"

/* SwiGLU's expf in libmvec's vector form (8 floats a call under AVX2,
 * CPU_VECTOR_MATH; the scalar expf was ~2 % of a CPU training step's samples in
 * perf, with SwiGLU's loops another ~1.7 %): each element apart and every
 * one through the vector form, so an element's bits depend on its value and
 * the machine (AVX2 or not), never on the threads or where it sits. */
CPU_VECTOR_MATH(float expf(float))

void cpu_embedding(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D) {
    float *y = cpu_f(x);
    const float *e = cpu_f(E);
    const int *tok = cpu_i(tokens);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)N)) if ((size_t)N * D > CPU_ELEMS_PAR)
    for (int n = 0; n < N; n++) memcpy(y + (size_t)n * D, e + (size_t)tok[n] * D, (size_t)D * sizeof(float));
}

/* Rows in token order, so repeated tokens add in a fixed order. */
void cpu_embedding_backward(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D) {
    (void)be;
    float *de = cpu_f(dE);
    const float *g = cpu_f(dx);
    const int *tok = cpu_i(tokens);
    for (int n = 0; n < N; n++) {
        float *row = de + (size_t)tok[n] * D;
        const float *gr = g + (size_t)n * D;
        for (int i = 0; i < D; i++) row[i] += gr[i];
    }
}

/* OpenBLAS splits a product over its threads from 64^3 multiply-adds on; below SGEMM_PAR_MIN_MACS
 * the split costs more than it saves, and on a busy machine, where each split waits for its slowest
 * thread to be scheduled, far more (a stories260K eval split 28,782 such products). These run on the
 * calling thread. OpenBLAS splits rows and columns, never the sum, so the bits are the same. */
#define SGEMM_PAR_MIN_MACS 4194304.0
static void sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float *A, int lda,
                  const float *B, int ldb, float beta, float *C, int ldc) {
    const int keep = (double)m * n * k < SGEMM_PAR_MIN_MACS && !omp_in_parallel() ? omp_get_max_threads() : 1;
    if (keep > 1) omp_set_num_threads(1); /* the count OpenBLAS follows (blas_serial.h) */
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (keep > 1) omp_set_num_threads(keep);
}

void cpu_linear_add(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, gf_buf add) {
    float *Y = cpu_f(y);
    const bool adds = !gf_is_none(add);
    if (adds && add.ptr != y.ptr) memcpy(Y, cpu_f(add), (size_t)N * out * sizeof *Y); /* then y += x W^T */
    sgemm(CblasNoTrans, CblasTrans, N, out, in, 1.0f, cpu_f(x), in, cpu_f(W), in, adds ? 1.0f : 0.0f, Y, out);
    if (!gf_is_none(b)) {
        const float *bb = cpu_f(b);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)N)) if ((size_t)N * out > CPU_ELEMS_PAR)
        for (int t = 0; t < N; t++)
            for (int o = 0; o < out; o++) Y[(size_t)t * out + o] += bb[o];
    }
}

void cpu_linear_backward(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N, int in,
                         int out, bool accumulate_dx, bool accumulate_dW) {
    const float *DY = cpu_f(dy);
    if (!gf_is_none(dx)) /* dx[N, in] = dy[N, out] W[out, in] */
        sgemm(CblasNoTrans, CblasNoTrans, N, in, out, 1.0f, DY, out, cpu_f(W), in, accumulate_dx ? 1.0f : 0.0f,
              cpu_f(dx), in);
    if (!gf_is_none(dW)) /* dW[out, in] (+)= dy^T[out, N] x[N, in]; beta 0 reads nothing of dW */
        sgemm(CblasTrans, CblasNoTrans, out, in, N, 1.0f, DY, out, cpu_f(x), in, accumulate_dW ? 1.0f : 0.0f,
              cpu_f(dW), in);
    if (!gf_is_none(db)) { /* columns in parallel, rows in order within a column */
        float *B = cpu_f(db);
        if (!accumulate_dW) memset(B, 0, (size_t)out * sizeof *B);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)out / 64 + 1)) if ((size_t)N * out > CPU_ELEMS_PAR)
        for (int o0 = 0; o0 < out; o0 += 64) {
            const int o1 = o0 + 64 < out ? o0 + 64 : out;
            for (int t = 0; t < N; t++)
                for (int o = o0; o < o1; o++) B[o] += DY[(size_t)t * out + o];
        }
    }
}

void cpu_rmsnorm(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps) {
    const float *X = cpu_f(x), *Wt = cpu_f(w);
    float *Y = cpu_f(y), *R = gf_is_none(rstd) ? NULL : cpu_f(rstd);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)rows)) if ((size_t)rows * n > CPU_ELEMS_PAR)
    for (int t = 0; t < rows; t++) {
        const float *xr = X + (size_t)t * n;
        float *yr = Y + (size_t)t * n;
        double ss = 0;
        for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        const float inv = (float)(1.0 / sqrt(ss / n + eps));
        if (R) R[t] = inv;
        for (int i = 0; i < n; i++) yr[i] = xr[i] * inv * Wt[i];
    }
}

/* y = x r w, r = 1/sqrt(mean(x^2) + eps): dw += sum_t dy x r;
 * dx = r (dy w) - r^3 x mean(dy w x). r is recomputed in double from x unless given. */
void cpu_rmsnorm_backward(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd, int rows,
                          int n, float eps, bool accumulate_dx) {
    const float *X = cpu_f(x), *G = cpu_f(dy), *Wt = cpu_f(w);
    const float *Rin = gf_is_none(rstd) ? NULL : cpu_f(rstd);
    if (!gf_is_none(dw)) {
        float *r = cpu_scratch(be, (size_t)rows * sizeof *r, "rmsnorm backward");
        if (!r) return;
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)rows)) if ((size_t)rows * n > CPU_ELEMS_PAR)
        for (int t = 0; t < rows; t++) {
            if (Rin) {
                r[t] = Rin[t];
                continue;
            }
            const float *xr = X + (size_t)t * n;
            double ss = 0;
            for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
            r[t] = (float)(1.0 / sqrt(ss / n + eps));
        }
        float *DW = cpu_f(dw);
        /* columns in parallel, rows in order: the same bits for any thread count */
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)n / 32 + 1)) if ((size_t)rows * n > CPU_ELEMS_PAR)
        for (int i0 = 0; i0 < n; i0 += 32) {
            const int i1 = i0 + 32 < n ? i0 + 32 : n;
            for (int t = 0; t < rows; t++) {
                const float *xr = X + (size_t)t * n, *gr = G + (size_t)t * n;
                for (int i = i0; i < i1; i++) DW[i] += gr[i] * xr[i] * r[t];
            }
        }
        free(r);
    }
    if (gf_is_none(dx)) return;
    float *DX = cpu_f(dx);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)rows)) if ((size_t)rows * n > CPU_ELEMS_PAR)
    for (int t = 0; t < rows; t++) {
        const float *xr = X + (size_t)t * n, *gr = G + (size_t)t * n;
        float *dr = DX + (size_t)t * n;
        double ss = 0, dot = 0;
        for (int i = 0; i < n; i++) {
            ss += (double)xr[i] * xr[i];
            dot += (double)gr[i] * Wt[i] * xr[i];
        }
        const double r = Rin ? (double)Rin[t] : 1.0 / sqrt(ss / n + eps);
        const float a = (float)r, c = (float)(r * r * r * dot / n);
        for (int i = 0; i < n; i++) {
            const float g = a * gr[i] * Wt[i] - c * xr[i];
            dr[i] = accumulate_dx ? dr[i] + g : g;
        }
    }
}

void cpu_rope(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0, rope_pairing pairing,
              bool inverse) {
    const int half = hd / 2, N = B * T;
    const float *tab = cpu_f(table);
    float *X = cpu_f(x);
#pragma omp parallel for num_threads(cpu_threads(be, (size_t)N)) if ((size_t)N * nh * hd > CPU_ELEMS_PAR)
    for (int r = 0; r < N; r++) {
        const float *cs = tab + (size_t)(pos0 + r % T) * half * 2;
        for (int i = 0; i < half; i++) {
            const float c = cs[2 * i], s = inverse ? -cs[2 * i + 1] : cs[2 * i + 1];
            const int i0 = pairing == ROPE_ADJACENT ? 2 * i : i;
            const int i1 = pairing == ROPE_ADJACENT ? 2 * i + 1 : i + half;
            for (int h = 0; h < nh; h++) {
                float *v = X + ((size_t)r * nh + h) * hd;
                const float x0 = v[i0], x1 = v[i1];
                v[i0] = x0 * c - x1 * s;
                v[i1] = x0 * s + x1 * c;
            }
        }
    }
}

#define SWIGLU_BLOCK 4096 /* elements a task: the threads split the blocks, each block one simd loop */

/* n a multiple of CPU_LANES: every element through the vector expf (a
 * remainder loop would take the scalar one, and an element's bits would
 * depend on where its block ends) */
static inline void swiglu_lanes(float *O, const float *G, const float *U, size_t n) {
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        const float g = G[i];
        O[i] = g / (1.0f + expf(-g)) * U[i];
    }
}

static inline void swiglu_backward_lanes(float *DG, float *DU, const float *D, const float *G, const float *U,
                                         size_t n) {
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        const float g = G[i], s = 1.0f / (1.0f + expf(-g)), silu = g * s, d = D[i];
        DU[i] = d * silu;
        DG[i] = d * U[i] * s * (1.0f + g * (1.0f - s));
    }
}

CPU_HOT static void swiglu_block(float *O, const float *G, const float *U, size_t n) {
    const size_t body = n / CPU_LANES * CPU_LANES, r = n - body;
    swiglu_lanes(O, G, U, body);
    if (r) { /* the tail padded to a whole vector */
        float g[CPU_LANES] = {0}, u[CPU_LANES] = {0}, o[CPU_LANES];
        memcpy(g, G + body, r * sizeof *g);
        memcpy(u, U + body, r * sizeof *u);
        swiglu_lanes(o, g, u, CPU_LANES);
        memcpy(O + body, o, r * sizeof *o);
    }
}

CPU_HOT static void swiglu_backward_block(float *DG, float *DU, const float *D, const float *G, const float *U,
                                          size_t n) {
    const size_t body = n / CPU_LANES * CPU_LANES, r = n - body;
    swiglu_backward_lanes(DG, DU, D, G, U, body);
    if (r) {
        float d[CPU_LANES] = {0}, g[CPU_LANES] = {0}, u[CPU_LANES] = {0}, dg[CPU_LANES], du[CPU_LANES];
        memcpy(d, D + body, r * sizeof *d);
        memcpy(g, G + body, r * sizeof *g);
        memcpy(u, U + body, r * sizeof *u);
        swiglu_backward_lanes(dg, du, d, g, u, CPU_LANES);
        memcpy(DG + body, dg, r * sizeof *dg);
        memcpy(DU + body, du, r * sizeof *du);
    }
}

void cpu_swiglu(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n) {
    float *O = cpu_f(out);
    const float *G = cpu_f(gate), *U = cpu_f(up);
    const size_t nb = (n + SWIGLU_BLOCK - 1) / SWIGLU_BLOCK;
#pragma omp parallel for num_threads(cpu_threads(be, nb)) if (n > CPU_ELEMS_PAR)
    for (size_t b = 0; b < nb; b++) {
        const size_t i0 = b * SWIGLU_BLOCK, m = n - i0 < SWIGLU_BLOCK ? n - i0 : SWIGLU_BLOCK;
        swiglu_block(O + i0, G + i0, U + i0, m);
    }
}

void cpu_swiglu_backward(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up, size_t n) {
    float *DG = cpu_f(dgate), *DU = cpu_f(dup);
    const float *D = cpu_f(dout), *G = cpu_f(gate), *U = cpu_f(up);
    const size_t nb = (n + SWIGLU_BLOCK - 1) / SWIGLU_BLOCK;
#pragma omp parallel for num_threads(cpu_threads(be, nb)) if (n > CPU_ELEMS_PAR)
    for (size_t b = 0; b < nb; b++) {
        const size_t i0 = b * SWIGLU_BLOCK, m = n - i0 < SWIGLU_BLOCK ? n - i0 : SWIGLU_BLOCK;
        swiglu_backward_block(DG + i0, DU + i0, D + i0, G + i0, U + i0, m);
    }
}

void cpu_add(gf_backend *be, gf_buf y, gf_buf x, size_t n) {
    float *Y = cpu_f(y);
    const float *X = cpu_f(x);
#pragma omp parallel for num_threads(cpu_threads(be, n / 4096 + 1)) if (n > CPU_ELEMS_PAR)
    for (size_t i = 0; i < n; i++) Y[i] += X[i];
}

void cpu_scale(gf_backend *be, gf_buf x, size_t n, float s) {
    float *X = cpu_f(x);
#pragma omp parallel for num_threads(cpu_threads(be, n / 4096 + 1)) if (n > CPU_ELEMS_PAR)
    for (size_t i = 0; i < n; i++) X[i] *= s;
}
