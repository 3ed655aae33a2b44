/* Choosing which attention layers keep softmax attention (METHOD.md section 8).
 *
 * k = round(retention x L), halves rounded up (C's round(): 2.5 -> 3), ratio in
 * the open interval (0, 1); k may be 0 (every layer converted) or L.
 * - uniform: layer floor(i * L / k) for i = 0 .. k-1 (28 layers, k = 7 ->
 *   0, 4, 8, ..., 24).
 * - ar: for each layer, the teacher with that layer's attention output zeroed;
 *   score = perplexity on held-out text; keep the k layers with the highest
 *   score (removal hurts most). Ties: lower layer first.
 * - ga-s2: for each layer i, the student in which only layer i keeps attention
 *   (every other layer GDN under the chosen init); score = zero-shot
 *   perplexity; keep the k lowest. Ties: lower layer first.
 * - manual: the user's list (k = its length; --keep is not needed).
 * Kept layers are returned in ascending order. */
#ifndef GRAFT_SELECT_SELECT_H
#define GRAFT_SELECT_SELECT_H

#include <stdbool.h>

#include "core/progress.h"
#include "model/model.h"
#include "student/student.h"

typedef enum { STRATEGY_UNIFORM = 0, STRATEGY_AR = 1, STRATEGY_GA_S2 = 2, STRATEGY_MANUAL = 3 } select_strategy;

typedef struct {
    select_strategy kind;
    int manual[256];
    int n_manual;
} strategy_spec;

/* "uniform", "ar", "ga-s2", "manual:0,3,7". Range of manual layers checked
 * against L (pass L <= 0 to skip). -1 with a one-line error otherwise. */
int strategy_parse(const char *text, int L, strategy_spec *out);
const char *strategy_name(select_strategy s);
/* Canonical text of a spec ("manual:0,3"); buf of n bytes. */
void strategy_text(const strategy_spec *sp, char *buf, size_t n);

/* Validates ratio in (0, 1) and returns k through *k. */
int keep_count(double ratio, int L, int *k);

void select_uniform(int L, int k, int *kept);

typedef struct {
    select_strategy strategy;
    int L, k;
    int *kept;       /* [k] ascending */
    double *score;   /* [L] perplexity per layer (ar, ga-s2), NaN otherwise */
} layer_selection;

/* Held-out text for ar / ga-s2: ids[0..n) evaluated in windows of ctx.
 * ga_student: for ga-s2 only, a student holding GDN parameters for every layer
 * (its is_gdn is changed and left all-false). */
int select_layers(layer_selection *out, const strategy_spec *sp, int k, const model *m, student *ga_student,
                  const int *ids, size_t n, int ctx, const progress_sink *progress);
void layer_selection_free(layer_selection *s);

#endif
