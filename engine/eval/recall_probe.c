#include "eval/recall_probe.h"

#include <math.h>
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

int recall_probe_measure(void *mud, transformer *student, atomic_int *stop, double *value) {
    const recall_probe *p = mud;
    const progress_sink pr = {NULL, NULL, stop};
    recall_result r;
    if (recall_run(student, p->teacher, &p->rq, &pr, NULL, NULL, &r) != 0) return gf_fail_prefix("recall");
    *value = recall_result_accuracy(&r);
    recall_result_free(&r);
    if (!isfinite(*value)) return gf_fail("recall: no sample was scored");
    return 0;
}
