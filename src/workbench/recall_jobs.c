#include "workbench/recall_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "jobs/job.h"
#include "method/artifact.h"
#include "student/student_io.h"
#include "workbench/recall_view.h"

/* Everything the job needs, copied on the UI thread: it never reads app_state. */
typedef struct {
    const model *m;          /* the loaded teacher */
    gf_backend *be;          /* the workbench's backend */
    char student[256];       /* "" : the teacher alone */
    recall_request rq;
} recall_arg;

static int recall_job(job_ctx *ctx, void *argp) {
    recall_arg *a = argp;
    recall_view_result *res = gf_calloc(1, sizeof *res);
    student s = {0};
    transformer tf = {0};
    int rc = -1;
    const job_phase phases[] = {{"teacher", 1}, {"student", a->student[0] ? 1 : 1e-9}};
    job_set_phases(ctx, phases, 2);
    progress_sink pr = job_sink(ctx);
    if (tf_view(&tf, a->m, NULL, NULL, NULL) != 0) goto done;
    if (recall_run(&tf, a->m, &a->rq, &pr, NULL, NULL, &res->teacher) != 0) goto done;
    if (a->student[0]) {
        job_begin_phase(ctx, "student");
        const model_load_opts lo = {.tokenizer_path = NULL, .be = a->be};
        if (student_load_with(&s, a->student, &lo, NULL) != 0) goto done;
        if (recall_run(&s.tf, s.m, &a->rq, &pr, NULL, NULL, &res->student) != 0) goto done;
    }
    job_set_result(ctx, res);
    res = NULL;
    rc = 0;
done:
    if (res) {
        recall_result_free(&res->teacher);
        recall_result_free(&res->student);
        free(res);
    }
    tf_free(&tf);
    if (a->student[0]) student_free(&s);
    free(a);
    return rc;
}

int results_start_recall(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = app_cur(st);
    if (!t) return gf_fail("no teacher: open one on 1 Teacher");
    if (!wb_ready(wb, st)) return -1;
    const recall_view_request *r = &t->recall.req;
    if (r->student[0] && !student_folder_detect(r->student))
        return gf_fail("the student folder %s is gone or is not a student (Enter on Results writes it again)",
                       r->student);
    /* the folder must still hold what the row's request made */
    if (r->student[0] && r->digest[0] && artifact_check(r->student, "config.json", r->digest) != 0) return -1;
    if (!wb->m->tok) return gf_fail("the teacher has no tokenizer: recall prompts are text");
    recall_request rq = r->rq; /* lengths within the teacher's positions (its own when none is) */
    const int max_seq = wb->m->cfg.max_seq;
    int n = 0;
    for (int i = 0; i < rq.n_lengths; i++)
        if (max_seq <= 0 || rq.lengths[i] <= max_seq) rq.lengths[n++] = rq.lengths[i];
    if (n == 0) rq.lengths[n++] = max_seq;
    rq.n_lengths = n;
    if (recall_validate(&rq, &wb->m->cfg) != 0) return -1;
    recall_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->be = wb->be;
    snprintf(a->student, sizeof a->student, "%s", r->student);
    a->rq = rq;
    if (wb_start(st, jr, "recall", recall_job, a, t) != 0) {
        free(a);
        return -1;
    }
    t->recall.ran = *r;
    t->recall.ran.rq = rq;
    t->recall.job_id = st->job.id;
    return 0;
}

void results_recall_done(app_state *st, teacher_state *owner, const event *ev) {
    if (!owner) {
        if (ev->kind == EV_DONE) free(ev->result);
        return;
    }
    recall_view *v = &owner->recall;
    if (ev->kind == EV_DONE && ev->result) {
        recall_view_take(v, ev->result);
        free(ev->result);
    }
    const recall_request *rq = &v->ran.rq;
    char cmd[1024];
    int n = snprintf(cmd, sizeof cmd, "graft recall %s --tasks ", v->ran.student[0] ? v->ran.student : owner->model_arg[0] ? owner->model_arg : owner->key);
    for (int i = 0; i < rq->n_tasks && n < (int)sizeof cmd; i++)
        n += snprintf(cmd + n, sizeof cmd - n, "%s%s", i ? "," : "", recall_task_name(rq->tasks[i]));
    n += snprintf(cmd + (n < (int)sizeof cmd ? n : 0), n < (int)sizeof cmd ? sizeof cmd - n : 0, " --lengths ");
    for (int i = 0; i < rq->n_lengths && n < (int)sizeof cmd; i++)
        n += snprintf(cmd + n, sizeof cmd - n, "%s%d", i ? "," : "", rq->lengths[i]);
    if (n < (int)sizeof cmd) snprintf(cmd + n, sizeof cmd - n, " --samples %d --json", rq->samples);
    const char *how = ev->kind == EV_DONE ? "" : ev->kind == EV_CANCELLED ? " (cancelled)" : " (failed)";
    char line[1400];
    if (ev->kind == EV_DONE && v->ran.student[0])
        snprintf(line, sizeof line, "recall: teacher %.1f %%, %s %.1f %%; headless: %s",
                 100 * recall_result_accuracy(&v->teacher), v->ran.label, 100 * recall_result_accuracy(&v->student), cmd);
    else if (ev->kind == EV_DONE)
        snprintf(line, sizeof line, "recall: teacher %.1f %%; headless: %s", 100 * recall_result_accuracy(&v->teacher), cmd);
    else
        snprintf(line, sizeof line, "recall%s; headless: %s", how, cmd);
    wb_log_add(&st->log, LOG_INFO, line);
}
