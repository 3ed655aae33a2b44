/* graft select MODEL --strategy uniform|ar|ga-s2|manual:0,3 --keep R --text FILE:
 * which layers keep softmax attention, with per-layer scores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "method/method_opts.h"
#include "method/reports.h"
#include "commands.h"
#include "core/error.h"
#include "select/kv_cost.h"
#include "select/select.h"
#include "convert/build.h"

/* ar: the teacher with one layer's attention removed, scored in windows of ctx */
static void ar_fill(mem_job *j, void *ud) { cli_mem_eval(j, 0, *(const int *)ud, 0); }

int cmd_select(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    int n_ranks = 1, n_gpus = 0;
    method_cli mo;
    method_cli_default(&mo);
    const char *strategy = NULL, *init_name = "taylor-calibrate", *text = NULL, *calib = NULL;
    double keep = NAN;
    opt_spec specs[] = {
        {"strategy", OPT_STR, &strategy, "uniform | ar | ga-s2 | manual:0,3"},
        {"keep", OPT_DOUBLE, &keep, "retention ratio in (0, 1)"},
        {"text", OPT_STR, &text, "held-out text for ar / ga-s2 scores"},
        {"init", OPT_STR, &init_name, "ga-s2: initialization of the converted layers (default taylor-calibrate)"},
        {"calib", OPT_STR, &calib, "ga-s2: calibration text (default: the first part of --text; scores use a later part)"},
        METHOD_OPTS(mo),
        STAGE1_OPTS(mo),
        RANKS_OPTS(n_ranks, n_gpus),
        CTX_OPTS(co),
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft select MODEL --strategy S --keep R --text FILE [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if (cli_ranks_launch("select", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("select", &co))) return rc;
    cli_ctx_plan(mo.split.ctx, &co);
    strategy_spec ss;
    student_init init;
    student_settings set;
    if (!strategy) {
        fprintf(stderr, "graft select: --strategy is required\n");
        return 2;
    }
    if (strategy_parse(strategy, 0, &ss) != 0 || student_init_parse(init_name, &init) != 0 ||
        method_cli_settings(&mo, co.seed, init, &set) != 0 || method_cli_stage1_check(&mo, init) != 0) {
        fprintf(stderr, "graft select: %s\n", gf_last_error());
        return 2;
    }
    if (ss.kind != STRATEGY_MANUAL && !(keep > 0 && keep < 1)) {
        fprintf(stderr, "graft select: retention ratio must be in (0, 1), got %g\n", keep);
        return 2;
    }
    if ((ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) && !text) {
        fprintf(stderr, "graft select: --text FILE is required for %s\n", strategy_name(ss.kind));
        return 2;
    }
    const bool scored = ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2;
    method_plan plan = {&mo.split, set, strategy, keep, ss.kind == STRATEGY_GA_S2, ss.kind == STRATEGY_GA_S2, scored};
    if (ss.kind == STRATEGY_AR) cli_mem_plan(ar_fill, &mo.split.ctx, "lower --ctx");
    else cli_mem_plan(ss.kind == STRATEGY_GA_S2 ? method_plan_fill : NULL, &plan, "lower --calib-seqs or --ctx");
    model m;
    if (cli_load_model("select", pos[0], &co, &m) != 0) return 1;
    const int L = m.cfg.n_layers;
    int k = 0;
    rc = 1;
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    layer_selection sel = {0};
    student s = {0};
    progress_sink pr = cli_progress();
    if (ss.kind == STRATEGY_MANUAL) {
        if (strategy_parse(strategy, L, &ss) != 0) goto fail;
    } else if (keep_count(keep, L, &k) != 0) {
        goto fail;
    }
    if (ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) {
        if (!m.tok) {
            gf_fail("%s has no tokenizer (pass --tokenizer PATH)", pos[0]);
            goto fail;
        }
        if (token_split_make(&sp, m.tok, calib ? calib : text, text, &mo.split) != 0) goto fail;
    }
    if (ss.kind == STRATEGY_GA_S2) {
        if (method_capture(&m, &sp, &cal, &held, &pr) != 0 || student_init_empty(&s, &m, &set) != 0) goto fail;
        bool *all = gf_malloc((size_t)L * sizeof *all);
        for (int l = 0; l < L; l++) all[l] = true;
        int r = student_build_layers(&s, all, &cal, held.L ? &held : NULL, &pr);
        free(all);
        if (r != 0) goto fail;
    }
    if (select_layers(&sel, &ss, k, &m, &s, sp.select.data, sp.select.len, mo.split.ctx, &pr) != 0) goto fail;
    if (co.json) {
        cJSON *o = selection_json(&sel);
        cJSON_AddNumberToObject(o, "layers", L);
        /* what the Plan screen's cost line shows */
        kv_cost kc = kv_cost_compute(L, sel.k, m.cfg.n_heads, m.cfg.n_kv_heads, m.cfg.head_dim,
                                     kv_dtype_bytes(m.weights_dtype), KV_COST_TOKENS);
        cJSON *kv = cJSON_AddObjectToObject(o, "kv_cache");
        cJSON_AddNumberToObject(kv, "tokens", (double)kc.tokens);
        cJSON_AddNumberToObject(kv, "bytes_per_value", kv_dtype_bytes(m.weights_dtype));
        cJSON_AddNumberToObject(kv, "teacher_bytes", kc.teacher_bytes);
        cJSON_AddNumberToObject(kv, "student_bytes", kc.student_bytes);
        cJSON_AddNumberToObject(kv, "gdn_state_bytes", kc.gdn_state_per_layer * (L - sel.k));
        if (!isnan(keep)) cJSON_AddNumberToObject(o, "keep", keep);
        if (ss.kind == STRATEGY_GA_S2) {
            cJSON_AddStringToObject(o, "init", student_init_name(init));
            cJSON_AddStringToObject(o, "query_scale", gdn_scale_name(set.scale));
            cJSON_AddStringToObject(o, "write_gate", write_gate_name(set.write_gate));
            cJSON_AddStringToObject(o, "sigma_fit", sigma_fit_name(set.sigma_fit));
        }
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("strategy %s: keep %d of %d layers:", strategy_name(ss.kind), sel.k, L);
        for (int i = 0; i < sel.k; i++) printf(" %d", sel.kept[i]);
        printf("\n");
        if (ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) {
            printf("%s\n", ss.kind == STRATEGY_AR ? "layer  ppl with its attention zeroed"
                                                  : "layer  ppl with only this layer keeping attention");
            for (int l = 0; l < L; l++) printf("%5d  %.4f\n", l, sel.score[l]);
        }
    }
    rc = 0;
fail:
    if (rc) cli_fail("select");
    layer_selection_free(&sel);
    student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    model_free(&m);
    return rc;
}
