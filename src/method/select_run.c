#include "method/select_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "method/reports.h"
#include "select/kv_cost.h"
#include "convert/build.h"
#include "student/calib_split.h"

int method_select_run(const request *r, model *m, const method_hooks *h, select_result *res) {
    const select_req *q = &r->u.select;
    memset(res, 0, sizeof *res);
    if (strategy_parse(q->strategy, 0, &res->ss) != 0 || student_init_parse(q->init, &res->init) != 0 ||
        method_cli_settings(&q->mo, r->co.seed, res->init, &res->set) != 0)
        return -1;
    const int L = m->cfg.n_layers;
    const bool scored = res->ss.kind == STRATEGY_AR || res->ss.kind == STRATEGY_GA_S2;
    int k = 0;
    if (res->ss.kind == STRATEGY_MANUAL) {
        if (strategy_parse(q->strategy, L, &res->ss) != 0) return -1;
    } else if (keep_count(q->keep, L, &k) != 0) {
        return -1;
    }
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    student s = {0};
    const progress_sink *pr = &h->progress, *build = h->build ? h->build : pr;
    int rc = -1;
    if (scored) {
        if (!m->tok) {
            gf_fail("%s has no tokenizer (pass --tokenizer PATH)", r->pos[0]);
            goto done;
        }
        method_phase(h, "tokenize");
        if (token_split_make(&sp, m->tok, q->calib ? q->calib : q->text, q->text, &q->mo.split) != 0) goto done;
    }
    if (res->ss.kind == STRATEGY_GA_S2) { /* the zero-shot scores need every layer converted under the init */
        method_phase(h, "teacher pass");
        if (method_capture(m, &sp, &cal, &held, pr) != 0 || student_init_empty(&s, m, &res->set) != 0) goto done;
        bool *all = gf_malloc((size_t)L * sizeof *all);
        for (int l = 0; l < L; l++) all[l] = true;
        method_phase(h, "stage 1");
        const int b = student_build_layers_observed(&s, all, &cal, held.L ? &held : NULL, build, h->obs);
        free(all);
        if (b != 0) goto done;
    }
    if (progress_cancelled(pr)) {
        gf_fail("cancelled");
        goto done;
    }
    method_phase(h, res->ss.kind == STRATEGY_GA_S2 ? "select ga-s2" : "select ar");
    if (select_layers(&res->sel, &res->ss, k, m, &s, sp.select.data, sp.select.len, q->mo.split.ctx, pr) != 0) goto done;
    rc = 0;
done:
    student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    return rc;
}

cJSON *select_result_json(const request *r, const model *m, const select_result *res) {
    const int L = m->cfg.n_layers;
    const layer_selection *sel = &res->sel;
    cJSON *o = selection_json(sel);
    cJSON_AddNumberToObject(o, "layers", L);
    /* what the Plan screen's cost line shows */
    kv_cost kc = kv_cost_compute(L, sel->k, m->cfg.n_heads, m->cfg.n_kv_heads, m->cfg.head_dim,
                                 kv_dtype_bytes(m->weights_dtype), KV_COST_TOKENS);
    cJSON *kv = cJSON_AddObjectToObject(o, "kv_cache");
    cJSON_AddNumberToObject(kv, "tokens", (double)kc.tokens);
    cJSON_AddNumberToObject(kv, "bytes_per_value", kv_dtype_bytes(m->weights_dtype));
    cJSON_AddNumberToObject(kv, "teacher_bytes", kc.teacher_bytes);
    cJSON_AddNumberToObject(kv, "student_bytes", kc.student_bytes);
    cJSON_AddNumberToObject(kv, "gdn_state_bytes", kc.gdn_state_per_layer * (L - sel->k));
    if (!isnan(r->u.select.keep)) cJSON_AddNumberToObject(o, "keep", r->u.select.keep);
    if (res->ss.kind == STRATEGY_GA_S2) {
        cJSON_AddStringToObject(o, "init", student_init_name(res->init));
        cJSON_AddStringToObject(o, "query_scale", gdn_scale_name(res->set.scale));
        cJSON_AddStringToObject(o, "write_gate", write_gate_name(res->set.write_gate));
        cJSON_AddStringToObject(o, "sigma_fit", sigma_fit_name(res->set.sigma_fit));
    }
    return o;
}

void select_result_free(select_result *res) { layer_selection_free(&res->sel); }
