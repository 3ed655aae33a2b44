/* What workbench jobs publish, as typed payloads of EV_DATA events (one
 * tagged struct per kind): the UI thread applies them to the teacher_state of
 * the teacher the job was started for (state.c), never to another. */
#ifndef GRAFT_WORKBENCH_WB_EVENT_H
#define GRAFT_WORKBENCH_WB_EVENT_H

#include <stdio.h>

#include "jobs/job.h"
#include "workbench/method_state.h"
#include "workbench/results.h"
#include "workbench/teacher_state.h"

typedef enum {
    WB_HEAD_VALUE,   /* head_value: one number of one head (Stats) */
    WB_STATS_DONE,   /* stats_done: the teacher statistics are complete for a corpus */
    WB_LAYER_SCORE,  /* layer_score: a strategy's score of one layer (Plan) */
    WB_CALIB_HEAD,   /* calib_head: every Stage 1 number of one head (Calibrate) */
    WB_CALIB_LAYER,  /* calib_layer: a layer's alpha*; the layer is calibrated */
    WB_ALIGN_BEGIN,  /* align_begin: Stage 2 starts on a layer with this many steps */
    WB_ALIGN_STEP,   /* align_step: one Stage 2 step's losses */
    WB_ALIGN_LAYER,  /* align_layer: a layer's Stage 2 summary */
    WB_TEACHER_PPL,  /* teacher_ppl: the teacher's perplexity on an evaluation slice */
    WB_RESULT,       /* result: a Results row */
    WB_RACE_POINT,   /* race_point: a loss point of one init's race run */
    WB_RECALL_POINT, /* race_point: a recall accuracy (in loss) of one init's race run at an evaluation */
    WB_RACE_CHECKPOINT, /* race_checkpoint: where the running init was last checkpointed */
    WB_LOG_LONG,     /* log_long: a log line longer than an EV_LOG's text (a headless command, whole) */
    WB_GEN_MEMORY,   /* gen_memory: the generating model's KV-cache bytes per token, its teacher's, its GDN state */
    WB_GEN_TEXT,     /* gen_text: text of a generation (the decoded prompt, then each token's piece, in chunks) */
    WB_GEN_MEASURED, /* gen_measured: decode speed and memory per sequence measured at the generation's context */
    WB_OVERWRITE_ASK, /* overwrite_ask: a build's folder holds another request's student (asked y/N) */
} wb_event_kind;

typedef struct {
    wb_event_kind kind;
    union {
        struct {
            char init[32]; /* "teacher" or an initialization name */
            head_metric metric;
            int layer, head;
            double value;
        } head_value;
        struct {
            char corpus[256];
        } stats_done;
        struct {
            int strategy; /* select.h order */
            int layer;
            double value;
            char corpus[256];
        } layer_score;
        struct {
            int layer, head;
            double v[CAL_COUNT];
        } calib_head;
        struct {
            int layer;
            double alpha;
            unsigned parts; /* the Stage 1 components applied */
        } calib_layer;
        struct {
            int layer, steps;
        } align_begin;
        struct {
            int layer, step;
            double loss, heldout; /* heldout NaN when there is no held-out set */
        } align_step;
        struct {
            int layer;
            double v[AL_COUNT];
        } align_layer;
        struct {
            double ppl;
            char corpus[256];
            int windows, ctx;
        } teacher_ppl;
        result_row result;
        struct {
            char init[32];
            double tokens, loss;
        } race_point;
        struct {
            char init[32];
            long step;
            char path[400];
        } race_checkpoint;
        struct {
            char text[900];
        } log_long;
        struct {
            long long kv_model, kv_teacher, state_bytes;
            int n_layers, n_gdn, max_context;
        } gen_memory;
        struct {
            int context;                     /* tokens the decode runs were prefilled with */
            double tok_s_model, tok_s_teacher;
            long long mem_model, mem_teacher; /* bytes per sequence: KV cache + GDN state as allocated */
            int has_teacher;                 /* a student's generation: the teacher was measured too */
        } gen_measured;
        struct {
            int context_tokens, generated; /* after this chunk */
            double seconds;                /* since generating began */
            int is_prompt;                 /* the chunk belongs to the decoded prompt */
            int len;                       /* bytes of text (NUL bytes included) */
            char text[512];
        } gen_text;
        struct {
            char folder[700];
            char held[16], want[16]; /* short digests: the folder's ("" none recorded) and the build's */
        } overwrite_ask;
    } u;
} wb_event;

_Static_assert(sizeof(wb_event) <= EVENT_DATA_MAX, "a wb_event must fit an EV_DATA payload");

/* Publishes e from inside a job (any thread). */
static inline void wb_emit(job_ctx *ctx, const wb_event *e) { job_data(ctx, e, sizeof *e); }

/* Publishes one number of one head; init is "teacher" or an initialization name. */
static inline void wb_emit_head(job_ctx *ctx, const char *init, head_metric metric, int layer, int head,
                                double value) {
    wb_event e = {.kind = WB_HEAD_VALUE};
    snprintf(e.u.head_value.init, sizeof e.u.head_value.init, "%s", init);
    e.u.head_value.metric = metric;
    e.u.head_value.layer = layer;
    e.u.head_value.head = head;
    e.u.head_value.value = value;
    wb_emit(ctx, &e);
}

#endif
