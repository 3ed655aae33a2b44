/* Training sequences for recovery training: a corpus packed into windows of
 * ctx tokens, or (with no corpus) sequences sampled from the teacher.
 *
 * Corpus: a plain text file (one document), a JSON Lines file (one document
 * per line, its "text" field), or a folder of such files (*.txt, *.jsonl,
 * read in name order, not recursive). Each document is tokenized with BOS
 * first; the documents are concatenated and cut into consecutive windows of
 * ctx tokens. The last windows (eval_frac of them, at least one) are held out
 * for evaluation; the rest are visited in a seeded random order that is
 * reshuffled every epoch.
 *
 * Teacher-sampled: sequence g is BOS followed by ctx-1 tokens sampled from the
 * teacher at temperature 1 with a seed derived from (seed, g), so any sequence
 * can be regenerated exactly (resume needs no stored data). Sequences are
 * sampled TRAIN_DATA_SAMPLE_BLOCK at a time, g with the others of its block
 * g / TRAIN_DATA_SAMPLE_BLOCK, so what g holds does not depend on the batch,
 * the ranks or the order that ask for it. Held-out sequences use a disjoint
 * seed stream, sampled in blocks of the same size. */
#ifndef GRAFT_DATA_TRAIN_DATA_H
#define GRAFT_DATA_TRAIN_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

#define TRAIN_DATA_SAMPLE_BLOCK 8

typedef struct {
    int ctx;
    uint64_t seed;
    bool sampled;            /* teacher-sampled (no corpus) */
    const model *teacher;    /* sampled mode */
    int bos;
    int n_train, n_eval;
    int *train;              /* [n_train, ctx] corpus windows (NULL when sampled) */
    int *eval;               /* [n_eval, ctx] */
    int *perm;               /* [n_train] order of the current epoch */
    long perm_epoch;         /* epoch `perm` belongs to (-1: none) */
    int *block;              /* sampled mode: [TRAIN_DATA_SAMPLE_BLOCK, ctx], the block block_id */
    long block_id;           /* -1: none */
} train_data;

/* Corpus at path (file or folder). eval_frac in [0, 0.5]. */
int train_data_open(train_data *d, const char *path, const tokenizer *tok, int ctx, double eval_frac, uint64_t seed);
/* Teacher-sampled; n_eval held-out sequences are sampled now. */
int train_data_sampled(train_data *d, const model *teacher, int ctx, int n_eval, uint64_t seed);
void train_data_free(train_data *d);

/* The g-th training sequence (g = 0, 1, ... over the whole run) into out[ctx]. */
int train_data_get(train_data *d, long g, int *out);
/* Which sequence train_data_get(d, g) gives: the corpus window's index
 * (0 .. n_train-1, the g-th of the shuffled order), or g itself for
 * teacher-sampled data (its seed). For logs that compare data orders. */
long train_data_window(train_data *d, long g);
/* Teacher-sampled data: the sampling seed of training sequence g (generate_rows'
 * seeds[] for its block). */
uint64_t train_data_sample_seed(const train_data *d, long g);
/* Held-out sequence i < n_eval. */
const int *train_data_eval(const train_data *d, int i);

#endif
