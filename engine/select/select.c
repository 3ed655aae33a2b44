#include "select/select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "eval/perplexity.h"

const char *strategy_name(select_strategy s) {
    switch (s) {
    case STRATEGY_UNIFORM: return "uniform";
    case STRATEGY_AR: return "ar";
    case STRATEGY_GA_S2: return "ga-s2";
    case STRATEGY_MANUAL: return "manual";
    }
    return "?";
}

int strategy_parse(const char *text, int L, strategy_spec *out) {
    memset(out, 0, sizeof *out);
    if (strcmp(text, "uniform") == 0) out->kind = STRATEGY_UNIFORM;
    else if (strcmp(text, "ar") == 0) out->kind = STRATEGY_AR;
    else if (strcmp(text, "ga-s2") == 0) out->kind = STRATEGY_GA_S2;
    else if (strncmp(text, "manual:", 7) == 0) {
        out->kind = STRATEGY_MANUAL;
        const char *p = text + 7;
        while (*p) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || (*end && *end != ','))
                return gf_fail("bad manual layer list '%s' (expected manual:0,3,7)", text + 7);
            if (L > 0 && (v < 0 || v >= L)) return gf_fail("manual layer %ld is out of range (the model has %d layers: 0..%d)", v, L, L - 1);
            if (v < 0 || v > 100000) return gf_fail("manual layer %ld is out of range", v);
            for (int i = 0; i < out->n_manual; i++)
                if (out->manual[i] == v) return gf_fail("manual layer %ld is listed twice", v);
            if (out->n_manual == (int)(sizeof out->manual / sizeof *out->manual))
                return gf_fail("too many manual layers");
            out->manual[out->n_manual++] = (int)v;
            p = *end ? end + 1 : end;
            if (*end == ',' && !*p) return gf_fail("bad manual layer list '%s' (trailing comma)", text + 7);
        }
        if (out->n_manual == 0) return gf_fail("manual strategy needs a layer list (manual:0,3,7)");
    } else {
        return gf_fail("unknown strategy '%s' (uniform, ar, ga-s2, manual:0,3)", text);
    }
    return 0;
}

void strategy_text(const strategy_spec *sp, char *buf, size_t n) {
    if (sp->kind != STRATEGY_MANUAL) {
        snprintf(buf, n, "%s", strategy_name(sp->kind));
        return;
    }
    size_t at = (size_t)snprintf(buf, n, "manual:");
    for (int i = 0; i < sp->n_manual && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ",%d" : "%d", sp->manual[i]);
}

int keep_count(double ratio, int L, int *k) {
    if (!(ratio > 0 && ratio < 1)) return gf_fail("retention ratio must be in (0, 1), got %g", ratio);
    *k = (int)round(ratio * L);
    return 0;
}

void select_uniform(int L, int k, int *kept) {
    for (int i = 0; i < k; i++) kept[i] = (int)((long)i * L / k);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* k best layers by score (highest when want_high), ties to the lower layer. */
static void top_k(const double *score, int L, int k, bool want_high, int *kept) {
    bool *used = gf_calloc((size_t)L, sizeof *used);
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int l = 0; l < L; l++) {
            if (used[l]) continue;
            if (best < 0 || (want_high ? score[l] > score[best] : score[l] < score[best])) best = l;
        }
        used[best] = true;
        kept[i] = best;
    }
    free(used);
    qsort(kept, (size_t)k, sizeof *kept, cmp_int);
}

/* progress: only its cancel flag (checked between layers of every window) */
static int ppl_of(transformer *tf, const int *ids, size_t n, int ctx, double *ppl, const progress_sink *progress) {
    double nll;
    long count;
    progress_sink quiet = {.cancel = progress ? progress->cancel : NULL};
    if (eval_nll_tf(tf, ids, n, ctx, &nll, &count, &quiet) != 0) return -1;
    *ppl = exp(nll / (double)count);
    return 0;
}

int select_layers(layer_selection *out, const strategy_spec *sp, int k, const model *m, student *ga_student,
                  const int *ids, size_t n, int ctx, const progress_sink *progress) {
    memset(out, 0, sizeof *out);
    const int L = m->cfg.n_layers;
    out->strategy = sp->kind;
    out->L = L;
    if (sp->kind == STRATEGY_MANUAL) k = sp->n_manual;
    if (k < 0 || k > L) return gf_fail("cannot keep %d of %d layers", k, L);
    out->k = k;
    out->kept = gf_calloc((size_t)(k ? k : 1), sizeof *out->kept);
    out->score = gf_malloc((size_t)L * sizeof *out->score);
    for (int l = 0; l < L; l++) out->score[l] = NAN;
    int rc = 0;
    switch (sp->kind) {
    case STRATEGY_UNIFORM: select_uniform(L, k, out->kept); break;
    case STRATEGY_MANUAL:
        for (int i = 0; i < sp->n_manual; i++) {
            if (sp->manual[i] < 0 || sp->manual[i] >= L) {
                rc = gf_fail("manual layer %d is out of range (the model has %d layers: 0..%d)", sp->manual[i], L, L - 1);
                break;
            }
            out->kept[i] = sp->manual[i];
        }
        qsort(out->kept, (size_t)k, sizeof *out->kept, cmp_int);
        break;
    case STRATEGY_AR: {
        /* the teacher with layer l's attention removed (its MLP kept) */
        mixer_kind *kinds = gf_calloc((size_t)L, sizeof *kinds);
        for (int l = 0; l < L && rc == 0; l++) {
            if (progress_cancelled(progress)) { rc = gf_fail("cancelled"); break; }
            progress_report(progress, "select ar", l, L);
            for (int j = 0; j < L; j++) kinds[j] = j == l ? MIX_NONE : MIX_ATTN;
            transformer tf;
            if ((rc = tf_view(&tf, m, NULL, kinds, NULL)) != 0) break;
            rc = ppl_of(&tf, ids, n, ctx, &out->score[l], progress);
            tf_free(&tf);
        }
        free(kinds);
        if (rc == 0) top_k(out->score, L, k, true, out->kept);
        break;
    }
    case STRATEGY_GA_S2: {
        if (!ga_student) { rc = gf_fail("ga-s2 needs a student with every layer converted"); break; }
        bool *mask = gf_malloc((size_t)L * sizeof *mask);
        for (int l = 0; l < L && rc == 0; l++) {
            if (progress_cancelled(progress)) { rc = gf_fail("cancelled"); break; }
            progress_report(progress, "select ga-s2", l, L);
            for (int j = 0; j < L; j++) mask[j] = j != l;
            if ((rc = student_set_gdn(ga_student, mask)) != 0) break;
            rc = ppl_of(&ga_student->tf, ids, n, ctx, &out->score[l], progress);
        }
        for (int j = 0; j < L; j++) mask[j] = false;
        student_set_gdn(ga_student, mask);
        free(mask);
        if (rc == 0) top_k(out->score, L, k, false, out->kept);
        break;
    }
    }
    if (rc != 0) {
        layer_selection_free(out);
        return -1;
    }
    progress_report(progress, "select", 1, 1);
    return 0;
}

void layer_selection_free(layer_selection *s) {
    free(s->kept);
    free(s->score);
    memset(s, 0, sizeof *s);
}
