/* graft select MODEL --strategy uniform|ar|ga-s2|manual:0,3 --keep R --text FILE:
 * which layers keep softmax attention, with per-layer scores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "method/method_opts.h"
#include "method/select_run.h"
#include "commands.h"
#include "core/error.h"
#include "select/select.h"
#include "convert/build.h"

/* ar: the teacher with one layer's attention removed, scored in windows of ctx */
static void ar_fill(mem_job *j, void *ud) { cli_mem_eval(j, 0, *(const int *)ud, 0); }

int cmd_select(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_SELECT, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const int n_ranks = r.n_ranks, n_gpus = r.n_gpus;
    method_cli mo = r.u.select.mo;
    const char *strategy = r.u.select.strategy, *init_name = r.u.select.init;
    const double keep = r.u.select.keep;
    if (cli_ranks_launch("select", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("select", &co))) return rc;
    cli_ctx_plan(mo.split.ctx, &co);
    strategy_spec ss;
    student_init init;
    student_settings set;
    /* checked by request_check: these parse */
    strategy_parse(strategy, 0, &ss);
    student_init_parse(init_name, &init);
    method_cli_settings(&mo, co.seed, init, &set);
    const bool scored = ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2;
    method_plan plan = {&mo.split, set, strategy, keep, ss.kind == STRATEGY_GA_S2, ss.kind == STRATEGY_GA_S2, scored};
    if (ss.kind == STRATEGY_AR) cli_mem_plan(ar_fill, &mo.split.ctx, "lower --ctx");
    else cli_mem_plan(ss.kind == STRATEGY_GA_S2 ? method_plan_fill : NULL, &plan, "lower --calib-seqs or --ctx");
    model m;
    if (cli_load_model("select", pos[0], &co, &m) != 0) return 1;
    const int L = m.cfg.n_layers;
    select_result res;
    const method_hooks h = {.progress = cli_progress()};
    rc = 1;
    if (method_select_run(&r, &m, &h, &res) != 0) goto fail;
    const layer_selection *sel = &res.sel;
    if (co.json) {
        cJSON *o = select_result_json(&r, &m, &res);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("strategy %s: keep %d of %d layers:", strategy_name(ss.kind), sel->k, L);
        for (int i = 0; i < sel->k; i++) printf(" %d", sel->kept[i]);
        printf("\n");
        if (ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) {
            printf("%s\n", ss.kind == STRATEGY_AR ? "layer  ppl with its attention zeroed"
                                                  : "layer  ppl with only this layer keeping attention");
            for (int l = 0; l < L; l++) printf("%5d  %.4f\n", l, sel->score[l]);
        }
    }
    rc = 0;
fail:
    if (rc) cli_fail("select");
    select_result_free(&res);
    model_free(&m);
    return rc;
}
