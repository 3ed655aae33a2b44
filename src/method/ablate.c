#include "method/ablate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "eval/perplexity.h"
#include "select/select.h"
#include "convert/build.h"

static int split_list(const char *text, char items[][64], int max) {
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        const char *e = p;
        while (*e && *e != ',' && *e != ' ') e++;
        size_t len = (size_t)(e - p);
        if (len >= 64) len = 63;
        if (len) {
            memcpy(items[n], p, len);
            items[n][len] = 0;
            n++;
        }
        p = *e ? e + 1 : e;
    }
    return n;
}

/* Same parameters by construction: the same gate edit, Stage 1 components,
 * decay override and Stage 2 (the seed and the other settings are shared). */
static bool same_student(const ablate_variant *a, const ablate_variant *b) {
    const int ea = a->init == INIT_ZERO_GATE ? 1 : a->init == INIT_SMALL_GATE ? 2 : 0;
    const int eb = b->init == INIT_ZERO_GATE ? 1 : b->init == INIT_SMALL_GATE ? 2 : 0;
    return ea == eb && a->stage1 == b->stage1 && a->half_life == b->half_life &&
           (!(a->stage1 & STAGE1_SIGMA) || a->fit == b->fit) && init_uses_stage2(a->init) == init_uses_stage2(b->init);
}

/* "decay,beta", "decay(half-life 32),sigma", "decay(no-sink)", "none"; "-" without Stage 1 */
const char *ablate_variant_label(const ablate_variant *v, decay_distance_mode dist, char *buf, size_t size) {
    if (!init_uses_stage1(v->init)) return snprintf(buf, size, "-"), buf;
    if (v->stage1 == STAGE1_NONE) return snprintf(buf, size, "none"), buf;
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < 4 && at < size; i++) {
        if (!(v->stage1 & (1u << i))) continue;
        at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "", stage1_part_names[i]);
        if ((1u << i) == STAGE1_DECAY && at < size) {
            if (v->half_life > 0) at += (size_t)snprintf(buf + at, size - at, "(half-life %g)", v->half_life);
            else if (dist == DECAY_DISTANCE_NO_SINK) at += (size_t)snprintf(buf + at, size - at, "(no-sink)");
        }
        if ((1u << i) == STAGE1_SIGMA && v->fit != SIGMA_FIT_REFERENCE && at < size)
            at += (size_t)snprintf(buf + at, size - at, "(%s)", sigma_fit_name(v->fit));
    }
    return buf;
}

/* --stage1-subsets: all, none, each single component, each leave-one-out */
static int standard_subsets(unsigned *out) {
    int n = 0;
    out[n++] = STAGE1_ALL;
    out[n++] = STAGE1_NONE;
    for (int i = 0; i < 4; i++) out[n++] = 1u << i;
    for (int i = 0; i < 4; i++) out[n++] = STAGE1_ALL & ~(1u << i);
    return n;
}

/* sel = the k layers ranked by score: the highest (ar) or the lowest (ga-s2), ties to the lower layer, in order */
static void rank_kept(const double *score, int L, int k, bool highest, layer_selection *sel) {
    sel->k = k;
    sel->kept = gf_calloc((size_t)(k ? k : 1), sizeof *sel->kept);
    bool *used = gf_calloc((size_t)L, sizeof *used);
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int l = 0; l < L; l++)
            if (!used[l] && (best < 0 || (highest ? score[l] > score[best] : score[l] < score[best]))) best = l;
        used[best] = true;
    }
    for (int l = 0, i = 0; l < L; l++)
        if (used[l]) sel->kept[i++] = l;
    free(used);
}

