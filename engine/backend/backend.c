/* The backend dispatch: be_open by device name, the thin be_* wrappers over
 * the implementation table, dtype helpers, sticky errors, the process default. */
#include "backend/backend_impl.h"

#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

size_t gf_dtype_size(gf_dtype t) {
    switch (t) {
    case GF_F32: return 4;
    case GF_BF16: return 2;
    case GF_F64: return 8;
    case GF_I32: return 4;
    }
    return 4;
}

const char *gf_dtype_name(gf_dtype t) {
    switch (t) {
    case GF_F32: return "f32";
    case GF_BF16: return "bf16";
    case GF_F64: return "f64";
    case GF_I32: return "i32";
    }
    return "?";
}

void be_set_error(gf_backend *be, const char *fmt, ...) {
    if (be->error[0]) return; /* the first error wins */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->error, sizeof be->error, fmt, ap);
    va_end(ap);
    if (!be->error[0]) snprintf(be->error, sizeof be->error, "backend error");
}

/* "cuda" or "cuda:N" with N digits (at most 1023). */
static bool cuda_name(const char *dev) {
    if (strncmp(dev, "cuda", 4) != 0) return false;
    if (!dev[4]) return true;
    if (dev[4] != ':' || !dev[5] || strlen(dev + 5) > 4) return false;
    for (const char *p = dev + 5; *p; p++)
        if (*p < '0' || *p > '9') return false;
    return atoi(dev + 5) <= 1023;
}

bool be_device_name_ok(const char *dev) { return dev && (strcmp(dev, "cpu") == 0 || cuda_name(dev)); }

int be_cuda_device_count(int *count) {
    *count = 0;
#ifdef GRAFT_WITH_CUDA
    return gf_backend_cuda_count(count);
#else
    return gf_fail("graft was built without the CUDA backend");
#endif
}

int be_open(gf_backend **out, const gf_backend_opts *o) { return be_open_variants(out, o, NULL); }

int be_open_variants(gf_backend **out, const gf_backend_opts *o, const gf_backend_variants *v) {
    *out = NULL;
    static const gf_backend_opts cpu = {"cpu", 0, false};
    if (!o) o = &cpu;
    const char *dev = o->device ? o->device : "cpu";
    if (o->threads < 0) return gf_fail("threads must be >= 0, got %d", o->threads);
    gf_backend *be = calloc(1, sizeof *be);
    if (!be) return gf_fail("out of memory opening the %s backend", dev);
    int rc;
    if (strcmp(dev, "cpu") == 0) {
        rc = gf_backend_cpu_open(be, o);
    } else if (cuda_name(dev)) {
#ifdef GRAFT_WITH_CUDA
        rc = gf_backend_cuda_open(be, o, v);
#else
        rc = gf_fail("--device %s: graft was built without the CUDA backend", dev);
#endif
    } else {
        rc = gf_fail("unknown device '%s' (cpu or cuda[:N])", dev);
    }
    (void)v; /* the CPU backend has no variants */
    if (rc != 0) {
        free(be);
        return -1;
    }
    *out = be;
    return 0;
}

void be_close(gf_backend *be) {
    if (!be) return;
    if (be->ops && be->ops->close) be->ops->close(be);
    free(be);
}

const char *be_name(const gf_backend *be) { return be->name; }
gf_dtype be_act(const gf_backend *be) { return be->act; }
bool be_is_host(const gf_backend *be) { return be->host; }
int be_threads(const gf_backend *be) { return be->threads > 0 ? be->threads : 1; }
int be_tasks_at_once(const gf_backend *be) {
    return be->host ? be_threads(be) : be->tasks > 0 ? be->tasks : GF_DEVICE_TASKS;
}
void be_set_threads(gf_backend *be, int threads) {
    if (!be->host) return;
    be->threads = threads > 0 ? threads : omp_get_num_procs();
    snprintf(be->name, sizeof be->name, "cpu (%d thread%s)", be->threads, be->threads == 1 ? "" : "s");
}
int be_mem_info(gf_backend *be, size_t *free_bytes, size_t *total_bytes) {
    return be->ops->mem_info(be, free_bytes, total_bytes);
}

