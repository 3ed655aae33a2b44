#include "workbench/teacher_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "method/plan.h"
#include "select/select.h"

static const metric_info metrics[MET_COUNT] = {
    [MET_MEAN_DIST] = {"mean_dist", "mean attention distance", "tokens", "d", true, "the teacher statistics (Enter on 3 Stats)"},
    [MET_ENTROPY] = {"entropy", "attention entropy", "nats", "H", false, "the teacher statistics (Enter on 3 Stats)"},
    [MET_CONCENTRATION] = {"concentration", "attention concentration", "", "c", false, "the teacher statistics (Enter on 3 Stats)"},
    [MET_OUT_RMS] = {"out_rms", "head output RMS", "", "rms", false, "the teacher statistics (Enter on 3 Stats)"},
    [MET_DIST_NOSINK] = {"mean_dist_nosink", "mean distance without the first key", "tokens", "d no-sink", true,
                         "the teacher statistics (Enter on 3 Stats)"},
    [MET_SINK] = {"sink_share", "attention on the first key (sink share)", "", "sink", false,
                  "the teacher statistics (Enter on 3 Stats)"},
    [MET_HALFLIFE_IDLE] = {"halflife_idle", "idle half-life", "tokens", "t1/2 idle", true, "Stage 1 (4 Calibrate) or Stage 2 (5 Align)"},
    [MET_HALFLIFE_DATA] = {"halflife_data", "half-life p50 on text", "tokens", "t1/2 p50", true,
                           "h on 3 Stats (graft halflife STUDENT --text CORPUS), or graft tui --import of its JSON"},
    [MET_BETA] = {"beta", "beta*", "", "beta*", false, "Stage 1 (4 Calibrate)"},
    [MET_SIGMA] = {"sigma", "sigma*", "", "sigma*", false, "Stage 1 (4 Calibrate)"},
    [MET_ALIGN_LOSS] = {"align_loss", "alignment loss", "", "loss", true, "no workbench job yet"},
    [MET_HL_LOG2_RATIO] = {"halflife_log2_ratio", "log2(p50 / teacher distance)", "", "log2 p/d", false,
                           "h on 3 Stats (graft halflife STUDENT --text CORPUS)"},
};

const metric_info *metric_get(head_metric m) { return &metrics[(unsigned)m < MET_COUNT ? m : 0]; }

static const char *const strategy_names[APP_N_STRATEGIES] = {"uniform", "ar", "ga-s2", "manual"};

int strategy_index(const char *name) {
    for (int i = 0; name && i < APP_N_STRATEGIES; i++)
        if (!strcmp(name, strategy_names[i])) return i;
    return -1;
}

const char *strategy_label(int i) { return i >= 0 && i < APP_N_STRATEGIES ? strategy_names[i] : "?"; }

teacher_state *teacher_state_new(const char *key) {
    teacher_state *t = gf_calloc(1, sizeof *t);
    snprintf(t->key, sizeof t->key, "%s", key ? key : "");
    snprintf(t->strategy, sizeof t->strategy, "uniform");
    t->keep_ratio = 0.5;
    t->teacher_ppl = NAN;
    method_state_init(&t->method);
    stage1_choice_default(&t->stage1);
    gen_state_init(&t->gen);
    recall_view_init(&t->recall);
    halflife_view_init(&t->hl);
    return t;
}

static void drop_layer_arrays(teacher_state *t) {
    free(t->kept);
    t->kept = NULL;
    for (int i = 0; i < APP_N_STRATEGIES; i++) {
        free(t->plan_score[i]);
        t->plan_score[i] = NULL;
    }
}

static void drop_matrices(teacher_state *t) {
    for (int i = 0; i < APP_MAX_INITS; i++)
        for (int m = 0; m < MET_COUNT; m++) {
            free(t->inits[i].m[m]);
            t->inits[i].m[m] = NULL;
        }
    t->n_inits = 0;
}

