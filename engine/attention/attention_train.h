/* Causal GQA attention for training, one sequence at positions 0..T-1, with
 * the softmax probabilities kept for the backward pass. Per head it is three
 * sgemms forward (S = Q K^T, softmax, O = P V) and four backward, instead of
 * row-by-row dot products: the training pass's hot spot. */
#ifndef GRAFT_ATTENTION_ATTENTION_TRAIN_H
#define GRAFT_ATTENTION_ATTENTION_TRAIN_H

#include "attention/attention.h"

/* out [T, H*hd] from q [T, H*hd], k, v [T, KV*hd] (q, k rotated); P [H, T, T]
 * receives the probabilities (row t: keys 0..t, zeros above the diagonal). */
void attention_train_forward(float *out, float *P, const float *q, const float *k, const float *v,
                             const attn_shape *s, int T);

/* dq [T, H*hd], dk, dv [T, KV*hd] (overwritten) from dout [T, H*hd] and the
 * forward's P. scratch: [H, T, T] floats. */
void attention_train_backward(float *dq, float *dk, float *dv, const float *dout, const float *P, const float *q,
                              const float *k, const float *v, const attn_shape *s, int T, float *scratch);

#endif
