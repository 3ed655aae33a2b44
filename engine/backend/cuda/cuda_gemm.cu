/* Matrix products through cublasLt: bf16 (or f32 in checking mode) operands,
 * fp32 accumulation (CUBLAS_COMPUTE_32F; never TF32), bf16 or f32 results,
 * bias through the BIAS epilogue. One plan per shape, alignment and type mix
 * is made on first use (the heuristic costs tens of microseconds) and kept.
 * With GRAFT_CUDA_GEMM_TUNE=N the plan's first product also times the
 * heuristic's first N algorithms on that call's own operands and keeps the
 * fastest (gemm_tune); the bits then depend on which one won, so the fp32
 * checking mode, whose runs repeat bit for bit, never times them. Each choice
 * goes into the backend's gemm_choices file (by its configuration attributes),
 * and a later run whose plan finds its shape there takes the same algorithm
 * untimed (when cublasLt still offers it among the first N): runs after the
 * first repeat their products.
 *
 * Row-major [out, in] weights, y = x W^T: cuBLAS is column-major, so a
 * row-major y[N, out] is a column-major y^T[out, N] = W x^T with W read
 * transposed: m = out, n = N, k = in. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_gemv.cuh"
#include "backend/cuda/cuda_ops.cuh"
extern "C" { /* C headers without C++ guards */
#include "backend/gemm_choices.h"
#include "core/error.h"
}

typedef struct {
    bool ta, tb;
    int m, n, k, lda, ldb, ldc;
    gf_dtype at, bt, ct, biast;
    bool bias;
    unsigned align_a, align_b, align_c, align_bias;
} gemm_key;

typedef struct {
    gemm_key key;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    cublasLtMatmulAlgo_t cand[GEMM_TUNE_MAX]; /* the heuristic's candidates, best first, until timed */
    int ncand;                                /* > 1: not yet timed */
} gemm_plan;

struct cuda_gemm_cache {
    gemm_plan *plans;
    int n, cap;
};

static void plan_free(gemm_plan *p) {
    if (p->desc) cublasLtMatmulDescDestroy(p->desc);
    if (p->la) cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
    if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
}

void cuda_gemm_cache_free(struct cuda_gemm_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) plan_free(&c->plans[i]);
    free(c->plans);
    free(c);
}

static cudaDataType_t cuda_type(gf_dtype t) { return t == GF_BF16 ? CUDA_R_16BF : CUDA_R_32F; }

/* The largest power of two (at most 256) that divides the address: what
 * cublasLt may assume about the pointer. */
static unsigned align_of(const void *p) {
    uintptr_t a = (uintptr_t)p;
    unsigned al = 256;
    while (al > 1 && (a & (al - 1))) al >>= 1;
    return al;
}

static bool key_eq(const gemm_key *a, const gemm_key *b) { return memcmp(a, b, sizeof *a) == 0; }

/* What the choice file keeps of an algorithm: its configuration as cublasLt's documented attributes
 * report it (id, tile, split-K, reduction, swizzle, custom option, stages, inner and cluster shapes),
 * each in a 4-byte slot, the rest zero; not the opaque struct's bytes, whose unused parts are not
 * promised. false where cublasLt does not report one. */
static bool algo_identity(const cublasLtMatmulAlgo_t *a, unsigned char out[GEMM_ALGO_BYTES]) {
    static const struct {
        cublasLtMatmulAlgoConfigAttributes_t attr;
        size_t bytes;
    } parts[] = {{CUBLASLT_ALGO_CONFIG_ID, 4},          {CUBLASLT_ALGO_CONFIG_TILE_ID, 4},
                 {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4},  {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4},
                 {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4}, {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4},
                 {CUBLASLT_ALGO_CONFIG_STAGES_ID, 4},   {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2},
                 {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2}};
    memset(out, 0, GEMM_ALGO_BYTES);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t written = 0;
        if (cublasLtMatmulAlgoConfigGetAttribute(a, parts[i].attr, out + 4 * i, parts[i].bytes, &written) !=
                CUBLAS_STATUS_SUCCESS ||
            written != parts[i].bytes)
            return false;
    }
    return true;
}