void teacher_state_free(teacher_state *t) {
    if (!t) return;
    drop_matrices(t);
    drop_layer_arrays(t);
    method_state_free(&t->method);
    for (int i = 0; i < t->n_lines; i++) free(t->lines[i]);
    for (int i = 0; i < t->n_series; i++) {
        free(t->series[i].x);
        free(t->series[i].y);
    }
    free(t->results);
    gen_state_free(&t->gen);
    recall_view_free(&t->recall);
    halflife_view_free(&t->hl);
    free(t);
}

void teacher_state_set_shape(teacher_state *t, int n_layers, int n_heads) {
    if (n_layers == t->n_layers && n_heads == t->n_heads) return;
    drop_matrices(t);
    t->stats_corpus[0] = 0;
    if (n_layers != t->n_layers) { /* the plan survives a head count learned later */
        drop_layer_arrays(t);
        t->score_corpus[0] = 0;
    }
    t->n_layers = n_layers > 0 ? n_layers : 0;
    t->n_heads = n_heads > 0 ? n_heads : 0;
    method_state_resize(&t->method, t->n_layers, t->n_heads);
}

void teacher_state_set_lines(teacher_state *t, const char *const *lines, int n) {
    for (int i = 0; i < t->n_lines; i++) free(t->lines[i]);
    t->n_lines = 0;
    for (int i = 0; i < n && i < 16; i++) t->lines[t->n_lines++] = gf_strdup(lines[i]);
}

int teacher_init_index(teacher_state *t, const char *name) {
    for (int i = 0; i < t->n_inits; i++)
        if (!strcmp(t->inits[i].name, name)) return i;
    if (t->n_inits == APP_MAX_INITS) return -1;
    snprintf(t->inits[t->n_inits].name, sizeof t->inits[0].name, "%s", name);
    return t->n_inits++;
}

double *teacher_metric(teacher_state *t, int init, head_metric m) {
    if (init < 0 || init >= t->n_inits || (unsigned)m >= MET_COUNT || !t->n_layers || !t->n_heads) return NULL;
    double **p = &t->inits[init].m[m];
    if (!*p) {
        size_t n = (size_t)t->n_layers * t->n_heads;
        *p = gf_malloc(n * sizeof **p);
        for (size_t i = 0; i < n; i++) (*p)[i] = NAN;
    }
    return *p;
}

bool teacher_has_metric(const teacher_state *t, int init, head_metric m) {
    return init >= 0 && init < t->n_inits && (unsigned)m < MET_COUNT && t->inits[init].m[m] != NULL;
}

void teacher_drop_init_metrics(teacher_state *t, const char *init) {
    for (int i = 0; i < t->n_inits; i++) {
        if (strcmp(t->inits[i].name, init)) continue;
        for (int m = 0; m < MET_COUNT; m++) {
            free(t->inits[i].m[m]);
            t->inits[i].m[m] = NULL;
        }
    }
}

void teacher_forget_corpus(teacher_state *t, const char *corpus) {
    if (t->stats_corpus[0] && strcmp(t->stats_corpus, corpus)) {
        int i = teacher_init_index(t, "teacher");
        for (int m = 0; i >= 0 && m < MET_COUNT; m++) {
            free(t->inits[i].m[m]);
            t->inits[i].m[m] = NULL;
        }
        t->stats_corpus[0] = 0;
    }
    if (t->score_corpus[0] && strcmp(t->score_corpus, corpus)) {
        for (int s = 0; s < APP_N_STRATEGIES; s++) {
            free(t->plan_score[s]);
            t->plan_score[s] = NULL;
        }
        t->score_corpus[0] = 0;
    }
    if (t->ppl_corpus[0] && strcmp(t->ppl_corpus, corpus)) {
        t->teacher_ppl = NAN;
        t->ppl_corpus[0] = 0;
    }
}

void teacher_set_kept(teacher_state *t, const bool *kept) {
    if (!t->n_layers) return;
    if (!t->kept) t->kept = gf_calloc((size_t)t->n_layers, sizeof *t->kept);
    memcpy(t->kept, kept, (size_t)t->n_layers * sizeof *kept);
}

