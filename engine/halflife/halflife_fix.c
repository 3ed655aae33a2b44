/* Per-head fixes, then Stage 2 of the fixed layer (halflife_fix.h). */
#include "halflife/halflife_fix.h"

#include <math.h>
#include <stdlib.h>

#include "align/stage2.h"
#include "core/error.h"

static double softplus_inv(double y) { return y + log(-expm1(-y)); }

int halflife_apply(student *s, const halflife_change *c, int n) {
    const int H = s->gcfg.H;
    for (int i = 0; i < n; i++)
        if (c[i].layer < 0 || c[i].layer >= s->L || !s->is_gdn[c[i].layer] || c[i].head < 0 || c[i].head >= H ||
            !(c[i].half_life >= 0 && isfinite(c[i].half_life)) || !(c[i].rate_scale >= 0 && isfinite(c[i].rate_scale)))
            return gf_fail("fix %d:%d=%g: not a GDN head of this student with a half-life >= 0 (GDN layers have %d heads)",
                           c[i].layer, c[i].head, c[i].half_life, H);
    gdn_params p;
    gdn_params_alloc(&p, &s->gcfg);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const int l = c[i].layer;
        if (c[i].half_life == 0 && c[i].rate_scale == 0) continue; /* keep */
        if ((rc = student_get_layer(s, l, &p)) != 0) break;
        if (c[i].rate_scale > 0) {
            /* g_t = -exp(A_log) softplus(.): the whole distribution moves by one factor */
            p.a_log[c[i].head] = (float)(p.a_log[c[i].head] + log(c[i].rate_scale));
        } else {
            /* Stage 1's decay for one head: with Wa x = 0 the decay is exp(-ln 2 / N) */
            p.a_log[c[i].head] = 0.0f;
            p.dt_bias[c[i].head] = (float)softplus_inv(log(2.0) / c[i].half_life);
        }
        if ((rc = student_put_layer(s, l, &p)) != 0) break;
        gdn_half_lives(&s->gcfg, &p, s->rep[l].half_life);
    }
    gdn_params_free(&p);
    return rc;
}

int halflife_realign(student *s, int l, const teacher_capture *cal, const teacher_capture *held,
                     const progress_sink *progress) {
    if (l < 0 || l >= s->L || !s->is_gdn[l]) return gf_fail("layer %d is not a GDN layer of this student", l);
    layer_report *r = &s->rep[l];
    free(r->s2.loss);
    free(r->s2.heldout);
    r->s2.loss = r->s2.heldout = NULL;
    const align_set c = {capture_xn(cal, l), capture_attn_out(cal, l), cal->n_seqs, cal->T};
    if (held && held->n_seqs == 0) held = NULL;
    const align_set h = held ? (align_set){capture_xn(held, l), capture_attn_out(held, l), held->n_seqs, held->T}
                             : (align_set){NULL, NULL, 0, 0};
    if (stage2_align(s->m->be, &s->set, &s->gcfg, s->gdn[l], &c, held ? &h : NULL, &r->s2, progress, true, NULL, l) != 0)
        return -1;
    r->has_stage2 = true;
    gdn_params p;
    gdn_params_alloc(&p, &s->gcfg);
    const int rc = student_get_layer(s, l, &p);
    if (rc == 0) gdn_half_lives(&s->gcfg, &p, r->half_life);
    gdn_params_free(&p);
    return rc;
}

int halflife_fix_run(student *s, const halflife_change *c, int n, const token_split *sp, int ctx,
                     const progress_sink *progress, halflife_fix_outcome *out) {
    teacher_capture cal = {0}, held = {0};
    double nll_before = NAN, nll_after = NAN;
    long cnt = 0;
    int rc = -1;
    out->ppl_before = out->ppl_after = NAN;
    out->n_eval = 0;
    if (student_eval_nll(s, sp->eval.data, sp->eval.len, ctx, &nll_before, &cnt, progress) != 0) goto out;
    if (s->set.steps > 0) {
        if (teacher_capture_run(&cal, s->m, sp->calib.data, sp->n_calib, (int)(sp->calib.len / sp->n_calib), 1,
                                progress) != 0)
            goto out;
        if (sp->n_heldout > 0 && teacher_capture_run(&held, s->m, sp->heldout.data, sp->n_heldout,
                                                     (int)(sp->heldout.len / sp->n_heldout), 0, progress) != 0)
            goto out;
    }
    if (halflife_apply(s, c, n) != 0) goto out;
    for (int i = 0; i < n; i++) {
        bool seen = false; /* each layer once */
        for (int j = 0; j < i; j++) seen = seen || c[j].layer == c[i].layer;
        if (!seen && s->set.steps > 0 && halflife_realign(s, c[i].layer, &cal, held.L ? &held : NULL, progress) != 0)
            goto out;
    }
    if (student_eval_nll(s, sp->eval.data, sp->eval.len, ctx, &nll_after, &out->n_eval, progress) != 0) goto out;
    out->ppl_before = exp(nll_before / (double)cnt);
    out->ppl_after = exp(nll_after / (double)out->n_eval);
    rc = 0;
out:
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    return rc;
}