/* The choice file's key of a plan: what decides cublasLt's candidates (the device, the library, the
 * workspace, the shape, types and alignments) and N; false where it would not fit (then the plan is
 * neither looked up nor kept). */
static bool choice_key(const cuda_impl *c, const gemm_key *k, char *out, size_t n) {
    const int len = snprintf(out, n,
                             "%s sm %d|cublasLt %zu ws %zu|%c%c m %d n %d k %d ld %d %d %d|%s %s %s bias %s|"
                             "al %u %u %u %u|N %d",
                             c->prop.name, c->prop.multiProcessorCount, cublasLtGetVersion(), c->workspace_bytes,
                             k->ta ? 'T' : 'N', k->tb ? 'T' : 'N', k->m, k->n, k->k, k->lda, k->ldb, k->ldc,
                             gf_dtype_name(k->at), gf_dtype_name(k->bt), gf_dtype_name(k->ct),
                             k->bias ? gf_dtype_name(k->biast) : "none", k->align_a, k->align_b, k->align_c,
                             k->align_bias, c->gemm_tune);
    return len > 0 && (size_t)len < n;
}

/* One line to stderr about a product shape's algorithm: "graft: gemm TN m M n N k K: " and what. */
__attribute__((format(printf, 2, 3))) static void gemm_note(const gemm_key *k, const char *what, ...) {
    va_list ap;
    va_start(ap, what);
    fprintf(stderr, "graft: gemm %c%c m %d n %d k %d: ", k->ta ? 'T' : 'N', k->tb ? 'T' : 'N', k->m, k->n, k->k);
    vfprintf(stderr, what, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A plan with candidates whose shape has a kept choice (an earlier run's, or another task stream's in
 * this run): that algorithm, untimed, when it is still among them (one line to stderr). */
static void take_kept_choice(cuda_impl *c, gemm_plan *p) {
    if (p->ncand <= 1 || !c->gemm_choices) return;
    char key[GEMM_CHOICE_KEY_MAX];
    unsigned char algo[GEMM_ALGO_BYTES];
    if (!choice_key(c, &p->key, key, sizeof key) || !gemm_choices_get(c->gemm_choices, key, algo)) return;
    unsigned char id[GEMM_ALGO_BYTES];
    for (int i = 0; i < p->ncand; i++)
        if (algo_identity(&p->cand[i], id) && memcmp(id, algo, GEMM_ALGO_BYTES) == 0) {
            gemm_note(&p->key, "algorithm %d of %d, from the choice file", i + 1, p->ncand);
            p->algo = p->cand[i];
            p->ncand = 1;
            return;
        }
}

/* Builds a plan; false with a message in *why. */
static bool plan_make(gemm_plan *p, const gemm_key *k, cublasLtHandle_t lt, size_t ws, int tune, const char **why) {
    memset(p, 0, sizeof *p);
    p->key = *k;
    cublasOperation_t ta = k->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = k->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    *why = "cannot describe the product";
    if (cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
    if (cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb))
        return false;
    if (k->bias) {
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        cudaDataType_t bt = cuda_type(k->biast);
        if (cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) ||
            cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt))
            return false;
    }
    /* stored shapes (before op): A is m x k, or k x m when transposed */
    if (cublasLtMatrixLayoutCreate(&p->la, cuda_type(k->at), k->ta ? k->k : k->m, k->ta ? k->m : k->k, k->lda) ||
        cublasLtMatrixLayoutCreate(&p->lb, cuda_type(k->bt), k->tb ? k->n : k->k, k->tb ? k->k : k->n, k->ldb) ||
        cublasLtMatrixLayoutCreate(&p->lc, cuda_type(k->ct), k->m, k->n, k->ldc))
        return false;
    cublasLtMatmulPreference_t pref;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return false;
    uint64_t wsb = ws;
    uint32_t aa = k->align_a, ab = k->align_b, ac = k->align_c;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ac, sizeof ac);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ac, sizeof ac);
    cublasLtMatmulHeuristicResult_t res[GEMM_TUNE_MAX];
    int found = 0, want = tune > 1 ? (tune < GEMM_TUNE_MAX ? tune : GEMM_TUNE_MAX) : 1;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, want, res, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found < 1) {
        *why = "cublasLt has no algorithm for this shape, type and alignment";
        return false;
    }
    p->algo = res[0].algo;
    p->ncand = found;
    for (int i = 0; i < found; i++) p->cand[i] = res[i].algo;
    return true;
}

