/* The hybrid student: a teacher whose chosen attention layers run as Gated
 * DeltaNet layers (METHOD.md section 3), its settings, the per-layer results
 * of its initialization, and the hybrid model (a transformer that borrows the
 * teacher's block and each GDN layer's block: nothing is copied).
 *
 * A student holds GDN parameters for every layer in `have` (computed once per
 * initialization; a layer's parameters do not depend on which other layers are
 * converted, because Stage 1 and Stage 2 are teacher-forced per layer) and runs
 * GDN on the layers in `is_gdn` (a subset of `have`). So one student per
 * initialization serves every strategy and ratio of an ablation. */
#ifndef GRAFT_STUDENT_STUDENT_H
#define GRAFT_STUDENT_STUDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "gdn/gdn.h"
#include "model/model.h"
#include "model/transformer.h"

/* Enums only grow at the end. */
typedef enum {
    INIT_RANDOM = 0,           /* section 3 defaults */
    INIT_ZERO_GATE = 1,        /* Wg = 0 */
    INIT_SMALL_GATE = 2,       /* Wg *= 0.02 */
    INIT_TAYLOR_ONLY = 3,      /* Stage 1 */
    INIT_ALIGN_ONLY = 4,       /* Stage 2 from random */
    INIT_TAYLOR_CALIBRATE = 5, /* Stage 1 then Stage 2 */
    INIT_COUNT = 6
} student_init;

typedef enum {
    WRITE_GATE_REFERENCE = 0,  /* Wb[h] <- logit(beta*)/sqrt(D) * Wb[h] / mean|Wb[h]| (reference code) */
    WRITE_GATE_MEAN_LOGIT = 1  /* Wb[h] *= logit(beta*) / mean_t(Wb[h] . x_t) (paper) */
} write_gate_mode;

typedef enum { KEEP_BEST_TRAIN = 0, KEEP_BEST_HELDOUT = 1 } keep_best_mode;

/* The recurrence inside Stage 1's value-scale fit (METHOD.md section 3): the
 * reference code fits without the query scale while the layer's forward keeps
 * dk^-1/2, so `scaled` gives every sigma sqrt(dk) times the `reference` one
 * before the clamp. The forward's scale (gdn_scale_mode) does not change. */
/* `gated` (a graft variant, not the paper's; docs/method.md "A Stage 1 variant:
 * gated sigma") fits sigma_h on what Wo reads, RMSNorm(o_h) * w_norm * silu(Wg x)_h,
 * after the output gate, and scales Wg's rows for head h instead of Wv's: the
 * per-head RMSNorm removes any scale of o, so a Wv scale acts only through
 * silu's shape and through Wg = alpha* Wv. */
typedef enum { SIGMA_FIT_REFERENCE = 0, SIGMA_FIT_SCALED = 1, SIGMA_FIT_GATED = 2 } sigma_fit_mode;

/* Stage 1's four components (METHOD.md section 5), applied in this order when
 * chosen; each reads the parameters the earlier ones left, and a component not
 * chosen leaves its tensors at the default (random) init:
 *   decay  A_log, dt_bias         sigma  Wv rows (and bv), by least squares
 *   beta   Wb rows                gate   Wg = alpha* Wv */
enum {
    STAGE1_DECAY = 1u << 0,
    STAGE1_BETA = 1u << 1,
    STAGE1_SIGMA = 1u << 2,
    STAGE1_GATE = 1u << 3,
    STAGE1_NONE = 0u,
    STAGE1_ALL = 15u
};

/* The distance statistic the decay reads: over every key (METHOD.md section 4)
 * or without the first key (the attention sink; stats/attn_stats.h). */
typedef enum { DECAY_DISTANCE_ALL = 0, DECAY_DISTANCE_NO_SINK = 1 } decay_distance_mode;

