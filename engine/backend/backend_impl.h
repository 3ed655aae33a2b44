/* What a backend implements: the table behind the be_* functions of
 * backend.h. Only engine/backend/ includes this. Each entry has the signature of
 * the be_* function of the same name; backend.c's be_* wrappers call through it.
 * Contract v1 (backend.h lists the changes since v0: rmsnorm_backward's eps,
 * gdn_prep's bqkv, gdn_prep_backward's dbqkv; gf_backend.threads). */
#ifndef GRAFT_BACKEND_BACKEND_IMPL_H
#define GRAFT_BACKEND_BACKEND_IMPL_H

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void (*close)(gf_backend *be); /* frees impl; backend.c frees the struct */
    int (*mem_info)(gf_backend *be, size_t *free_bytes, size_t *total_bytes);
    int (*alloc)(gf_backend *be, gf_buf *out, size_t n, gf_dtype t);
    void (*free)(gf_backend *be, gf_buf *b);
    void (*zero)(gf_backend *be, gf_buf b, size_t n);
    void (*copy)(gf_backend *be, gf_buf dst, gf_buf src, size_t n);
    int (*upload)(gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n);
    int (*download)(gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n);
    int (*sync)(gf_backend *be);
    int (*check)(gf_backend *be);
    int (*run_tasks)(gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud);
    void (*embedding)(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D);
    void (*embedding_backward)(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D);
    void (*linear)(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, bool accumulate);
    void (*linear_backward)(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N, int in, int out, bool accumulate_dx);
    void (*rmsnorm)(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps);
    void (*rmsnorm_backward)(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd, int rows, int n, float eps, bool accumulate_dx);
    void (*rope)(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0, rope_pairing pairing, bool inverse);
    void (*swiglu)(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n);
    void (*swiglu_backward)(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up, size_t n);
    void (*add)(gf_backend *be, gf_buf y, gf_buf x, size_t n);
    void (*scale)(gf_backend *be, gf_buf x, size_t n, float s);
    void (*attention)(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s);
    void (*attention_backward)(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out, gf_buf lse, gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s);
    void (*gdn_core)(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, const gf_gdn_shape *s);
    void (*gdn_core_backward)(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s);
    void (*gdn_prep)(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias, const gf_gdn_dims *d);
    void (*gdn_prep_backward)(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias, const gf_gdn_dims *d);
    void (*gdn_gated_norm)(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d);
    void (*gdn_gated_norm_backward)(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o, gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d);
    void (*cross_entropy)(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N, int V, float grad_scale);
    void (*kl_div)(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V, float tau, float grad_scale);
    void (*mse)(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale);
    void (*row_l2)(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale);
    void (*sumsq)(gf_backend *be, gf_buf acc, gf_buf x, size_t n);
    void (*adamw)(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h);
} gf_backend_ops;

struct gf_backend {
    const gf_backend_ops *ops;
    char name[128];    /* be_name() */
    gf_dtype act;      /* compute type */
    bool host;         /* buffers are host memory */
    int threads;       /* CPU worker threads (be_threads; 0 reads as 1) */
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

/* Registration: backend.c's be_open calls these by device name. */
int gf_backend_cpu_open(gf_backend *be, const gf_backend_opts *o);
#ifdef GRAFT_WITH_CUDA
int gf_backend_cuda_open(gf_backend *be, const gf_backend_opts *o); /* "cuda" / "cuda:N" */
int gf_backend_cuda_count(int *count); /* GPUs found; 0 with no driver or no GPU */
#endif

#ifdef __cplusplus
}
#endif

#endif
