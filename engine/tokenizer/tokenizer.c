#include "tokenizer/tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void tok_buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (*len + n + 1 > c) c *= 2;
        *buf = gf_realloc(*buf, c);
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
}

void tokenizer_free(tokenizer *t) {
    if (!t) return;
    if (t->ops && t->ops->destroy) t->ops->destroy(t->impl);
    free(t);
}

void tokenizer_encode(const tokenizer *t, const char *text, size_t len, bool add_bos, int_vec *ids) {
    if (add_bos && t->bos >= 0) int_vec_push(ids, t->bos);
    t->ops->encode(t, text, len, ids);
}

char *tokenizer_decode(const tokenizer *t, const int *ids, size_t n, size_t *len_out) {
    char *buf = NULL;
    size_t len = 0, cap = 0;
    tok_buf_append(&buf, &len, &cap, "", 0);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab_size || ids[i] == t->bos) continue;
        t->ops->decode_piece(t, i ? ids[i - 1] : -1, ids[i], &buf, &len, &cap);
    }
    if (len_out) *len_out = len;
    return buf;
}

char *tokenizer_decode_piece(const tokenizer *t, int prev, int id) {
    char *buf = NULL;
    size_t len = 0, cap = 0;
    tok_buf_append(&buf, &len, &cap, "", 0);
    if (id >= 0 && id < t->vocab_size) t->ops->decode_piece(t, prev, id, &buf, &len, &cap);
    return buf;
}

int tokenizer_bos(const tokenizer *t) { return t->bos; }
int tokenizer_eos(const tokenizer *t) { return t->eos; }
int tokenizer_vocab_size(const tokenizer *t) { return t->vocab_size; }
const char *tokenizer_kind(const tokenizer *t) { return t->ops->kind; }
