/* graft recall MODEL|STUDENT [--tasks LIST] [--lengths LIST] [--depths LIST]
 * [--samples N] [--haystack FILE]: long-context recall (engine/eval/recall.h)
 * of a teacher or a student folder, as a job (progress with ETA on stderr,
 * Ctrl-C cancels); the summary per task and length on stderr, the cells as
 * JSON with --json. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "method/reports.h"
#include "method/mem_check.h"
#include "cli/out_place.h"
#include "cli/signals.h"
#include "commands.h"
#include "core/error.h"
#include "eval/recall.h"
#include "jobs/cli_progress.h"
#include "student/student_io.h"

typedef struct {
    transformer *tf;
    const model *m;
    const recall_request *rq;
    FILE *dump; /* one JSON line per sample, or NULL */
    recall_result res;
} recall_job;

static void dump_sample(void *ud, const recall_sample *s) {
    const recall_job *j = ud;
    recall_dump_sample(j->dump, s, j->m->tok, NULL);
}

static int recall_job_fn(job_ctx *ctx, void *arg) {
    recall_job *j = arg;
    const job_phase ph[] = {{"recall", 1}};
    job_set_phases(ctx, ph, 1);
    progress_sink pr = job_sink(ctx);
    return recall_run(j->tf, j->m, j->rq, &pr, j->dump ? dump_sample : NULL, j, &j->res);
}

/* the memory check: a decode run of one prompt at the longest length */
typedef struct {
    int longest, n_gdn;
    student_settings set;
} recall_plan;

static void recall_fill(mem_job *j, void *ud) {
    const recall_plan *p = ud;
    int S = p->longest;
    if (j->cfg->max_seq > 0 && S > j->cfg->max_seq) S = j->cfg->max_seq;
    if (p->n_gdn > 0) cli_mem_gdn(j, &p->set);
    j->gdn_blocks = p->n_gdn;
    j->run[0] = (tf_run_opts){.B = 1, .T = S, .S = S, .decode = true, .logit_rows = 1};
    j->run_gdn[0] = p->n_gdn;
}

int cmd_recall(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_RECALL, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const char *dump = r.u.recall.dump;
    recall_request rq;
    recall_req_to_engine(&r, &rq); /* checked by request_check */
    if ((rc = cli_setup("recall", &co))) return rc;
    /* before the claim: a Ctrl-C (or SIGTERM) while the model loads cancels the run at its start and ends
     * by that signal (main: cli_die_if_stopped) after the claim is let go, where the default action left
     * --dump's lock */
    cli_catch_stop_signals();
    if (dump && cli_out_claim("--dump", dump, OUT_LOG, 1) != 0) return cli_fail("recall");

    model teacher = {0}, *mp = &teacher;
    student st = {0};
    transformer tf = {0};
    FILE *df = NULL;
    const bool is_student = student_folder_detect(pos[0]);
    recall_plan plan = {0};
    for (int i = 0; i < rq.n_lengths; i++) plan.longest = rq.lengths[i] > plan.longest ? rq.lengths[i] : plan.longest;
    if (is_student && student_folder_peek(pos[0], &plan.n_gdn, &plan.set) != 0) return cli_fail("recall");
    cli_mem_plan(recall_fill, &plan, "lower --lengths");
    if (is_student) {
        if (cli_load_student("recall", pos[0], &co, &st) != 0) return 1;
        mp = st.m;
    } else if (cli_load_model("recall", pos[0], &co, &teacher) != 0) {
        return 1;
    }
    if (!mp->tok) {
        fprintf(stderr, "graft recall: %s has no tokenizer (pass --tokenizer PATH)\n", pos[0]);
        rc = 1;
        goto done;
    }
    if (recall_validate(&rq, &mp->cfg) != 0) {
        fprintf(stderr, "graft recall: %s\n", gf_last_error());
        rc = 2;
        goto done;
    }
    if (!is_student && tf_view(&tf, mp, NULL, NULL, NULL) != 0) {
        rc = cli_fail("recall");
        goto done;
    }
    if (dump && !(df = fopen(dump, "w"))) {
        fprintf(stderr, "graft recall: --dump %s: cannot be written\n", dump);
        rc = 1;
        goto done;
    }
    recall_job job = {is_student ? &st.tf : &tf, mp, &rq, df, {0}};
    if (job_run_cli("recall", recall_job_fn, &job, NULL, cli_stop_flag(), NULL, NULL) != 0) {
        rc = cli_fail("recall");
        goto done;
    }
    recall_result_summary(&job.res, stderr);
    fprintf(stderr, "recall: %.1f %% over every cell, %.1f s (chat template: %s, batch %d)\n",
            100 * recall_result_accuracy(&job.res), job.res.seconds, recall_chat_name(job.res.chat), job.res.batch);
    if (co.json) {
        cJSON *o = recall_result_json(&job.res, &rq, pos[0]);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("%-12s %7s %6s %4s %8s\n", "task", "length", "depth", "n", "accuracy");
        for (int i = 0; i < job.res.n_cells; i++) {
            const recall_cell *c = &job.res.cells[i];
            printf("%-12s %7d %6g %4d %7.1f%%\n", recall_task_name(c->task), c->length, c->depth, c->n,
                   c->n ? 100 * c->correct / c->n : 0.0);
        }
    }
    recall_result_free(&job.res);
done:
    if (df && fclose(df) != 0 && rc == 0) {
        fprintf(stderr, "graft recall: --dump %s: write error\n", dump);
        rc = 1;
    }
    tf_free(&tf);
    if (is_student) student_free(&st);
    else model_free(&teacher);
    return rc;
}
