/* The Recall view on Results (R): long-context recall (engine/eval/recall.h)
 * of the teacher and of the selected row's student on the same prompts, kept
 * for the length x depth heat maps side by side and the table per task. One
 * per teacher (teacher_state.recall); the "recall" job's result fills it. Not
 * saved with the session (graft recall --json keeps numbers). */
#ifndef GRAFT_WORKBENCH_RECALL_VIEW_H
#define GRAFT_WORKBENCH_RECALL_VIEW_H

#include <stdbool.h>

#include "eval/recall.h"

typedef struct {
    char student[256];     /* the student folder; "" = none (the teacher alone) */
    char digest[11];       /* the request that made it (its Results row's), "" unknown */
    char label[192];       /* "student uniform 50% t-calib" */
    recall_request rq;     /* tasks, lengths (capped at the teacher's positions when the job starts) */
} recall_view_request;

typedef struct {
    recall_view_request req; /* what R on a row asks for next */
    recall_view_request ran; /* what the last job ran */
    int job_id;
    bool have;               /* the results below are from a finished job */
    recall_result teacher, student; /* student.n_cells 0: none */
} recall_view;

/* The job's result: both runs (owned until recall_view_take). */
typedef struct {
    recall_result teacher, student;
} recall_view_result;

void recall_view_init(recall_view *v);
void recall_view_free(recall_view *v);
/* The request for a row's student (folder "" : the teacher alone) on a model of max_seq positions:
 * niah-number, multikey and vt at lengths 1k, 2k, 4k (those within max_seq; else max_seq),
 * depths 0, 25, 50, 75, 100, 2 samples. */
void recall_view_request_for(recall_view_request *r, const char *folder, const char *label, int max_seq);
/* Takes the job's result (freed here) into v. */
void recall_view_take(recall_view *v, recall_view_result *res);
/* Accuracy of cells of r at (length, depth) over its tasks, or of task t at a length over depths
 * (depth < 0); NaN when no sample. */
double recall_view_accuracy(const recall_result *r, int task, int length, double depth);

#endif
