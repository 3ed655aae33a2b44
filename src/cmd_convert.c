/* graft convert MODEL --keep R --strategy S --init I --calib FILE [--out DIR]:
 * argv -> convert request -> its folder (named by the request's digest,
 * claimed: reused for the same request, refused for another unless --force)
 * -> method_convert_run -> the folder and the report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "cli/signals.h"
#include "method/method_opts.h"
#include "cli/out_place.h"
#include "cli/stats_report.h"
#include "commands.h"
#include "core/error.h"
#include "method/convert.h"
#include "select/select.h"

static void print_text(const request *r, const convert_target *t, const convert_result *res) {
    const student *s = &res->s;
    const int L = s->L;
    char parts[64];
    printf("student %s: %d of %d layers GDN (init %s, strategy %s, query scale %s, write gate %s), kept attention:", t->out,
           student_n_gdn(s), L, student_init_name(res->set.init), strategy_name(res->ss.kind),
           gdn_scale_name(s->gcfg.scale_mode), write_gate_name(res->set.write_gate));
    for (int i = 0; i < res->sel.k; i++) printf(" %d", res->sel.kept[i]);
    printf("\n");
    (void)r;
    if (init_uses_stage1(res->set.init)) {
        const unsigned sp1 = student_stage1_parts(&res->set);
        printf("Stage 1 components: %s", stage1_parts_name(sp1, parts, sizeof parts));
        if (sp1 & STAGE1_DECAY && res->set.half_life > 0) printf(" (decay: every head's half-life %g tokens)", res->set.half_life);
        else if (sp1 & STAGE1_DECAY && res->set.distance == DECAY_DISTANCE_NO_SINK) printf(" (decay from the distance without the first key)");
        if (sp1 & STAGE1_SIGMA) printf(" (sigma fit %s)", sigma_fit_name(res->set.sigma_fit));
        printf("\n");
    }
    for (int l = 0; l < L; l++) {
        if (!s->is_gdn[l]) continue;
        const layer_report *lr = &s->rep[l];
        double hl = 0;
        for (int h = 0; h < s->gcfg.H; h++) hl += lr->half_life[h];
        printf("  layer %2d  half-life mean %8.2f", l, hl / s->gcfg.H);
        if (lr->has_stage1) printf("  alpha* %.4g", lr->s1.alpha_star);
        if (lr->has_stage2)
            printf("  stage2 loss %.5g -> %.5g (best step %d)", lr->s2.loss[0], lr->s2.best_loss, lr->s2.best_step);
        printf("\n");
    }
}

int cmd_convert(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_CONVERT, argc, argv, &done);
    if (rc || done) return rc;
    const convert_req *q = &r.u.convert;
    if (cli_ranks_launch("convert", argc, argv, r.n_ranks, r.n_gpus, &r.co, &rc)) return rc;
    if ((rc = cli_setup("convert", &r.co))) return rc;
    cli_ctx_plan(q->mo.split.ctx, &r.co);
    convert_target t;
    if (convert_target_resolve(&r, NULL, NULL, &t) != 0) {
        fprintf(stderr, "graft convert: %s\n", gf_last_error());
        return 1;
    }
    /* Run alone, before the claim: Ctrl-C (or SIGTERM) cancels the conversion at its next step (the
     * model's load, a download included, first), writes nothing, lets --out's claim go and ends by the
     * signal (main: cli_die_if_stopped), where the default action left --out's lock file. The ranks of
     * a job keep the default action: mpirun ends them all together, none left in a collective. */
    const bool catch_stop = !cli_ranks_several();
    if (catch_stop) cli_catch_stop_signals();
    if (cli_rank0() && cli_out_claim("--out", t.out, OUT_STUDENT, 1) != 0) {
        convert_target_free(&t);
        return cli_fail("convert");
    }
    strategy_spec ss;
    student_init init;
    student_settings set;
    strategy_parse(q->strategy, 0, &ss);
    student_init_parse(q->init, &init);
    method_cli_settings(&q->mo, r.co.seed, init, &set); /* checked by request_check */
    const bool scored = ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2;
    method_plan plan = {&q->mo.split, set, q->strategy, q->keep, ss.kind == STRATEGY_GA_S2, 1, scored};
    cli_mem_plan(method_plan_fill, &plan, "lower --calib-seqs or --ctx");
    model *m = gf_calloc(1, sizeof *m);
    if (cli_load_model("convert", r.pos[0], &r.co, m) != 0) {
        free(m);
        convert_target_free(&t);
        return 1;
    }
    convert_result res;
    method_hooks h = {.progress = cli_progress()};
    if (catch_stop) h.progress.cancel = cli_stop_flag();
    rc = 1;
    if (method_convert_run(&r, m, &h, &res) != 0) goto fail;
    if (progress_cancelled(&h.progress)) { /* after the run's last look: still nothing written */
        gf_fail("cancelled");
        goto fail;
    }
    cJSON *rep = convert_report_json(&r, &res);
    if (cli_rank0() && method_convert_save(&r, m, &t, &res, rep) != 0) { /* one writer in a job of several ranks */
        cJSON_Delete(rep);
        goto fail;
    }
    char note[PATH_MAX + 96]; /* said once the folder is written: a failed build leaves it as it was */
    if (convert_claim_note(&t, note, sizeof note)[0] && cli_rank0()) fprintf(stderr, "graft convert: %s\n", note);
    if (r.co.json) {
        cJSON_AddStringToObject(rep, "out", t.out);
        cJSON_AddStringToObject(rep, "request_digest", t.digest);
        cJSON_AddStringToObject(rep, "folder", t.claim == ARTIFACT_SAME ? "reused" : t.claim == ARTIFACT_FORCED ? "replaced" : "new");
        cJSON_AddItemToObject(rep, "memory", cli_mem_json());
        cli_print_json(rep);
    } else {
        cJSON_Delete(rep);
        print_text(&r, &t, &res);
    }
    rc = 0;
fail:
    if (rc != 0) cli_fail("convert");
    convert_result_free(&res);
    convert_target_free(&t);
    model_free(m);
    free(m);
    return rc;
}
