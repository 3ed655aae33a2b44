/* bf16 matrix products through the CUDA backend (be_linear and
 * be_linear_backward: cublasLt, fp32 accumulation) at 8192^3 and at the
 * projection shapes of the teachers in ../shared/configs, N = 8192 tokens
 * (4 x 2048): forward y = x W^T, and the backward's dx = dy W and
 * dW += dy^T x (F32 accumulation, beta = 1), and dW = dy^T x (beta 0: the
 * step's first gradient of a weight, tf_zero_grads). Then the two memory-bound ops
 * around them in a training step: cross-entropy over one lm_head chunk of the
 * trainer (tf_logit_rows on a device: all 8192 rows of V 151936 at 4 x 2048, bf16 logits,
 * with and without the gradient)
 * and the global norm's sum of squares over qwen2.5-1.5b's 1.54 G f32
 * gradients, each next to its byte floor. One JSON line per figure.
 *   build/gpu/bench_gemm */
#include "bench_gpu.h"
#include "model/transformer.h"

typedef struct {
    gf_backend *be;
    gf_buf x, w, b, y, dy, dx, dW;
    int N, in, out;
    int mode; /* 0 forward, 1 dx, 2 dW +=, 3 dW = */
} lin_ud;

static void lin_fn(void *p) {
    lin_ud *u = p;
    if (u->mode == 0) be_linear(u->be, u->y, u->x, u->w, u->b, u->N, u->in, u->out, false);
    else if (u->mode == 1)
        be_linear_backward(u->be, u->dx, gf_none(), gf_none(), u->dy, u->x, u->w, u->N, u->in, u->out, false, true);
    else
        be_linear_backward(u->be, gf_none(), u->dW, gf_none(), u->dy, u->x, u->w, u->N, u->in, u->out, false,
                           u->mode == 2);
}

static void shape(gf_backend *be, const bench_ceilings *c, const char *model, const char *name, int N, int in,
                  int out, bool bias) {
    if (bench_smoke_mode) in /= 8, out /= 8; /* smoke: the shapes / 8 */
    lin_ud u = {be, gf_none(), gf_none(), gf_none(), gf_none(), gf_none(), gf_none(), gf_none(), N, in, out, 0};
    const size_t nx = (size_t)N * in, nw = (size_t)out * in, ny = (size_t)N * out;
    if (be_alloc(be, &u.x, nx, be_act(be)) < 0 || be_alloc(be, &u.w, nw, be_act(be)) < 0 ||
        be_alloc(be, &u.y, ny, be_act(be)) < 0 || be_alloc(be, &u.dy, ny, be_act(be)) < 0 ||
        be_alloc(be, &u.dx, nx, be_act(be)) < 0 || be_alloc(be, &u.dW, nw, GF_F32) < 0)
        bench_die(be, "alloc");
    if (bias) {
        if (be_alloc(be, &u.b, out, be_act(be)) < 0) bench_die(be, "alloc");
        bench_fill(be, u.b, out, 1.0f, 7);
    }
    bench_fill(be, u.x, nx, 1.0f, 4);
    bench_fill(be, u.w, nw, 0.1f, 5);
    bench_fill(be, u.dy, ny, 1.0f, 6);
    be_zero(be, u.dW, nw);
    static const char *mode_name[4] = {"fwd y=xW^T", "bwd dx=dyW", "bwd dW+=dy^Tx", "bwd dW=dy^Tx"};
    for (u.mode = 0; u.mode < 4; u.mode++) {
        const double t = bench_time(be, lin_fn, &u, 7);
        const double flops = 2.0 * N * (double)in * out;
        /* bytes: each operand once, the output once (dW +=: read and written, f32; dW =: written) */
        const double bytes = u.mode == 0   ? 2.0 * (nx + nw + ny)
                             : u.mode == 1 ? 2.0 * (ny + nw + nx)
                                           : 2.0 * (ny + nx) + (u.mode == 2 ? 8.0 : 4.0) * nw;
        char what[128], extra[96];
        snprintf(what, sizeof what, "%s %s %s N %d %d->%d%s", model, name, mode_name[u.mode], N, in, out,
                 bias && u.mode == 0 ? " +bias" : "");
        snprintf(extra, sizeof extra, ",\"of_roofline\":%.3f", flops / t / 1e12 / c->gemm_tflops);
        bench_report("gemm", what, t, flops, bytes, c, extra);
    }
    be_free(be, &u.x), be_free(be, &u.w), be_free(be, &u.b), be_free(be, &u.y), be_free(be, &u.dy),
        be_free(be, &u.dx), be_free(be, &u.dW);
}

