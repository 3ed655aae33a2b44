/* The CUDA backend's Gated DeltaNet ops: the gf_backend_ops entries gdn_core,
 * gdn_core_backward, gdn_prep, gdn_prep_backward, gdn_gated_norm and
 * gdn_gated_norm_backward (backend.h has the contract; docs/cuda-gdn.md the
 * kernels). Each has the signature of its be_* function. */
#ifndef GRAFT_BACKEND_CUDA_GDN_H
#define GRAFT_BACKEND_CUDA_GDN_H

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

void cuda_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                   gf_buf beta, const gf_gdn_shape *s);
void cuda_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                            gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s);
void cuda_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                   gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                   const gf_gdn_dims *d);
void cuda_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias, gf_buf dq,
                            gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre, gf_buf q,
                            gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                            const gf_gdn_dims *d);
void cuda_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                         const gf_gdn_dims *d);
void cuda_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,
                                  gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d);

#ifdef __cplusplus
}
#endif

#endif
