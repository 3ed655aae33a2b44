/* The method's results as JSON, one writer each: the teacher's attention
 * statistics (graft stats --json, a student's report), a data split and a
 * layer selection (graft convert / select --json, report.json), a model's
 * summary (graft inspect --json), a decode benchmark's point (graft
 * bench-decode --json) and a recall sample (graft recall --dump, train / race --recall-dump). */
#ifndef GRAFT_METHOD_REPORTS_H
#define GRAFT_METHOD_REPORTS_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "eval/bench_decode.h"
#include "eval/recall.h"
#include "model/layout.h"
#include "model/model.h"
#include "select/select.h"
#include "stats/attn_stats.h"
#include "student/calib_split.h"

/* [{"layer":l, "heads":[{"head":h, "mean_distance":d, "entropy":e, "concentration":c, "output_rms":r,
 *                        "mean_distance_no_sink":d0, "sink_share":a0}]}] */
cJSON *attn_stats_json(const attn_stats *s);
/* The split's slices (calib: the calibration file; text: the scoring / evaluation file, NULL none). */
cJSON *split_json(const token_split *sp, const char *calib, const char *text);
/* The kept layers, every layer's score and what the scores mean. */
cJSON *selection_json(const layer_selection *sel);
/* The model's format, shape, RoPE, parameter count and tokenizer (null when none). */
cJSON *model_summary_json(const model *m);
/* A point's sizes, times, speeds and memory per sequence. */
cJSON *decode_bench_point_json(const decode_bench_point *p);
/* A sample's prompt (ids and its text through tok), answers, prediction and score. */
cJSON *recall_sample_json(const recall_sample *s, const tokenizer *tok);

/* Where a dumped sample was measured during training (graft train / race
 * --recall-dump): the run's label, the step and the training tokens. */
typedef struct {
    const char *run;
    long step, tokens;
} recall_dump_at;
/* The one writer of recall dumps (graft recall --dump, train / race
 * --recall-dump): recall_sample_json (with "run", "step" and "tokens" when at is
 * not NULL) as one line, flushed so that a run cut short keeps every
 * sample it finished. A write error shows at fclose. */
void recall_dump_sample(FILE *f, const recall_sample *s, const tokenizer *tok, const recall_dump_at *at);

#endif