/* ------------------------------------------------------------- the default */

static gf_backend *cpu_default, *installed;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static void open_cpu_default(void) {
    if (be_open(&cpu_default, NULL) != 0) gf_assert_failed("the CPU backend opens", __FILE__, __LINE__);
}

gf_backend *be_default(void) {
    gf_backend *b = __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
    if (b) return b;
    pthread_once(&cpu_once, open_cpu_default);
    return cpu_default;
}

void be_set_default(gf_backend *be) { __atomic_store_n(&installed, be, __ATOMIC_RELEASE); }

gf_comm *be_comm(const gf_backend *be) { return be ? be->comm : NULL; }
void be_set_comm(gf_backend *be, gf_comm *c) { be->comm = c; }

/* ------------------------------------------------------------- memory */

int be_alloc(gf_backend *be, gf_buf *out, size_t n, gf_dtype t) { return be->ops->alloc(be, out, n, t); }
void be_free(gf_backend *be, gf_buf *b) {
    if (b && !gf_is_none(*b)) be->ops->free(be, b);
    if (b) *b = gf_none();
}
void be_zero(gf_backend *be, gf_buf b, size_t n) {
    if (n) be->ops->zero(be, b, n);
}
void be_copy(gf_backend *be, gf_buf dst, gf_buf src, size_t n) {
    if (n) be->ops->copy(be, dst, src, n);
}
int be_upload(gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n) {
    return n ? be->ops->upload(be, dst, src, src_t, n) : 0;
}
int be_download(gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n) {
    return n ? be->ops->download(be, dst, dst_t, src, n) : 0;
}

static int take_error(gf_backend *be) {
    if (!be->error[0]) return 0;
    gf_fail("%s", be->error);
    be->error[0] = 0;
    return -1;
}
int be_sync(gf_backend *be) {
    int rc = be->ops->sync(be);
    return take_error(be) != 0 ? -1 : rc;
}
int be_check(gf_backend *be) {
    int rc = be->ops->check(be);
    return take_error(be) != 0 ? -1 : rc;
}
int be_run_tasks(gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud) {
    return n > 0 ? be->ops->run_tasks(be, n, fn, ud) : 0;
}

/* ------------------------------------------------------------- ops */

/* Every entry of the op list has the signature of its be_* function, so the
 * table, the implementations and backend.h cannot drift apart. */
#define BE_SAME_SIGNATURE(ret, name, params)                                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&be_##name), ret(*) params),                      \
                   "be_" #name " and the op list's " #name " differ");
GF_BACKEND_OPS(BE_SAME_SIGNATURE)
#undef BE_SAME_SIGNATURE

