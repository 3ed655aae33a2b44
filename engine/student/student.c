#include "student/student.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"
#include "eval/perplexity.h"
#include "student/gdn_transfer.h"

const student_init_desc student_inits[INIT_COUNT] = {
    [INIT_RANDOM] = {INIT_RANDOM, "random", "random", STAGE1_NONE, false,
                     "the default draw of section 3 (transferred q, k, v, o; random gates)"},
    [INIT_ZERO_GATE] = {INIT_ZERO_GATE, "zero-gate", "zero-g", STAGE1_NONE, false, "random, then the output gate Wg = 0"},
    [INIT_SMALL_GATE] = {INIT_SMALL_GATE, "small-gate", "small-g", STAGE1_NONE, false, "random, then the output gate Wg x 0.02"},
    [INIT_TAYLOR_ONLY] = {INIT_TAYLOR_ONLY, "taylor-only", "taylor", STAGE1_ALL, false,
                          "Stage 1: decay, write gate, value scale and output gate from the teacher's statistics"},
    [INIT_ALIGN_ONLY] = {INIT_ALIGN_ONLY, "align-only", "align", STAGE1_NONE, true,
                         "Stage 2 from random: each layer aligned to its attention layer's outputs"},
    [INIT_TAYLOR_CALIBRATE] = {INIT_TAYLOR_CALIBRATE, "taylor-calibrate", "t-calib", STAGE1_ALL, true,
                               "Stage 1, then Stage 2 from there (the method)"},
};

void student_settings_default(student_settings *s) {
    memset(s, 0, sizeof *s);
    s->init = INIT_TAYLOR_CALIBRATE;
    s->write_gate = WRITE_GATE_REFERENCE;
    s->damping = 0.01;
    s->seed = 1;
    s->chunk = 64;
    s->scale = GDN_SCALE_INV_SQRT_DK;
    s->sigma_fit = SIGMA_FIT_REFERENCE;
    s->stage1 = STAGE1_ALL;
    s->distance = DECAY_DISTANCE_ALL;
    s->half_life = 0;
    s->steps = 300;
    s->lr_qkv = 1e-4;
    s->lr_gates = 1e-3;
    s->weight_decay = 0.01;
    s->clip = 1.0;
    s->keep_best = KEEP_BEST_TRAIN;
}

const char *student_init_name(student_init i) { return (unsigned)i < INIT_COUNT ? student_inits[i].name : "?"; }

int student_init_parse(const char *name, student_init *out) {
    for (int i = 0; i < INIT_COUNT; i++)
        if (strcmp(name, student_inits[i].name) == 0) {
            *out = (student_init)i;
            return 0;
        }
    return gf_fail("unknown init '%s' (%s)", name, student_init_list(", "));
}

/* The lists the callers ask for, each built once: ", " (messages), " | "
 * (option help) and "," (the ablation's default list). */
static char init_lists[3][160];
static const char *const init_seps[3] = {", ", " | ", ","};
static pthread_once_t init_lists_once = PTHREAD_ONCE_INIT;
static void build_init_lists(void) {
    for (int j = 0; j < 3; j++) {
        size_t at = 0;
        for (int i = 0; i < INIT_COUNT; i++)
            at += (size_t)snprintf(init_lists[j] + at, sizeof init_lists[j] - at, "%s%s", i ? init_seps[j] : "",
                                   student_inits[i].name);
        GF_ASSERT(at < sizeof init_lists[j]);
    }
}

const char *student_init_list(const char *sep) {
    pthread_once(&init_lists_once, build_init_lists);
    for (int j = 0; j < 3; j++)
        if (strcmp(sep, init_seps[j]) == 0) return init_lists[j];
    GF_ASSERT(!"student_init_list: a separator of init_seps");
    return init_lists[0];
}

const char *write_gate_name(write_gate_mode m) { return m == WRITE_GATE_MEAN_LOGIT ? "mean-logit" : "reference"; }

int write_gate_parse(const char *name, write_gate_mode *out) {
    if (strcmp(name, "reference") == 0) *out = WRITE_GATE_REFERENCE;
    else if (strcmp(name, "mean-logit") == 0) *out = WRITE_GATE_MEAN_LOGIT;
    else return gf_fail("unknown write-gate mode '%s' (reference or mean-logit)", name);
    return 0;
}

const char *sigma_fit_name(sigma_fit_mode m) {
    return m == SIGMA_FIT_SCALED ? "scaled" : m == SIGMA_FIT_GATED ? "gated" : "reference";
}

int sigma_fit_parse(const char *name, sigma_fit_mode *out) {
    if (strcmp(name, "reference") == 0) *out = SIGMA_FIT_REFERENCE;
    else if (strcmp(name, "scaled") == 0) *out = SIGMA_FIT_SCALED;
    else if (strcmp(name, "gated") == 0) *out = SIGMA_FIT_GATED;
    else return gf_fail("--sigma-fit: unknown fit '%s' (reference, scaled or gated)", name);
    return 0;
}

