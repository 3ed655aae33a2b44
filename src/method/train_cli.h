/* What `graft train` and `graft race` share: the training options, loading
 * the teacher, the data, and building students to train. */
#ifndef GRAFT_METHOD_TRAIN_CLI_H
#define GRAFT_METHOD_TRAIN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "method/common_opts.h"
#include "method/mem_check.h"
#include "data/train_data.h"
#include "eval/recall_probe.h"
#include "model/model.h"
#include "model/transformer.h"
#include "student/student.h"
#include "train/trainer.h"

typedef struct {
    train_opts to;
    const char *teacher, *data, *phase, *schedule;
    const char *recompute; /* "auto" (NULL), "on" or "off" */
    const char *strategy; /* which layers keep attention (as graft convert); NULL: not given */
    double keep;          /* retention ratio; NaN: not given */
    double eval_frac, noise;
    int log_every;
    /* --recall-every N: recall accuracy (engine/eval/recall_probe.h) at the evaluations of every N steps */
    long recall_every;
    const char *recall_tasks, *recall_lengths;
    int recall_samples;
    recall_probe probe;
    const char *recall_dump;  /* --recall-dump FILE: every probe sample as a JSON line */
    FILE *recall_dump_f;      /* open on the rank that measures (train_cli_recall_dump_open) */
    const char *recall_label; /* the run being trained, in the dump's lines (train_cli_recall_run) */
} train_cli;

void train_cli_default(train_cli *c);

#define TRAIN_CLI_OPTS(o)                                                                                       \
    {"teacher", OPT_STR, &(o).teacher, "teacher model (train: required; race: defaults to MODEL)"},                                             \
    {"data", OPT_STR, &(o).data, "text file, .jsonl (\"text\" field) or folder; none: teacher-sampled sequences"}, \
    {"phase", OPT_STR, &(o).phase, "kl (end-to-end KL distillation, default) or align (hidden-state alignment)"}, \
    {"tokens", OPT_LONG, &(o).to.tokens, "training token budget (default 1048576)"},                            \
    {"ctx", OPT_INT, &(o).to.ctx, "sequence length (default 256)"},                                            \
    {"batch", OPT_INT, &(o).to.batch, "sequences per micro-batch (default 4)"},                                 \
    {"accum", OPT_INT, &(o).to.accum, "micro-batches per optimizer step (default 1)"},                         \
    {"lr-mixer", OPT_DOUBLE, &(o).to.lr_mixer, "lr of attention and GDN parameters (kl 1e-4, align 1e-3; 0 freezes)"}, \
    {"lr-rest", OPT_DOUBLE, &(o).to.lr_rest, "lr of the other parameters (kl 7e-6; 0 freezes)"},               \
    {"schedule", OPT_STR, &(o).schedule, "cosine (default) or constant, after linear warmup"},                  \
    {"warmup-frac", OPT_DOUBLE, &(o).to.warmup_frac, "warmup steps as a fraction of all (default 0.05)"},       \
    {"min-lr-ratio", OPT_DOUBLE, &(o).to.min_lr_ratio, "cosine floor as a fraction of the lr (default 0.1)"},   \
    {"clip", OPT_DOUBLE, &(o).to.clip, "global gradient-norm clip (default 1; 0 off)"},                        \
    {"wd", OPT_DOUBLE, &(o).to.weight_decay, "AdamW decoupled weight decay (default 0.01)"},                   \
    {"temperature", OPT_DOUBLE, &(o).to.temperature, "KL temperature tau (default 1; loss is tau^2 KL)"},      \
    {"eval-frac", OPT_DOUBLE, &(o).eval_frac, "held-out fraction of the corpus windows (default 0.05)"},       \
    {"eval-every", OPT_LONG, &(o).to.eval_every, "held-out perplexity every N steps (default: at the end)"},   \
    {"eval-seqs", OPT_INT, &(o).to.eval_seqs, "held-out sequences per evaluation (default 16; 0 all)"},        \
    {"keep", OPT_DOUBLE, &(o).keep, "retention ratio in (0, 1): fraction of layers keeping attention"},       \
    {"strategy", OPT_STR, &(o).strategy, "layers keeping attention: uniform | ar | ga-s2 | manual:0,3"},       \
    {"noise", OPT_DOUBLE, &(o).noise, "perturb the student: add N(0, (x * rms)^2) to every tensor"},           \
    {"log-every", OPT_INT, &(o).log_every, "print a progress line every N steps (default 10)"},                 \
    {"recompute", OPT_STR, &(o).recompute, "recompute activations in the backward: auto (when they would not fit), on, off"}, \
    {"recall-every", OPT_LONG, &(o).recall_every, "recall accuracy at the evaluations of every N steps and the last (graft recall's tasks)"}, \
    {"recall-tasks", OPT_STR, &(o).recall_tasks, "tasks of --recall-every (default niah-number,multikey)"},      \
    {"recall-lengths", OPT_STR, &(o).recall_lengths, "lengths of --recall-every (default 1024, or the model's positions)"}, \
    {"recall-samples", OPT_INT, &(o).recall_samples, "samples per task, length and depth of --recall-every (default 2)"}, \
    {"recall-dump", OPT_STR, &(o).recall_dump, "with --recall-every: each recall sample as a JSON line (run, step, tokens, prompt, output, score)"}

