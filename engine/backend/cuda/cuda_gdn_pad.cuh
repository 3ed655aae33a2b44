/* The GDN core at head dims that are not multiples of 16: the same op on
 * zero-padded copies (cuda_gdn_pad.cu says why that is exact). */
#ifndef GRAFT_BACKEND_CUDA_GDN_PAD_CUH
#define GRAFT_BACKEND_CUDA_GDN_PAD_CUH

#include "backend/backend.h"

/* dk or dv (both in 1 .. GDN_MAX_D) is not a multiple of 16. */
bool gdn_needs_pad(const gf_gdn_shape *s);
/* cuda_gdn_core / cuda_gdn_core_backward with the arguments already checked. */
void gdn_core_padded(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                     gf_buf beta, const gf_gdn_shape *s);
void gdn_core_backward_padded(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                              gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt,
                              const gf_gdn_shape *s);

#endif
