/* Autoregressive generation: a prefill of the prompt, then one token at a
 * time through the KV cache of attention layers and the recurrent state (and
 * conv history) of GDN layers; greedy, or temperature sampling. generate_text
 * is the text-in, text-out form `graft generate` and the workbench's prompt
 * box both run. */
#ifndef GRAFT_EVAL_GENERATE_H
#define GRAFT_EVAL_GENERATE_H

#include <stdatomic.h>
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
    /* non-zero: stop with "cancelled" (checked before each token and between
       layers of every forward pass); NULL: never */
    const atomic_int *cancel;
} generate_opts;

/* prompt[0..n) (BOS included by the caller); appends new ids to out. */
int generate(const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out);
/* The same with any transformer over teacher m (its tokenizer and config). */
int generate_tf(transformer *tf, const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out);

/* n sequences sampled together (one decode run of n rows over m): each is
 * `first`, then len-1 tokens drawn at temperature t > 0, row i with the rng
 * generate seeds from seeds[i]; no EOS stop; positions past the model's
 * context repeat `first`. out [n, len]. A row's tokens depend on n (batched
 * arithmetic rounds its own way), not on the other rows' seeds. */
int generate_rows(const model *m, int first, int n, int len, double temperature, const uint64_t *seeds, int *out);

/* Text as `graft generate` makes it: the prompt ("" : BOS alone) encoded with
 * BOS, decoded back and handed to on_text first (generated 0), then each new
 * token's piece as it comes (generated 1, 2, ...); context: the tokens in the
 * model's context with it (BOS and prompt included). o->on_token is not used.
 * on_text may be NULL. -1 with a one-line error: no tokenizer, nothing to
 * condition on (no BOS and no prompt), the prompt fills the context, a
 * backend error, or "cancelled". */
typedef struct {
    int_vec ids;       /* after BOS: the prompt's ids, then the generated ones */
    int prompt_tokens; /* the prompt's share of ids */
    int generated;
    bool bos;          /* the prompt started with BOS (dropped from ids) */
} generated_text;

int generate_text(transformer *tf, const model *m, const char *prompt, const generate_opts *o,
                  void (*on_text)(void *ud, const char *text, int context, int generated), void *ud,
                  generated_text *out);
void generated_text_free(generated_text *g);

#endif
