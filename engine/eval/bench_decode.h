/* Decoding speed and memory at a given context (graft bench-decode): B
 * sequences of `context` tokens are prefilled (in chunks of at most
 * prefill_chunk positions per call, so activations stay bounded at long
 * context), then each sequence decodes `tokens` more, one greedy token per
 * call for all B rows at once (attention layers read their KV cache, GDN
 * layers carry their recurrent state; the same decode run as generate). The
 * prompt's ids are drawn from the seed: speed does not depend on them.
 * Memory per sequence is what the run's allocation holds for it, as carved
 * (tf_run_bytes): the KV cache for context + tokens positions and the GDN
 * state; the run's whole allocation (activations for B x prefill_chunk rows
 * included) is reported beside it. */
#ifndef GRAFT_EVAL_BENCH_DECODE_H
#define GRAFT_EVAL_BENCH_DECODE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "model/transformer.h"

typedef struct {
    int context, batch, tokens;  /* prefilled tokens per sequence, sequences, decoded tokens per sequence */
    int prefill_chunk;           /* positions per prefill call (0: the whole context in one call) */
    uint64_t seed;
    const atomic_int *cancel;    /* non-zero: stop with "cancelled" (NULL: never) */
} decode_bench_opts;

typedef struct {
    int context, batch, tokens, prefill_chunk;
    double prefill_s;            /* all B x context prompt tokens, the first token's logits included */
    double decode_s;             /* the `tokens` decode steps (forward, logits, argmax on the host) */
    double prefill_tok_s;        /* B x context / prefill_s */
    double decode_tok_s;         /* B x tokens / decode_s (every sequence's tokens) */
    double ms_per_step;          /* decode_s / tokens: one token for each of the B sequences */
    double prefill_cpu_s, decode_cpu_s; /* the process's CPU time (all threads) over the same spans: on a
                                           shared machine, the figure wall time cannot give */
    size_t kv_bytes_per_seq;     /* KV cache of the attention layers, context + tokens positions */
    size_t state_bytes_per_seq;  /* GDN recurrent state and conv history */
    size_t run_bytes;            /* the run's whole allocation (cache, state, activations, logits) */
} decode_bench_point;

/* One point on tf (a teacher's view or a student's). 0, or -1 with a
 * one-line error (bad sizes, the context of the model exceeded, out of
 * memory, a backend error, "cancelled"). */
int decode_bench_run(transformer *tf, const decode_bench_opts *o, decode_bench_point *out);

/* The run options of a point (the memory check sizes the job with them). */
tf_run_opts decode_bench_run_opts(const decode_bench_opts *o);

#endif