/* The plan for a key, made on first use; NULL with a sticky error. */
static gemm_plan *plan_for(gf_backend *be, const char *op, const gemm_key *k) {
    cuda_state *st = cuda_st(be);
    if (!st->gemm) {
        st->gemm = (struct cuda_gemm_cache *)calloc(1, sizeof *st->gemm);
        if (!st->gemm) {
            be_set_error(be, "%s: out of host memory", op);
            return NULL;
        }
    }
    struct cuda_gemm_cache *c = st->gemm;
    for (int i = 0; i < c->n; i++)
        if (key_eq(&c->plans[i].key, k)) return &c->plans[i];
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        gemm_plan *np = (gemm_plan *)realloc(c->plans, (size_t)cap * sizeof *np);
        if (!np) {
            be_set_error(be, "%s: out of host memory", op);
            return NULL;
        }
        c->plans = np;
        c->cap = cap;
    }
    const char *why = "";
    gemm_plan *p = &c->plans[c->n];
    if (!plan_make(p, k, st->base.lt, st->base.workspace_bytes, st->base.gemm_tune, &why)) {
        plan_free(p);
        be_set_error(be, "%s: %s (m %d, n %d, k %d, %s x %s -> %s)", op, why, k->m, k->n, k->k, gf_dtype_name(k->at),
                     gf_dtype_name(k->bt), gf_dtype_name(k->ct));
        return NULL;
    }
    c->n++;
    take_kept_choice(&st->base, p);
    return p;
}

/* The mean time of `reps` runs of candidate algorithm i into D, after one run not timed; < 0 where
 * cublasLt refuses it or an event fails. */
static float gemm_time(cuda_impl *c, gemm_plan *p, int i, int reps, const float *alpha, const void *A, const void *B,
                       const float *beta, const void *C, void *D, cudaEvent_t ev[2]) {
    for (int r = -1; r < reps; r++) {
        if (r == 0 && cudaEventRecord(ev[0], c->stream) != cudaSuccess) return -1;
        if (cublasLtMatmul(c->lt, p->desc, alpha, A, p->la, B, p->lb, beta, C, p->lc, D, p->lc, &p->cand[i],
                           c->workspace, c->workspace_bytes, c->stream) != CUBLAS_STATUS_SUCCESS)
            return -1;
    }
    float ms = 0;
    if (cudaEventRecord(ev[1], c->stream) != cudaSuccess || cudaEventSynchronize(ev[1]) != cudaSuccess ||
        cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess)
        return -1;
    return ms / reps;
}

/* GRAFT_CUDA_GEMM_TUNE: times the plan's candidates on this call's operands (an in-place sum,
 * beta != 0 with C == D, into a scratch D, so that D takes the product once) and keeps the fastest;
 * one that is not 2 % faster than the heuristic's first leaves that one (near ties keep cuBLAS's
 * choice, so that the same shapes mostly give the same bits run to run). One line to stderr a shape. */