typedef struct {
    gf_backend *be;
    gf_buf loss, logits, dlogits, targets, g;
    int N, V;
    size_t n;
} mem_ud;
static void ce_fn(void *p) {
    mem_ud *u = p;
    be_cross_entropy(u->be, u->loss, u->dlogits, u->logits, u->targets, u->N, u->V, 1.0f / (float)u->N);
}
static void sumsq_fn(void *p) {
    mem_ud *u = p;
    be_sumsq(u->be, u->loss, u->g, u->n);
}

/* Cross-entropy over N rows of V (the trainer's chunk) and
 * sumsq over n f32 gradients. Bytes: the logits read twice (statistics, then
 * the gradient pass) and the gradient written once; without the gradient,
 * read once; sumsq reads every gradient once. */
static void memory_bound(gf_backend *be, const bench_ceilings *c, int V, size_t n) {
    const int rows = bench_smoke_mode ? 64 : tf_logit_rows(8192, V, true); /* as the trainer: 8192 at V 151936 */
    mem_ud u = {be, gf_none(), gf_none(), gf_none(), gf_none(), gf_none(), rows, V, n};
    const gf_dtype A = be_act(be);
    const size_t nz = (size_t)u.N * V, es = gf_dtype_size(A);
    if (be_alloc(be, &u.loss, 1, GF_F64) < 0 || be_alloc(be, &u.logits, nz, A) < 0 ||
        be_alloc(be, &u.dlogits, nz, A) < 0 || be_alloc(be, &u.targets, (size_t)u.N, GF_I32) < 0)
        bench_die(be, "alloc");
    bench_fill(be, u.logits, nz, 8.0f, 8);
    be_zero(be, u.loss, 1);
    int *t = malloc((size_t)u.N * sizeof *t);
    if (!t) bench_die(be, "host alloc");
    for (int i = 0; i < u.N; i++) t[i] = (int)(((uint64_t)i * 2654435761u) % (uint64_t)V);
    if (be_upload(be, u.targets, t, GF_I32, (size_t)u.N) < 0) bench_die(be, "upload");
    free(t);
    char what[128];
    snprintf(what, sizeof what, "cross_entropy %s %d x %d + grad", gf_dtype_name(A), u.N, V);
    bench_report("loss", what, bench_time(be, ce_fn, &u, 9), 0, 3.0 * (double)nz * es, c, "");
    const gf_buf d = u.dlogits;
    u.dlogits = gf_none();
    snprintf(what, sizeof what, "cross_entropy %s %d x %d loss only", gf_dtype_name(A), u.N, V);
    bench_report("loss", what, bench_time(be, ce_fn, &u, 9), 0, (double)nz * es, c, "");
    u.dlogits = d;
    be_free(be, &u.logits), be_free(be, &u.dlogits), be_free(be, &u.targets);
    if (be_alloc(be, &u.g, n, GF_F32) < 0) bench_die(be, "alloc");
    bench_fill(be, u.g, n, 1.0f, 9);
    snprintf(what, sizeof what, "sumsq f32 %zu", n);
    bench_report("optim", what, bench_time(be, sumsq_fn, &u, 9), 0, 4.0 * (double)n, c, "");
    be_free(be, &u.g), be_free(be, &u.loss);
}

int main(void) {
    gf_backend *be = bench_open_or_skip();
    fprintf(stderr, "bench_gemm on %s\n", be_name(be));
    const bench_ceilings c = bench_measure_ceilings(be);
    const int N = bench_smoke_mode ? 64 : 8192; /* smoke: 64 tokens, the same weight shapes */
    /* qwen2.5-1.5b: D 1536, F 8960, 12 heads x 128, 2 KV heads, V 151936 */
    shape(be, &c, "qwen2.5-1.5b", "qkv", N, 1536, 1536 + 2 * 256, true);
    shape(be, &c, "qwen2.5-1.5b", "o", N, 1536, 1536, false);
    shape(be, &c, "qwen2.5-1.5b", "gate|up", N, 1536, 2 * 8960, false);
    shape(be, &c, "qwen2.5-1.5b", "down", N, 8960, 1536, false);
    shape(be, &c, "qwen2.5-1.5b", "lm_head", N, 1536, 151936, false);
    /* qwen3-8b: D 4096, F 12288, 32 heads x 128, 8 KV heads */
    shape(be, &c, "qwen3-8b", "qkv", N, 4096, 4096 + 2 * 1024, false);
    shape(be, &c, "qwen3-8b", "gate|up", N, 4096, 2 * 12288, false);
    shape(be, &c, "qwen3-8b", "down", N, 12288, 4096, false);
    /* qwen2.5-1.5b: V 151936, 1,543,714,304 parameters (tied embeddings) */
    memory_bound(be, &c, bench_smoke_mode ? 1000 : 151936, bench_smoke_mode ? (size_t)100003 : (size_t)1543714304);
    if (be_sync(be) < 0) bench_die(be, "end");
    be_close(be);
    return 0;
}
