/* bf16 matrix products through the CUDA backend (be_linear and
 * be_linear_backward: cublasLt, fp32 accumulation) at 8192^3 and at the
 * projection shapes of the teachers in ../shared/configs, N = 8192 tokens
 * (4 x 2048): forward y = x W^T, and the backward's dx = dy W and
 * dW += dy^T x (F32 accumulation, beta = 1). One JSON line per figure.
 *   build/gpu/bench_gemm */
#include "bench_gpu.h"

typedef struct {
    gf_backend *be;
    gf_buf x, w, b, y, dy, dx, dW;
    int N, in, out;
    int mode; /* 0 forward, 1 dx, 2 dW */
} lin_ud;

static void lin_fn(void *p) {
    lin_ud *u = p;
    if (u->mode == 0) be_linear(u->be, u->y, u->x, u->w, u->b, u->N, u->in, u->out, false);
    else if (u->mode == 1)
        be_linear_backward(u->be, u->dx, gf_none(), gf_none(), u->dy, u->x, u->w, u->N, u->in, u->out, false);
    else be_linear_backward(u->be, gf_none(), u->dW, gf_none(), u->dy, u->x, u->w, u->N, u->in, u->out, false);
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
    static const char *mode_name[3] = {"fwd y=xW^T", "bwd dx=dyW", "bwd dW+=dy^Tx"};
    for (u.mode = 0; u.mode < 3; u.mode++) {
        const double t = bench_time(be, lin_fn, &u, 7);
        const double flops = 2.0 * N * (double)in * out;
        /* bytes: each operand once, the output once (dW: read and written, f32) */
        const double bytes = u.mode == 0   ? 2.0 * (nx + nw + ny)
                             : u.mode == 1 ? 2.0 * (ny + nw + nx)
                                           : 2.0 * (ny + nx) + 8.0 * nw;
        char what[128], extra[96];
        snprintf(what, sizeof what, "%s %s %s N %d %d->%d%s", model, name, mode_name[u.mode], N, in, out,
                 bias && u.mode == 0 ? " +bias" : "");
        snprintf(extra, sizeof extra, ",\"of_roofline\":%.3f", flops / t / 1e12 / c->gemm_tflops);
        bench_report("gemm", what, t, flops, bytes, c, extra);
    }
    be_free(be, &u.x), be_free(be, &u.w), be_free(be, &u.b), be_free(be, &u.y), be_free(be, &u.dy),
        be_free(be, &u.dx), be_free(be, &u.dW);
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
    if (be_sync(be) < 0) bench_die(be, "end");
    be_close(be);
    return 0;
}