int ablate_plan_make(const request *r, ablate_plan *p) {
    const ablate_req *q = &r->u.ablate;
    const method_cli mo = q->mo;
    const char *keep_list = q->keep_list, *strat_list = q->strat_list, *init_list = q->init_list;
    const bool subsets = q->subsets;
    memset(p, 0, sizeof *p);
    char items[64][64];
    int n_keep = split_list(keep_list, items, 64);
    double *keeps = p->keeps;
    for (int i = 0; i < n_keep; i++) {
        char *end;
        keeps[i] = strtod(items[i], &end);
        if (*end || !(keeps[i] > 0 && keeps[i] < 1)) {
            return gf_fail("retention ratio must be in (0, 1), got '%s'", items[i]);
        }
    }
    strategy_spec *strats = p->strats;
    char (*strat_names)[64] = p->strat_names;
    int n_strat = split_list(strat_list, items, 16);
    for (int i = 0; i < n_strat; i++) {
        for (char *c = items[i]; *c; c++)
            if (*c == '+') *c = ',';
        memcpy(strat_names[i], items[i], sizeof strat_names[i]); /* both 64 bytes, NUL-terminated by split_list */
        if (strategy_parse(items[i], 0, &strats[i]) != 0) {
            return -1;
        }
    }
    if (!init_list)
        init_list = subsets ? student_init_name(INIT_TAYLOR_CALIBRATE) : student_init_list(",");
    student_init init_names[INIT_COUNT * 2];
    int n_init = split_list(init_list, items, INIT_COUNT * 2);
    for (int i = 0; i < n_init; i++)
        if (student_init_parse(items[i], &init_names[i]) != 0) {
            return -1;
        }
    /* Stage 1 component sets (A/B/...) and half-life overrides (N,M,...) are lists here */
    unsigned sets[16];
    int n_sets = 0;
    if (subsets && mo.stage1) {
        return gf_fail("give --stage1 sets or --stage1-subsets, not both");
    }
    if (subsets) n_sets = standard_subsets(sets);
    else if (!mo.stage1) sets[n_sets++] = STAGE1_ALL;
    else
        for (const char *p = mo.stage1; n_sets < 16;) {
            char one[64];
            const size_t len = strcspn(p, "/");
            snprintf(one, sizeof one, "%.*s", (int)(len < 63 ? len : 63), p);
            if (stage1_parts_parse(one, &sets[n_sets++]) != 0) {
                return -1;
            }
            if (!p[len]) break;
            p += len + 1;
        }
    double hls[16];
    int n_hl = 0;
    if (mo.half_life) {
        n_hl = split_list(mo.half_life, items, 16);
        for (int i = 0; i < n_hl; i++)
            if (half_life_parse(items[i], &hls[i]) != 0) {
                return -1;
            }
    }
    sigma_fit_mode *fits = p->fits;
    int n_fit = split_list(mo.sigma_fit, items, 3);
    if (n_fit < 1 || n_fit > 2) return gf_fail("--sigma-fit takes one or two of reference, scaled, gated (e.g. reference,gated), got '%s'", mo.sigma_fit);
    for (int i = 0; i < n_fit; i++)
        if (sigma_fit_parse(items[i], &fits[i]) != 0 || (i == 1 && fits[1] == fits[0]))
            return i == 1 && fits[1] == fits[0] ? gf_fail("--sigma-fit: a fit given twice") : -1;
    p->n_fit = n_fit;
    student_settings set0;
    method_cli mo_one = mo;
    mo_one.stage1 = NULL; /* the lists are handled here */
    mo_one.half_life = NULL;
    mo_one.sigma_fit = sigma_fit_name(fits[0]);
    if (method_cli_settings(&mo_one, r->co.seed, INIT_RANDOM, &set0) != 0) {
        return -1;
    }
    if (n_keep == 0 || n_strat == 0 || n_init == 0) {
        return gf_fail("--keep, --strategy and --init lists must not be empty");
    }
    /* the variants: each init; an init with Stage 1 once per component set,
     * then once per half-life override (the one --stage1 set, else every
     * component, with the decay set to the override) */
    int has_stage1_init = 0;
    for (int i = 0; i < n_init; i++) has_stage1_init |= init_uses_stage1(init_names[i]);
    if (!has_stage1_init && (subsets || method_cli_stage1_given(&mo))) {
        return gf_fail("--stage1, --stage1-subsets, --distance, --half-life and --sigma-fit need an init with "
                       "Stage 1 (taylor-only, taylor-calibrate) in --init");
    }
    ablate_variant *variants = p->variants;
    int n_var = 0;
    for (int i = 0; i < n_init; i++) {
        if (!init_uses_stage1(init_names[i])) {
            variants[n_var++] = (ablate_variant){init_names[i], STAGE1_NONE, 0, fits[0], -1};
            continue;
        }
        /* a set without the value scale is the same under every fit: one variant */
        for (int f = 0; f < n_fit; f++) {
            for (int q = 0; q < n_sets; q++)
                if (f == 0 || (sets[q] & STAGE1_SIGMA)) variants[n_var++] = (ablate_variant){init_names[i], sets[q], 0, fits[f], -1};
            for (int q = 0; q < n_hl; q++) {
                const unsigned parts = (n_sets == 1 && !subsets ? sets[0] : STAGE1_ALL) | STAGE1_DECAY;
                if (f == 0 || (parts & STAGE1_SIGMA)) variants[n_var++] = (ablate_variant){init_names[i], parts, hls[q], fits[f], -1};
            }
        }
    }
    int n_studs = 0;
    for (int j = 0; j < n_var; j++) {
        for (int q = 0; q < j && variants[j].student < 0; q++)
            if (same_student(&variants[q], &variants[j])) variants[j].student = variants[q].student;
        if (variants[j].student < 0) variants[j].student = n_studs++;
    }
    p->n_keep = n_keep, p->n_strat = n_strat, p->n_var = n_var, p->n_studs = n_studs;
    p->set0 = set0;
    return 0;
}

