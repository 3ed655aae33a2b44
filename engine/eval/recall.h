/* Long-context recall of a teacher or a student (graft recall, the
 * workbench's Recall view, the race's --recall-every): for each task, length
 * and depth, `samples` prompts of exactly `length` tokens minus the task's
 * answer budget (recall_prompt.h), greedy decoding through the one
 * transformer, scored as RULER scores (recall_task.h).
 *
 * A cell's prompts all have the same length, so they go through the model
 * `batch` at a time: one prefill forward of [batch, T], then one decode
 * forward of [batch, 1] per token (attention layers through their KV cache,
 * GDN layers through their recurrent state, so a student's long prompt costs
 * linear time in those layers).
 *
 * The pipeline's pieces, so that a command or a job only fills a request and
 * reads a result: recall_request (what to measure), recall_validate (against
 * the model's positions), recall_run (progress and cancel through a
 * progress_sink), recall_result with its JSON and its text summary. */
#ifndef GRAFT_EVAL_RECALL_H
#define GRAFT_EVAL_RECALL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "core/progress.h"
#include "eval/recall_prompt.h"
#include "eval/recall_task.h"
#include "model/model.h"
#include "model/transformer.h"

#define RECALL_MAX_LENGTHS 16
#define RECALL_MAX_DEPTHS 21

typedef struct {
    recall_task tasks[RECALL_TASK_COUNT];
    int n_tasks;
    int lengths[RECALL_MAX_LENGTHS]; /* prompt + answer budget, in the model's tokens */
    int n_lengths;
    double depths[RECALL_MAX_DEPTHS]; /* percent of the context before the asked needle, 0..100 */
    int n_depths;
    int samples;          /* per cell (task, length, depth) */
    uint64_t seed;
    const char *haystack; /* a text file's sentences; NULL: RULER's repeated filler */
    recall_chat chat;     /* AUTO: from the tokenizer's special tokens */
    int batch;            /* prompts per forward; 0: 1 on the CPU, what fits in half the free memory on a device */
} recall_request;

/* Every task, lengths 1024,2048,4096, depths 0,25,50,75,100, 4 samples, seed 0. */
void recall_request_default(recall_request *rq);
/* Comma-separated lists ("all" for every task); -1 with a one-line error
 * naming the bad item. */
int recall_parse_tasks(recall_request *rq, const char *list);
int recall_parse_lengths(recall_request *rq, const char *list);
int recall_parse_depths(recall_request *rq, const char *list);
/* Counts in range, every length within the model's positions (cfg->max_seq;
 * "length 8192 is beyond the model's 2048 positions (max_seq)"). */
int recall_validate(const recall_request *rq, const model_config *cfg);
/* Builds the first sample's prompt of every task, length and depth (text and
 * tokens only, no model run), so that a length too short for a task's
 * instruction, needles and answer is refused before any work: the race and
 * train check their --recall-every this way before the first step. */
int recall_check_prompts(const model *m, const recall_request *rq);

typedef struct {
    recall_task task;
    int length;
    double depth;   /* percent */
    int n;          /* samples */
    double correct; /* the sum of the samples' scores (a share of answers each: multivalue, multiquery, vt) */
    double seconds;
} recall_cell;

typedef struct {
    recall_cell *cells; /* task-major, then length, then depth */
    int n_cells;
    recall_chat chat;   /* the template used */
    int batch;          /* the largest batch used */
    double seconds;
    double prefill_tokens, generated_tokens, prefill_seconds, decode_seconds;
} recall_result;

/* What each sample was, for a dump (the reference run reads the same prompts). */
typedef struct {
    recall_task task;
    int length, index, max_new;
    double depth;
    const int *ids;  /* the prompt */
    int n_ids;
    const char *pred; /* the generated text */
    double score;
    char *const *answers;
    int n_answers;
} recall_sample;

typedef void (*recall_on_sample)(void *ud, const recall_sample *s);

/* Runs rq over tf (teacher m's tokenizer and config); on_sample may be NULL.
 * -1 with a one-line error (no tokenizer, a length too short for a task, a
 * haystack file that cannot be read, out of memory, "cancelled"). */
int recall_run(transformer *tf, const model *m, const recall_request *rq, const progress_sink *pr,
               recall_on_sample on_sample, void *ud, recall_result *out);
void recall_result_free(recall_result *r);

/* {"task", "length", "depth", "n", "correct", "accuracy", "seconds"}: one cell, as in the result's "cells" */
cJSON *recall_cell_json(const recall_cell *c);
/* {"model", "tasks", "cells": [{"task", "length", "depth", "n", "correct", "accuracy"}], "seconds", ...} */
cJSON *recall_result_json(const recall_result *r, const recall_request *rq, const char *model_name);
/* Accuracy per task and length (over depths), one line each. */
void recall_result_summary(const recall_result *r, FILE *f);
/* Accuracy of the whole result (every cell's samples), in [0, 1]; NaN when empty. */
double recall_result_accuracy(const recall_result *r);

#endif
