/* Built only when engine/backend/cuda holds no cuda_gdn*.cu (the Makefile
 * decides): the GDN entries of the table then fail loudly, with a sticky
 * error that the next be_sync reports, instead of leaving the link broken.
 * Once the GDN kernels are in the tree this file is not compiled. */
#include "backend/cuda/cuda_gdn.h"
#include "backend/cuda/cuda_common.cuh"

static void absent(gf_backend *be, const char *op) {
    be_set_error(be, "%s: the Gated DeltaNet CUDA kernels are not in this build (no cuda_gdn*.cu)", op);
}

extern "C" {
void cuda_gdn_core(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                   const gf_gdn_shape *) {
    absent(be, "gdn_core");
}
void cuda_gdn_core_backward(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                            gf_buf, gf_buf, gf_buf, const gf_gdn_shape *) {
    absent(be, "gdn_core_backward");
}
void cuda_gdn_prep(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                   gf_buf, const gf_gdn_dims *) {
    absent(be, "gdn_prep");
}
void cuda_gdn_prep_backward(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                            gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                            const gf_gdn_dims *) {
    absent(be, "gdn_prep_backward");
}
void cuda_gdn_gated_norm(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, const gf_gdn_dims *) {
    absent(be, "gdn_gated_norm");
}
void cuda_gdn_gated_norm_backward(gf_backend *be, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf, gf_buf,
                                  const gf_gdn_dims *) {
    absent(be, "gdn_gated_norm_backward");
}
}
