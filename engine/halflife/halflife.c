/* Per-head effective half-lives on text (halflife.h). */
#include "halflife/halflife.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mapped_file.h"

const char *const halflife_flag_names[HL_FLAG_COUNT] = {"too_short", "too_long", "too_spread", "write_gate_shut",
                                                        "write_gate_saturated"};

void halflife_thresholds_default(halflife_thresholds *t) {
    *t = (halflife_thresholds){4.0, 4.0, 0.5, 100.0, 0.05, 0.95};
}

void halflife_request_default(halflife_request *q) {
    memset(q, 0, sizeof *q);
    q->ctx = 256;
    q->seqs = 4;
    q->batch = 4;
    halflife_thresholds_default(&q->th);
}

int halflife_request_check(const halflife_request *q) {
    if (q->ctx < 2) return gf_fail("--ctx must be at least 2 tokens, got %d", q->ctx);
    if (q->seqs < 1) return gf_fail("--seqs must be at least 1, got %d", q->seqs);
    if (q->batch < 1) return gf_fail("the batch must be at least 1 sequence, got %d", q->batch);
    const halflife_thresholds *t = &q->th;
    if (!(t->short_ratio > 1) || !(t->long_ratio > 1) || !(t->spread_ratio > 1))
        return gf_fail("half-life thresholds: the short, long and spread ratios must be > 1");
    if (!(t->share_ratio > 0 && t->share_ratio <= 1)) return gf_fail("half-life thresholds: the share must be in (0, 1]");
    if (!(t->beta_shut >= 0 && t->beta_shut < t->beta_saturated && t->beta_saturated <= 1))
        return gf_fail("half-life thresholds: need 0 <= beta shut < beta saturated <= 1");
    return 0;
}

