/* Autoregressive generation: a prefill of the prompt, then one token at a
 * time through the KV cache of attention layers and the recurrent state (and
 * conv history) of GDN layers; greedy, or temperature sampling. */
#ifndef GRAFT_EVAL_GENERATE_H
#define GRAFT_EVAL_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/vec.h"
#include "model/model.h"
#include "model/transformer.h"

typedef struct {
    int max_new;        /* tokens to generate */
    double temperature; /* 0 = greedy (argmax, lowest id on ties) */
    uint64_t seed;
    bool stop_at_eos;   /* stop at the tokenizer's EOS (and BOS for llama2.c models) */
    /* called with each new token; may be NULL */
    void (*on_token)(void *ud, int prev, int id);
    void *ud;
} generate_opts;

/* prompt[0..n) (BOS included by the caller); appends new ids to out. */
int generate(const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out);
/* The same with any transformer over teacher m (its tokenizer and config). */
int generate_tf(transformer *tf, const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out);

#endif
