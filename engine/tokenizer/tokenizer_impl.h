/* What every tokenizer flavour provides behind the opaque tokenizer type. */
#ifndef GRAFT_TOKENIZER_IMPL_H
#define GRAFT_TOKENIZER_IMPL_H

#include "tokenizer/tokenizer.h"

typedef struct {
    const char *kind;
    void (*encode)(const tokenizer *t, const char *text, size_t len, int_vec *ids);
    /* appends the bytes of one token, given the previous id (-1 at the start) */
    void (*decode_piece)(const tokenizer *t, int prev, int id, char **buf, size_t *len, size_t *cap);
    void (*destroy)(void *impl);
} tokenizer_ops;

struct tokenizer {
    const tokenizer_ops *ops;
    void *impl;
    int bos, eos, vocab_size;
};

/* The scored vocabulary of a llama2.c tokenizer ([vocab_size] pieces, byte
 * lengths, scores), for the tokenizer.json exporter; false for other kinds. */
bool llama2c_vocab_view(const tokenizer *t, char *const **pieces, const int **lens, const float **scores);

/* Appends n bytes to a growable buffer. */
void tok_buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n);

#endif
