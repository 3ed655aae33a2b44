/* Encoding pipeline of tokenizer.json tokenizers: repair invalid UTF-8, cut
 * out added tokens, normalize, (cut out normalized added tokens), pre-tokenize,
 * run the BPE model on each word. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/utf8.h"

typedef struct {
    byte_buf norm, tmp;
    word_list words, wtmp;
    span_list nsegs;
} scratch;

static void scratch_free(scratch *s) {
    free(s->norm.p);
    free(s->tmp.p);
    free(s->words.buf.p);
    free(s->words.words.a);
    free(s->wtmp.buf.p);
    free(s->wtmp.words.a);
    free(s->nsegs.a);
}

static void encode_text(const hf_tokenizer *h, const char *s, size_t len, bool at_start, scratch *sc,
                        int_vec *ids) {
    bpe_model *m = (bpe_model *)&h->model; /* only its cache changes, under a lock */
    byte_buf_set(&sc->norm, s, len);
    normalize_apply(h->norm, h->n_norm, &sc->norm, &sc->tmp);
    sc->nsegs.n = 0;
    if (h->added.any_norm) added_vocab_split(&h->added, true, sc->norm.p, sc->norm.len, &sc->nsegs);
    else span_push(&sc->nsegs, 0, sc->norm.len, -1);
    for (size_t k = 0; k < sc->nsegs.n; k++) {
        const text_span *seg = &sc->nsegs.a[k];
        if (seg->id >= 0) {
            int_vec_push(ids, seg->id);
            continue;
        }
        pretokenize(h->pre, h->n_pre, sc->norm.p + seg->off, seg->len, at_start && seg->off == 0, &sc->words,
                    &sc->wtmp);
        for (size_t w = 0; w < sc->words.words.n; w++) {
            const text_span *word = &sc->words.words.a[w];
            bpe_model_encode_word(m, sc->words.buf.p + word->off, word->len, ids);
        }
    }
}

void hf_encode(const hf_tokenizer *h, const char *text, size_t len, int_vec *ids) {
    size_t fixed_len = 0;
    char *fixed = utf8_repair(text, len, &fixed_len);
    const char *s = fixed ? fixed : text;
    if (fixed) len = fixed_len;
    span_list segs = {0};
    added_vocab_split(&h->added, false, s, len, &segs);
    scratch sc = {0};
    for (size_t k = 0; k < segs.n; k++) {
        const text_span *seg = &segs.a[k];
        if (seg->id >= 0) int_vec_push(ids, seg->id);
        else if (seg->len > 0) encode_text(h, s + seg->off, seg->len, seg->off == 0, &sc, ids);
    }
    scratch_free(&sc);
    free(segs.a);
    free(fixed);
}
