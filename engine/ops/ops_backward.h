/* Backward passes of the ops in ops.h and attention.h (float32, CPU), written
 * beside their forwards. Convention: parameter gradients (dW, db, dw) are
 * ACCUMULATED (+=), so one buffer sums over sequences and micro-batches;
 * input gradients are overwritten unless the function says otherwise.
 * A NULL parameter-gradient pointer skips that work (frozen parameters). */
#ifndef GRAFT_OPS_OPS_BACKWARD_H
#define GRAFT_OPS_OPS_BACKWARD_H

#include <stdbool.h>

#include "attention/attention.h"
#include "model/config.h"

/* y[T, out] = x[T, in] W[out, in]^T + b: dx[T, in] = dy W (added to dx when
 * accumulate_dx, skipped when dx == NULL), dW += dy^T x, db += sum_t dy. */
void op_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x, const float *W, int T,
                        int in, int out, bool accumulate_dx);

/* y = x r w with r = 1/sqrt(mean(x^2) + eps), rows of n: dw += sum_t dy x r;
 * dx = r (dy w) - r^3 x mean(dy w x) (added to dx when accumulate_dx).
 * dx must not alias dy unless accumulate_dx is false (then it may). */
void op_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w, int T, int n,
                         float eps, bool accumulate_dx);

/* gate_out = silu(gate) * up: dgate, dup [T, F] from dact [T, F]; gate is the
 * pre-activation. dgate may alias dact. */
void op_swiglu_backward(float *dgate, float *dup, const float *dact, const float *gate, const float *up, int T,
                        int F);

/* RoPE is a rotation: its backward rotates the gradient back (in place). */
void op_rope_backward(float *dx, const double *inv_freq, int T, int nh, int hd, int pos0, rope_pairing pairing);

/* dE[tokens[t]] += dx[t] for t < T (rows of D). */
void op_embedding_backward(float *dE, const float *dx, const int *tokens, int T, int D);

/* Causal GQA attention over one sequence at positions 0..T-1, q [T, H*hd],
 * k, v [T, KV*hd] (q, k rotated), out = softmax(q k^T / sqrt(hd)) v.
 * Probabilities are recomputed row by row (O(T) memory per thread).
 * Writes (overwrites) dq [T, H*hd], dk, dv [T, KV*hd] from dout [T, H*hd]. */
void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k,
                        const float *v, const attn_shape *s, int T);

#endif
