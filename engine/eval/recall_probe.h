/* Recall as a measure during recovery training (graft train / race
 * --recall-every N): train_opts.measure runs a recall request on the student
 * being trained and gives the accuracy over every cell, beside the held-out
 * perplexity of the same evaluation. */
#ifndef GRAFT_EVAL_RECALL_PROBE_H
#define GRAFT_EVAL_RECALL_PROBE_H

#include <stdatomic.h>

#include "eval/recall.h"

typedef struct {
    const model *teacher; /* tokenizer and config */
    recall_request rq;
} recall_probe;

/* Defaults for a probe: niah-number and multikey at depths 10,50,90, 2
 * samples, at `length` tokens (the model's positions when fewer). */
void recall_probe_default(recall_probe *p, const model *teacher, int length);
/* train_opts.measure: mud is a recall_probe; *value the accuracy in [0, 1]. */
int recall_probe_measure(void *mud, transformer *student, atomic_int *stop, double *value);

#endif
