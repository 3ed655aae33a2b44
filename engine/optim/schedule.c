#include "optim/schedule.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

double lr_factor(const lr_schedule *s, long step) {
    if (s->warmup > 0 && step <= s->warmup) return (double)step / s->warmup;
    if (s->shape == LR_CONSTANT) return 1.0;
    const long span = s->total - s->warmup;
    if (span <= 0) return 1.0;
    double progress = (double)(step - s->warmup) / span;
    if (progress > 1) progress = 1;
    return s->min_ratio + (1.0 - s->min_ratio) * 0.5 * (1.0 + cos(M_PI * progress));
}

int lr_shape_parse(const char *name, lr_shape *out) {
    if (strcmp(name, "cosine") == 0) *out = LR_COSINE;
    else if (strcmp(name, "constant") == 0) *out = LR_CONSTANT;
    else return gf_fail("unknown schedule '%s' (cosine or constant)", name);
    return 0;
}