const char *const stage1_part_names[4] = {"decay", "beta", "sigma", "gate"};

int stage1_parts_parse(const char *text, unsigned *out) {
    if (strcmp(text, "none") == 0) {
        *out = STAGE1_NONE;
        return 0;
    }
    if (strcmp(text, "all") == 0) {
        *out = STAGE1_ALL;
        return 0;
    }
    unsigned parts = 0;
    const char *p = text;
    while (1) {
        const size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (len == strlen(stage1_part_names[i]) && strncmp(p, stage1_part_names[i], len) == 0) found = i;
        if (found < 0)
            return gf_fail("--stage1: unknown Stage 1 component '%.*s' in '%s' (decay, beta, sigma, gate; or all, none)",
                           (int)len, p, text);
        if (parts & (1u << found)) return gf_fail("--stage1: component '%s' given twice in '%s'", stage1_part_names[found], text);
        parts |= 1u << found;
        if (!p[len]) break;
        p += len + 1;
    }
    *out = parts;
    return 0;
}

const char *stage1_parts_name(unsigned parts, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < 4; i++)
        if (parts & (1u << i)) {
            int n = snprintf(buf + at, size - at, "%s%s", at ? "," : "", stage1_part_names[i]);
            if (n < 0 || (size_t)n >= size - at) break;
            at += (size_t)n;
        }
    if (!at) snprintf(buf, size, "none");
    return buf;
}

const char *decay_distance_name(decay_distance_mode m) { return m == DECAY_DISTANCE_NO_SINK ? "no-sink" : "all"; }

int decay_distance_parse(const char *name, decay_distance_mode *out) {
    if (strcmp(name, "all") == 0) *out = DECAY_DISTANCE_ALL;
    else if (strcmp(name, "no-sink") == 0) *out = DECAY_DISTANCE_NO_SINK;
    else return gf_fail("--distance: unknown distance '%s' (all or no-sink)", name);
    return 0;
}

int student_gdn_config(gdn_config *g, const model_config *k, const student_settings *set) {
    gdn_config_default(g, k->dim, k->n_heads, k->head_dim);
    g->chunk = set->chunk;
    g->conv = set->conv;
    g->qkv_bias = set->qkv_bias && k->qkv_bias;
    g->scale_mode = set->scale;
    return gdn_config_check(g);
}

int student_init_empty(student *s, model *m, const student_settings *set) {
    memset(s, 0, sizeof *s);
    const model_config *k = &m->cfg;
    s->m = m;
    s->set = *set;
    s->L = k->n_layers;
    if (student_gdn_config(&s->gcfg, k, set) != 0) return -1;
    s->have = gf_calloc((size_t)s->L, sizeof *s->have);
    s->is_gdn = gf_calloc((size_t)s->L, sizeof *s->is_gdn);
    s->gdn = gf_calloc((size_t)s->L, sizeof *s->gdn);
    s->rep = gf_calloc((size_t)s->L, sizeof *s->rep);
    return tf_view(&s->tf, m, &s->gcfg, NULL, NULL);
}

void layer_report_alloc(layer_report *r, int H, int layer) {
    memset(r, 0, sizeof *r);
    r->layer = layer;
    stage1_result *a = &r->s1;
    double **arrs[] = {&a->dist, &a->dist_nosink, &a->sink, &a->decay_dist, &a->entropy, &a->conc, &a->tc_rms, &a->target_g, &a->dt_bias,
                       &a->beta_star, &a->wb_logit, &a->sigma_star, &a->sigma_raw, &r->half_life};
    for (size_t i = 0; i < sizeof arrs / sizeof *arrs; i++) *arrs[i] = gf_calloc((size_t)H, sizeof(double));
    r->half_life_pre2 = gf_calloc((size_t)H, sizeof(double));
    r->s2.best_heldout = NAN;
}

void layer_report_free(layer_report *r) {
    stage1_result *a = &r->s1;
    double *arrs[] = {a->dist, a->dist_nosink, a->sink, a->decay_dist, a->entropy, a->conc, a->tc_rms, a->target_g, a->dt_bias,
                      a->beta_star, a->wb_logit, a->sigma_star, a->sigma_raw, r->half_life, r->half_life_pre2};
    for (size_t i = 0; i < sizeof arrs / sizeof *arrs; i++) free(arrs[i]);
    free(r->s2.loss);
    free(r->s2.heldout);
    memset(r, 0, sizeof *r);
}

void student_free(student *s) {
    tf_free(&s->tf);
    for (int l = 0; l < s->L; l++) {
        if (s->gdn && s->m) be_free(s->m->be, &s->gdn[l]);
        if (s->have && s->have[l]) layer_report_free(&s->rep[l]);
    }
    free(s->have);
    free(s->is_gdn);
    free(s->gdn);
    free(s->rep);
    if (s->owns_model && s->m) {
        model_free(s->m);
        free(s->m);
    }
    memset(s, 0, sizeof *s);
}

