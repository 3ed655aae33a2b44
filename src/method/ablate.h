/* The ablate operation (METHOD.md sections 7, 8, 11): zero-shot perplexity
 * on held-out text and idle half-life statistics for every strategy x
 * retention ratio x variant, teacher perplexity on top. A variant is an
 * initialization and, for the inits with Stage 1, one of the Stage 1
 * component sets (--stage1 A/B/..., --stage1-subsets) or a decay override
 * (--half-life N,...), once per value-scale fit (--sigma-fit reference,scaled or reference,gated)
 * when the value scale is among its components. `graft ablate` and the workbench's ablation table
 * (a on Results) run it; rows stream out through a callback as they come.
 *
 * Reuse: one teacher pass gives the calibration statistics and the per-layer
 * inputs/targets; per distinct variant one student holds GDN parameters for
 * every layer (a layer's Stage 1/2 result does not depend on which other
 * layers are converted), so each row only picks a subset and evaluates it;
 * rows with the same student and the same converted layers share one
 * evaluation. ar scores are computed once; ga-s2 scores once per student. */
#ifndef GRAFT_METHOD_ABLATE_H
#define GRAFT_METHOD_ABLATE_H

#include <cjson/cJSON.h>

#include "method/hooks.h"
#include "method/request.h"
#include "student/report_json.h"

#define ABLATE_MAX 64 /* list items */

/* One column entry of the table: an init with its Stage 1 components. */
typedef struct {
    student_init init;
    unsigned stage1;   /* effective components (none without Stage 1) */
    double half_life;  /* > 0: decay override */
    sigma_fit_mode fit; /* the value-scale fit (counts only with sigma among stage1) */
    int student;       /* index of the student that holds its parameters */
} ablate_variant;

/* The request's lists, expanded and checked. */
typedef struct {
    double keeps[ABLATE_MAX];
    int n_keep;
    strategy_spec strats[16];
    char strat_names[16][64];
    int n_strat;
    ablate_variant variants[INIT_COUNT * 2 * 32 * 2];
    sigma_fit_mode fits[2]; /* --sigma-fit reference,scaled (or any two fits): each Stage 1 variant with the value scale under each */
    int n_fit;
    int n_var, n_studs;
    student_settings set0; /* the shared settings (init, Stage 1 parts and decay override per variant) */
} ablate_plan;

/* 0, or -1 with a one-line error naming the list item. */
int ablate_plan_make(const request *r, ablate_plan *p);

typedef struct {
    int strategy_i, variant; /* into the plan */
    double keep;
    int k;
    int kept[256];
    double ppl;
    half_life_summary hl;
} ablate_row;

/* What the run tells as it goes (any member may be NULL). */
typedef struct {
    void (*teacher_ppl)(void *ud, double ppl);
    void (*student)(void *ud, int j, int n_students); /* before building student j */
    void (*row)(void *ud, const ablate_plan *p, const ablate_row *row, int i, int n_rows);
    void *ud;
} ablate_sink;

typedef struct {
    ablate_plan plan;
    ablate_row *rows;
    int n_rows, n_evals;
    double teacher_ppl;
    token_split sp;
    double seconds_total, seconds_build, seconds_rows;
} ablate_result;

/* A checked ablate request on its loaded teacher m. 0, or -1 with an error. */
int method_ablate_run(const request *r, model *m, const method_hooks *h, const ablate_sink *sink, ablate_result *res);
/* graft ablate --json's object (without "memory"). */
cJSON *ablate_result_json(const request *r, const model *m, const ablate_result *res);
void ablate_result_free(ablate_result *res);

/* "decay,beta", "decay(half-life 32),sigma(scaled)", "decay(no-sink)", "none"; "-" without Stage 1 */
const char *ablate_variant_label(const ablate_variant *v, decay_distance_mode dist, char *buf, size_t size);

#endif
