/* Results rows as data: one row per run (an evaluated plan, an ablation row,
 * a race run) with what it was run with (strategy, ratio, init, Stage 2
 * steps, evaluation slice) and what came out, the columns the Results screen
 * shows and sorts by (its headless command: result_request.h). */
#ifndef GRAFT_WORKBENCH_RESULTS_H
#define GRAFT_WORKBENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "workbench/stage1_choice.h"

typedef enum { RUN_EVALUATE, RUN_ABLATE, RUN_RACE, RUN_KIND_COUNT } run_kind;

typedef struct {
    run_kind kind;
    long seq;                /* run order within its teacher */
    char teacher[160];       /* the teacher's shown name */
    char strategy[16];       /* uniform, ar, ga-s2, manual */
    double keep;             /* fraction of layers keeping attention */
    char init[24];           /* one of the six initializations */
    char init_detail[48];    /* how the init was configured beyond its name: "stage1 -beta" ("" = nothing to say) */
    bool has_stage1;         /* the row's run had these Stage 1 options (an init with Stage 1; both rows of a race): */
    stage1_choice stage1;    /* they go into the row's command */
    int stage2_steps;        /* Stage 2 steps per layer; 0 when the init has no Stage 2 */
    int keep_best_heldout;   /* Stage 2 kept the lowest held-out loss (not the training loss) */
    char corpus[200];        /* the text the row was measured on */
    int eval_windows, ctx;   /* evaluation slice: windows of ctx tokens (race: its held-out, 0 windows) */
    double ppl;              /* zero-shot perplexity (race: final held-out perplexity) */
    double teacher_ppl;      /* the teacher's perplexity on the same slice (race: held-out sequences); NaN unknown */
    double hl_mean, hl_med, hl_max; /* idle half-lives of the GDN heads; NaN unknown */
    char kept[128];          /* layers keeping attention, "0,1,3" */
    char student[256];       /* the student folder written, "" none */
    char digest[11];         /* the request that made it: its digest's first 10 hex digits (method/artifact.h), "" none */
    long seed;               /* --seed of its students' builds and training (graft tui --seed); -1 unknown */
    long race_tokens;        /* race: budget per init */
    char race_inits[160];    /* race: its --inits as run ("random,taylor-only"); "" the default, or a race of folders */
    double race_lr_mixer, race_lr_rest;
    double tokens_to_target; /* race: tokens to reach the target loss, <0 never, NaN n/a */
    double ratio;            /* race: random / taylor-calibrate tokens-to-target, NaN n/a */
    char device[16];         /* where it ran: "cpu", "cuda:0" ("" in rows saved before devices) */
    char source[256];        /* the JSON file it was imported from (import_runs.h), "" for a run made here */
    int source_row;          /* its 1-based place in that file's rows / runs */
} result_row;

void result_row_init(result_row *r); /* zeros, NaN for the unknown numbers */
/* Records the Stage 1 options of a row whose init runs Stage 1 (and its init detail: "stage1 <label>"). */
void result_set_stage1(result_row *r, const stage1_choice *c);
const char *run_kind_name(run_kind k); /* "evaluate", "ablate", "race" */

typedef enum {
    RC_TEACHER, RC_RUN, RC_STRATEGY, RC_KEEP, RC_INIT, RC_DETAIL, RC_STEPS, RC_EVAL, RC_PPL,
    RC_HL_MEAN, RC_HL_MED, RC_HL_MAX, RC_KEPT, RC_TTT, RC_STUDENT, RC_DEVICE, RC_SOURCE, RC_COUNT
} result_col;

typedef struct {
    const char *header;
    int priority;            /* lower is dropped first when the table is too wide */
    bool numeric;            /* sorts by number; right aligned */
    bool cut_left;           /* cut from the left (paths) */
} result_col_info;

const result_col_info *result_col_get(result_col c);
/* The cell text ("" when it does not apply). abbreviate: short init names. */
void result_cell(const result_row *r, result_col c, bool abbreviate, char *buf, size_t n);
/* Orders two rows by column c (then by seq); NaN / empty sort last. */
int result_compare(const result_row *a, const result_row *b, result_col c);
/* Column c alone (0 for a tie); NaN / empty last in either direction: desc reverses the rest.
 * A stable sort on it keeps tied rows in run order, ascending or descending. */
int result_compare_col(const result_row *a, const result_row *b, result_col c, bool desc);
/* "tinystories w32": the corpus file name and the windows of the evaluation slice. */
void result_slice_label(const char *corpus, int windows, int ctx, char *buf, size_t n);

cJSON *result_row_json(const result_row *r);
/* 0, or -1 with a one-line error (missing kind / numbers of the wrong type). */
int result_row_from_json(const cJSON *o, result_row *r);

#endif
