/* Training checkpoints: everything needed to continue a run bit-exactly.
 * Written atomically (core/atomic_file.h: a temporary sibling, fsync, rename,
 * fsync of the folder), so a crash or SIGKILL at any moment leaves either the
 * previous or the new file.
 *
 * Layout (little-endian, as the host writes it):
 *   "GRAFTCK1"  u64 options_hash  i64 step  i64 tokens  i64 data_cursor  u64 seed
 *   u32 n_tensors, then u64 size of each tensor
 *   u32 n_curve, then n_curve x (f64 tokens, f64 loss)
 *   u32 n_eval,  then n_eval  x (f64 tokens, f64 eval ppl)
 *   params, first moments, second moments: each the tensors' floats in order. */
#ifndef GRAFT_TRAIN_CHECKPOINT_H
#define GRAFT_TRAIN_CHECKPOINT_H

#include <stdint.h>

#include "train/params.h"

typedef struct {
    double *xy; /* [n, 2] */
    int n, cap;
} curve;

void curve_push(curve *c, double x, double y);
void curve_free(curve *c);

typedef struct {
    uint64_t options_hash; /* what must match to resume (shapes, data, schedule) */
    long step;             /* optimizer steps done */
    long tokens;           /* training tokens consumed */
    long data_cursor;      /* next training sequence index */
    uint64_t seed;
    curve loss;            /* (tokens, step loss) per step */
    curve eval;            /* (tokens, held-out perplexity) */
} train_state;

void train_state_free(train_state *s);

/* m, v: [pl->total] moments laid out like the tensors. */
int checkpoint_write(const char *path, const train_state *s, const param_list *pl, const float *m, const float *v);
/* Reads into s (curves allocated), the tensors' parameters, m and v. Fails
 * with a clear message when the file does not match pl. */
int checkpoint_read(const char *path, train_state *s, const param_list *pl, float *m, float *v);

#endif
