/* Recall as a measure during recovery training (graft train / race
 * --recall-every N): train_opts.measure runs a recall request on the student
 * being trained and gives the accuracy over every cell, beside the held-out
 * perplexity of the same evaluation. Each measurement is also kept as a
 * point with its cells (what the one accuracy is made of), and every sample
 * can go to a callback (the --recall-dump lines), so that a curve of zeros
 * can be read back: which tasks, which answers. */
#ifndef GRAFT_EVAL_RECALL_PROBE_H
#define GRAFT_EVAL_RECALL_PROBE_H

#include <stdatomic.h>

#include "eval/recall.h"

/* One measurement: the run it belongs to, where in training, its cells. */
typedef struct {
    int run;             /* recall_probe.run when it was measured (a race's run index) */
    long step, tokens;
    recall_cell *cells;  /* task-major, then length, then depth (recall_result's order) */
    int n_cells;
} recall_probe_point;

typedef struct {
    const model *teacher; /* tokenizer and config */
    recall_request rq;
    recall_on_sample on_sample; /* every sample of every measurement, may be NULL */
    void *sample_ud;
    int run;                    /* set by the caller before each run: recorded with its points */
    long step, tokens;          /* the measurement under way (valid inside on_sample) */
    recall_probe_point *points; /* every measurement so far, in order */
    int n_points;
} recall_probe;

/* Defaults for a probe: niah-number and multikey at depths 10,50,90, 2
 * samples, at `length` tokens (the model's positions when fewer). */
void recall_probe_default(recall_probe *p, const model *teacher, int length);
/* train_opts.measure: mud is a recall_probe; *value the accuracy in [0, 1]
 * (recall_probe_point_accuracy of the point it appends). */
int recall_probe_measure(void *mud, transformer *student, long step, long tokens, atomic_int *stop, double *value);
/* Appends a point of run p->run (cells copied); -1 when out of memory. */
int recall_probe_add(recall_probe *p, long step, long tokens, const recall_cell *cells, int n_cells);
/* Sum of correct over the sum of n of the point's cells; NaN when it has no sample. */
double recall_probe_point_accuracy(const recall_probe_point *pt);
/* Frees the points (the request and teacher are the caller's). */
void recall_probe_free(recall_probe *p);

#endif
