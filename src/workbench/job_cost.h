/* Rough costs of the pieces of a workbench job, in seconds at a nominal CPU
 * speed, used as the weights of its phases (job_set_phases): only their ratios
 * matter, so that the whole job's progress and ETA move evenly. They count the
 * floating-point work of matrix products (and the tokenizer's bytes), which is
 * what dominates on every teacher graft opens. */
#ifndef GRAFT_WORKBENCH_JOB_COST_H
#define GRAFT_WORKBENCH_JOB_COST_H

#include "model/model.h"

/* Reading and tokenizing a text file. */
double cost_tokenize(const model *m, const char *path);
/* The teacher's forward pass over tokens (in sequences of ctx), without logits. */
double cost_forward(const model *m, double tokens, int ctx);
/* A perplexity pass: the forward pass and the logits. */
double cost_eval(const model *m, double tokens, int ctx);
/* Stage 1 of one layer (its statistics are captured already). */
double cost_stage1_layer(const model *m);
/* steps of Stage 2 on one layer, over seqs sequences of ctx tokens (forward, backward, held-out). */
double cost_stage2_layer(const model *m, int steps, int seqs, int ctx);
/* A training step of the race (batch x ctx tokens: student forward + backward, teacher forward). */
double cost_train_step(const model *m, int batch, int ctx);

#endif