void be_embedding(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D) {
    be->ops->embedding(be, x, E, tokens, N, D);
}
void be_embedding_backward(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D) {
    if (!gf_is_none(dE)) be->ops->embedding_backward(be, dE, dx, tokens, N, D);
}
void be_linear(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, bool accumulate) {
    be->ops->linear_add(be, y, x, W, b, N, in, out, accumulate ? y : gf_none());
}
void be_linear_add(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, gf_buf add) {
    be->ops->linear_add(be, y, x, W, b, N, in, out, add);
}
void be_linear_backward(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N,
                        int in, int out, bool accumulate_dx, bool accumulate_dW) {
    if (gf_is_none(dx) && gf_is_none(dW) && gf_is_none(db)) return;
    be->ops->linear_backward(be, dx, dW, db, dy, x, W, N, in, out, accumulate_dx, accumulate_dW);
}
void be_rmsnorm(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps) {
    be->ops->rmsnorm(be, y, rstd, x, w, rows, n, eps);
}
void be_rmsnorm_backward(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd, int rows,
                         int n, float eps, bool accumulate_dx) {
    if (gf_is_none(dx) && gf_is_none(dw)) return;
    be->ops->rmsnorm_backward(be, dx, dw, dy, x, w, rstd, rows, n, eps, accumulate_dx);
}
void be_rope(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0, rope_pairing pairing,
             bool inverse) {
    be->ops->rope(be, x, table, B, T, nh, hd, pos0, pairing, inverse);
}
void be_swiglu(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n) { be->ops->swiglu(be, out, gate, up, n); }
void be_swiglu_backward(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up, size_t n) {
    be->ops->swiglu_backward(be, dgate, dup, dout, gate, up, n);
}
void be_add(gf_backend *be, gf_buf y, gf_buf x, size_t n) {
    if (n) be->ops->add(be, y, x, n);
}
void be_scale(gf_backend *be, gf_buf x, size_t n, float s) {
    if (n) be->ops->scale(be, x, n, s);
}
void be_attention(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,
                  const gf_attn_shape *s) {
    be->ops->attention(be, out, lse, stats, q, k, v, s);
}
void be_attention_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out, gf_buf lse,
                           gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s) {
    be->ops->attention_backward(be, dq, dk, dv, dout, out, lse, q, k, v, s);
}
size_t gf_gdn_ckpt_floats(const gf_gdn_shape *s, gf_dtype act) {
    const size_t C = (size_t)s->chunk, nbhc = (size_t)s->B * s->H * (((size_t)s->T + C - 1) / C);
    /* the states in the compute type, whole floats (an odd count of bf16 rounds up) */
    const size_t states = (nbhc * s->dv * s->dk * gf_dtype_size(act) + sizeof(float) - 1) / sizeof(float);
    if (!s->keep_wy) return states;
    const size_t wy_bytes = nbhc * C * ((size_t)s->dk + s->dv + C) * gf_dtype_size(act);
    return states + nbhc * C + (wy_bytes + sizeof(float) - 1) / sizeof(float);
}
bool be_gdn_keeps_wy(const gf_backend *be) { return !be_is_host(be); }

void be_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                 gf_buf beta, const gf_gdn_shape *s) {
    be->ops->gdn_core(be, o, ckpt, state, q, k, v, g, beta, s);
}
void be_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                          gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s) {
    be->ops->gdn_core_backward(be, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt, s);
}
void be_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                 gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                 const gf_gdn_dims *d) {
    be->ops->gdn_prep(be, qkv_pre, q, k, v, g, beta, conv_tail, proj, bqkv, conv_w, a_log, dt_bias, d);
}
void be_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias,
                          gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre,
                          gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                          const gf_gdn_dims *d) {
    be->ops->gdn_prep_backward(be, dproj, dbqkv, dconv_w, da_log, ddt_bias, dq, dk, dv, dg, dbeta, proj, qkv_pre, q,
                               k, g, beta, conv_w, a_log, dt_bias, d);
}
void be_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                       const gf_gdn_dims *d) {
    be->ops->gdn_gated_norm(be, z, rstd, o, proj, w_norm, d);
}
void be_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,
                                gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d) {
    be->ops->gdn_gated_norm_backward(be, d_o, dproj, dw_norm, dz, o, rstd, proj, w_norm, d);
}
void be_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N, int V,
                      float grad_scale) {
    if (N > 0) be->ops->cross_entropy(be, loss, dlogits, logits, targets, N, V, grad_scale);
}
void be_kl_div(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V,
               float tau, float grad_scale) {
    if (N > 0) be->ops->kl_div(be, loss, dstudent, student, teacher, N, V, tau, grad_scale);
}
void be_mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale) {
    if (n) be->ops->mse(be, loss, dy, y, target, n, grad_scale);
}
void be_row_l2(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale) {
    if (N > 0) be->ops->row_l2(be, loss, ds, s, t, N, D, grad_scale);
}
void be_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n) {
    if (n) be->ops->sumsq(be, acc, x, n);
}
void be_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h) {
    if (n) be->ops->adamw(be, p, p_act, g, m, v, n, h);
}
