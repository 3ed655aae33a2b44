/* graft ablate MODEL --calib FILE --eval FILE [--keep LIST] [--strategy LIST] [--init LIST]:
 * the paper's ablation table (METHOD.md sections 7, 8, 11): zero-shot
 * perplexity on held-out text and idle half-life statistics for every
 * strategy x retention ratio x variant, teacher perplexity on top. A variant
 * is an initialization, and for the inits with Stage 1 one of the Stage 1
 * component sets (--stage1 A/B/..., --stage1-subsets) or a decay override
 * (--half-life N,...), once per value-scale fit (--sigma-fit reference,scaled)
 * when the value scale is among its components.
 *
 * Reuse: one teacher pass gives the calibration statistics and the per-layer
 * inputs/targets; per initialization one student holds GDN parameters for
 * every layer (a layer's Stage 1/2 result does not depend on which other layers
 * are converted), so each row only picks a subset and evaluates it; rows with
 * the same init and the same converted layers share one evaluation. ar scores
 * are computed once; ga-s2 scores once per init. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/common.h"
#include "method/method_opts.h"
#include "commands.h"
#include "core/clock.h"
#include "core/error.h"
#include "eval/perplexity.h"
#include "select/select.h"
#include "convert/build.h"
#include "student/report_json.h"

/* One column entry of the table: an init with its Stage 1 components. */
typedef struct {
    student_init init;
    unsigned stage1;   /* effective components (none without Stage 1) */
    double half_life;  /* > 0: decay override */
    sigma_fit_mode fit; /* the value-scale fit (counts only with sigma among stage1) */
    int student;       /* index of the student that holds its parameters */
} ablate_variant;

typedef struct {
    int strategy_i, init_i; /* init_i: the variant */
    double keep;
    int k;
    int kept[256];
    double ppl;
    half_life_summary hl;
} ablate_row;

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