int student_set_gdn(student *s, const bool *is_gdn) {
    for (int l = 0; l < s->L; l++)
        if (is_gdn[l] && !s->have[l]) return gf_fail("layer %d has no GDN parameters", l);
    mixer_kind *kinds = gf_malloc((size_t)s->L * sizeof *kinds);
    for (int l = 0; l < s->L; l++) {
        s->is_gdn[l] = is_gdn[l];
        kinds[l] = is_gdn[l] ? MIX_GDN : MIX_ATTN;
    }
    tf_free(&s->tf);
    int rc = tf_view(&s->tf, s->m, &s->gcfg, kinds, s->gdn);
    free(kinds);
    return rc;
}

int student_put_layer(student *s, int l, const gdn_params *p) {
    gf_backend *be = s->m->be;
    if (gf_is_none(s->gdn[l]) && be_alloc(be, &s->gdn[l], p->n, be_act(be)) != 0)
        return gf_fail_prefix("a GDN layer's parameters");
    if (be_upload(be, s->gdn[l], p->block, GF_F32, p->n) != 0) return -1;
    s->have[l] = true;
    return 0;
}

int student_get_layer(const student *s, int l, gdn_params *p) {
    if (!s->have[l] || gf_is_none(s->gdn[l])) return gf_fail("layer %d has no GDN parameters", l);
    return be_download(s->m->be, p->block, GF_F32, s->gdn[l], p->n);
}

int student_get_layer_gates(const student *s, int l, gdn_params *p) {
    if (!s->have[l] || gf_is_none(s->gdn[l])) return gf_fail("layer %d has no GDN parameters", l);
    static const gdn_param_id ids[] = {GDN_P_wb, GDN_P_wg, GDN_P_a_log, GDN_P_dt_bias};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (!gdn_param_present(&s->gcfg, ids[i])) continue;
        const size_t off = gdn_param_offset(&s->gcfg, ids[i]);
        if (be_download(s->m->be, p->block + off, GF_F32, gf_at(s->gdn[l], off), gdn_param_size(&s->gcfg, ids[i])) != 0)
            return -1;
    }
    return 0;
}

int student_n_gdn(const student *s) {
    int n = 0;
    for (int l = 0; l < s->L; l++) n += s->is_gdn[l];
    return n;
}

static double softplus_inv(double y) { return y + log(-expm1(-y)); }
static double softplus(double x) { return x > 20 ? x : log1p(exp(x)); }

/* Downloads the teacher attention tensors the transfer reads (NULL when absent). */
static float *download(const model *m, int l, tensor_kind k) {
    const size_t n = model_tensor_elems(m, l, k);
    if (!n) return NULL;
    float *x = gf_malloc(n * sizeof *x);
    const int got = model_get(m, l, k, x);
    GF_ASSERT(got == 0);
    return x;
}

void student_default_init(const student *s, int l, gdn_params *p) {
    const gdn_config *c = &s->gcfg;
    const model_config *k = &s->m->cfg;
    const int D = c->D, H = c->H;
    float *t[7];
    static const tensor_kind kinds[7] = {TK_Q, TK_K, TK_V, TK_O, TK_BQ, TK_BK, TK_BV};
    for (int i = 0; i < 7; i++) t[i] = download(s->m, l, kinds[i]);
    const attn_host_weights w = {t[0], t[1], t[2], t[3], t[4], t[5], t[6]};
    memset(p->block, 0, p->n * sizeof(float));
    /* shapes come from the same teacher config, so the transfer cannot fail */
    const int transferred = gdn_transfer_from_attention(p, c, k, &w);
    GF_ASSERT(transferred == 0);
    for (int i = 0; i < 7; i++) free(t[i]);
    rng64 r;
    rng_seed2(&r, s->set.seed, (uint64_t)l);
    rng_fill_normal(&r, p->wa, (size_t)H * D, 0.02);
    rng_fill_normal(&r, p->wb, (size_t)H * D, 0.02);
    rng_fill_normal(&r, p->wg, (size_t)H * c->dv * D, 0.02); /* 2.4M at 1.5B: several threads */
    for (int h = 0; h < H; h++) p->a_log[h] = (float)log(16.0 * rng_uniform(&r));
    for (int h = 0; h < H; h++) {
        double dt = exp(log(1e-3) + rng_uniform(&r) * (log(0.1) - log(1e-3)));
        if (dt < 1e-4) dt = 1e-4;
        p->dt_bias[h] = (float)softplus_inv(dt);
    }
}

void gdn_half_lives(const gdn_config *c, const gdn_params *p, double *out) {
    for (int h = 0; h < c->H; h++) out[h] = log(2.0) / (exp((double)p->a_log[h]) * softplus((double)p->dt_bias[h]));
}

double mean_abs(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += fabs((double)x[i]);
    return n ? s / (double)n : 0;
}

int student_eval_nll(const student *s, const int *ids, size_t n, int ctx, double *nll, long *count,
                     const progress_sink *progress) {
    return eval_nll_tf((transformer *)&s->tf, ids, n, ctx, nll, count, progress);
}
