#include "workbench/recall_view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void recall_view_init(recall_view *v) { memset(v, 0, sizeof *v); }

void recall_view_free(recall_view *v) {
    recall_result_free(&v->teacher);
    recall_result_free(&v->student);
    memset(v, 0, sizeof *v);
}

void recall_view_request_for(recall_view_request *r, const char *folder, const char *label, int max_seq) {
    memset(r, 0, sizeof *r);
    snprintf(r->student, sizeof r->student, "%s", folder ? folder : "");
    snprintf(r->label, sizeof r->label, "%s", label ? label : "");
    recall_request *rq = &r->rq;
    recall_request_default(rq);
    rq->n_tasks = 3;
    rq->tasks[0] = RECALL_NIAH_NUMBER, rq->tasks[1] = RECALL_MULTIKEY, rq->tasks[2] = RECALL_VT;
    rq->samples = 2;
    rq->seed = 1; /* graft recall's default --seed: the Log's command repeats the view's prompts */
    rq->n_lengths = 0;
    for (int L = 1024; L <= 4096; L *= 2)
        if (max_seq <= 0 || L <= max_seq) rq->lengths[rq->n_lengths++] = L;
    if (rq->n_lengths == 0) rq->lengths[rq->n_lengths++] = max_seq;
}

void recall_view_take(recall_view *v, recall_view_result *res) {
    recall_result_free(&v->teacher);
    recall_result_free(&v->student);
    v->teacher = res->teacher;
    v->student = res->student;
    memset(res, 0, sizeof *res);
    v->have = true;
}

double recall_view_accuracy(const recall_result *r, int task, int length, double depth) {
    double c = 0;
    int n = 0;
    for (int i = 0; i < r->n_cells; i++) {
        const recall_cell *x = &r->cells[i];
        if (x->length != length || (task >= 0 && (int)x->task != task) || (depth >= 0 && x->depth != depth)) continue;
        c += x->correct, n += x->n;
    }
    return n > 0 ? c / n : NAN;
}
