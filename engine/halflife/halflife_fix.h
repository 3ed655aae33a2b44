/* Per-head fixes of a student's memory (docs/half-life.md "Fixing a head"):
 * set one GDN head's idle half-life (A_log = 0, dt_bias = softplus^-1(ln 2 /
 * N), as Stage 1's decay does), then run Stage 2 on that layer alone from its
 * current parameters, teacher-forced on the calibration captures, so the
 * layer's other weights adapt to the new timescale. */
#ifndef GRAFT_HALFLIFE_HALFLIFE_FIX_H
#define GRAFT_HALFLIFE_HALFLIFE_FIX_H

#include "calibrate/capture.h"
#include "core/progress.h"
#include "student/calib_split.h"
#include "student/student.h"

typedef struct {
    int layer, head;
    double half_life;  /* tokens, > 0; 0: keep the head as it is (Stage 2 of its layer alone, a control) */
    double rate_scale; /* > 0 instead of half_life: multiply the head's decay rate at every token by this
                          (A_log += ln rate_scale): every per-token half-life divides by it, so
                          rate_scale = p50 / target puts the measured median on the target */
} halflife_change;

/* Applies the changes to s's GDN layers (each must be a GDN layer of s and
 * its head < H); updates rep[l].half_life. -1 with a message otherwise. */
int halflife_apply(student *s, const halflife_change *c, int n);

/* Stage 2 of layer l alone (s->set's steps, learning rates, keep-best) from
 * its current parameters; cal / held (held may be NULL) from the teacher
 * capture. rep[l].s2 gets the curves, rep[l].half_life the result. */
int halflife_realign(student *s, int l, const teacher_capture *cal, const teacher_capture *held,
                     const progress_sink *progress);

/* A fix as graft halflife --fix and the workbench run it: the perplexity of
 * sp's evaluation slice (windows of ctx tokens) before, the teacher capture of
 * sp's calibration and held-out sequences (only when s->set.steps > 0), the
 * changes applied, Stage 2 of each changed layer once, the perplexity after.
 * n_eval: the tokens scored. -1 with a message (cancelled, bad change). */
typedef struct {
    double ppl_before, ppl_after;
    long n_eval;
} halflife_fix_outcome;

int halflife_fix_run(student *s, const halflife_change *c, int n, const token_split *sp, int ctx,
                     const progress_sink *progress, halflife_fix_outcome *out);

#endif
