/* be_linear's path for a handful of rows (cuda_gemv.cu says why). */
#ifndef GRAFT_BACKEND_CUDA_GEMV_CUH
#define GRAFT_BACKEND_CUDA_GEMV_CUH

#include "backend/cuda/cuda_ops.cuh"

#define GEMV_MAX_ROWS 4 /* beyond, cuBLAS (a batch-16 decode step reuses each weight 16 times) */

/* Whether cuda_gemv serves M rows of `in` (16-byte packs: in a multiple of
 * the pack, x and W aligned). */
bool cuda_gemv_takes(gf_backend *be, gf_buf x, gf_buf W, int M, int in);
/* y[M, out] = x[M, in] W[out, in]^T (+ b[out]) (+ y when accumulate), act dtype throughout. */
void cuda_gemv(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int M, int in, int out, bool accumulate);

#endif
