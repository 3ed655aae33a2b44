/* What a backend implements: the table behind the be_* functions of
 * backend.h. Only engine/backend/ (and tests of backends) include this;
 * backend.c's be_* wrappers call through the table. */
#ifndef GRAFT_BACKEND_BACKEND_IMPL_H
#define GRAFT_BACKEND_BACKEND_IMPL_H

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The op list, the one place an op's signature is written for the backends:
 * X(ret, name, params) for every entry of the table. Each entry has the
 * signature of the be_* function of the same name (backend.c checks that at
 * compile time). The table type below, the CPU and CUDA declarations (cpu.h,
 * cuda_table.h) and both tables (designated initializers) are expanded from
 * it, so an op is added or changed here and in backend.h, nowhere else:
 *   #define CPU_OP_DECL(ret, name, params) ret cpu_##name params;
 *   GF_BACKEND_OPS(CPU_OP_DECL)
 *   #define CPU_OP_INIT(ret, name, params) .name = cpu_##name,
 *   const gf_backend_ops cpu_ops = {GF_BACKEND_OPS(CPU_OP_INIT)}; */
#define GF_BACKEND_OPS(X) \
    X(void, close, (gf_backend *be))                                                                                   \
    X(int, mem_info, (gf_backend *be, size_t *free_bytes, size_t *total_bytes))                                        \
    X(int, alloc, (gf_backend *be, gf_buf *out, size_t n, gf_dtype t))                                                 \
    X(void, free, (gf_backend *be, gf_buf *b))                                                                         \
    X(void, zero, (gf_backend *be, gf_buf b, size_t n))                                                                \
    X(void, copy, (gf_backend *be, gf_buf dst, gf_buf src, size_t n))                                                  \
    X(int, upload, (gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n))                            \
    X(int, download, (gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n))                                \
    X(int, sync, (gf_backend *be))                                                                                     \
    X(int, check, (gf_backend *be))                                                                                    \
    X(int, run_tasks, (gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud))                  \
    X(void, embedding, (gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D))                              \
    X(void, embedding_backward, (gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D))                   \
    X(void, linear_add, (gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out,               \
          gf_buf add))                                                                                                 \
    X(void, linear_backward, (gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N,   \
          int in, int out, bool accumulate_dx, bool accumulate_dW))                                                    \
    X(void, rmsnorm, (gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps))          \
    X(void, rmsnorm_backward, (gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd,       \
          int rows, int n, float eps, bool accumulate_dx))                                                             \
    X(void, rope, (gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0,                     \
          rope_pairing pairing, bool inverse))                                                                         \
    X(void, swiglu, (gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n))                                    \
    X(void, swiglu_backward, (gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up,           \
          size_t n))                                                                                                   \
    X(void, add, (gf_backend *be, gf_buf y, gf_buf x, size_t n))                                                       \
    X(void, scale, (gf_backend *be, gf_buf x, size_t n, float s))                                                      \
    X(void, attention, (gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,            \
          const gf_attn_shape *s))                                                                                     \
    X(void, attention_backward, (gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out,             \
          gf_buf lse, gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s))                                           \
    X(void, gdn_core, (gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,    \
          gf_buf beta, const gf_gdn_shape *s))                                                                         \
    X(void, gdn_core_backward, (gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta,              \
          gf_buf d_o, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s))        \
    X(void, gdn_prep, (gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,            \
          gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,                     \
          const gf_gdn_dims *d))                                                                                       \
    X(void, gdn_prep_backward, (gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log,             \
          gf_buf ddt_bias, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre,      \
          gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,                      \
          const gf_gdn_dims *d))                                                                                       \
    X(void, gdn_gated_norm, (gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,              \
          const gf_gdn_dims *d))                                                                                       \
    X(void, gdn_gated_norm_backward, (gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,   \
          gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d))                                              \
    X(void, cross_entropy, (gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N,         \
          int V, float grad_scale))                                                                                    \
    X(void, kl_div, (gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V,       \
          float tau, float grad_scale))                                                                                \
    X(void, mse, (gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale))        \
    X(void, row_l2, (gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale))      \
    X(void, sumsq, (gf_backend *be, gf_buf acc, gf_buf x, size_t n))                                                   \
    X(void, adamw, (gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n,                    \
          const gf_adamw *h))

typedef struct {
#define GF_OP_FIELD(ret, name, params) ret(*name) params;
    GF_BACKEND_OPS(GF_OP_FIELD)
#undef GF_OP_FIELD
} gf_backend_ops;

struct gf_backend {
    const gf_backend_ops *ops;
    char name[128];    /* be_name() */
    gf_dtype act;      /* compute type */
    bool host;         /* buffers are host memory */
    int threads;       /* CPU worker threads (be_threads; 0 reads as 1) */
    int tasks;         /* a device's be_run_tasks streams and host threads (0 reads as GF_DEVICE_TASKS) */
    void *impl;        /* the backend's own state */
    gf_comm *comm;     /* be_comm: the data-parallel job's communicator, NULL at world size 1 */
    char error[256];   /* the first sticky error since the last be_sync/be_check; "" when none */
};

/* Records a sticky error (the first one wins) that the next be_sync / be_check
 * reports; implementations call it from ops that cannot return an error. */
void be_set_error(gf_backend *be, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Kernel variants forced by the checks and benchmarks that compare them; the
 * backend chooses every one by itself (by shape) where a field is 0, and the
 * product never sets them (it opens with be_open). CUDA only
 * (cuda_attention_cfg.h, docs/cuda.md, docs/cuda-gdn.md); a value the kernels
 * do not know is refused at open. */
typedef struct {
    int attn_cfg;        /* 1 + the id of an attention forward block shape (ATTN_FWD_CONFIG_LIST); 0: chosen */
    int attn_split;      /* key-range splits of the attention forward (1: none); 0: chosen */
    int gdn_slab;        /* state rows a GDN sequential-pass block owns: 16 or 32; 0: chosen */
    int gdn_general;     /* 1: the GDN core's general kernels also where its C 64, d 128 copies apply; 0: chosen */
    int attn_bwd;        /* the attention backward: 1 mma.sync, 2 wgmma, 3 wgmma on two warpgroups (2 and 3:
                          * compute capability 9.0 only); 0: chosen */
} gf_backend_variants;

/* be_open with kernel variants forced (v NULL: be_open itself). The test-only
 * hook of the checks and benchmarks that compare variants. */
int be_open_variants(gf_backend **out, const gf_backend_opts *o, const gf_backend_variants *v);

/* The tables (test_backend_ops checks that every entry is set). */
extern const gf_backend_ops cpu_ops;
#ifdef GRAFT_WITH_CUDA
extern const gf_backend_ops cuda_ops;
#endif

/* Registration: backend.c's be_open calls these by device name. */
int gf_backend_cpu_open(gf_backend *be, const gf_backend_opts *o);
#ifdef GRAFT_WITH_CUDA
/* "cuda" / "cuda:N"; v: the variants be_open_variants forces (NULL: none) */
int gf_backend_cuda_open(gf_backend *be, const gf_backend_opts *o, const gf_backend_variants *v);
int gf_backend_cuda_count(int *count); /* GPUs found; 0 with no driver or no GPU */
#endif

#ifdef __cplusplus
}
#endif

#endif
