/* The CUDA backend's implementations of the op table: cuda_NAME for every op
 * of backend_impl.h's list, each with the signature of its be_* function
 * (backend.h has the contract). The memory ops, sync and tasks live in
 * cuda_backend.cu and cuda_memory.cu, the Gated DeltaNet ops in cuda_gdn*.cu
 * (docs/cuda-gdn.md), the rest in the other cuda_*.cu files. */
#ifndef GRAFT_BACKEND_CUDA_TABLE_H
#define GRAFT_BACKEND_CUDA_TABLE_H

#include "backend/backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_OP_DECL(ret, name, params) ret cuda_##name params;
GF_BACKEND_OPS(CUDA_OP_DECL)
#undef CUDA_OP_DECL

#ifdef __cplusplus
}
#endif

#endif