void halflife_result_free(halflife_result *r) {
    free(r->heads);
    memset(r, 0, sizeof *r);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

double halflife_quantile(const double *s, size_t n, double p) {
    const double pos = p * (double)(n - 1);
    const size_t i = (size_t)floor(pos);
    if (i + 1 >= n) return s[n - 1];
    const double f = pos - (double)i;
    if (isinf(s[i + 1])) return f > 0 ? s[i + 1] : s[i];
    return s[i] + f * (s[i + 1] - s[i]);
}

static int hist_bin(double hl) {
    const double w = (HL_HIST_LOG10_MAX - HL_HIST_LOG10_MIN) / HL_HIST_BINS;
    if (!(hl > 0)) return 0;
    const double b = floor((log10(hl) - HL_HIST_LOG10_MIN) / w);
    return b < 0 ? 0 : b >= HL_HIST_BINS ? HL_HIST_BINS - 1 : (int)b;
}

void halflife_summarize(const float *g, const float *beta, size_t n, size_t stride, int ctx, halflife_head *out) {
    double *hl = gf_malloc(n * sizeof *hl), *bt = gf_malloc(n * sizeof *bt);
    size_t under = 0, over = 0;
    memset(out->hist, 0, sizeof out->hist);
    out->ctx = ctx;
    for (size_t i = 0; i < n; i++) {
        const double rate = -(double)g[i * stride];
        /* g <= 0 by construction; a rate of exactly 0 (softplus underflow) never decays */
        hl[i] = rate > 0 ? log(2.0) / rate : INFINITY;
        bt[i] = beta[i * stride];
        under += hl[i] < 1.0;
        over += hl[i] > (double)ctx;
        out->hist[hist_bin(hl[i])]++;
    }
    qsort(hl, n, sizeof *hl, cmp_double);
    qsort(bt, n, sizeof *bt, cmp_double);
    out->p10 = halflife_quantile(hl, n, 0.1);
    out->p50 = halflife_quantile(hl, n, 0.5);
    out->p90 = halflife_quantile(hl, n, 0.9);
    out->beta_p10 = halflife_quantile(bt, n, 0.1);
    out->beta_p50 = halflife_quantile(bt, n, 0.5);
    out->beta_p90 = halflife_quantile(bt, n, 0.9);
    out->under_one = (double)under / (double)n;
    out->over_ctx = (double)over / (double)n;
    free(hl);
    free(bt);
}

/* Appends "; "-separated text to hd->reason (truncated to its size). */
static void add_reason(halflife_head *hd, const char *fmt, ...) {
    const size_t len = strlen(hd->reason);
    if (len + 3 >= sizeof hd->reason) return;
    char one[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    snprintf(hd->reason + len, sizeof hd->reason - len, "%s%s", len ? "; " : "", one);
}

static void flag_raise(halflife_head *hd, unsigned flag, double severity) {
    hd->flags |= flag;
    if (severity > hd->severity) hd->severity = severity;
}

void halflife_flag(halflife_head *hd, const halflife_thresholds *t) {
    hd->flags = 0;
    hd->severity = 0;
    hd->reason[0] = 0;
    const bool target = isfinite(hd->target) && hd->target > 0;
    /* severity: the excess over the threshold in the threshold's own units (1 at the threshold) */
    if (target && hd->p50 < hd->target / t->short_ratio) {
        flag_raise(hd, HL_FLAG_TOO_SHORT, log(hd->target / hd->p50) / log(t->short_ratio));
        add_reason(hd, "too short: median half-life %.3g tokens < target %.3g / %g", hd->p50, hd->target,
                   t->short_ratio);
    } else if (!target && hd->under_one >= t->share_ratio) { /* the share rules judge heads without a target */
        flag_raise(hd, HL_FLAG_TOO_SHORT, hd->under_one / t->share_ratio);
        add_reason(hd, "too short: %.0f%% of tokens forget at once (half-life < 1 token)", 100 * hd->under_one);
    }
    if (target && hd->p50 > hd->target * t->long_ratio) {
        flag_raise(hd, HL_FLAG_TOO_LONG, log(hd->p50 / hd->target) / log(t->long_ratio));
        add_reason(hd, "too long: median half-life %.3g tokens > target %.3g x %g", hd->p50, hd->target,
                   t->long_ratio);
    } else if (!target && hd->over_ctx >= t->share_ratio) {
        flag_raise(hd, HL_FLAG_TOO_LONG, hd->over_ctx / t->share_ratio);
        add_reason(hd, "too long: %.0f%% of tokens keep half their memory past the context (half-life > %d)",
                   100 * hd->over_ctx, hd->ctx);
    }
    const double spread = hd->p90 / hd->p10;
    if (!(spread <= t->spread_ratio)) { /* inf / inf and x / 0 count as spread */
        flag_raise(hd, HL_FLAG_TOO_SPREAD, isfinite(spread) ? log(spread) / log(t->spread_ratio) : 10.0);
        add_reason(hd, "too spread: p90 / p10 = %.3g > %g (p10 %.3g, p90 %.3g tokens)", spread, t->spread_ratio, hd->p10,
                   hd->p90);
    }
    if (hd->beta_p50 < t->beta_shut) {
        flag_raise(hd, HL_FLAG_BETA_SHUT, t->beta_shut / fmax(hd->beta_p50, 1e-9));
        add_reason(hd, "write gate shut: median beta %.3g < %.3g", hd->beta_p50, t->beta_shut);
    }
    if (hd->beta_p50 > t->beta_saturated) {
        flag_raise(hd, HL_FLAG_BETA_SATURATED, (1 - t->beta_saturated) / fmax(1 - hd->beta_p50, 1e-9));
        add_reason(hd, "write gate saturated: median beta %.3g > %.3g", hd->beta_p50, t->beta_saturated);
    }
}

/* ---------------------------------------------------------------- capture */

typedef struct {
    gf_backend *be;
    int H;
    int *slot;            /* [L]: index among GDN layers, -1 for others */
    float **g, **beta;    /* [n_gdn] host [seqs * ctx * H] */
    size_t row0;          /* first row of the current forward */
    const progress_sink *progress;
} capture;

static int on_gdn(void *ud, int layer, gf_buf g, gf_buf beta, int N) {
    capture *c = ud;
    const int s = c->slot[layer];
    const size_t off = c->row0 * (size_t)c->H, n = (size_t)N * (size_t)c->H;
    if (be_download(c->be, c->g[s] + off, GF_F32, g, n) != 0 || be_download(c->be, c->beta[s] + off, GF_F32, beta, n) != 0)
        return -1;
    return 0;
}

static int idle_half_lives(const transformer *tf, int l, double *out) {
    const int H = tf->gcfg.H;
    float *a = gf_malloc(2 * (size_t)H * sizeof *a);
    int rc = be_download(tf->be, a, GF_F32, tf->w.layers[l].gdn.a_log, (size_t)H);
    if (rc == 0) rc = be_download(tf->be, a + H, GF_F32, tf->w.layers[l].gdn.dt_bias, (size_t)H);
    if (rc == 0) rc = be_sync(tf->be);
    for (int h = 0; h < H && rc == 0; h++) {
        const double u = a[H + h], sp = u > 20 ? u : log1p(exp(u));
        out[h] = log(2.0) / (exp((double)a[h]) * sp);
    }
    free(a);
    return rc;
}

int halflife_measure(transformer *tf, const int *ids, const halflife_request *q, const halflife_teacher *teacher,
                     const progress_sink *progress, halflife_result *out) {
    memset(out, 0, sizeof *out);
    if (halflife_request_check(q) != 0) return -1;
    const int L = tf->cfg.n_layers, H = tf->gcfg.H, n_gdn = tf_n_gdn(tf);
    if (n_gdn == 0) return gf_fail("the model has no GDN layer: nothing to measure");
    const size_t rows = (size_t)q->seqs * (size_t)q->ctx;
    const int B = q->batch < q->seqs ? q->batch : q->seqs;
    capture c = {tf->be, H, gf_calloc((size_t)L, sizeof(int)), gf_calloc((size_t)n_gdn, sizeof(float *)),
                 gf_calloc((size_t)n_gdn, sizeof(float *)), 0, progress};
    int rc = -1;
    tf_run *r = NULL;
    for (int l = 0, s = 0; l < L; l++) {
        c.slot[l] = tf->kind[l] == MIX_GDN ? s++ : -1;
        if (c.slot[l] >= 0) {
            c.g[c.slot[l]] = gf_malloc(rows * (size_t)H * sizeof(float));
            c.beta[c.slot[l]] = gf_malloc(rows * (size_t)H * sizeof(float));
        }
    }
    const tf_run_opts ro = {.B = B, .T = q->ctx, .cancel = progress ? progress->cancel : NULL};
    if (tf_run_open(&r, tf, &ro) != 0) goto done;
    const tf_hooks hooks = {NULL, &c, NULL, on_gdn};
    for (int s0 = 0; s0 < q->seqs; s0 += B) {
        if (progress_cancelled(progress)) {
            gf_fail("cancelled");
            goto done;
        }
        progress_report(progress, "halflife", s0, q->seqs);
        const int b = q->seqs - s0 < B ? q->seqs - s0 : B;
        c.row0 = (size_t)s0 * (size_t)q->ctx;
        if (tf_forward(r, ids + c.row0, b, q->ctx, 0, &hooks) != 0 || be_sync(tf->be) != 0) goto done;
    }
    progress_report(progress, "halflife", q->seqs, q->seqs);
    out->ctx = q->ctx;
    out->seqs = q->seqs;
    out->tokens = (long)rows;
    out->n_heads = n_gdn * H;
    out->heads = gf_calloc((size_t)out->n_heads, sizeof *out->heads);
    double *idle = gf_malloc((size_t)H * sizeof *idle);
    for (int l = 0, i = 0; l < L; l++) {
        if (c.slot[l] < 0) continue;
        if (idle_half_lives(tf, l, idle) != 0) {
            free(idle);
            goto done;
        }
        for (int h = 0; h < H; h++, i++) {
            halflife_head *hd = &out->heads[i];
            hd->layer = l, hd->head = h, hd->idle = idle[h];
            halflife_summarize(c.g[c.slot[l]] + h, c.beta[c.slot[l]] + h, rows, (size_t)H, q->ctx, hd);
            const size_t k = (size_t)l * H + h;
            hd->teacher_all = teacher && teacher->all ? teacher->all[k] : NAN;
            hd->teacher_no_sink = teacher && teacher->no_sink ? teacher->no_sink[k] : NAN;
            hd->target = teacher && teacher->target ? teacher->target[k] : NAN;
            halflife_flag(hd, &q->th);
        }
    }
    free(idle);
    rc = 0;
done:
    if (r) tf_run_close(r);
    for (int s = 0; s < n_gdn; s++) free(c.g[s]), free(c.beta[s]);
    free(c.g);
    free(c.beta);
    free(c.slot);
    if (rc != 0) halflife_result_free(out);
    return rc;
}

void halflife_targets(const student_settings *set, const double *all, const double *no_sink, size_t n,
                      double *target) {
    for (size_t k = 0; k < n; k++) {
        const double d = set->distance == DECAY_DISTANCE_NO_SINK ? no_sink[k] : all[k];
        if (set->half_life > 0) {
            target[k] = set->half_life;
        } else if (isfinite(d) && d > 0) {
            const double g = fmin(fmax(log(2.0) / d, 1e-3), 5.0);
            target[k] = log(2.0) / g;
        } else {
            target[k] = NAN;
        }
    }
}

/* ---------------------------------------------------------------- files, JSON */

int halflife_teacher_read(const char *path, int L, int H, double *all, double *no_sink) {
    for (size_t i = 0; i < (size_t)L * H; i++) all[i] = no_sink[i] = NAN;
    if (access(path, F_OK) != 0) return 0;
    char *text = read_text_file(path, NULL);
    if (!text) return -1;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) return gf_fail("%s: not valid JSON", path);
    /* report.json keeps them under teacher_attention_stats; graft stats --json under "layers" */
    const cJSON *st = cJSON_GetObjectItem(root, "teacher_attention_stats");
    if (!cJSON_IsArray(st)) st = cJSON_GetObjectItem(root, "layers");
    if (!cJSON_IsArray(st)) st = NULL;
    int found = 0;
    const cJSON *lay;
    cJSON_ArrayForEach(lay, st) {
        const cJSON *ln = cJSON_GetObjectItem(lay, "layer"), *heads = cJSON_GetObjectItem(lay, "heads");
        if (!cJSON_IsNumber(ln) || ln->valueint < 0 || ln->valueint >= L || !cJSON_IsArray(heads)) continue;
        const cJSON *hd;
        cJSON_ArrayForEach(hd, heads) {
            const cJSON *hn = cJSON_GetObjectItem(hd, "head"), *d = cJSON_GetObjectItem(hd, "mean_distance"),
                        *d0 = cJSON_GetObjectItem(hd, "mean_distance_no_sink");
            if (!cJSON_IsNumber(hn) || hn->valueint < 0 || hn->valueint >= H) continue;
            const size_t k = (size_t)ln->valueint * H + hn->valueint;
            if (cJSON_IsNumber(d)) all[k] = d->valuedouble, found = 1;
            if (cJSON_IsNumber(d0)) no_sink[k] = d0->valuedouble;
        }
    }
    cJSON_Delete(root);
    return found;
}

static cJSON *num(double x) { return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull(); }

cJSON *halflife_result_json(const halflife_result *r, const halflife_thresholds *t, const char *student,
                            const char *text) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "student", student ? student : "");
    cJSON_AddStringToObject(o, "text", text ? text : "");
    cJSON_AddNumberToObject(o, "ctx", r->ctx);
    cJSON_AddNumberToObject(o, "seqs", r->seqs);
    cJSON_AddNumberToObject(o, "tokens", (double)r->tokens);
    cJSON *th = cJSON_AddObjectToObject(o, "thresholds");
    cJSON_AddNumberToObject(th, "short_ratio", t->short_ratio);
    cJSON_AddNumberToObject(th, "long_ratio", t->long_ratio);
    cJSON_AddNumberToObject(th, "share", t->share_ratio);
    cJSON_AddNumberToObject(th, "spread_ratio", t->spread_ratio);
    cJSON_AddNumberToObject(th, "beta_shut", t->beta_shut);
    cJSON_AddNumberToObject(th, "beta_saturated", t->beta_saturated);
    cJSON *hi = cJSON_AddObjectToObject(o, "hist");
    cJSON_AddNumberToObject(hi, "bins", HL_HIST_BINS);
    cJSON_AddNumberToObject(hi, "log10_min", HL_HIST_LOG10_MIN);
    cJSON_AddNumberToObject(hi, "log10_max", HL_HIST_LOG10_MAX);
    cJSON *heads = cJSON_AddArrayToObject(o, "heads");
    for (int i = 0; i < r->n_heads; i++) {
        const halflife_head *h = &r->heads[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "layer", h->layer);
        cJSON_AddNumberToObject(e, "head", h->head);
        cJSON_AddItemToObject(e, "idle", num(h->idle));
        cJSON_AddItemToObject(e, "p10", num(h->p10));
        cJSON_AddItemToObject(e, "p50", num(h->p50));
        cJSON_AddItemToObject(e, "p90", num(h->p90));
        cJSON_AddItemToObject(e, "under_one", num(h->under_one));
        cJSON_AddItemToObject(e, "over_ctx", num(h->over_ctx));
        cJSON_AddItemToObject(e, "beta_p10", num(h->beta_p10));
        cJSON_AddItemToObject(e, "beta_p50", num(h->beta_p50));
        cJSON_AddItemToObject(e, "beta_p90", num(h->beta_p90));
        cJSON_AddItemToObject(e, "teacher_distance", num(h->target));
        cJSON_AddItemToObject(e, "teacher_distance_all", num(h->teacher_all));
        cJSON_AddItemToObject(e, "teacher_distance_no_sink", num(h->teacher_no_sink));
        cJSON *fl = cJSON_AddArrayToObject(e, "flags");
        for (int f = 0; f < HL_FLAG_COUNT; f++)
            if (h->flags & (1u << f)) cJSON_AddItemToArray(fl, cJSON_CreateString(halflife_flag_names[f]));
        cJSON_AddStringToObject(e, "reasons", h->reason);
        cJSON_AddNumberToObject(e, "severity", h->severity);
        cJSON *hg = cJSON_AddArrayToObject(e, "hist");
        for (int b = 0; b < HL_HIST_BINS; b++) cJSON_AddItemToArray(hg, cJSON_CreateNumber((double)h->hist[b]));
        cJSON_AddItemToArray(heads, e);
    }
    return o;
}

int halflife_flagged_order(const halflife_result *r, int *idx) {
    /* insertion by severity, stable (a few hundred heads at most; qsort has no user pointer in C11) */
    int n = 0;
    for (int i = 0; i < r->n_heads; i++) {
        if (!r->heads[i].flags) continue;
        int j = n++;
        while (j > 0 && r->heads[idx[j - 1]].severity < r->heads[i].severity) idx[j] = idx[j - 1], j--;
        idx[j] = i;
    }
    return n;
}
