/* llama2.c tokenizer.bin: scored vocabulary, merges by highest score.
 * Encoding follows llama2.c's encode(): a dummy-prefix space token when the
 * text is non-empty, one token per UTF-8 code point (byte tokens 3..258 as a
 * fallback), then greedy highest-score pair merging. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/strmap.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/tokenizer_impl.h"

/* Ids 3..258 are the byte-fallback tokens <0x00>..<0xFF> (llama2.c's encode()
 * emits byte + 3 for any character missing from the vocabulary). */
enum { L2C_BYTE_BASE = 3, L2C_MIN_VOCAB = L2C_BYTE_BASE + 256 };

typedef struct {
    char **pieces;   /* [V] NUL-terminated */
    int *lens;       /* [V] */
    float *scores;   /* [V] */
    int n;
    strmap lookup;   /* piece -> id */
    char *scratch;   /* for pair concatenation */
    int max_len;
} l2c_vocab;

static void l2c_destroy(void *p) {
    l2c_vocab *v = p;
    for (int i = 0; i < v->n; i++) free(v->pieces[i]);
    free(v->pieces);
    free(v->lens);
    free(v->scores);
    free(v->scratch);
    strmap_free(&v->lookup);
    free(v);
}

typedef struct {
    const l2c_vocab *v;
    char *buf;
} pair_ctx;

static bool l2c_pair(void *ctx, int a, int b, double *priority, int *merged) {
    pair_ctx *c = ctx;
    const l2c_vocab *v = c->v;
    size_t la = (size_t)v->lens[a], lb = (size_t)v->lens[b];
    memcpy(c->buf, v->pieces[a], la);
    memcpy(c->buf + la, v->pieces[b], lb);
    int id = strmap_get(&v->lookup, c->buf, la + lb);
    if (id < 0) return false;
    *priority = v->scores[id];
    *merged = id;
    return true;
}

static size_t utf8_len(const unsigned char *s, size_t left) {
    /* llama2.c groups a lead byte with following continuation bytes (up to 4) */
    size_t n = 1;
    while (n < left && n < 4 && (s[n] & 0xC0) == 0x80) n++;
    return n;
}

static void l2c_encode(const tokenizer *t, const char *text, size_t len, int_vec *ids) {
    const l2c_vocab *v = t->impl;
    if (len == 0) return;
    bpe_sym *s = gf_malloc((len + 1) * sizeof *s);
    int n = 0;
    int space = strmap_get(&v->lookup, " ", 1);
    if (space >= 0) s[n++].id = space;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_len((const unsigned char *)text + i, len - i);
        int id = strmap_get(&v->lookup, text + i, k);
        if (id >= 0) {
            s[n++].id = id;
        } else {
            for (size_t j = 0; j < k; j++) s[n++].id = (unsigned char)text[i + j] + L2C_BYTE_BASE;
        }
        i += k;
    }
    for (int i = 0; i < n; i++) {
        s[i].prev = i - 1;
        s[i].next = i + 1 < n ? i + 1 : -1;
    }
    pair_ctx ctx = {v, v->scratch};
    bpe_merge(s, n, l2c_pair, &ctx);
    for (int i = 0; i >= 0; i = s[i].next) int_vec_push(ids, s[i].id);
    free(s);
}

static void l2c_decode_piece(const tokenizer *t, int prev, int id, char **buf, size_t *len, size_t *cap) {
    const l2c_vocab *v = t->impl;
    const char *p = v->pieces[id];
    /* after BOS, llama2.c strips the leading space of the first piece */
    if (prev == t->bos && p[0] == ' ') p++;
    unsigned int byte;
    if (sscanf(p, "<0x%02X>", &byte) == 1 && strlen(p) == 6) {
        char c = (char)byte;
        tok_buf_append(buf, len, cap, &c, 1);
        return;
    }
    tok_buf_append(buf, len, cap, p, strlen(p));
}

static const tokenizer_ops l2c_ops = {"llama2c", l2c_encode, l2c_decode_piece, l2c_destroy};

bool llama2c_vocab_view(const tokenizer *t, char *const **pieces, const int **lens, const float **scores) {
    if (t->ops != &l2c_ops) return false;
    const l2c_vocab *v = t->impl;
    *pieces = v->pieces;
    *lens = v->lens;
    *scores = v->scores;
    return true;
}

int tokenizer_load_llama2c(tokenizer **out, const char *path, int vocab_size) {
    *out = NULL;
    if (vocab_size < L2C_MIN_VOCAB)
        return gf_fail("%s: a llama2.c tokenizer of %d tokens cannot hold the byte-fallback ids %d..%d", path,
                       vocab_size, L2C_BYTE_BASE, L2C_MIN_VOCAB - 1);
    mapped_file f;
    if (mapped_file_open(&f, path) != 0) return -1;
    /* each token takes at least 8 bytes (score, length): check before allocating */
    if (f.size < 4 || (size_t)vocab_size > (f.size - 4) / 8) {
        gf_fail("%s: %zu bytes cannot hold the %d tokens of the model's vocabulary", path, f.size, vocab_size);
        mapped_file_close(&f);
        return -1;
    }
    l2c_vocab *v = gf_calloc(1, sizeof *v);
    v->pieces = gf_calloc((size_t)vocab_size, sizeof *v->pieces);
    v->lens = gf_calloc((size_t)vocab_size, sizeof *v->lens);
    v->scores = gf_calloc((size_t)vocab_size, sizeof *v->scores);
    strmap_init(&v->lookup, (size_t)vocab_size);
    size_t off = 0;
    int rc = -1;
    uint32_t max_len;
    memcpy(&max_len, f.data, 4);
    off = 4;
    for (int i = 0; i < vocab_size; i++) {
        float score;
        int32_t n;
        if (off + 8 > f.size) {
            gf_fail("%s: truncated tokenizer at token %d of %d", path, i, vocab_size);
            goto done;
        }
        memcpy(&score, f.data + off, 4);
        memcpy(&n, f.data + off + 4, 4);
        off += 8;
        if (n < 0 || (size_t)n > f.size - off) {
            gf_fail("%s: token %d has length %d beyond the end of the file", path, i, n);
            goto done;
        }
        v->pieces[i] = gf_malloc((size_t)n + 1);
        memcpy(v->pieces[i], f.data + off, (size_t)n);
        v->pieces[i][n] = 0;
        v->lens[i] = n;
        v->scores[i] = score;
        if (n > v->max_len) v->max_len = n;
        off += (size_t)n;
        v->n = i + 1;
        /* first occurrence wins, like a sorted-vocab bsearch over unique pieces */
        if (strmap_get(&v->lookup, v->pieces[i], (size_t)n) < 0) strmap_put(&v->lookup, v->pieces[i], (size_t)n, i);
    }
    v->scratch = gf_malloc((size_t)v->max_len * 2 + 1);
    tokenizer *t = gf_calloc(1, sizeof *t);
    t->ops = &l2c_ops;
    t->impl = v;
    t->bos = 1;
    t->eos = 2;
    t->vocab_size = vocab_size;
    *out = t;
    rc = 0;
done:
    mapped_file_close(&f);
    if (rc != 0) l2c_destroy(v);
    return rc;
}