typedef struct {
    student_init init;
    write_gate_mode write_gate;
    double damping;       /* alpha* damping, 0.01 (0.1 is a variant) */
    uint64_t seed;        /* default init: layer l uses rng_seed2(seed, l); the only random init
                             (graft convert --init random and graft train --convert) */
    int conv;             /* short causal conv on q, k, v (starts as the identity) */
    int qkv_bias;         /* keep the teacher's q/k/v biases */
    int chunk;            /* 16, 32, 64 */
    gdn_scale_mode scale; /* dk^-1/2 (default) or none: the GDN forward everywhere */
    sigma_fit_mode sigma_fit; /* Stage 1 value scale fitted with query scale 1 (reference) or the forward's */
    /* Stage 1 (used by taylor-only and taylor-calibrate only) */
    unsigned stage1;      /* STAGE1_* components, default STAGE1_ALL */
    decay_distance_mode distance; /* which mean distance sets the decay */
    double half_life;     /* > 0: the decay sets every head's idle half-life to this many tokens instead */
    /* Stage 2 */
    int steps;            /* 300 */
    double lr_qkv;        /* 1e-4: Wq, Wk, Wv (and their biases) */
    double lr_gates;      /* 1e-3: Wa, Wb, Wg, A_log, dt_bias (and conv) */
    double weight_decay;  /* 0.01 */
    double clip;          /* 1.0: global grad norm of the layer */
    keep_best_mode keep_best;
} student_settings;

void student_settings_default(student_settings *s);
/* What an initialization is (METHOD.md section 7): the one table that the
 * command line's help and parsing, the workbench, the ablation and the docs
 * read. student_inits[i].init == i. */
typedef struct {
    student_init init;
    const char *name;        /* "taylor-calibrate": --init, report.json, folder names */
    const char *short_name;  /* "t-calib": narrow table columns (the workbench's results) */
    unsigned stage1;         /* the Stage 1 parts it applies by default (STAGE1_*; --stage1 narrows them) */
    bool stage2;             /* Stage 2 (per-layer alignment) runs */
    const char *description; /* one line: what it does to a layer's GDN parameters */
} student_init_desc;
extern const student_init_desc student_inits[INIT_COUNT];

const char *student_init_name(student_init i);   /* "random", "zero-gate", ... */
int student_init_parse(const char *name, student_init *out);  /* -1 + error for unknown names */
/* Every init's name in table order, joined by sep ("random | zero-gate | ...");
 * a static string, built once (thread-safe). */
const char *student_init_list(const char *sep);
const char *write_gate_name(write_gate_mode m);  /* "reference" / "mean-logit" */
int write_gate_parse(const char *name, write_gate_mode *out);
static inline bool init_uses_stage1(student_init i) {
    return (unsigned)i < INIT_COUNT && student_inits[i].stage1 != STAGE1_NONE;
}
static inline bool init_uses_stage2(student_init i) { return (unsigned)i < INIT_COUNT && student_inits[i].stage2; }
/* The Stage 1 components a student with these settings applies (none without Stage 1). */
static inline unsigned student_stage1_parts(const student_settings *s) {
    return init_uses_stage1(s->init) ? s->stage1 & STAGE1_ALL : STAGE1_NONE;
}
/* "decay,beta,sigma,gate" (any subset, any order; "all", "none"); -1 + error otherwise. */
int stage1_parts_parse(const char *text, unsigned *out);
/* "decay,beta,sigma,gate" in the order they run, or "none". */
const char *stage1_parts_name(unsigned parts, char *buf, size_t size);
/* Component names in application order: names[i] is bit 1 << i. */
extern const char *const stage1_part_names[4];
const char *decay_distance_name(decay_distance_mode m); /* "all" / "no-sink" */
const char *sigma_fit_name(sigma_fit_mode m);          /* "reference" / "scaled" / "gated" */
int sigma_fit_parse(const char *name, sigma_fit_mode *out);
int decay_distance_parse(const char *name, decay_distance_mode *out);

/* Stage 1 results of one layer (per head arrays [H]). The values of a
 * component that was not applied are NaN. */
typedef struct {
    unsigned parts;      /* STAGE1_* components applied */
    double *dist;        /* d_h mean attention distance (clamped >= 0.5) */
    double *dist_nosink; /* the same without the first key (clamped >= 0.5) */
    double *sink;        /* mean attention share on the first key */
    double *decay_dist;  /* the distance the decay used: dist, dist_nosink, or the --half-life override */
    double *entropy;     /* H_h */
    double *conc;        /* c_h concentration in [0, 1] */
    double *tc_rms;      /* teacher per-head output RMS */
    double *target_g;    /* clamp(ln2 / d_h, 1e-3, 5) */
    double *dt_bias;     /* softplus^-1(target_g) */
    double *beta_star;   /* 0.3 + 0.4 c_h */
    double *wb_logit;    /* mean pre-sigmoid write logit over calibration tokens after Stage 1 */
    double *sigma_star;  /* OLS value scale, clamped to [0.1, 10] */
    double *sigma_raw;   /* before clamping */
    double alpha_star;   /* output-gate scale */
    double rms_tc, rms_v; /* numerator / denominator of alpha* (before damping) */
    int mean_logit_fallback; /* heads whose mean logit was ~0 (mean-logit mode fell back to reference) */
} stage1_result;