int method_ablate_run(const request *r, model *m, const method_hooks *h, const ablate_sink *sink, ablate_result *res) {
    const ablate_req *q = &r->u.ablate;
    memset(res, 0, sizeof *res);
    ablate_plan *pl = &res->plan;
    if (ablate_plan_make(r, pl) != 0) return -1;
    const double t0 = clock_now_s();
    const double *keeps = pl->keeps;
    strategy_spec *strats = pl->strats;
    char (*strat_names)[64] = pl->strat_names;
    const ablate_variant *variants = pl->variants;
    const int n_keep = pl->n_keep, n_strat = pl->n_strat, n_var = pl->n_var, n_studs = pl->n_studs;
    const student_settings set0 = pl->set0;
    const progress_sink *prp = &h->progress, *build = h->build ? h->build : prp;
    token_split *sp_ = &res->sp;
    teacher_capture cal = {0}, held = {0};
    student *studs = gf_calloc((size_t)n_studs, sizeof *studs);
    ablate_row *rows = res->rows = gf_calloc((size_t)(n_strat * n_keep * n_var), sizeof *rows);
    layer_selection ar_sel = {0};
    const int L = m->cfg.n_layers;
    bool *all = gf_malloc((size_t)L * sizeof *all), *mask = gf_malloc((size_t)L * sizeof *mask);
    for (int l = 0; l < L; l++) all[l] = true;
    double teacher_ppl = NAN, t_build = 0, t_rows = 0;
    int n_rows = 0, n_evals = 0;
    int rc = -1;
    const int ctx = q->mo.split.ctx;
    for (int i = 0; i < n_strat; i++)
        if (strats[i].kind == STRATEGY_MANUAL && strategy_parse(strat_names[i], L, &strats[i]) != 0) goto fail;
    if (!m->tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", r->pos[0]);
        goto fail;
    }
    if (token_split_make(sp_, m->tok, q->calib, q->eval, &q->mo.split) != 0) goto fail;
    method_phase(h, "teacher pass");
    if (method_capture(m, sp_, &cal, &held, prp) != 0) goto fail;
    method_phase(h, "teacher ppl");
    {
        double nll;
        long cnt;
        if (eval_nll(m, sp_->eval.data, sp_->eval.len, ctx, &nll, &cnt, prp) != 0) goto fail;
        teacher_ppl = exp(nll / (double)cnt);
        if (sink && sink->teacher_ppl) sink->teacher_ppl(sink->ud, teacher_ppl);
    }
    method_phase(h, "students");
    /* one student per distinct variant with every layer converted */
    double tb = clock_now_s();
    for (int j = 0; j < n_var; j++) {
        student *sj = &studs[variants[j].student];
        if (sj->L) continue; /* built for an earlier variant */
        student_settings st = set0;
        st.init = variants[j].init;
        st.stage1 = variants[j].stage1;
        st.half_life = variants[j].half_life;
        st.sigma_fit = variants[j].fit;
        if (sink && sink->student) sink->student(sink->ud, variants[j].student, n_studs);
        if (student_init_empty(sj, m, &st) != 0) goto fail;
        if (student_build_layers_observed(sj, all, &cal, held.L ? &held : NULL, build, h->obs) != 0) goto fail;
    }
    t_build = clock_now_s() - tb;
    double tr = clock_now_s();
    method_phase(h, "rows");
    for (int si = 0; si < n_strat; si++) {
        layer_selection *ga = gf_calloc((size_t)n_studs, sizeof *ga);
        for (int ki = 0; ki < n_keep; ki++) {
            int k;
            if (keep_count(keeps[ki], L, &k) != 0) {
                free(ga);
                goto fail;
            }
            for (int j = 0; j < n_var; j++) {
                if (progress_cancelled(prp)) {
                    gf_fail("cancelled");
                    free(ga);
                    goto fail;
                }
                ablate_row *row = &rows[n_rows];
                const int sj = variants[j].student;
                row->strategy_i = si;
                row->variant = j;
                row->keep = keeps[ki];
                layer_selection sel = {0};
                const layer_selection *use = &sel;
                if (strats[si].kind == STRATEGY_AR) {
                    if (!ar_sel.score &&
                        select_layers(&ar_sel, &strats[si], k, m, NULL, sp_->select.data, sp_->select.len, ctx, prp) != 0) {
                        free(ga);
                        goto fail;
                    }
                    rank_kept(ar_sel.score, L, k, true, &sel); /* the shared ar scores, re-ranked for this k */
                } else if (strats[si].kind == STRATEGY_GA_S2) {
                    if (!ga[sj].score &&
                        select_layers(&ga[sj], &strats[si], L, m, &studs[sj], sp_->select.data, sp_->select.len, ctx, prp) != 0) {
                        free(ga);
                        goto fail;
                    }
                    rank_kept(ga[sj].score, L, k, false, &sel);
                } else if (select_layers(&sel, &strats[si], k, m, NULL, NULL, 0, ctx, prp) != 0) {
                    free(ga);
                    goto fail;
                }
                row->k = use->k;
                for (int i = 0; i < use->k; i++) row->kept[i] = use->kept[i];
                for (int l = 0; l < L; l++) mask[l] = true;
                for (int i = 0; i < use->k; i++) mask[use->kept[i]] = false;
                free(sel.kept);
                free(sel.score);
                /* reuse an earlier row with the same student and layers */
                row->ppl = NAN;
                for (int q = 0; q < n_rows; q++)
                    if (variants[rows[q].variant].student == sj && rows[q].k == row->k &&
                        memcmp(rows[q].kept, row->kept, (size_t)row->k * sizeof(int)) == 0) {
                        row->ppl = rows[q].ppl;
                        break;
                    }
                student_set_gdn(&studs[sj], mask);
                row->hl = student_half_life_summary(&studs[sj], mask);
                if (isnan(row->ppl)) {
                    double nll;
                    long cnt;
                    if (student_eval_nll(&studs[sj], sp_->eval.data, sp_->eval.len, ctx, &nll, &cnt, prp) != 0) {
                        free(ga);
                        goto fail;
                    }
                    row->ppl = exp(nll / (double)cnt);
                    n_evals++;
                }
                n_rows++;
                if (sink && sink->row) sink->row(sink->ud, pl, row, n_rows - 1, n_strat * n_keep * n_var);
            }
        }
        for (int j = 0; j < n_studs; j++) layer_selection_free(&ga[j]);
        free(ga);
    }
    t_rows = clock_now_s() - tr;
    res->n_rows = n_rows, res->n_evals = n_evals, res->teacher_ppl = teacher_ppl;
    res->seconds_total = clock_now_s() - t0, res->seconds_build = t_build, res->seconds_rows = t_rows;
    rc = 0;
fail:
    for (int j = 0; j < n_studs; j++) student_free(&studs[j]);
    free(studs);
    free(all);
    free(mask);
    layer_selection_free(&ar_sel);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    (void)set0, (void)strat_names;
    return rc;
}