/* The device memory of train / race (src/cli/mem_check.h): the teacher,
 * `teachers - 1` more teacher-format models (a student folder's own, a
 * separate source), the student's GDN blocks, the trainable copy, AdamW's
 * moments, the training runs; for race's builder also the teacher capture
 * and Stage 1 / 2. */
typedef struct {
    const train_cli *tc;
    int teachers;
    const char *const *folders; /* student folders (their GDN layers and settings are read), n_folders */
    int n_folders;
    bool builder;                /* race: students built by the method */
    const void *method;          /* race's builder: its method_cli (Stage 1 options, split) */
} train_plan;
void train_plan_fill(mem_job *j, void *ud);
/* True when --keep or --strategy was given (a student built from the teacher). */
bool train_cli_converts(const train_cli *c);
/* conv[0..L) = the layers that --keep / --strategy turn into GDN layers, for
 * the strategies that need no data (uniform, the default, and manual; ar and
 * ga-s2 score layers with text: the student builder does those). -1 with an
 * error otherwise, or when no layer would be converted. */
int train_cli_convert_mask(const train_cli *c, int L, bool *conv);
/* "1,3": the converted layers as text. */
void layer_list_text(const bool *conv, int L, char *buf, size_t n);

/* [[tokens, value], ...]: a training curve in the --json outputs. */
cJSON *curve_json(const curve *c);

/* Applies --phase defaults the user did not override; checks the options.
 * Call after parsing, with a copy made by train_cli_default before parsing. */
int train_cli_finish(train_cli *c, const char *cmd);

/* --recall-every: the probe of the teacher's tokenizer and config installed
 * as c->to.measure (nothing when --recall-every is 0); -1 with an error for
 * bad lists or lengths beyond the model's positions. */
int train_cli_recall(train_cli *c, const model *teacher);
/* --recall-dump: opens FILE (append: a resumed run adds to what its first
 * part wrote; else truncated). The commands claim it (src/cli/out_place.h)
 * and open it before any loading, so that a bad path fails in one line at
 * once. Nothing without --recall-dump; -1 with "--recall-dump PATH: ...". */
int train_cli_recall_dump_open(train_cli *c, bool append);
/* The run about to be trained (a race's index and label; train: 0 and the
 * student): its measurements are kept under `run`, its dump lines carry `label`. */
void train_cli_recall_run(train_cli *c, int run, const char *label);
/* [[tokens, [cell, ...]], ...]: the cells of run's measurements, in the order
 * of its recall_curve (cells as graft recall --json writes them). */
cJSON *train_cli_recall_cells_json(const train_cli *c, int run);
/* Closes the dump and frees the measurements; -1 with "--recall-dump PATH:
 * write error" when the dump could not be written whole. */
int train_cli_recall_close(train_cli *c);

/* A trainable student: one flat block (engine/model/layout.h). */
typedef struct {
    transformer tm;
} cli_student;

/* Builds a trainable student from a model (copied): init `init` ("copy":
 * nothing more; "random": the layers of train_cli_convert_mask become GDN
 * layers with the section 3 defaults of engine/student (student_default_init,
 * the same seed gives the same parameters as graft convert --init random);
 * "zero-gate": random with Wg = 0; "small-gate": random with Wg x 0.02), then
 * --noise on the teacher-format tensors. */
int cli_student_init_check(const char *init); /* -1 with an error for an unknown init */
int cli_student_build(cli_student *s, const model *src, const train_cli *c, const char *init, uint64_t seed);
void cli_student_free(cli_student *s);

/* Teacher model loaded + its forward-only train_model; the data. */
int cli_train_data(train_data *d, const model *teacher, const train_cli *c);


#endif