static void gemm_tune(gf_backend *be, gemm_plan *p, const float *alpha, gf_buf A, gf_buf B, const float *beta,
                      gf_buf C, gf_buf D) {
    cuda_impl *c = cuda_of(be);
    const gemm_key *k = &p->key;
    const int n = p->ncand, reps = 3;
    p->ncand = 1;
    void *out = D.ptr, *scratch = NULL;
    if (*beta != 0.0f && C.ptr == D.ptr) {
        const size_t bytes = (size_t)k->ldc * k->n * gf_dtype_size(k->ct);
        if (cudaMallocAsync(&scratch, bytes, c->stream) != cudaSuccess) {
            cudaGetLastError();
            gemm_note(k, "not timed (no room for a scratch output)");
            return;
        }
        out = scratch;
    }
    cudaEvent_t ev[2] = {NULL, NULL};
    float t[GEMM_TUNE_MAX];
    for (int i = 0; i < GEMM_TUNE_MAX; i++) t[i] = -1; /* < 0: not timed */
    int best = 0;
    if (cudaEventCreate(&ev[0]) == cudaSuccess && cudaEventCreate(&ev[1]) == cudaSuccess) {
        for (int i = 0; i < n; i++) {
            t[i] = gemm_time(c, p, i, reps, alpha, A.ptr, B.ptr, beta, C.ptr, out, ev);
            if (t[i] > 0 && (t[best] <= 0 || t[i] < t[best])) best = i;
        }
    }
    cudaGetLastError(); /* a refused candidate's launch error is not the op's */
    if (t[0] > 0 && t[best] < 0.98f * t[0]) p->algo = p->cand[best];
    else best = 0;
    gemm_note(k, "algorithm %d of %d, %.1f us (the heuristic's first %.1f us)", best + 1, n, 1e3 * t[best], 1e3 * t[0]);
    if (c->gemm_choices && t[0] > 0) { /* a timed choice (not one left by failed timings) for later runs */
        char key[GEMM_CHOICE_KEY_MAX];
        unsigned char id[GEMM_ALGO_BYTES];
        if (choice_key(c, k, key, sizeof key) && algo_identity(&p->algo, id) &&
            gemm_choices_put(c->gemm_choices, key, id) < 0)
            fprintf(stderr, "graft: %s; this run keeps its GEMM choices in memory only\n", gf_last_error());
    }
    for (int i = 0; i < 2; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    if (scratch) cudaFreeAsync(scratch, c->stream);
}

/* D = alpha op(A) op(B) + beta C (+ bias): C and D share a layout (type, ldc); C may be D. */
static void gemm_run(gf_backend *be, const char *op, bool transa, bool transb, int m, int n, int k, float alpha,
                     gf_buf A, int lda, gf_buf B, int ldb, float beta, gf_buf C, gf_buf D, int ldc, gf_buf bias) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) { /* an empty sum: C = beta C (+ bias) is not worth a plan; callers never ask */
        be_set_error(be, "%s: empty inner dimension", op);
        return;
    }
    gemm_key key;
    memset(&key, 0, sizeof key); /* padding takes part in the comparison */
    key.ta = transa;
    key.tb = transb;
    key.m = m;
    key.n = n;
    key.k = k;
    key.lda = lda;
    key.ldb = ldb;
    key.ldc = ldc;
    key.at = A.dtype;
    key.bt = B.dtype;
    key.ct = D.dtype;
    key.bias = !gf_is_none(bias);
    key.biast = key.bias ? bias.dtype : GF_F32;
    key.align_a = align_of(A.ptr);
    key.align_b = align_of(B.ptr);
    key.align_c = align_of(C.ptr) < align_of(D.ptr) ? align_of(C.ptr) : align_of(D.ptr);
    key.align_bias = key.bias ? align_of(bias.ptr) : 0;
    gemm_plan *p = plan_for(be, op, &key);
    if (!p) return;
    if (key.bias &&
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias.ptr, sizeof bias.ptr)) {
        be_set_error(be, "%s: cannot set the bias", op);
        return;
    }
    cuda_impl *c = cuda_of(be);
    if (p->ncand > 1) gemm_tune(be, p, &alpha, A, B, &beta, C, D);
    cublasStatus_t s = cublasLtMatmul(c->lt, p->desc, &alpha, A.ptr, p->la, B.ptr, p->lb, &beta, C.ptr, p->lc, D.ptr,
                                      p->lc, &p->algo, c->workspace, c->workspace_bytes, c->stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        be_set_error(be, "cuda:%d: %s: cublasLt: %s", c->device, op, cublasGetStatusString(s));
        return;
    }
    cuda_after(be, op);
}

