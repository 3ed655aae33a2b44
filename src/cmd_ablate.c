/* graft ablate MODEL --calib FILE --eval FILE [--keep LIST] [--strategy LIST] [--init LIST]:
 * argv -> ablate request -> method_ablate_run (method/ablate.h: the table,
 * its variants (inits, Stage 1 component sets, decay overrides, value-scale
 * fits), the reuse of students and evaluations) -> the table as JSON or
 * Markdown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "commands.h"
#include "core/error.h"
#include "method/ablate.h"

typedef struct {
    bool quiet; /* --json, or a progress bar on the terminal */
    decay_distance_mode dist;
} row_printer;

static void print_row(void *ud, const ablate_plan *p, const ablate_row *r, int i, int n) {
    (void)i, (void)n;
    const row_printer *rp = ud;
    if (rp->quiet) return;
    char lab[128];
    fprintf(stderr, "  %s keep %.2f %s [%s]: ppl %.3f\n", p->strat_names[r->strategy_i], r->keep,
            student_init_name(p->variants[r->variant].init), ablate_variant_label(&p->variants[r->variant], rp->dist, lab, sizeof lab),
            r->ppl);
}

int cmd_ablate(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_ABLATE, argc, argv, &done);
    if (rc || done) return rc;
    const common_opts co = r.co;
    const method_cli mo = r.u.ablate.mo;
    if ((rc = cli_setup("ablate", &co))) return rc;
    cli_ctx_plan(mo.split.ctx, &co);
    ablate_plan *pl = gf_malloc(sizeof *pl);
    ablate_plan_make(&r, pl); /* request_check made it once already */
    const student_settings set0 = pl->set0;
    const ablate_variant *variants = pl->variants;
    const int n_var = pl->n_var, n_studs = pl->n_studs;
    /* every distinct student keeps every layer converted; the heaviest build any variant does */
    method_plan plan = {&mo.split, set0, NULL, NAN, true, n_studs, true};
    plan.set.init = INIT_RANDOM;
    for (int j = 0; j < n_var; j++) {
        if (init_uses_stage2(variants[j].init)) plan.set.init = INIT_TAYLOR_CALIBRATE;
        else if (init_uses_stage1(variants[j].init) && plan.set.init == INIT_RANDOM) plan.set.init = INIT_TAYLOR_ONLY;
    }
    cli_mem_plan(method_plan_fill, &plan, "lower --calib-seqs or --ctx, or ablate fewer initializations at once");
    free(pl);
    model m;
    if (cli_load_model("ablate", r.pos[0], &co, &m) != 0) return 1;
    ablate_result res;
    const method_hooks h = {.progress = cli_progress()};
    row_printer rp = {co.json || h.progress.report, set0.distance};
    const ablate_sink sink = {.row = print_row, .ud = &rp};
    rc = 1;
    if (method_ablate_run(&r, &m, &h, &sink, &res) != 0) goto fail;
    if (co.json) {
        cJSON *o = ablate_result_json(&r, &m, &res);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        const ablate_plan *p = &res.plan;
        const token_split sp = res.sp;
        const char *const *pos = r.pos, *eval = r.u.ablate.eval;
        const int ctx = mo.split.ctx, n_rows = res.n_rows, n_evals = res.n_evals;
        const double teacher_ppl = res.teacher_ppl, wall = res.seconds_total, t_build = res.seconds_build,
                     t_rows = res.seconds_rows;
        const ablate_row *rows = res.rows;
        printf("teacher perplexity %.4f  (%s, eval tokens %zu..%zu of %s, windows of %d)\n\n", teacher_ppl, pos[0],
               sp.eval_begin, sp.eval_end, eval, ctx);
        printf("| strategy | keep | kept layers | init | stage1 | ppl | half-life mean | median | max |\n");
        printf("|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < n_rows; i++) {
            const ablate_row *r = &rows[i];
            char kl[512] = "";
            size_t at = 0;
            for (int q = 0; q < r->k && at < sizeof kl; q++) at += (size_t)snprintf(kl + at, sizeof kl - at, q ? ",%d" : "%d", r->kept[q]);
            char lab[128];
            printf("| %s | %.2f | %s | %s | %s | %.3f | %.2f | %.2f | %.2f |\n", p->strat_names[r->strategy_i], r->keep, kl,
                   student_init_name(p->variants[r->variant].init), ablate_variant_label(&p->variants[r->variant], set0.distance, lab, sizeof lab),
                   r->ppl, r->hl.mean, r->hl.median, r->hl.max);
        }
        printf("\n%d rows, %d students, %d evaluations, %.1f s (students %.1f s, rows %.1f s); query scale %s, sigma fit %s%s%s, "
               "write gate %s, Stage 2 %d steps (best by %s loss), seed %llu\n",
               n_rows, p->n_studs, n_evals, wall, t_build, t_rows, gdn_scale_name(set0.scale), sigma_fit_name(p->fits[0]),
               p->n_fit > 1 ? "," : "", p->n_fit > 1 ? sigma_fit_name(p->fits[1]) : "", write_gate_name(set0.write_gate),
               set0.steps, set0.keep_best == KEEP_BEST_HELDOUT ? "held-out" : "calibration",
               (unsigned long long)set0.seed);
    }
    rc = 0;
fail:
    if (rc) cli_fail("ablate");
    ablate_result_free(&res);
    model_free(&m);
    return rc;
}
