/* Which variant measured best for a teacher, from the Results rows it holds
 * (run here or imported): the paper's method (taylor-calibrate with all four
 * Stage 1 parts and the reference sigma fit; with only the scaled fit in the
 * rows, that one) against every other row measured the same way (same
 * strategy and ratio, evaluation slice, Stage 2 kept state and steps), and by
 * how much, naming the rows. The workbench's default stays the paper's method:
 * this is what the rows say, shown on Results and Calibrate. */
#ifndef GRAFT_WORKBENCH_BEST_VARIANT_H
#define GRAFT_WORKBENCH_BEST_VARIANT_H

#include <stdbool.h>
#include <stddef.h>

#include "workbench/teacher_state.h"

typedef struct {
    int best, base;   /* indexes into t->results (run order); base is the paper's method's row */
    int second;       /* when best == base: the runner-up, else -1 */
    double change;    /* (best - base) / base, or (second - base) / base */
} best_variant;

/* False when the rows hold no comparison (no row of the paper's method with another beside it). */
bool best_variant_find(const teacher_state *t, best_variant *out);
/* "best measured here (uniform 50%, gutenberg-60 w64): taylor-calibrate [decay,beta,gate] ppl 54.10 vs
 * taylor-calibrate 77.40 (-30.1 %), rows 3 and 7 (imported from ablate_train.json)"; "" without a comparison. */
void best_variant_line(const teacher_state *t, char *buf, size_t n);
/* "taylor-calibrate", "taylor-calibrate [decay,beta,gate]", "taylor-calibrate [sigma scaled]" */
void best_variant_label(const result_row *r, char *buf, size_t n);

#endif