void cuda_gemm(gf_backend *be, const char *op, bool transa, bool transb, int m, int n, int k, float alpha, gf_buf A,
               int lda, gf_buf B, int ldb, float beta, gf_buf C, int ldc, gf_buf bias) {
    gemm_run(be, op, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, C, ldc, bias);
}

/* ------------------------------------------------------------- linear */

void cuda_linear_add(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, gf_buf add) {
    const char *op = "linear";
    if (!cuda_need(be, op, "y", y) || !cuda_need(be, op, "x", x) || !cuda_need(be, op, "W", W) ||
        !cuda_want(be, op, "y", y, be->act) || !cuda_want(be, op, "x", x, be->act) ||
        !cuda_want(be, op, "W", W, be->act) || !cuda_want(be, op, "b", b, be->act) ||
        !cuda_want(be, op, "add", add, be->act))
        return;
    const bool adds = !gf_is_none(add);
    if (cuda_gemv_takes(be, x, W, N, in)) { /* a decode step's few rows: y = add first, then y += */
        if (adds && add.ptr != y.ptr) {
            const cudaError_t e = cudaMemcpyAsync(y.ptr, add.ptr, (size_t)N * out * gf_dtype_size(be->act),
                                                  cudaMemcpyDeviceToDevice, cuda_stream(be));
            if (e != cudaSuccess) {
                be_set_error(be, "cuda:%d: %s: %s", cuda_of(be)->device, op, cudaGetErrorString(e));
                return;
            }
        }
        cuda_gemv(be, y, x, W, b, N, in, out, adds);
        return;
    }
    /* y^T[out, N] = W[out, in] x^T[in, N] (+ add^T)  (column-major view) */
    gemm_run(be, op, true, false, out, N, in, 1.0f, W, in, x, in, adds ? 1.0f : 0.0f, adds ? add : y, y, out, b);
}

void cuda_linear_backward(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N,
                          int in, int out, bool accumulate_dx, bool accumulate_dW) {
    const char *op = "linear_backward";
    if (!cuda_need(be, op, "dy", dy) || !cuda_want(be, op, "dy", dy, be->act) ||
        !cuda_want(be, op, "dx", dx, be->act) || !cuda_want(be, op, "dW", dW, GF_F32) ||
        !cuda_want(be, op, "db", db, GF_F32) || !cuda_want(be, op, "x", x, be->act) ||
        !cuda_want(be, op, "W", W, be->act))
        return;
    if (N <= 0) return;
    if (!gf_is_none(dx)) { /* dx^T[in, N] = W^T[in, out] dy^T[out, N] */
        if (!cuda_need(be, op, "W", W)) return;
        cuda_gemm(be, op, false, false, in, N, out, 1.0f, W, in, dy, out, accumulate_dx ? 1.0f : 0.0f, dx, in,
                  gf_none());
    }
    if (!gf_is_none(dW)) { /* dW^T[in, out] (+)= x^T[in, N] dy[N, out]; beta 0: cublasLt reads no C */
        if (!cuda_need(be, op, "x", x)) return;
        cuda_gemm(be, op, false, true, in, out, N, 1.0f, x, in, dy, out, accumulate_dW ? 1.0f : 0.0f, dW, in,
                  gf_none());
    }
    if (!gf_is_none(db)) {
        if (!accumulate_dW) cuda_memset_async(db.ptr, 0, (size_t)out * sizeof(float), cuda_stream(be));
        cuda_col_sums(be, (float *)db.ptr, dy, gf_none(), NULL, N, out);
        cuda_after(be, op);
    }
}
