/* graft convert MODEL --keep R --strategy S --init I --calib FILE [--out DIR]:
 * builds a hybrid student (METHOD.md sections 3-8) and writes its folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "method/method_opts.h"
#include "cli/out_place.h"
#include "cli/stats_report.h"
#include "commands.h"
#include "core/error.h"
#include "select/select.h"
#include "student/report_json.h"
#include "student/student_io.h"

cJSON *split_json(const token_split *sp, const char *calib, const char *text) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "calib_file", calib);
    if (text) cJSON_AddStringToObject(o, "eval_file", text);
    cJSON_AddBoolToObject(o, "same_file", sp->same_file);
    cJSON_AddNumberToObject(o, "calib_seqs", sp->n_calib);
    cJSON_AddNumberToObject(o, "heldout_seqs", sp->n_heldout);
    cJSON_AddNumberToObject(o, "seq_len", sp->n_calib ? (double)(sp->calib.len / sp->n_calib) : 0);
    cJSON_AddNumberToObject(o, "calib_stream_tokens", (double)sp->calib_tokens_total);
    cJSON_AddNumberToObject(o, "heldout_end", (double)sp->heldout_end);
    cJSON_AddNumberToObject(o, "select_begin", (double)sp->select_begin);
    cJSON_AddNumberToObject(o, "select_end", (double)sp->select_end);
    cJSON_AddNumberToObject(o, "eval_begin", (double)sp->eval_begin);
    cJSON_AddNumberToObject(o, "eval_end", (double)sp->eval_end);
    return o;
}

cJSON *selection_json(const layer_selection *sel) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "strategy", strategy_name(sel->strategy));
    cJSON *k = cJSON_AddArrayToObject(o, "kept_layers");
    for (int i = 0; i < sel->k; i++) cJSON_AddItemToArray(k, cJSON_CreateNumber(sel->kept[i]));
    cJSON *sc = cJSON_AddArrayToObject(o, "scores");
    for (int l = 0; l < sel->L; l++)
        cJSON_AddItemToArray(sc, isfinite(sel->score[l]) ? cJSON_CreateNumber(sel->score[l]) : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "score_meaning",
                            sel->strategy == STRATEGY_AR      ? "held-out perplexity with this layer's attention zeroed (keep highest)"
                            : sel->strategy == STRATEGY_GA_S2 ? "zero-shot perplexity when only this layer keeps attention (keep lowest)"
                                                              : "none");
    return o;
}

int cmd_convert(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    int n_ranks = 1, n_gpus = 0;
    method_cli mo;
    method_cli_default(&mo);
    const char *strategy = NULL, *init_name = NULL, *calib = NULL, *out = NULL, *text = NULL;
    double keep = NAN;
    opt_spec specs[] = {
        {"keep", OPT_DOUBLE, &keep, "retention ratio in (0, 1): fraction of layers keeping attention"},
        {"strategy", OPT_STR, &strategy, "uniform | ar | ga-s2 | manual:0,3"},
        {"init", OPT_STR, &init_name, student_init_list(" | ")},
        {"calib", OPT_STR, &calib, "calibration text file"},
        {"text", OPT_STR, &text, "held-out text scoring ar / ga-s2 (default: the calibration file after its calibration part)"},
        {"out", OPT_STR, &out, "student folder to write (default: student-<init>)"},
        METHOD_OPTS(mo),
        STAGE1_OPTS(mo),
        RANKS_OPTS(n_ranks, n_gpus),
        CTX_OPTS(co),
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft convert MODEL --keep R --strategy S --init I --calib FILE [--out DIR] [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if (cli_ranks_launch("convert", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("convert", &co))) return rc;
    cli_ctx_plan(mo.split.ctx, &co);
    if (!strategy || !init_name || !calib) {
        fprintf(stderr, "graft convert: --strategy, --init and --calib are required\n");
        return 2;
    }
    strategy_spec ss;
    student_init init;
    student_settings set;
    if (strategy_parse(strategy, 0, &ss) != 0 || student_init_parse(init_name, &init) != 0 ||
        method_cli_settings(&mo, co.seed, init, &set) != 0 || method_cli_stage1_check(&mo, init) != 0) {
        fprintf(stderr, "graft convert: %s\n", gf_last_error());
        return 2;
    }
    if (ss.kind != STRATEGY_MANUAL && isnan(keep)) {
        fprintf(stderr, "graft convert: --keep R is required (a ratio in (0, 1))\n");
        return 2;
    }
    if (!isnan(keep) && !(keep > 0 && keep < 1)) {
        fprintf(stderr, "graft convert: retention ratio must be in (0, 1), got %g\n", keep);
        return 2;
    }
    char default_out[64];
    if (!out) {
        snprintf(default_out, sizeof default_out, "student-%s", student_init_name(init));
        out = default_out;
    }
    if (cli_rank0() && cli_out_claim("--out", out, OUT_STUDENT, 1) != 0) return cli_fail("convert");
    const bool scored = ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2;
    method_plan plan = {&mo.split, set, strategy, keep, ss.kind == STRATEGY_GA_S2, 1, scored};
    cli_mem_plan(method_plan_fill, &plan, "lower --calib-seqs or --ctx");
    model *m = gf_calloc(1, sizeof *m);
    if (cli_load_model("convert", pos[0], &co, m) != 0) {
        free(m);
        return 1;
    }
    const int L = m->cfg.n_layers;
    student s = {0};
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    layer_selection sel = {0};
    char *tok_path = NULL;
    rc = 1;
    progress_sink pr = cli_progress();
    int k = 0;
    if (!m->tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", pos[0]);
        goto fail;
    }
    if (ss.kind == STRATEGY_MANUAL) {
        if (strategy_parse(strategy, L, &ss) != 0) goto fail;
    } else if (keep_count(keep, L, &k) != 0) {
        goto fail;
    }
    if (token_split_make(&sp, m->tok, calib, (ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) ? (text ? text : calib) : NULL,
                         &mo.split) != 0)
        goto fail;
    if (method_capture(m, &sp, &cal, &held, &pr) != 0) goto fail;
    if (student_init_empty(&s, m, &set) != 0) goto fail;
    s.m = m;
    if (method_select_and_build(&s, &sel, &ss, k, &sp, &cal, &held, mo.split.ctx, &pr, NULL) != 0) goto fail;

    cJSON *rep = student_report_json(&s);
    cJSON_AddItemToObject(rep, "selection", selection_json(&sel));
    cJSON_AddItemToObject(rep, "split", split_json(&sp, calib, sp.select.len ? (text ? text : calib) : NULL));
    cJSON_AddItemToObject(rep, "teacher_attention_stats", attn_stats_json(&cal.stats));
    if (!isnan(keep)) cJSON_AddNumberToObject(rep, "keep", keep);
    tok_path = teacher_tokenizer_path(pos[0], m->cfg.vocab_size, co.tokenizer);
    if (cli_rank0() && student_save(&s, out, tok_path, rep) != 0) { /* one writer in a job of several ranks */
        cJSON_Delete(rep);
        goto fail;
    }
    if (co.json) {
        cJSON_AddStringToObject(rep, "out", out);
        cJSON_AddItemToObject(rep, "memory", cli_mem_json());
        cli_print_json(rep);
    } else {
        cJSON_Delete(rep);
        char parts[64];
        printf("student %s: %d of %d layers GDN (init %s, strategy %s, query scale %s, write gate %s), kept attention:",
               out, student_n_gdn(&s), L, student_init_name(init), strategy_name(ss.kind), gdn_scale_name(s.gcfg.scale_mode),
               write_gate_name(set.write_gate));
        for (int i = 0; i < sel.k; i++) printf(" %d", sel.kept[i]);
        printf("\n");
        if (init_uses_stage1(init)) {
            const unsigned sp1 = student_stage1_parts(&set);
            printf("Stage 1 components: %s", stage1_parts_name(sp1, parts, sizeof parts));
            if (sp1 & STAGE1_DECAY && set.half_life > 0) printf(" (decay: every head's half-life %g tokens)", set.half_life);
            else if (sp1 & STAGE1_DECAY && set.distance == DECAY_DISTANCE_NO_SINK) printf(" (decay from the distance without the first key)");
            if (sp1 & STAGE1_SIGMA) printf(" (sigma fit %s)", sigma_fit_name(set.sigma_fit));
            printf("\n");
        }
        for (int l = 0; l < L; l++) {
            if (!s.is_gdn[l]) continue;
            const layer_report *r = &s.rep[l];
            double hl = 0;
            for (int h = 0; h < s.gcfg.H; h++) hl += r->half_life[h];
            printf("  layer %2d  half-life mean %8.2f", l, hl / s.gcfg.H);
            if (r->has_stage1) printf("  alpha* %.4g", r->s1.alpha_star);
            if (r->has_stage2)
                printf("  stage2 loss %.5g -> %.5g (best step %d)", r->s2.loss[0], r->s2.best_loss, r->s2.best_step);
            printf("\n");
        }
    }
    rc = 0;
fail:
    if (rc != 0) cli_fail("convert");
    free(tok_path);
    layer_selection_free(&sel);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    student_free(&s);
    model_free(m);
    free(m);
    return rc;
}
