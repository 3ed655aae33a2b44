/* The half-lives on text of one student, as Stats shows them (docs/half-life.md):
 * which student folder was measured and the per-head result of
 * halflife_measure (its histograms, idle values, targets and flags), kept so
 * that the head under the cursor can show its histogram over tokens and the
 * flagged heads can be listed worst first. The heat maps themselves go into
 * the teacher's per-init metrics (MET_HALFLIFE_DATA, MET_HL_LOG2_RATIO) under the
 * student's init name. One per teacher; not saved with the session (graft
 * halflife --json keeps the numbers). */
#ifndef GRAFT_WORKBENCH_HALFLIFE_VIEW_H
#define GRAFT_WORKBENCH_HALFLIFE_VIEW_H

#include <stdbool.h>

#include "halflife/halflife.h"
#include "halflife/halflife_fix.h"

typedef struct {
    char student[256];       /* the student folder measured */
    char init[32];           /* its init: the row of the heat maps it fills */
} halflife_view_request;

typedef struct {
    halflife_view_request req; /* what the next measurement runs on */
    halflife_view_request ran; /* what the last one ran on */
    halflife_change fix_req;   /* what the next fix does (half_life 0: the no-sink distance) */
    bool have;                 /* r is from a finished job */
    halflife_result r;
    int *flagged;              /* [r.n_heads] indices into r.heads, worst first */
    int n_flagged;
    int jump;                  /* the flagged head the last jump went to (-1 none) */
    /* the last fix (4 Calibrate): one head, Stage 2 of its layer, measured before and after */
    bool fixed;
    halflife_change fix;
    halflife_result fix_before, fix_after;
    halflife_fix_outcome fix_out;
    char fix_dir[512];         /* the new student folder it wrote */
} halflife_view;

/* The fix job's result (owned until halflife_view_take_fix). */
typedef struct {
    halflife_change fix;
    halflife_result before, after;
    halflife_fix_outcome out;
    char dir[512];
} halflife_fix_result;

void halflife_view_init(halflife_view *v);
void halflife_view_free(halflife_view *v);
/* Takes the job's result (moved out of *r) and orders the flagged heads. */
void halflife_view_take(halflife_view *v, halflife_result *r);
/* Takes the fix job's result (freed here). */
void halflife_view_take_fix(halflife_view *v, halflife_fix_result *f);
/* The head at (layer, head) of r, or NULL. */
const halflife_head *halflife_result_head(const halflife_result *r, int layer, int head);
/* The head at (layer, head), or NULL when it was not measured (an attention layer). */
const halflife_head *halflife_view_head(const halflife_view *v, int layer, int head);
/* log2(p50 / target): NaN when either is unknown or infinite. */
double halflife_log2_ratio(const halflife_head *h);

#endif