cJSON *ablate_result_json(const request *r, const model *m, const ablate_result *res) {
    const ablate_plan *pl = &res->plan;
    const student_settings set0 = pl->set0;
    const token_split sp = res->sp;
    const int ctx = r->u.ablate.mo.split.ctx;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "teacher_ppl", res->teacher_ppl);
    cJSON *ra = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < res->n_rows; i++) {
        const ablate_row *row = &res->rows[i];
        cJSON *ro = cJSON_CreateObject();
        cJSON_AddStringToObject(ro, "strategy", pl->strat_names[row->strategy_i]);
        cJSON_AddNumberToObject(ro, "keep", row->keep);
        cJSON *kl = cJSON_AddArrayToObject(ro, "kept_layers");
        for (int q = 0; q < row->k; q++) cJSON_AddItemToArray(kl, cJSON_CreateNumber(row->kept[q]));
        const ablate_variant *v = &pl->variants[row->variant];
        cJSON_AddStringToObject(ro, "init", student_init_name(v->init));
        cJSON_AddItemToObject(ro, "stage1", stage1_parts_json(v->stage1));
        if (v->half_life > 0) cJSON_AddNumberToObject(ro, "half_life_override", v->half_life);
        else cJSON_AddNullToObject(ro, "half_life_override");
        /* the value-scale fit where the value scale was fitted; null otherwise */
        if (v->stage1 & STAGE1_SIGMA) cJSON_AddStringToObject(ro, "sigma_fit", sigma_fit_name(v->fit));
        else cJSON_AddNullToObject(ro, "sigma_fit");
        cJSON_AddNumberToObject(ro, "ppl", row->ppl);
        cJSON_AddItemToObject(ro, "half_life", half_life_summary_json(row->hl));
        cJSON_AddItemToArray(ra, ro);
    }
    cJSON *meta = cJSON_AddObjectToObject(o, "meta");
    cJSON_AddStringToObject(meta, "model", r->pos[0]);
    cJSON_AddStringToObject(meta, "calib", r->u.ablate.calib); /* the texts, as given (graft tui --import names the slice) */
    cJSON_AddStringToObject(meta, "eval", r->u.ablate.eval);
    cJSON *spj = cJSON_AddObjectToObject(meta, "split");
    cJSON_AddNumberToObject(spj, "calib_seqs", sp.n_calib);
    cJSON_AddNumberToObject(spj, "heldout_seqs", sp.n_heldout);
    cJSON_AddNumberToObject(spj, "ctx", ctx);
    cJSON_AddBoolToObject(spj, "same_file", sp.same_file);
    cJSON_AddNumberToObject(spj, "select_begin", (double)sp.select_begin);
    cJSON_AddNumberToObject(spj, "select_end", (double)sp.select_end);
    cJSON_AddNumberToObject(spj, "eval_begin", (double)sp.eval_begin);
    cJSON_AddNumberToObject(spj, "eval_end", (double)sp.eval_end);
    cJSON_AddNumberToObject(spj, "eval_stream_tokens", (double)sp.eval_tokens_total);
    cJSON_AddNumberToObject(meta, "evaluations", res->n_evals);
    cJSON_AddNumberToObject(meta, "seconds_total", res->seconds_total);
    cJSON_AddNumberToObject(meta, "seconds_build", res->seconds_build);
    cJSON_AddNumberToObject(meta, "seconds_rows", res->seconds_rows);
    cJSON_AddStringToObject(meta, "write_gate", write_gate_name(set0.write_gate));
    cJSON_AddStringToObject(meta, "decay_distance", decay_distance_name(set0.distance));
    cJSON *fa = cJSON_AddArrayToObject(meta, "sigma_fits");
    for (int i = 0; i < pl->n_fit; i++) cJSON_AddItemToArray(fa, cJSON_CreateString(sigma_fit_name(pl->fits[i])));
    cJSON_AddNumberToObject(meta, "students", pl->n_studs);
    cJSON_AddStringToObject(meta, "query_scale", gdn_scale_name(set0.scale));
    cJSON_AddNumberToObject(meta, "stage2_steps", set0.steps);
    cJSON_AddStringToObject(meta, "keep_best", set0.keep_best == KEEP_BEST_HELDOUT ? "heldout" : "train");
    cJSON_AddBoolToObject(meta, "conv", set0.conv);
    cJSON_AddBoolToObject(meta, "qkv_bias", set0.qkv_bias && m->cfg.qkv_bias);
    cJSON_AddNumberToObject(meta, "damping", set0.damping);
    cJSON_AddNumberToObject(meta, "seed", (double)set0.seed);
    return o;
}

void ablate_result_free(ablate_result *res) {
    free(res->rows);
    res->rows = NULL;
    token_split_free(&res->sp);
}
