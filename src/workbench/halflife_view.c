#include "workbench/halflife_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void halflife_view_init(halflife_view *v) {
    memset(v, 0, sizeof *v);
    v->jump = -1;
}

void halflife_view_free(halflife_view *v) {
    halflife_result_free(&v->r);
    halflife_result_free(&v->fix_before);
    halflife_result_free(&v->fix_after);
    free(v->flagged);
    halflife_view_init(v);
}

void halflife_view_take(halflife_view *v, halflife_result *r) {
    halflife_result_free(&v->r);
    free(v->flagged);
    v->r = *r;
    memset(r, 0, sizeof *r);
    v->flagged = gf_calloc(v->r.n_heads > 0 ? (size_t)v->r.n_heads : 1, sizeof *v->flagged);
    v->n_flagged = halflife_flagged_order(&v->r, v->flagged);
    v->jump = -1;
    v->have = true;
}

void halflife_view_take_fix(halflife_view *v, halflife_fix_result *f) {
    halflife_result_free(&v->fix_before);
    halflife_result_free(&v->fix_after);
    v->fix = f->fix;
    v->fix_before = f->before;
    v->fix_after = f->after;
    v->fix_out = f->out;
    memcpy(v->fix_dir, f->dir, sizeof v->fix_dir);
    v->fixed = true;
    free(f);
}

const halflife_head *halflife_result_head(const halflife_result *r, int layer, int head) {
    for (int i = 0; i < r->n_heads; i++)
        if (r->heads[i].layer == layer && r->heads[i].head == head) return &r->heads[i];
    return NULL;
}

const halflife_head *halflife_view_head(const halflife_view *v, int layer, int head) {
    return v->have ? halflife_result_head(&v->r, layer, head) : NULL;
}

double halflife_log2_ratio(const halflife_head *h) {
    if (!h || !isfinite(h->p50) || !isfinite(h->target) || h->p50 <= 0 || h->target <= 0) return NAN;
    return log2(h->p50 / h->target);
}
