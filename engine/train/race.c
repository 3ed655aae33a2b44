#include "train/race.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/error.h"
#include "select/select.h"

static double trailing_mean(const curve *c, int i, int w) {
    const int lo = i - w + 1 < 0 ? 0 : i - w + 1;
    double s = 0;
    for (int j = lo; j <= i; j++) s += c->xy[2 * j + 1];
    return s / (i - lo + 1);
}

int race_tokens_to_target(const curve *curves, int n_runs, int baseline, double *target, double *ttt, int *window) {
    const curve *b = &curves[baseline];
    if (b->n == 0) return gf_fail("the baseline run has no loss curve");
    const int w = b->n / 10 > 1 ? b->n / 10 : 1;
    *window = w;
    *target = trailing_mean(b, b->n - 1, w);
    /* a run counts only from its first full window: the target is a mean over w steps, and the
     * mean of a run's first few steps (a shorter window) dips below it when the first batches
     * are easy, which says nothing about the student (a 1.5B race "reached" the target after
     * 14 of 610 steps that way; with the full window, after 477) */
    for (int r = 0; r < n_runs; r++) {
        ttt[r] = -1;
        for (int i = w - 1; i < curves[r].n; i++)
            if (trailing_mean(&curves[r], i, w) <= *target) {
                ttt[r] = curves[r].xy[2 * i];
                break;
            }
    }
    return 0;
}

void race_uniform_convert(int L, double retention, bool *convert) {
    int k = (int)lround(retention * L);
    if (k < 0) k = 0;
    if (k > L) k = L;
    int *kept = gf_calloc((size_t)(k ? k : 1), sizeof *kept);
    select_uniform(L, k, kept); /* the same layers graft select / convert keep */
    for (int l = 0; l < L; l++) convert[l] = true;
    for (int i = 0; i < k; i++) convert[kept[i]] = false;
    free(kept);
}