/* Stage 2 results of one layer. Curves hold steps + 1 points: the loss of the
 * state before each update and of the final state. */
typedef struct {
    int steps;
    float *loss;          /* [steps + 1] calibration MSE */
    float *heldout;       /* [steps + 1] held-out MSE, or NULL without held-out tokens */
    int best_step;        /* index of the kept state */
    double best_loss, best_heldout; /* of the kept state (heldout NaN when absent) */
    double seconds;
} stage2_result;

/* Everything recorded about one converted layer. */
typedef struct {
    int layer;
    bool has_stage1, has_stage2;
    stage1_result s1;
    stage2_result s2;
    double wb_mean_abs_init, wg_mean_abs_init;   /* after the default init (random draw) */
    double wb_mean_abs_pre2, wg_mean_abs_pre2;   /* entering Stage 2 */
    double wb_mean_abs, wg_mean_abs;             /* final */
    double *half_life_pre2;  /* [H] entering Stage 2 (NULL without Stage 2) */
    double *half_life;       /* [H] final: ln 2 / (exp(A_log) softplus(dt_bias)) */
} layer_report;

typedef struct {
    model *m;               /* the teacher (borrowed unless owns_model) */
    bool owns_model;
    student_settings set;
    gdn_config gcfg;
    int L;
    bool *have;             /* [L] parameters computed / loaded */
    bool *is_gdn;           /* [L] runs as GDN */
    gf_buf *gdn;            /* [L] ACT blocks (gdn_params layout) on m->be where have[l] */
    layer_report *rep;      /* [L]; valid where have[l] */
    double stage2_wall_s;   /* the last build's Stage 2, all its layers (aligned side by side: each
                               layer's own seconds overlap); 0 when none ran */
    transformer tf;         /* the hybrid: views over m and gdn, rebuilt by student_set_gdn */
} student;

/* Empty student over teacher m (nothing converted yet). */
int student_init_empty(student *s, model *m, const student_settings *set);
/* The GDN layers' config of a student of teacher config k with settings set
 * (what student_init_empty uses); -1 with a message when it does not check. */
int student_gdn_config(gdn_config *g, const model_config *k, const student_settings *set);
void student_free(student *s);
/* Chooses which layers run as GDN (each must be in `have`). */
int student_set_gdn(student *s, const bool *is_gdn);
int student_n_gdn(const student *s);
/* Layer l's parameters: upload from host p (marks have[l]) / download into p
 * (allocated by the caller with gdn_params_alloc). */
int student_put_layer(student *s, int l, const gdn_params *p);
int student_get_layer(const student *s, int l, gdn_params *p);
/* Only Wb, Wg, A_log and dt_bias of layer l into p (the rest of p untouched):
 * what the build's report summarizes, a fifth of the block at 1.5B. */
int student_get_layer_gates(const student *s, int l, gdn_params *p);

/* Section 3 defaults for layer l: weight transfer (gdn_transfer_from_attention:
 * GQA expansion, optional biases, identity conv), w_norm = 1, Wa, Wb, Wg ~ N(0, 0.02), A_log = log U(0, 16),
 * dt = exp(U(ln 1e-3, ln 0.1)) floored at 1e-4, dt_bias = softplus^-1(dt),
 * conv (when on) = identity. Draw order: Wa, Wb, Wg, A_log, dt. */
void student_default_init(const student *s, int l, gdn_params *p);

/* Idle half-lives [H] of a layer. */
void gdn_half_lives(const gdn_config *c, const gdn_params *p, double *out);
double mean_abs(const float *x, size_t n);

/* Teacher-forced NLL with the hybrid (like eval_nll). */
int student_eval_nll(const student *s, const int *ids, size_t n, int ctx, double *nll, long *count,
                     const progress_sink *progress);

void layer_report_free(layer_report *r);
void layer_report_alloc(layer_report *r, int H, int layer);

#endif
