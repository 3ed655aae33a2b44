/* Tokens-to-target: how many training tokens each initialization needs to
 * reach the loss the baseline reaches at the end of its budget (the paper's
 * "9x fewer tokens" comparison), from loss curves on the same data order.
 *
 * Step losses are noisy, so every curve is smoothed by a trailing mean over
 * `window` steps (window = max(1, baseline steps / 10)). The target is the
 * baseline's smoothed loss at its last step; a run's tokens-to-target is the
 * token count at the first step whose smoothed loss is <= the target (-1:
 * never within its budget). The baseline reaches it by construction. */
#ifndef GRAFT_TRAIN_RACE_H
#define GRAFT_TRAIN_RACE_H

#include "train/checkpoint.h"

/* curves[n_runs]; baseline indexes the reference run. Fills *target, ttt[n_runs],
 * *window. -1 when the baseline curve is empty. */
int race_tokens_to_target(const curve *curves, int n_runs, int baseline, double *target, double *ttt, int *window);

/* Uniform selection (METHOD.md 8): k = round(retention * L) layers keep
 * attention, at floor(i * L / k) for i < k; convert[l] is true for the others. */
void race_uniform_convert(int L, double retention, bool *convert);

#endif
