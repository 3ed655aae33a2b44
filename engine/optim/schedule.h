/* Learning-rate schedules (AdamW and the gradient norm are backend ops: be_adamw, be_sumsq). */
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

#endif
