/* CPU float32 building blocks of the Transformer block (the reference backend).
 * Output argument first; shapes next to every pointer. T = rows (tokens). */
#ifndef GRAFT_OPS_OPS_H
#define GRAFT_OPS_OPS_H

#include "model/config.h"

/* y[T, out] = x[T, in] W[out, in]^T (+ b[out] when b != NULL). OpenBLAS sgemm. */
void op_linear(float *y, const float *x, const float *W, const float *b, int T, int in, int out);

/* y[T, n] = x[T, n] / sqrt(mean(x^2) + eps) * w[n]; y may alias x. */
void op_rmsnorm(float *y, const float *x, const float *w, int T, int n, float eps);

/* Per-head RMSNorm (Qwen3 q_norm / k_norm): x[T, nh*hd] normalized per head with w[hd], in place. */
void op_head_rmsnorm(float *x, const float *w, int T, int nh, int hd, float eps);

/* gate[T, F] <- silu(gate) * up[T, F] */
void op_swiglu(float *gate, const float *up, int T, int F);

/* x[T, D] += y[T, D] */
void op_add(float *x, const float *y, size_t n);

/* RoPE angles: inv_freq[hd/2] for a config (theta, llama3 / linear scaling), in double. */
void rope_inv_freq(double *inv_freq, const model_config *c);

/* Rotates x[T, nh*hd] in place for absolute positions pos0 .. pos0+T-1. */
void op_rope(float *x, const double *inv_freq, int T, int nh, int hd, int pos0, rope_pairing pairing);

#endif
