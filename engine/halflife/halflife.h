/* The memory of a hybrid's GDN heads on real text (docs/half-life.md).
 *
 * A head's decay g_t = -exp(A_log) softplus(Wa x_t + dt_bias) and write
 * strength beta_t = sigmoid(Wb x_t) depend on the token; its idle half-life
 * (Wa x = 0) is ln 2 / (exp(A_log) softplus(dt_bias)). The effective
 * half-life of token t is ln 2 / -g_t tokens: the state written before t is
 * halved after that many tokens like it. This module runs the hybrid over
 * sequences of a text, takes g and beta as the GDN layer's own forward
 * computed them (tf_hooks.on_gdn), and summarizes them per head on the host:
 * quantiles, the shares that forget at once (< 1 token) or never (> the
 * context), a histogram; beside them the teacher head's mean attention
 * distance that Stage 1 aimed the idle half-life at, and flags.
 *
 * Shape for front ends: a request (halflife_request, checked by
 * halflife_request_check), one call that reports progress and stops on
 * cancel (halflife_measure), a result (halflife_result) with its JSON
 * (halflife_result_json). */
#ifndef GRAFT_HALFLIFE_HALFLIFE_H
#define GRAFT_HALFLIFE_HALFLIFE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/progress.h"
#include "model/transformer.h"
#include "student/student.h"

/* Histogram of a head's effective half-lives: HL_HIST_BINS bins of equal
 * width in log10(tokens) over [HL_HIST_LOG10_MIN, HL_HIST_LOG10_MAX]; values
 * outside go to the end bins. */
#define HL_HIST_BINS 30
#define HL_HIST_LOG10_MIN (-1.0)
#define HL_HIST_LOG10_MAX 5.0

/* When a head is flagged (docs/half-life.md "Flags"). target = the teacher
 * distance Stage 1 aimed at; a flag needing it is not raised without one. */
typedef struct {
    double short_ratio;   /* too short: p50 < target / short_ratio (4), or share_ratio of tokens under one token */
    double long_ratio;    /* too long: p50 > target * long_ratio (4), or share_ratio of tokens over the context */
    double share_ratio;   /* 0.5 */
    double spread_ratio;  /* too spread: p90 / p10 > spread_ratio (100: two decades) */
    double beta_shut;     /* write gate shut: beta p50 < beta_shut (0.05) */
    double beta_saturated;/* write gate saturated: beta p50 > beta_saturated (0.95) */
} halflife_thresholds;

void halflife_thresholds_default(halflife_thresholds *t);

enum {
    HL_FLAG_TOO_SHORT = 1u << 0,
    HL_FLAG_TOO_LONG = 1u << 1,
    HL_FLAG_TOO_SPREAD = 1u << 2,
    HL_FLAG_BETA_SHUT = 1u << 3,
    HL_FLAG_BETA_SATURATED = 1u << 4,
    HL_FLAG_COUNT = 5
};
/* "too_short", "too_long", "too_spread", "write_gate_shut", "write_gate_saturated" (bit i). */
extern const char *const halflife_flag_names[HL_FLAG_COUNT];

/* One head: half-lives in tokens, shares in [0, 1]. A half-life is +inf
 * where g_t == 0 (no decay at all in float32). */
typedef struct {
    int layer, head;
    int ctx;                        /* the context the shares were measured against */
    double idle;                    /* ln 2 / (exp(A_log) softplus(dt_bias)) */
    double p10, p50, p90;           /* effective half-life over the tokens */
    double under_one, over_ctx;     /* share of tokens with half-life < 1, > ctx */
    double beta_p10, beta_p50, beta_p90;
    double teacher_all, teacher_no_sink; /* teacher mean attention distance (NaN: unknown) */
    double target;                  /* what Stage 1 aimed the idle half-life at (NaN: unknown) */
    unsigned flags;                 /* HL_FLAG_* */
    double severity;                /* >= 1 when flagged: how far past the worst threshold */
    char reason[256];               /* one line per flag, "; " between them */
    long hist[HL_HIST_BINS];
} halflife_head;

