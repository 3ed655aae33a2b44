/* AdamW (decoupled weight decay, Loshchilov & Hutter; PyTorch's torch.optim.AdamW
 * update rule) on one flat float32 tensor. Generic: any trainer passes its own
 * parameter / gradient / moment arrays, one call per tensor (or per group). */
#ifndef GRAFT_OPTIM_ADAMW_H
#define GRAFT_OPTIM_ADAMW_H

#include <stddef.h>

/* One step, for step = 1, 2, ... (bias corrections use it):
 *   p <- p - lr * wd * p
 *   m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
 *   p <- p - lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps)
 * params, m, v [n] are updated in place; grads [n] are read. */
void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr, float b1,
                float b2, float eps, float wd, int step);

/* sum of squares of g[0..n) in double (for global gradient-norm clipping). */
double grad_sq_sum(const float *g, size_t n);

#endif
