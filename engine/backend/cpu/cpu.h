/* Internals shared by the CPU backend's files (engine/backend/cpu only): the
 * reference implementation of backend.h in float32 on host memory, with
 * OpenBLAS for matrix products and OpenMP over rows / heads / sequences.
 *
 * Threads: every parallel region names its thread count (be_threads), so a
 * sub-backend of be_run_tasks (threads = 1) runs single-threaded inside its
 * task thread, and OpenBLAS, called inside a parallel region, runs on the
 * calling thread. Determinism: work is split into fixed blocks whose partial
 * sums are added in block order, so a fixed thread count gives fixed bits
 * (most reductions here do not depend on the thread count at all). */
#ifndef GRAFT_BACKEND_CPU_CPU_H
#define GRAFT_BACKEND_CPU_CPU_H

#include <stddef.h>

#include "backend/backend_impl.h"

/* Host pointers of CPU buffers (ACT is float32 here). */
static inline float *cpu_f(gf_buf b) { return (float *)b.ptr; }
static inline double *cpu_d(gf_buf b) { return (double *)b.ptr; }
static inline int *cpu_i(gf_buf b) { return (int *)b.ptr; }

/* Threads for a region with `work` independent items (at most be_threads, at least 1). */
int cpu_threads(const gf_backend *be, size_t work);

/* Scratch for an op: malloc or a sticky "out of memory" error (then NULL). */
void *cpu_scratch(gf_backend *be, size_t bytes, const char *what);

extern const gf_backend_ops cpu_ops;

/* Op implementations (cpu_dense.c, cpu_attention.c, cpu_gdn.c, cpu_loss.c, cpu_optim.c). */
void cpu_embedding(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D);
void cpu_embedding_backward(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D);
void cpu_linear(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, bool accumulate);
void cpu_linear_backward(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N, int in,
                         int out, bool accumulate_dx);
void cpu_rmsnorm(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps);
void cpu_rmsnorm_backward(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd, int rows,
                          int n, float eps, bool accumulate_dx);
void cpu_rope(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0, rope_pairing pairing,
              bool inverse);
void cpu_swiglu(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n);
void cpu_swiglu_backward(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up, size_t n);
void cpu_add(gf_backend *be, gf_buf y, gf_buf x, size_t n);
void cpu_scale(gf_backend *be, gf_buf x, size_t n, float s);
void cpu_attention(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,
                   const gf_attn_shape *s);
void cpu_attention_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out, gf_buf lse,
                            gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s);
void cpu_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                  gf_buf beta, const gf_gdn_shape *s);
void cpu_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                           gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s);
void cpu_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                  gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                  const gf_gdn_dims *d);
void cpu_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias,
                           gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre,
                           gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                           const gf_gdn_dims *d);
void cpu_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                        const gf_gdn_dims *d);
void cpu_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,
                                 gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d);
void cpu_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N, int V,
                       float grad_scale);
void cpu_kl_div(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V,
                float tau, float grad_scale);
void cpu_mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale);
void cpu_row_l2(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale);
void cpu_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n);
void cpu_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h);

#endif
