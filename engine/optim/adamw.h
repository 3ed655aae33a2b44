/* AdamW (Loshchilov & Hutter): Adam moments with bias correction and weight
 * decay decoupled from the gradient. */
#ifndef GRAFT_OPTIM_ADAMW_H
#define GRAFT_OPTIM_ADAMW_H

#include <stddef.h>

/* One update of params[n] from grads[n]; m, v [n] are the first and second
 * moments (zero before step 1). step counts from 1. For each i:
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps) + lr * wd * p */
void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr, float beta1, float beta2,
                float eps, float weight_decay, long step);

#endif
