/* What the Calibrate and Align screens show: Stage 1 numbers per converted
 * layer and head, Stage 2 curves and summaries per layer, of one teacher.
 * Filled from the calibrate and align jobs' events (wb_event.h). */
#ifndef GRAFT_UI_METHOD_STATE_H
#define GRAFT_UI_METHOD_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "workbench/stage1_choice.h"

typedef enum {
    CAL_DIST,      /* d_h mean attention distance */
    CAL_ENTROPY,   /* H_h */
    CAL_CONC,      /* c_h */
    CAL_BETA,      /* beta*_h */
    CAL_LOGIT,     /* logit(beta*_h): the write-gate target */
    CAL_WB_LOGIT,  /* measured mean write logit after the Wb rescale */
    CAL_SIGMA_RAW, /* sigma*_h before clamping */
    CAL_SIGMA,     /* sigma*_h clamped to [0.1, 10] */
    CAL_TARGET_G,  /* target decay clamp(ln 2 / d_h, 1e-3, 5) */
    CAL_DT_BIAS,   /* softplus^-1(target) */
    CAL_HALFLIFE,  /* idle half-life after Stage 1, tokens */
    CAL_DIST_NOSINK, /* mean distance without the first key (the attention sink) */
    CAL_SINK,      /* mean attention share on the first key */
    CAL_DECAY_DIST, /* the distance the decay used: d_h, the no-sink one, or the half-life override */
    CAL_COUNT
} calib_field;

const char *calib_field_key(calib_field f); /* "beta", "sigma_raw", ... */

typedef struct {
    bool done;
    unsigned parts;       /* the Stage 1 components applied (STAGE1_* bits) */
    double alpha_star;
    double *v[CAL_COUNT]; /* [n_heads] NaN until known */
} calib_layer;

typedef enum {
    AL_STEPS, AL_BEST_STEP, AL_BEST_LOSS, AL_BEST_HELDOUT,
    AL_WB_BEFORE, AL_WB_AFTER, AL_WG_BEFORE, AL_WG_AFTER,
    AL_HL_MEAN_BEFORE, AL_HL_MEDIAN_BEFORE, AL_HL_MEAN_AFTER, AL_HL_MEDIAN_AFTER,
    AL_DONE, AL_COUNT
} align_field;

const char *align_field_key(align_field f); /* "best_step", "wb_before", ... */

typedef struct {
    double *step, *loss, *held; /* [n] points in arrival order */
    size_t n, cap;
    int last_step;              /* highest step seen, -1 none */
    double v[AL_COUNT];         /* NaN until known */
} align_layer;

typedef struct {
    calib_layer *calib;     /* [n_layers] or NULL */
    align_layer *align;     /* [n_layers] or NULL */
    char align_init[32];    /* what Enter on Align runs: "taylor-calibrate" or "align-only" */
    char align_ran[32];     /* the init of the curves shown */
    char calib_outcome[48], align_outcome[48]; /* "running", "done", "cancelled", "error: ..." */
    stage1_choice calib_s1;  /* the Stage 1 options the calibrated layers were computed with */
    stage1_choice align_s1;  /* ... and those of the Stage 2 run shown (taylor-calibrate) */
    int n_layers;           /* the arrays' length */
} method_state;

void method_state_init(method_state *ms);
void method_state_free(method_state *ms);
void method_state_resize(method_state *ms, int n_layers, int n_heads); /* drops everything */
calib_layer *method_calib(method_state *ms, int n_layers, int n_heads, int layer); /* allocates */
align_layer *method_align(method_state *ms, int n_layers, int layer);              /* allocates */
void method_align_reset(method_state *ms, int n_layers); /* before a new Stage 2 run */
void method_calib_reset(method_state *ms, int n_layers, int n_heads);

/* One Stage 2 step of a layer: its training loss and held-out loss (NaN: none). */
void method_align_point(method_state *ms, int n_layers, int layer, long step, double loss, double heldout);

/* Median of n values (NaN skipped); NaN when none. */
double median_of(const double *v, int n);

#endif