void teacher_converted(const teacher_state *t, bool *out) {
    const int L = t->n_layers;
    if (t->kept) {
        for (int l = 0; l < L; l++) out[l] = !t->kept[l];
        return;
    }
    for (int l = 0; l < L; l++) out[l] = true;
    if (L <= 0 || method_uniform_kept(L, 0.5, out, NULL) != 0) return;
    for (int l = 0; l < L; l++) out[l] = !out[l];
}

int teacher_kept_count(const teacher_state *t) {
    int k = 0;
    for (int l = 0; t->kept && l < t->n_layers; l++) k += t->kept[l];
    return k;
}

int teacher_keep_count(const teacher_state *t) {
    int k = 0;
    if (t->n_layers <= 0) return 0;
    bool *kept = gf_calloc((size_t)t->n_layers, sizeof *kept);
    if (method_uniform_kept(t->n_layers, t->keep_ratio, kept, &k) != 0) k = 0;
    free(kept);
    return k;
}

static bool scores_complete(const double *v, int n) {
    if (!v) return false;
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

void teacher_plan_recompute(teacher_state *t) {
    if (strategy_index(t->strategy) < 0) snprintf(t->strategy, sizeof t->strategy, "uniform");
    if (!(t->keep_ratio > 0 && t->keep_ratio < 1)) t->keep_ratio = 0.5;
    const int L = t->n_layers;
    if (L <= 0) return;
    if (!t->kept) t->kept = gf_calloc((size_t)L, sizeof *t->kept);
    int s = strategy_index(t->strategy), k = teacher_keep_count(t);
    if (s == STRATEGY_UNIFORM) {
        method_uniform_kept(L, t->keep_ratio, t->kept, NULL);
    } else if ((s == STRATEGY_AR || s == STRATEGY_GA_S2) && scores_complete(t->plan_score[s], L)) {
        /* ar keeps the highest (removal hurts most), ga-s2 the lowest; ties: lower layer */
        const double *v = t->plan_score[s];
        memset(t->kept, 0, (size_t)L * sizeof *t->kept);
        for (int i = 0; i < k; i++) {
            int best = -1;
            for (int l = 0; l < L; l++)
                if (!t->kept[l] && (best < 0 || (s == STRATEGY_AR ? v[l] > v[best] : v[l] < v[best]))) best = l;
            t->kept[best] = true;
        }
    }
}

void teacher_set_score(teacher_state *t, int s, int layer, double value) {
    if (s < 0 || s >= APP_N_STRATEGIES || layer < 0 || layer >= t->n_layers) return;
    if (!t->plan_score[s]) {
        t->plan_score[s] = gf_malloc((size_t)t->n_layers * sizeof *t->plan_score[s]);
        for (int l = 0; l < t->n_layers; l++) t->plan_score[s][l] = NAN;
    }
    t->plan_score[s][layer] = value;
    if (strategy_index(t->strategy) == s) teacher_plan_recompute(t);
}

loss_series *teacher_series(teacher_state *t, const char *name) {
    for (int i = 0; i < t->n_series; i++)
        if (!strcmp(t->series[i].name, name)) return &t->series[i];
    if (t->n_series == APP_MAX_SERIES) return NULL;
    loss_series *s = &t->series[t->n_series++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

void teacher_add_point(teacher_state *t, const char *series, double x, double y) {
    loss_series *s = teacher_series(t, series);
    if (!s) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->x = gf_realloc(s->x, s->cap * sizeof *s->x);
        s->y = gf_realloc(s->y, s->cap * sizeof *s->y);
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
}

void teacher_clear_series(teacher_state *t, const char *prefix) {
    for (int i = 0; i < t->n_series; i++)
        if (!strncmp(t->series[i].name, prefix, strlen(prefix))) t->series[i].n = 0;
}

void teacher_add_result(teacher_state *t, const result_row *r) {
    t->results = gf_realloc(t->results, (size_t)(t->n_results + 1) * sizeof *t->results);
    t->results[t->n_results] = *r;
    t->results[t->n_results].seq = ++t->next_seq;
    t->n_results++;
}