/* Quantile p in [0, 1] of sorted x[0..n) (linear between order statistics,
 * numpy's default); n > 0. +inf neighbours give +inf. */
double halflife_quantile(const double *sorted, size_t n, double p);

/* Summary of one head from its per-token gates g[i * stride], beta[i * stride]
 * (i < n): quantiles, shares, histogram; idle and the teacher fields are the
 * caller's; flags are set by halflife_flag. */
void halflife_summarize(const float *g, const float *beta, size_t n, size_t stride, int ctx, halflife_head *out);

/* Sets out->flags, severity and reason from the summary and the thresholds. */
void halflife_flag(halflife_head *hd, const halflife_thresholds *t);

typedef struct {
    int ctx;        /* tokens per sequence (>= 2) */
    int seqs;       /* sequences (>= 1) */
    int batch;      /* sequences per forward (>= 1) */
    halflife_thresholds th;
} halflife_request;

void halflife_request_default(halflife_request *q); /* ctx 256, seqs 4, batch 4 */
/* -1 with a one-line message naming the field and the value it expected. */
int halflife_request_check(const halflife_request *q);

typedef struct {
    int ctx, seqs;
    long tokens;            /* per head: seqs * ctx */
    int n_heads;            /* GDN layers x H */
    halflife_head *heads;   /* layer-major, head-minor */
} halflife_result;

void halflife_result_free(halflife_result *r);

/* Teacher distances per layer and head ([L * H] each, NaN where absent) and
 * what Stage 1 aimed at per layer and head (target, NaN where none). The
 * caller fills them (halflife_teacher_from_report) or leaves them NULL. */
typedef struct {
    const double *all, *no_sink, *target;
} halflife_teacher;

/* Runs tf over ids [q->seqs * q->ctx] (sequences of q->ctx tokens), every
 * GDN layer's gates captured as its forward computed them; then summarizes
 * and flags every GDN head. progress: "halflife" per sequence, cancel
 * between layers. -1 with a message (cancelled, out of memory, bad token). */
int halflife_measure(transformer *tf, const int *ids, const halflife_request *q, const halflife_teacher *teacher,
                     const progress_sink *progress, halflife_result *out);

/* Reads "teacher_attention_stats" of a student folder's report.json (or a
 * `graft stats --json` / report.json file) into all and no_sink [L * H]
 * (NaN where absent). 1 when found, 0 when the file has none, -1 with a
 * message when the file exists but cannot be read. */
int halflife_teacher_read(const char *path, int L, int H, double *all, double *no_sink);

/* What Stage 1 aims a head's idle half-life at under settings set (METHOD.md
 * 5.1: half-life = ln 2 / clamp(ln 2 / d, 1e-3, 5) with d the distance over
 * every key or without the first one, per set->distance; set->half_life > 0
 * overrides it): target[k] from all[k] / no_sink[k], n values. */
void halflife_targets(const student_settings *set, const double *all, const double *no_sink, size_t n,
                      double *target);

/* {"student", "text", "ctx", "seqs", "tokens", "thresholds", "hist": {...},
 *  "heads": [{"layer", "head", "idle", "p10", "p50", "p90", "under_one",
 *  "over_ctx", "beta_p10", "beta_p50", "beta_p90", "teacher_distance",
 *  "teacher_distance_all", "teacher_distance_no_sink", "flags", "reasons",
 *  "severity", "hist"}]}. Non-finite numbers are null. */
cJSON *halflife_result_json(const halflife_result *r, const halflife_thresholds *t, const char *student,
                            const char *text);

/* Indices into r->heads of the flagged heads, worst (highest severity) first;
 * returns their count (idx has r->n_heads room). */
int halflife_flagged_order(const halflife_result *r, int *idx);

#endif
