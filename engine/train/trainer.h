/* The recovery-training loop (METHOD.md section 9): distills a teacher into a
 * hybrid student, one optimizer step at a time, with checkpoints that let a
 * stopped run continue bit-exactly.
 *
 *   phase ALIGN (9a): loss = mean over converted (mixer) layers of mean over
 *     tokens of ||t - s||_2 / sqrt(D), t / s the residual stream after the
 *     layer in teacher / student; only mixer (GDN) parameters train.
 *   phase KL (9b): loss = tau^2 KL(teacher || student) on logits at
 *     temperature tau, mean over tokens; attention + GDN parameters at lr_mixer,
 *     the rest at lr_rest (0 freezes a group).
 * AdamW (decoupled weight decay on every trained tensor, one call per
 * contiguous span of the flat parameter block), linear warmup then cosine (to
 * min_lr_ratio) or constant, global-norm clipping, gradient accumulation: each
 * micro-batch is `batch` sequences x ctx tokens through the batched forward and
 * backward, `accum` micro-batches per step; the gradient is that of the mean
 * over all their tokens. With a fixed thread count every reduction has a fixed
 * order, so a resumed run repeats an uninterrupted one bit for bit.
 *
 * Data parallel: when the student's backend carries a communicator of W
 * ranks (be_comm), each rank runs `accum` micro-batches of `batch` sequences
 * per step, the global batch is W x batch x accum sequences (the same
 * windows in the same order as one process with accum x W micro-batches),
 * the gradient block and the loss are summed over ranks between backward and
 * AdamW (clipping sees the reduced gradient), held-out evaluation is shared,
 * rank 0 alone writes checkpoints and calls on_step / on_eval, and a
 * checkpoint resumes under any W with the same global batch (rank 0 reads it
 * and broadcasts it). Ranks stop together after a step when any saw *stop. */
#ifndef GRAFT_TRAIN_TRAINER_H
#define GRAFT_TRAIN_TRAINER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "data/train_data.h"
#include "optim/schedule.h"
#include "model/transformer.h"
#include "train/checkpoint.h"

typedef enum { PHASE_ALIGN = 0, PHASE_KL = 1 } train_phase;

typedef struct {
    train_phase phase;
    int ctx, batch, accum;
    long tokens;               /* budget: steps = tokens / (ctx * batch * accum), at least 1 */
    double lr_mixer, lr_rest;  /* 0 freezes the group */
    lr_shape schedule;
    double warmup_frac;        /* of the steps */
    double min_lr_ratio;       /* cosine floor */
    double beta1, beta2, eps, weight_decay, clip, temperature;
    long eval_every;           /* steps; 0: only at the end */
    int eval_seqs;             /* held-out sequences per evaluation (0: all) */
    long ckpt_every;           /* steps; 0: only at the end and on a signal */
    const char *ckpt_path;     /* NULL: no checkpoints */
    bool resume;               /* continue from ckpt_path when it exists */
    bool ckpt_keep;            /* also keep every checkpoint written as ckpt_path.step-N (a hard link
                                  of the file just written: no extra bytes), for graft halflife --ckpt */
    bool recompute;            /* the student's run keeps only each layer's input and recomputes the
                                  rest in the backward (tf_run_opts.recompute): less memory, one more
                                  forward per step, the same bits */
    const char *window_log;    /* NULL: none; else rank 0 writes one line per step, "step N: ID ...": the
                                  windows (train_data_window) of the step's global batch in rank order */
    uint64_t seed;
    /* progress, may be NULL */
    void (*on_step)(void *ud, long step, long total, long tokens, double loss, double lr, double grad_norm);
    void (*on_eval)(void *ud, long step, long tokens, double ppl);
    void *ud;
    /* a second measure of the student beside the held-out perplexity (recall
       accuracy: engine/eval/recall_probe.h), at the evaluations of steps that
       are multiples of measure_every and at the last one (0: never); rank 0
       measures, its value goes into train_result.measure and on_measure */
    long measure_every;
    int (*measure)(void *mud, transformer *student, long step, long tokens, atomic_int *stop, double *value);
    void *mud;
    void (*on_measure)(void *ud, long step, long tokens, double value);
} train_opts;

/* METHOD.md 9 defaults for the phase: ALIGN lr 1e-3 GDN only; KL lr 1e-4 for
 * attention/GDN and 7e-6 for the rest; cosine, 5 % warmup, clip 1, wd 0.01,
 * betas (0.9, 0.95), eps 1e-8, tau 1; ctx 256, batch 4, accum 1. */
void train_opts_default(train_opts *o, train_phase phase);
int train_phase_parse(const char *name, train_phase *out); /* "align" | "kl" */

typedef struct {
    train_state st;      /* step, tokens, curves */
    long total_steps;
    double final_eval_ppl;
    int stopped_by;      /* *stop when it stopped the run (a signal number, or 1; checkpoint written), 0 when complete */
    long resumed_from;   /* step of the checkpoint resumed from, -1 when fresh */
    curve measure;       /* (tokens, value) of train_opts.measure; not in checkpoints: a resumed
                            run's curve starts at the resume */
} train_result;

void train_result_free(train_result *r);

/* Runs (or continues) training of student (tf_trainable) against teacher
 * (any transformer with the same shapes). *stop (may be NULL) is polled
 * after every step and between the layers of every forward and backward
 * pass: non-zero abandons the step under way (parameters and moments stay
 * those of the last completed step), writes a checkpoint and returns 0 with
 * stopped_by set. A non-finite loss or gradient returns -1 ("... last good
 * checkpoint ...") without touching the checkpoint. Out of memory is a -1
 * with one line. */
int train_run(const train_opts *o, transformer *student, transformer *teacher, train_data *data,
              atomic_int *stop, train_result *res);

/* Mean next-token NLL of a model over held-out sequences (n = 0: all),
 * `batch` sequences per forward (0: 4). */
int train_eval_nll(transformer *tf, const train_data *data, int n, int batch, double *nll);
/* Perplexity of a model on exactly the held-out sequences (o->eval_seqs of
 * data, o->batch per forward) that a run with options o scores its student on:
 * given the teacher, the number a student's final_eval_ppl reads against. */
int train_eval_ppl(const train_opts *o, transformer *tf, const train_data *data, double *ppl);

#endif
