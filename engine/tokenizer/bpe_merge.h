/* Greedy pairwise merging shared by every BPE flavour.
 *
 * Symbols form a doubly linked list over an array. At each step the adjacent
 * pair with the highest priority merges (ties: the leftmost pair), exactly the
 * loop llama2.c and Hugging Face run, but with a heap, so a sequence of n
 * symbols costs O(n log n) instead of O(n^2). */
#ifndef GRAFT_TOKENIZER_BPE_MERGE_H
#define GRAFT_TOKENIZER_BPE_MERGE_H

#include <stdbool.h>

typedef struct {
    int id;         /* current token id */
    int prev, next; /* neighbours in the list, -1 at the ends */
} bpe_sym;

/* Returns true when (left, right) may merge, with its priority (higher merges
 * first) and the merged token id. */
typedef bool (*bpe_pair_fn)(void *ctx, int left_id, int right_id, double *priority, int *merged_id);

/* syms[0..n) linked in order; on return the survivors are linked from index 0
 * (index 0 always survives as the head). */
void bpe_merge(bpe_sym *syms, int n, bpe_pair_fn pair, void *ctx);

#endif
