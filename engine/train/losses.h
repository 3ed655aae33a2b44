/* Distillation losses with their gradients, one sequence (T rows) at a time.
 * Each returns the loss SUMMED over the rows and writes the gradient already
 * multiplied by grad_scale (the caller passes 1 / rows-in-the-step, so the
 * optimizer sees the gradient of the mean). Accumulation in double. */
#ifndef GRAFT_TRAIN_LOSSES_H
#define GRAFT_TRAIN_LOSSES_H

/* tau^2 KL(softmax(zt/tau) || softmax(zs/tau)) per row (Hinton's tau^2 keeps
 * gradient magnitudes comparable across temperatures). Writes (overwrites)
 * dzs[T, V] = grad_scale * tau * (p_s - p_t). */
double loss_kl_rows(float *dzs, const float *zs, const float *zt, int T, int V, float tau, float grad_scale);

/* Cross-entropy -log softmax(z)[target] per row; dz = grad_scale (p - onehot). */
double loss_ce_rows(float *dz, const float *z, const int *targets, int T, int V, float grad_scale);

/* Hidden-state alignment (METHOD.md 9(a)): sum over rows of ||t - s||_2 / sqrt(D).
 * ADDS grad_scale * (s - t) / (||t - s|| sqrt(D)) to ds[T, D] (0 where t == s). */
double loss_align_rows(float *ds, const float *s, const float *t, int T, int D, float grad_scale);

#endif
