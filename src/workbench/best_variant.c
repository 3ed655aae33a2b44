#include "workbench/best_variant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "student/student.h"
#include "workbench/import_runs.h"

void best_variant_label(const result_row *r, char *buf, size_t n) {
    if (!r->has_stage1) {
        snprintf(buf, n, "%s", r->init);
        return;
    }
    const stage1_choice *c = &r->stage1;
    const unsigned p = c->parts & STAGE1_ALL;
    char parts[40], extra[64] = "";
    if (p == STAGE1_ALL) snprintf(parts, sizeof parts, "all");
    else stage1_parts_name(p, parts, sizeof parts); /* the parts by name: "decay,beta,gate" */
    if (c->half_life > 0 && (p & STAGE1_DECAY)) snprintf(extra, sizeof extra, ", half-life %g", c->half_life);
    else if (c->no_sink && stage1_choice_uses_distance(c)) snprintf(extra, sizeof extra, ", no-sink");
    if ((p & STAGE1_SIGMA) && c->sigma_fit != SIGMA_FIT_REFERENCE)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", sigma %s", sigma_fit_name(c->sigma_fit));
    if (p == STAGE1_ALL && !extra[0]) snprintf(buf, n, "%s", r->init);
    else if (p == STAGE1_ALL) snprintf(buf, n, "%s [%s]", r->init, extra + 2);
    else snprintf(buf, n, "%s [%s%s]", r->init, parts, extra);
}

/* the paper's method: taylor-calibrate, every Stage 1 part, distances over all keys, no override;
 * strict: with the reference sigma fit; else the scaled one (an older graft's) too; the gated one never
 * (a graft variant) */
static bool is_paper(const result_row *r, bool strict) {
    if (strcmp(r->init, student_init_name(INIT_TAYLOR_CALIBRATE))) return false;
    if (!r->has_stage1) return true;
    stage1_choice c = r->stage1;
    if (!strict && c.sigma_fit == SIGMA_FIT_SCALED) c.sigma_fit = SIGMA_FIT_REFERENCE;
    return stage1_choice_is_default(&c);
}

static bool measured(const result_row *r) {
    return (r->kind == RUN_ABLATE || r->kind == RUN_EVALUATE) && isfinite(r->ppl) && r->ppl > 0;
}

/* The same evaluation slice: the same text by name, or, where a file from an older graft did not record
 * its text, the same windows on which the teacher scored the same perplexity. The teacher's perplexity
 * over a slice is its fingerprint: the same program on the same windows prints the same digits, another
 * text or another device does not (1e-9 relative: the JSON's 17 digits less printing noise). */
static bool same_slice(const result_row *b, const result_row *r) {
    if (b->eval_windows != r->eval_windows) return false;
    if (!import_text_unknown(b) && !import_text_unknown(r)) {
        char x[96], y[96];
        result_slice_label(b->corpus, b->eval_windows, b->ctx, x, sizeof x);
        result_slice_label(r->corpus, r->eval_windows, r->ctx, y, sizeof y);
        return !strcmp(x, y);
    }
    if (import_text_unknown(b) && import_text_unknown(r)) return true; /* as before: both unknown, by their windows */
    return isfinite(b->teacher_ppl) && isfinite(r->teacher_ppl) &&
           fabs(b->teacher_ppl - r->teacher_ppl) <= 1e-9 * fabs(b->teacher_ppl);
}

/* Measured the same way as the base row b: only the init and its Stage 1 options differ. */
static bool comparable(const result_row *b, const result_row *r) {
    if (!measured(r) || strcmp(b->strategy, r->strategy) || fabs(b->keep - r->keep) > 1e-9 ||
        b->keep_best_heldout != r->keep_best_heldout || !same_slice(b, r))
        return false;
    student_init init;
    bool stage2 = student_init_parse(r->init, &init) == 0 && init_uses_stage2(init);
    return !stage2 || r->stage2_steps == b->stage2_steps; /* inits without Stage 2 join any */
}

static int pick_base(const teacher_state *t, bool strict) {
    int any = -1, plan = -1;
    for (int i = 0; i < t->n_results; i++) {
        const result_row *r = &t->results[i];
        if (!measured(r) || !is_paper(r, strict)) continue;
        bool others = false;
        for (int j = 0; j < t->n_results && !others; j++) others = j != i && comparable(r, &t->results[j]);
        if (!others) continue;
        any = i; /* the latest */
        if (!strcmp(r->strategy, t->strategy) && fabs(r->keep - t->keep_ratio) < 1e-9) plan = i;
    }
    return plan >= 0 ? plan : any;
}

bool best_variant_find(const teacher_state *t, best_variant *out) {
    int b = pick_base(t, true);
    if (b < 0) b = pick_base(t, false);
    if (b < 0) return false;
    const result_row *base = &t->results[b];
    int best = b, second = -1;
    for (int i = 0; i < t->n_results; i++) {
        if (i == b || !comparable(base, &t->results[i])) continue;
        if (t->results[i].ppl < t->results[best].ppl) best = i;
        if (second < 0 || t->results[i].ppl < t->results[second].ppl) second = i;
    }
    *out = (best_variant){.best = best, .base = b, .second = best == b ? second : -1};
    const result_row *other = &t->results[best == b ? second : best];
    out->change = (other->ppl - base->ppl) / base->ppl;
    return true;
}

static const char *file_of(const result_row *r) {
    const char *s = strrchr(r->source, '/');
    return s ? s + 1 : r->source;
}

void best_variant_line(const teacher_state *t, char *buf, size_t n) {
    best_variant bv;
    buf[0] = 0;
    if (!best_variant_find(t, &bv)) return;
    const result_row *base = &t->results[bv.base];
    const int o = bv.best == bv.base ? bv.second : bv.best;
    const result_row *other = &t->results[o];
    char lb[96], lo[96], slice[96], from[400];
    best_variant_label(base, lb, sizeof lb);
    best_variant_label(other, lo, sizeof lo);
    const result_row *named = import_text_unknown(base) ? other : base; /* a slice matched by the teacher's ppl: its name */
    result_slice_label(named->corpus, named->eval_windows, named->ctx, slice, sizeof slice);
    /* where the two rows came from */
    const int first = bv.best == bv.base ? bv.base : bv.best, next = bv.best == bv.base ? o : bv.base;
    const result_row *r1 = &t->results[first], *r2 = &t->results[next];
    if (r1->source[0] && !strcmp(r1->source, r2->source)) snprintf(from, sizeof from, "imported from %.120s", file_of(r1));
    else if (!r1->source[0] && !r2->source[0]) snprintf(from, sizeof from, "run here");
    else
        snprintf(from, sizeof from, "row %d %s%.120s, row %d %s%.120s", first + 1, r1->source[0] ? "imported from " : "run here",
                 file_of(r1), next + 1, r2->source[0] ? "imported from " : "run here", file_of(r2));
    if (bv.best != bv.base)
        snprintf(buf, n, "best measured here (%s %.0f%%, %s): %s ppl %.2f vs %s %.2f (%+.1f %%), rows %d and %d (%s)",
                 base->strategy, 100 * base->keep, slice, lo, other->ppl, lb, base->ppl, 100 * bv.change, first + 1,
                 next + 1, from);
    else
        snprintf(buf, n, "best measured here (%s %.0f%%, %s): %s, the paper's method, ppl %.2f; next %s %.2f (%+.1f %%), "
                 "rows %d and %d (%s)", base->strategy, 100 * base->keep, slice, lb, base->ppl, lo, other->ppl,
                 100 * bv.change, first + 1, next + 1, from);
}
