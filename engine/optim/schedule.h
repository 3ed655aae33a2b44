/* Learning-rate schedules and gradient clipping. */
#ifndef GRAFT_OPTIM_SCHEDULE_H
#define GRAFT_OPTIM_SCHEDULE_H

#include <stddef.h>

typedef enum { LR_COSINE = 0, LR_CONSTANT = 1 } lr_shape;

typedef struct {
    lr_shape shape;
    long warmup;      /* steps of linear warmup from lr/warmup to lr */
    long total;       /* steps in the run */
    double min_ratio; /* cosine ends at min_ratio * lr */
} lr_schedule;

/* Multiplier of the base learning rate at `step` (1-based). */
double lr_factor(const lr_schedule *s, long step);

/* Name -> shape; -1 with an error for anything else ("cosine", "constant"). */
int lr_shape_parse(const char *name, lr_shape *out);

/* sum of x^2 in double, in parallel over fixed 64K-element blocks summed in
 * order: the same bits whatever the thread count. */
double sum_squares(const float *x, size_t n);
/* x *= f, in parallel. */
void scale_floats(float *x, size_t n, double f);

/* Global L2 norm over several gradient blocks, in double. */
double grad_global_norm(float *const *grads, const size_t *sizes, int n_blocks);
/* Multiplies every block by max_norm / norm when norm > max_norm (> 0); returns the factor applied. */
double grad_clip(float *const *grads, const size_t *sizes, int n_blocks, double norm, double max_norm);

#endif
