/* Text files as token streams, and the fixed-length sequences cut from them. */
#ifndef GRAFT_DATA_TEXT_TOKENS_H
#define GRAFT_DATA_TEXT_TOKENS_H

#include <stdbool.h>

#include "core/vec.h"
#include "tokenizer/tokenizer.h"

/* Appends the ids of the file's bytes, as they are (BOS first when add_bos). */
int text_file_tokens(const tokenizer *t, const char *path, bool add_bos, int_vec *ids);

/* Cuts `ids` into n_seqs sequences of ctx tokens: each is BOS (when the
 * tokenizer has one) followed by the next ctx-1 (or ctx without BOS) tokens of
 * the stream, consecutive and non-overlapping from token `start`. n_seqs = 0
 * takes every complete sequence. out gets n_seqs * ctx ids. Fails when the
 * text holds fewer than one (or the requested number of) sequences. */
int cut_sequences(const int *ids, size_t n, size_t start, int bos, int ctx, int n_seqs, int_vec *out,
                  int *n_seqs_out);

#endif