/* "decay,beta", "decay(half-life 32),sigma(scaled)", "decay(no-sink)", "none"; "-" without Stage 1 */
static const char *variant_parts_label(const ablate_variant *v, decay_distance_mode dist, char *buf, size_t size) {
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
        if ((1u << i) == STAGE1_SIGMA && v->fit == SIGMA_FIT_SCALED && at < size)
            at += (size_t)snprintf(buf + at, size - at, "(scaled)");
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

int cmd_ablate(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    method_cli mo;
    method_cli_default(&mo);
    const char *calib = NULL, *eval = NULL;
    const char *keep_list = "0.25,0.5,0.75", *strat_list = "uniform,ar,ga-s2", *init_list = NULL;
    int subsets = 0;
    opt_spec specs[] = {
        {"calib", OPT_STR, &calib, "calibration text file"},
        {"eval", OPT_STR, &eval, "held-out evaluation text (may be the same file: then split, see docs/method.md)"},
        {"keep", OPT_STR, &keep_list, "retention ratios, comma-separated (default 0.25,0.5,0.75)"},
        {"strategy", OPT_STR, &strat_list, "strategies, comma-separated (default uniform,ar,ga-s2; manual lists use + : manual:0+3)"},
        {"init", OPT_STR, &init_list, "initializations, comma-separated (default all six; taylor-calibrate with --stage1-subsets)"},
        METHOD_OPTS(mo),
        STAGE1_OPTS(mo),
        {"stage1-subsets", OPT_FLAG, &subsets, "Stage 1 rows: all, none, each component alone, each left out"},
        CTX_OPTS(co),
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft ablate MODEL --calib FILE --eval FILE [--keep LIST] [--strategy LIST] [--init LIST] [--json]",
                           &co);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_setup("ablate", &co))) return rc;
    cli_ctx_plan(mo.split.ctx, &co);
    if (!calib || !eval) {
        fprintf(stderr, "graft ablate: --calib FILE and --eval FILE are required\n");
        return 2;
    }
    char items[64][64];
    int n_keep = split_list(keep_list, items, 64);
    double keeps[64];
    for (int i = 0; i < n_keep; i++) {
        char *end;
        keeps[i] = strtod(items[i], &end);
        if (*end || !(keeps[i] > 0 && keeps[i] < 1)) {
            fprintf(stderr, "graft ablate: retention ratio must be in (0, 1), got '%s'\n", items[i]);
            return 2;
        }
    }
    strategy_spec strats[16];
    char strat_names[16][64];
    int n_strat = split_list(strat_list, items, 16);
    for (int i = 0; i < n_strat; i++) {
        for (char *c = items[i]; *c; c++)
            if (*c == '+') *c = ',';
        snprintf(strat_names[i], sizeof strat_names[i], "%s", items[i]);
        if (strategy_parse(items[i], 0, &strats[i]) != 0) {
            fprintf(stderr, "graft ablate: %s\n", gf_last_error());
            return 2;
        }
    }
    if (!init_list)
        init_list = subsets ? student_init_name(INIT_TAYLOR_CALIBRATE) : student_init_list(",");
    student_init init_names[INIT_COUNT * 2];
    int n_init = split_list(init_list, items, INIT_COUNT * 2);
    for (int i = 0; i < n_init; i++)
        if (student_init_parse(items[i], &init_names[i]) != 0) {
            fprintf(stderr, "graft ablate: %s\n", gf_last_error());
            return 2;
        }
    /* Stage 1 component sets (A/B/...) and half-life overrides (N,M,...) are lists here */
    unsigned sets[16];
    int n_sets = 0;
    if (subsets && mo.stage1) {
        fprintf(stderr, "graft ablate: give --stage1 sets or --stage1-subsets, not both\n");
        return 2;
    }
    if (subsets) n_sets = standard_subsets(sets);
    else if (!mo.stage1) sets[n_sets++] = STAGE1_ALL;
    else
        for (const char *p = mo.stage1; n_sets < 16;) {
            char one[64];
            const size_t len = strcspn(p, "/");
            snprintf(one, sizeof one, "%.*s", (int)(len < 63 ? len : 63), p);
            if (stage1_parts_parse(one, &sets[n_sets++]) != 0) {
                fprintf(stderr, "graft ablate: %s\n", gf_last_error());
                return 2;
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
                fprintf(stderr, "graft ablate: %s\n", gf_last_error());
                return 2;
            }
    }
    sigma_fit_mode fits[2];
    int n_fit = split_list(mo.sigma_fit, items, 3);
    if (n_fit < 1 || n_fit > 2) {
        fprintf(stderr, "graft ablate: --sigma-fit takes reference, scaled or reference,scaled, got '%s'\n", mo.sigma_fit);
        return 2;
    }
    for (int i = 0; i < n_fit; i++)
        if (sigma_fit_parse(items[i], &fits[i]) != 0 || (i == 1 && fits[1] == fits[0])) {
            fprintf(stderr, "graft ablate: %s\n", i == 1 && fits[1] == fits[0] ? "--sigma-fit: a fit given twice" : gf_last_error());
            return 2;
        }
    student_settings set0;
    method_cli mo_one = mo;
    mo_one.stage1 = NULL; /* the lists are handled here */
    mo_one.half_life = NULL;
    mo_one.sigma_fit = sigma_fit_name(fits[0]);
    if (method_cli_settings(&mo_one, co.seed, INIT_RANDOM, &set0) != 0) {
        fprintf(stderr, "graft ablate: %s\n", gf_last_error());
        return 2;
    }
    if (n_keep == 0 || n_strat == 0 || n_init == 0) {
        fprintf(stderr, "graft ablate: --keep, --strategy and --init lists must not be empty\n");
        return 2;
    }
    /* the variants: each init; an init with Stage 1 once per component set,
     * then once per half-life override (the one --stage1 set, else every
     * component, with the decay set to the override) */
    int has_stage1_init = 0;
    for (int i = 0; i < n_init; i++) has_stage1_init |= init_uses_stage1(init_names[i]);
    if (!has_stage1_init && (subsets || method_cli_stage1_given(&mo))) {
        fprintf(stderr, "graft ablate: --stage1, --stage1-subsets, --distance, --half-life and --sigma-fit need an init with "
                        "Stage 1 (taylor-only, taylor-calibrate) in --init\n");
        return 2;
    }
    ablate_variant variants[INIT_COUNT * 2 * 32 * 2];
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
    /* every distinct student keeps every layer converted; the heaviest build any variant does */
    method_plan plan = {&mo.split, set0, NULL, NAN, true, n_studs, true};
    plan.set.init = INIT_RANDOM;
    for (int j = 0; j < n_var; j++) {
        if (init_uses_stage2(variants[j].init)) plan.set.init = INIT_TAYLOR_CALIBRATE;
        else if (init_uses_stage1(variants[j].init) && plan.set.init == INIT_RANDOM) plan.set.init = INIT_TAYLOR_ONLY;
    }
    cli_mem_plan(method_plan_fill, &plan, "lower --calib-seqs or --ctx, or ablate fewer initializations at once");
    const double t0 = clock_now_s();
    model m;
    if (cli_load_model("ablate", pos[0], &co, &m) != 0) return 1;
    const int L = m.cfg.n_layers, ctx = mo.split.ctx;
    progress_sink pr = cli_progress();
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    student *studs = gf_calloc((size_t)n_studs, sizeof *studs);
    ablate_row *rows = gf_calloc((size_t)(n_strat * n_keep * n_var), sizeof *rows);
    layer_selection ar_sel = {0};
    bool *all = gf_malloc((size_t)L * sizeof *all), *mask = gf_malloc((size_t)L * sizeof *mask);
    for (int l = 0; l < L; l++) all[l] = true;
    double teacher_ppl = NAN, t_build = 0, t_rows = 0;
    int n_rows = 0, n_evals = 0;
    rc = 1;
    for (int i = 0; i < n_strat; i++)
        if (strats[i].kind == STRATEGY_MANUAL && strategy_parse(strat_names[i], L, &strats[i]) != 0) goto fail;
    if (!m.tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", pos[0]);
        goto fail;
    }
    if (token_split_make(&sp, m.tok, calib, eval, &mo.split) != 0) goto fail;
    if (method_capture(&m, &sp, &cal, &held, &pr) != 0) goto fail;
    {
        double nll;
        long cnt;
        if (eval_nll(&m, sp.eval.data, sp.eval.len, ctx, &nll, &cnt, &pr) != 0) goto fail;
        teacher_ppl = exp(nll / (double)cnt);
    }
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
        if (student_init_empty(sj, &m, &st) != 0) goto fail;
        if (student_build_layers(sj, all, &cal, held.L ? &held : NULL, &pr) != 0) goto fail;
    }
    t_build = clock_now_s() - tb;
    double tr = clock_now_s();
    for (int si = 0; si < n_strat; si++) {
        layer_selection *ga = gf_calloc((size_t)n_studs, sizeof *ga);
        for (int ki = 0; ki < n_keep; ki++) {
            int k;
            if (keep_count(keeps[ki], L, &k) != 0) {
                free(ga);
                goto fail;
            }
            for (int j = 0; j < n_var; j++) {
                ablate_row *r = &rows[n_rows];
                const int sj = variants[j].student;
                r->strategy_i = si;
                r->init_i = j;
                r->keep = keeps[ki];
                layer_selection sel = {0};
                const layer_selection *use = &sel;
                if (strats[si].kind == STRATEGY_AR) {
                    if (!ar_sel.score &&
                        select_layers(&ar_sel, &strats[si], k, &m, NULL, sp.select.data, sp.select.len, ctx, &pr) != 0) {
                        free(ga);
                        goto fail;
                    }
                    sel.k = k;
                    sel.kept = gf_calloc((size_t)(k ? k : 1), sizeof *sel.kept);
                    /* re-rank the shared ar scores for this k */
                    bool *used = gf_calloc((size_t)L, sizeof *used);
                    for (int i = 0; i < k; i++) {
                        int best = -1;
                        for (int l = 0; l < L; l++)
                            if (!used[l] && (best < 0 || ar_sel.score[l] > ar_sel.score[best])) best = l;
                        used[best] = true;
                    }
                    for (int l = 0, i = 0; l < L; l++)
                        if (used[l]) sel.kept[i++] = l;
                    free(used);
                } else if (strats[si].kind == STRATEGY_GA_S2) {
                    if (!ga[sj].score &&
                        select_layers(&ga[sj], &strats[si], L, &m, &studs[sj], sp.select.data, sp.select.len, ctx, &pr) != 0) {
                        free(ga);
                        goto fail;
                    }
                    sel.k = k;
                    sel.kept = gf_calloc((size_t)(k ? k : 1), sizeof *sel.kept);
                    bool *used = gf_calloc((size_t)L, sizeof *used);
                    for (int i = 0; i < k; i++) {
                        int best = -1;
                        for (int l = 0; l < L; l++)
                            if (!used[l] && (best < 0 || ga[sj].score[l] < ga[sj].score[best])) best = l;
                        used[best] = true;
                    }
                    for (int l = 0, i = 0; l < L; l++)
                        if (used[l]) sel.kept[i++] = l;
                    free(used);
                } else if (select_layers(&sel, &strats[si], k, &m, NULL, NULL, 0, ctx, &pr) != 0) {
                    free(ga);
                    goto fail;
                }
                r->k = use->k;
                for (int i = 0; i < use->k; i++) r->kept[i] = use->kept[i];
                for (int l = 0; l < L; l++) mask[l] = true;
                for (int i = 0; i < use->k; i++) mask[use->kept[i]] = false;
                free(sel.kept);
                free(sel.score);
                /* reuse an earlier row with the same student and layers */
                r->ppl = NAN;
                for (int q = 0; q < n_rows; q++)
                    if (variants[rows[q].init_i].student == sj && rows[q].k == r->k &&
                        memcmp(rows[q].kept, r->kept, (size_t)r->k * sizeof(int)) == 0) {
                        r->ppl = rows[q].ppl;
                        break;
                    }
                student_set_gdn(&studs[sj], mask);
                r->hl = student_half_life_summary(&studs[sj], mask);
                if (isnan(r->ppl)) {
                    double nll;
                    long cnt;
                    if (student_eval_nll(&studs[sj], sp.eval.data, sp.eval.len, ctx, &nll, &cnt, &pr) != 0) {
                        free(ga);
                        goto fail;
                    }
                    r->ppl = exp(nll / (double)cnt);
                    n_evals++;
                }
                n_rows++;
                if (!co.json && !pr.report) {
                    char lab[128];
                    fprintf(stderr, "  %s keep %.2f %s [%s]: ppl %.3f\n", strat_names[si], keeps[ki],
                            student_init_name(variants[j].init), variant_parts_label(&variants[j], set0.distance, lab, sizeof lab),
                            r->ppl);
                }
            }
        }
        for (int j = 0; j < n_studs; j++) layer_selection_free(&ga[j]);
        free(ga);
    }
    t_rows = clock_now_s() - tr;
    const double wall = clock_now_s() - t0;
    if (co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "teacher_ppl", teacher_ppl);
        cJSON *ra = cJSON_AddArrayToObject(o, "rows");
        for (int i = 0; i < n_rows; i++) {
            ablate_row *r = &rows[i];
            cJSON *ro = cJSON_CreateObject();
            cJSON_AddStringToObject(ro, "strategy", strat_names[r->strategy_i]);
            cJSON_AddNumberToObject(ro, "keep", r->keep);
            cJSON *kl = cJSON_AddArrayToObject(ro, "kept_layers");
            for (int q = 0; q < r->k; q++) cJSON_AddItemToArray(kl, cJSON_CreateNumber(r->kept[q]));
            const ablate_variant *v = &variants[r->init_i];
            cJSON_AddStringToObject(ro, "init", student_init_name(v->init));
            cJSON_AddItemToObject(ro, "stage1", stage1_parts_json(v->stage1));
            if (v->half_life > 0) cJSON_AddNumberToObject(ro, "half_life_override", v->half_life);
            else cJSON_AddNullToObject(ro, "half_life_override");
            /* the value-scale fit where the value scale was fitted; null otherwise */
            if (v->stage1 & STAGE1_SIGMA) cJSON_AddStringToObject(ro, "sigma_fit", sigma_fit_name(v->fit));
            else cJSON_AddNullToObject(ro, "sigma_fit");
            cJSON_AddNumberToObject(ro, "ppl", r->ppl);
            cJSON_AddItemToObject(ro, "half_life", half_life_summary_json(r->hl));
            cJSON_AddItemToArray(ra, ro);
        }
        cJSON *meta = cJSON_AddObjectToObject(o, "meta");
        cJSON_AddStringToObject(meta, "model", pos[0]);
        cJSON_AddStringToObject(meta, "calib", calib); /* the texts, as given (graft tui --import names the slice) */
        cJSON_AddStringToObject(meta, "eval", eval);
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
        cJSON_AddNumberToObject(meta, "evaluations", n_evals);
        cJSON_AddNumberToObject(meta, "seconds_total", wall);
        cJSON_AddNumberToObject(meta, "seconds_build", t_build);
        cJSON_AddNumberToObject(meta, "seconds_rows", t_rows);
        cJSON_AddStringToObject(meta, "write_gate", write_gate_name(set0.write_gate));
        cJSON_AddStringToObject(meta, "decay_distance", decay_distance_name(set0.distance));
        cJSON *fa = cJSON_AddArrayToObject(meta, "sigma_fits");
        for (int i = 0; i < n_fit; i++) cJSON_AddItemToArray(fa, cJSON_CreateString(sigma_fit_name(fits[i])));
        cJSON_AddNumberToObject(meta, "students", n_studs);
        cJSON_AddStringToObject(meta, "query_scale", gdn_scale_name(set0.scale));
        cJSON_AddNumberToObject(meta, "stage2_steps", set0.steps);
        cJSON_AddStringToObject(meta, "keep_best", set0.keep_best == KEEP_BEST_HELDOUT ? "heldout" : "train");
        cJSON_AddBoolToObject(meta, "conv", set0.conv);
        cJSON_AddBoolToObject(meta, "qkv_bias", set0.qkv_bias && m.cfg.qkv_bias);
        cJSON_AddNumberToObject(meta, "damping", set0.damping);
        cJSON_AddNumberToObject(meta, "seed", (double)set0.seed);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("teacher perplexity %.4f  (%s, eval tokens %zu..%zu of %s, windows of %d)\n\n", teacher_ppl, pos[0],
               sp.eval_begin, sp.eval_end, eval, ctx);
        printf("| strategy | keep | kept layers | init | stage1 | ppl | half-life mean | median | max |\n");
        printf("|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < n_rows; i++) {
            ablate_row *r = &rows[i];
            char kl[512] = "";
            size_t at = 0;
            for (int q = 0; q < r->k && at < sizeof kl; q++) at += (size_t)snprintf(kl + at, sizeof kl - at, q ? ",%d" : "%d", r->kept[q]);
            char lab[128];
            printf("| %s | %.2f | %s | %s | %s | %.3f | %.2f | %.2f | %.2f |\n", strat_names[r->strategy_i], r->keep, kl,
                   student_init_name(variants[r->init_i].init), variant_parts_label(&variants[r->init_i], set0.distance, lab, sizeof lab),
                   r->ppl, r->hl.mean, r->hl.median, r->hl.max);
        }
        printf("\n%d rows, %d students, %d evaluations, %.1f s (students %.1f s, rows %.1f s); query scale %s, sigma fit %s%s%s, "
               "write gate %s, Stage 2 %d steps (best by %s loss), seed %llu\n",
               n_rows, n_studs, n_evals, wall, t_build, t_rows, gdn_scale_name(set0.scale), sigma_fit_name(fits[0]),
               n_fit > 1 ? "," : "", n_fit > 1 ? sigma_fit_name(fits[1]) : "", write_gate_name(set0.write_gate),
               set0.steps, set0.keep_best == KEEP_BEST_HELDOUT ? "held-out" : "calibration",
               (unsigned long long)set0.seed);
    }
    rc = 0;
fail:
    if (rc) cli_fail("ablate");
    for (int j = 0; j < n_studs; j++) student_free(&studs[j]);
    free(studs);
    free(rows);
    free(all);
    free(mask);
    layer_selection_free(&ar_sel);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    model_free(&m);
    return rc;
}
