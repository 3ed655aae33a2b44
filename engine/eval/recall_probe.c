#include "eval/recall_probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void recall_probe_default(recall_probe *p, const model *teacher, int length) {
    memset(p, 0, sizeof *p);
    p->teacher = teacher;
    recall_request_default(&p->rq);
    p->rq.n_tasks = 2;
    p->rq.tasks[0] = RECALL_NIAH_NUMBER;
    p->rq.tasks[1] = RECALL_MULTIKEY;
    p->rq.n_depths = 3;
    p->rq.depths[0] = 10, p->rq.depths[1] = 50, p->rq.depths[2] = 90;
    p->rq.samples = 2;
    p->rq.n_lengths = 1;
    p->rq.lengths[0] = teacher->cfg.max_seq > 0 && length > teacher->cfg.max_seq ? teacher->cfg.max_seq : length;
}

int recall_probe_add(recall_probe *p, long step, long tokens, const recall_cell *cells, int n_cells) {
    recall_probe_point *pts = realloc(p->points, (size_t)(p->n_points + 1) * sizeof *pts);
    if (!pts) return gf_fail("recall: out of memory");
    p->points = pts;
    recall_probe_point *pt = &pts[p->n_points];
    *pt = (recall_probe_point){.run = p->run, .step = step, .tokens = tokens, .n_cells = n_cells};
    if (n_cells > 0) {
        if (!(pt->cells = malloc((size_t)n_cells * sizeof *pt->cells))) return gf_fail("recall: out of memory");
        memcpy(pt->cells, cells, (size_t)n_cells * sizeof *cells);
    }
    p->n_points++;
    return 0;
}

double recall_probe_point_accuracy(const recall_probe_point *pt) {
    const recall_result r = {.cells = pt->cells, .n_cells = pt->n_cells};
    return recall_result_accuracy(&r);
}

int recall_probe_measure(void *mud, transformer *student, long step, long tokens, atomic_int *stop, double *value) {
    recall_probe *p = mud;
    const progress_sink pr = {NULL, NULL, stop};
    recall_result r;
    p->step = step, p->tokens = tokens;
    if (recall_run(student, p->teacher, &p->rq, &pr, p->on_sample, p->sample_ud, &r) != 0)
        return gf_fail_prefix("recall");
    int rc = recall_probe_add(p, step, tokens, r.cells, r.n_cells);
    recall_result_free(&r);
    if (rc != 0) return -1;
    *value = recall_probe_point_accuracy(&p->points[p->n_points - 1]);
    if (!isfinite(*value)) return gf_fail("recall: no sample was scored");
    return 0;
}

void recall_probe_free(recall_probe *p) {
    for (int i = 0; i < p->n_points; i++) free(p->points[i].cells);
    free(p->points);
    p->points = NULL;
    p->n_points = 0;
}
