/* tokenizer.json / tokenizer_config.json writers (see tokenizer_export.h).
 *
 * llama2.c: the SentencePiece layout of Llama 2's tokenizer.json: spaces as
 * U+2581 in the vocabulary, Prepend + Replace normalizers (llama2.c's dummy
 * prefix), byte fallback to <0xXX> (ids 3..258), and every split of a piece
 * into two pieces as a merge ranked by the piece's score (llama2.c merges the
 * pair whose joined piece scores highest).
 * hf_tokenizer (GGUF metadata): a dump of graft's own pipeline (normalizers,
 * regex splits, model, added tokens, decoder). */
#include "tokenizer/tokenizer_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strmap.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

static const char META[] = "\xe2\x96\x81"; /* U+2581, SentencePiece's space */

static bool valid_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t bad, k = utf8_valid_len((const unsigned char *)s + i, n - i, &bad);
        if (k == 0) return false;
        i += k;
    }
    return memchr(s, 0, n) == NULL;
}

/* ------------------------------------------------------------ JSON parts */

static cJSON *added_token_json(int id, const char *content, bool special, bool normalized, bool lstrip,
                               bool rstrip, bool single_word) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "content", content);
    cJSON_AddBoolToObject(o, "single_word", single_word);
    cJSON_AddBoolToObject(o, "lstrip", lstrip);
    cJSON_AddBoolToObject(o, "rstrip", rstrip);
    cJSON_AddBoolToObject(o, "normalized", normalized);
    cJSON_AddBoolToObject(o, "special", special);
    return o;
}

static cJSON *replace_json(const char *from, const char *to) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "Replace");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "pattern"), "String", from);
    cJSON_AddStringToObject(o, "content", to);
    return o;
}

static cJSON *typed(const char *type) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    return o;
}

/* A Sequence of items (or the single item, or null when empty). */
static cJSON *sequence(const char *list_key, cJSON **items, int n) {
    if (n == 0) return cJSON_CreateNull();
    if (n == 1) return items[0];
    cJSON *o = typed("Sequence");
    cJSON *a = cJSON_AddArrayToObject(o, list_key);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, items[i]);
    return o;
}

static cJSON *spm_decoder(const char *meta, bool byte_fallback, bool strip_first) {
    cJSON *d[4];
    int n = 0;
    if (meta) d[n++] = replace_json(meta, " ");
    if (byte_fallback) d[n++] = typed("ByteFallback");
    d[n++] = typed("Fuse");
    if (strip_first) {
        cJSON *s = typed("Strip");
        cJSON_AddStringToObject(s, "content", " ");
        cJSON_AddNumberToObject(s, "start", 1);
        cJSON_AddNumberToObject(s, "stop", 0);
        d[n++] = s;
    }
    return sequence("decoders", d, n);
}

static cJSON *template_piece(const char *kind, const char *id, int type_id) {
    cJSON *o = cJSON_CreateObject();
    cJSON *in = cJSON_AddObjectToObject(o, kind);
    cJSON_AddStringToObject(in, "id", id);
    cJSON_AddNumberToObject(in, "type_id", type_id);
    return o;
}

/* BOS before each sequence, as graft prepends it; null without a BOS. */
static cJSON *bos_post_processor(const char *bos, int bos_id) {
    if (!bos) return cJSON_CreateNull();
    cJSON *o = typed("TemplateProcessing");
    cJSON *single = cJSON_AddArrayToObject(o, "single");
    cJSON_AddItemToArray(single, template_piece("SpecialToken", bos, 0));
    cJSON_AddItemToArray(single, template_piece("Sequence", "A", 0));
    cJSON *pair = cJSON_AddArrayToObject(o, "pair");
    cJSON_AddItemToArray(pair, template_piece("SpecialToken", bos, 0));
    cJSON_AddItemToArray(pair, template_piece("Sequence", "A", 0));
    cJSON_AddItemToArray(pair, template_piece("SpecialToken", bos, 1));
    cJSON_AddItemToArray(pair, template_piece("Sequence", "B", 1));
    cJSON *st = cJSON_AddObjectToObject(o, "special_tokens");
    cJSON *b = cJSON_AddObjectToObject(st, bos);
    cJSON_AddStringToObject(b, "id", bos);
    cJSON_AddItemToObject(b, "ids", cJSON_CreateIntArray(&bos_id, 1));
    cJSON_AddItemToObject(b, "tokens", cJSON_CreateStringArray(&bos, 1));
    return o;
}

static cJSON *bpe_model_json(const char *unk, bool fuse_unk, bool byte_fallback, bool ignore_merges) {
    cJSON *o = typed("BPE");
    cJSON_AddNullToObject(o, "dropout");
    if (unk) cJSON_AddStringToObject(o, "unk_token", unk);
    else cJSON_AddNullToObject(o, "unk_token");
    cJSON_AddNullToObject(o, "continuing_subword_prefix");
    cJSON_AddNullToObject(o, "end_of_word_suffix");
    cJSON_AddBoolToObject(o, "fuse_unk", fuse_unk);
    cJSON_AddBoolToObject(o, "byte_fallback", byte_fallback);
    cJSON_AddBoolToObject(o, "ignore_merges", ignore_merges);
    return o;
}

static cJSON *tokenizer_root(void) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", "1.0");
    cJSON_AddNullToObject(o, "truncation");
    cJSON_AddNullToObject(o, "padding");
    return o;
}

/* Merges as ["left", "right"] pairs (tokenizers >= 0.20; pieces may hold spaces). */
static void add_merge(cJSON *merges, const char *a, const char *b) {
    const char *ab[2] = {a, b};
    cJSON_AddItemToArray(merges, cJSON_CreateStringArray(ab, 2));
}

/* ------------------------------------------------------------ llama2.c */

typedef struct {
    float score;
    int merged, split, left, right;
} l2c_merge;

static int l2c_merge_order(const void *pa, const void *pb) {
    const l2c_merge *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->merged != b->merged) return a->merged < b->merged ? -1 : 1;
    return a->split < b->split ? -1 : a->split > b->split;
}

/* piece with ' ' -> U+2581 (malloc'd) */
static char *to_meta(const char *p, int len) {
    char *out = gf_malloc((size_t)len * 3 + 1);
    size_t k = 0;
    for (int i = 0; i < len; i++) {
        if (p[i] == ' ') {
            memcpy(out + k, META, 3);
            k += 3;
        } else {
            out[k++] = p[i];
        }
    }
    out[k] = 0;
    return out;
}

static const char *const L2C_SPECIAL[3] = {"<unk>", "<s>", "</s>"};

static cJSON *llama2c_json(const tokenizer *t, char *const *pieces, const int *lens, const float *scores) {
    const int V = t->vocab_size;
    if (V < 259) return gf_fail("a llama2.c vocabulary of %d tokens cannot hold the 256 byte tokens", V), NULL;
    for (int b = 0; b < 256; b++) {
        char want[8];
        snprintf(want, sizeof want, "<0x%02X>", b);
        if (lens[b + 3] != 6 || memcmp(pieces[b + 3], want, 6) != 0)
            return gf_fail("llama2.c token %d is not the byte token %s (byte fallback would differ)", b + 3, want), NULL;
    }
    strmap first; /* HF piece -> first id (llama2.c's lookup keeps the first occurrence) */
    strmap_init(&first, (size_t)V);
    char **hf = gf_calloc((size_t)V, sizeof *hf);
    cJSON *root = NULL;
    int bad = 0;
    for (int i = 0; i < V && !bad; i++) {
        if (i < 3) hf[i] = gf_strdup(L2C_SPECIAL[i]);
        else if (!valid_utf8(pieces[i], (size_t)lens[i]))
            bad = gf_fail("llama2.c token %d is not valid UTF-8 text (tokenizer.json holds text)", i);
        else if (strstr(pieces[i], META))
            bad = gf_fail("llama2.c token %d holds U+2581, which tokenizer.json uses for spaces", i);
        else hf[i] = to_meta(pieces[i], lens[i]);
        if (hf[i] && strmap_get(&first, hf[i], strlen(hf[i])) < 0) strmap_put(&first, hf[i], strlen(hf[i]), i);
    }
    if (bad) goto done;

    root = tokenizer_root();
    cJSON *added = cJSON_AddArrayToObject(root, "added_tokens");
    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(added, added_token_json(i, hf[i], true, false, false, false, false));
    cJSON *norm[2];
    int nn = 0;
    const bool dummy_prefix = strmap_get(&first, META, 3) >= 0; /* llama2.c adds " " only when it is a token */
    if (dummy_prefix) {
        norm[nn] = typed("Prepend");
        cJSON_AddStringToObject(norm[nn++], "prepend", META);
    }
    norm[nn++] = replace_json(" ", META);
    cJSON_AddItemToObject(root, "normalizer", sequence("normalizers", norm, nn));
    cJSON_AddNullToObject(root, "pre_tokenizer");
    cJSON_AddItemToObject(root, "post_processor", bos_post_processor(hf[1], 1));
    cJSON_AddItemToObject(root, "decoder", spm_decoder(META, true, true));
    cJSON *model = bpe_model_json(hf[0], true, true, false);
    cJSON_AddItemToObject(root, "model", model);
    cJSON *vocab = cJSON_AddObjectToObject(model, "vocab");
    for (int i = 0; i < V; i++)
        if (strmap_get(&first, hf[i], strlen(hf[i])) == i) cJSON_AddNumberToObject(vocab, hf[i], i);

    /* every split of a non-special piece into two pieces */
    size_t cap = 0, n = 0;
    for (int i = 259; i < V; i++) cap += lens[i] > 1 ? (size_t)lens[i] - 1 : 0;
    l2c_merge *mg = gf_malloc((cap ? cap : 1) * sizeof *mg);
    strmap raw; /* llama2.c pieces as they are, first occurrence */
    strmap_init(&raw, (size_t)V);
    for (int i = 0; i < V; i++)
        if (strmap_get(&raw, pieces[i], (size_t)lens[i]) < 0) strmap_put(&raw, pieces[i], (size_t)lens[i], i);
    for (int i = 259; i < V; i++) {
        if (strmap_get(&raw, pieces[i], (size_t)lens[i]) != i) continue; /* a later duplicate never results */
        for (int k = 1; k < lens[i]; k++) {
            if (((unsigned char)pieces[i][k] & 0xC0) == 0x80) continue;
            int a = strmap_get(&raw, pieces[i], (size_t)k), b = strmap_get(&raw, pieces[i] + k, (size_t)(lens[i] - k));
            if (a < 0 || b < 0) continue;
            mg[n++] = (l2c_merge){scores[i], i, k, a, b};
        }
    }
    qsort(mg, n, sizeof *mg, l2c_merge_order);
    cJSON *merges = cJSON_AddArrayToObject(model, "merges");
    for (size_t r = 0; r < n; r++) add_merge(merges, hf[mg[r].left], hf[mg[r].right]);
    free(mg);
    strmap_free(&raw);
done:
    for (int i = 0; i < V; i++) free(hf[i]);
    free(hf);
    strmap_free(&first);
    return root;
}

/* ------------------------------------------------------------ hf_tokenizer */

static cJSON *normalizer_json(const hf_tokenizer *h) {
    cJSON **items = gf_malloc((size_t)(h->n_norm ? h->n_norm : 1) * sizeof *items);
    for (int i = 0; i < h->n_norm; i++) {
        const norm_op *op = &h->norm[i];
        if (op->kind == NORM_NFC) {
            items[i] = typed("NFC");
        } else if (op->kind == NORM_PREPEND) {
            items[i] = typed("Prepend");
            cJSON_AddStringToObject(items[i], "prepend", op->a);
        } else {
            items[i] = replace_json(op->a, op->b);
        }
    }
    cJSON *o = sequence("normalizers", items, h->n_norm);
    free(items);
    return o;
}

static const char *scheme_name(prepend_scheme s) {
    return s == PREPEND_ALWAYS ? "always" : s == PREPEND_FIRST ? "first" : "never";
}

static cJSON *pre_tokenizer_json(const hf_tokenizer *h) {
    cJSON **items = gf_malloc((size_t)(h->n_pre + 1) * sizeof *items);
    int n = 0;
    bool has_bytelevel = false;
    for (int i = 0; i < h->n_pre; i++) {
        const pre_op *op = &h->pre[i];
        cJSON *o;
        if (op->kind == PRE_SPLIT_REGEX) {
            if (!op->pattern) {
                for (int j = 0; j < n; j++) cJSON_Delete(items[j]);
                free(items);
                return gf_fail("a split pre-tokenizer's pattern is unknown"), NULL;
            }
            o = typed("Split");
            cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "pattern"), op->pattern_literal ? "String" : "Regex",
                                    op->pattern);
            cJSON_AddStringToObject(o, "behavior", "Isolated");
            cJSON_AddBoolToObject(o, "invert", false);
        } else if (op->kind == PRE_BYTELEVEL) {
            has_bytelevel = true;
            o = typed("ByteLevel");
            cJSON_AddBoolToObject(o, "add_prefix_space", op->add_prefix_space);
            cJSON_AddBoolToObject(o, "trim_offsets", true);
            cJSON_AddBoolToObject(o, "use_regex", op->regex != NULL);
        } else {
            o = typed("Metaspace");
            cJSON_AddStringToObject(o, "replacement", op->meta);
            cJSON_AddStringToObject(o, "prepend_scheme", scheme_name(op->scheme));
            cJSON_AddBoolToObject(o, "split", op->split);
        }
        items[n++] = o;
    }
    /* graft maps bytes to GPT-2 characters inside the model; the library does it
     * in the ByteLevel pre-tokenizer, which here must not split again */
    if (h->model.bytelevel && !has_bytelevel) {
        cJSON *o = typed("ByteLevel");
        cJSON_AddBoolToObject(o, "add_prefix_space", false);
        cJSON_AddBoolToObject(o, "trim_offsets", true);
        cJSON_AddBoolToObject(o, "use_regex", false);
        items[n++] = o;
    }
    cJSON *o = sequence("pretokenizers", items, n);
    free(items);
    return o;
}

typedef struct {
    double priority;
    int rank, left, right;
} hf_merge;

static int hf_merge_order(const void *pa, const void *pb) {
    const hf_merge *a = pa, *b = pb;
    if (a->priority != b->priority) return a->priority > b->priority ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The text tokenizer.json gives token id (added tokens: their content). */
static const char *hf_piece(const hf_tokenizer *h, int id) {
    for (int i = 0; i < h->added.n; i++)
        if (h->added.tok[i].id == id) return h->added.tok[i].content;
    return id >= 0 && id < h->model.vocab_size ? h->model.pieces[id] : NULL;
}

static cJSON *hf_json(const tokenizer *t, const hf_tokenizer *h) {
    const bpe_model *m = &h->model;
    const int V = m->vocab_size;
    for (int i = 0; i < V; i++)
        if (m->pieces[i] && !valid_utf8(m->pieces[i], (size_t)m->piece_len[i]))
            return gf_fail("token %d is not valid UTF-8 text (tokenizer.json holds text)", i), NULL;
    for (int i = 0; i < h->added.n; i++)
        if (!valid_utf8(h->added.tok[i].content, h->added.tok[i].len))
            return gf_fail("added token %d is not valid UTF-8 text", h->added.tok[i].id), NULL;
    cJSON *pre = pre_tokenizer_json(h);
    if (!pre) return NULL;

    cJSON *root = tokenizer_root();
    cJSON *added = cJSON_AddArrayToObject(root, "added_tokens");
    for (int i = 0; i < h->added.n; i++) {
        const added_token *a = &h->added.tok[i];
        cJSON_AddItemToArray(added, added_token_json(a->id, a->content, a->special, a->normalized, a->lstrip, a->rstrip,
                                                     a->single_word));
    }
    cJSON_AddItemToObject(root, "normalizer", normalizer_json(h));
    cJSON_AddItemToObject(root, "pre_tokenizer", pre);
    cJSON_AddItemToObject(root, "post_processor", bos_post_processor(t->bos >= 0 ? hf_piece(h, t->bos) : NULL, t->bos));
    if (m->bytelevel) {
        cJSON *d = typed("ByteLevel");
        cJSON_AddBoolToObject(d, "add_prefix_space", true);
        cJSON_AddBoolToObject(d, "trim_offsets", true);
        cJSON_AddBoolToObject(d, "use_regex", true);
        cJSON_AddItemToObject(root, "decoder", d);
    } else {
        cJSON_AddItemToObject(root, "decoder", spm_decoder(h->dec_meta_len ? h->dec_meta : NULL, h->dec_byte_fallback,
                                                           h->dec_strip_first));
    }
    cJSON *model = bpe_model_json(m->unk_id >= 0 ? m->pieces[m->unk_id] : NULL, m->fuse_unk, m->byte_fallback,
                                  m->ignore_merges);
    cJSON_AddItemToObject(root, "model", model);

    /* the model vocabulary, plus added tokens whose text is no model piece */
    cJSON *vocab = cJSON_AddObjectToObject(model, "vocab");
    strmap seen;
    strmap_init(&seen, (size_t)V);
    for (int i = 0; i < V; i++) {
        if (m->is_added[i] || !m->pieces[i]) continue;
        size_t n = (size_t)m->piece_len[i];
        if (strmap_get(&m->vocab, m->pieces[i], n) != i) continue; /* a duplicate: the owner holds the text */
        strmap_put(&seen, m->pieces[i], n, i);
        cJSON_AddNumberToObject(vocab, m->pieces[i], i);
    }
    for (int i = 0; i < h->added.n; i++) {
        const added_token *a = &h->added.tok[i];
        if (strmap_get(&seen, a->content, a->len) >= 0) continue;
        strmap_put(&seen, a->content, a->len, a->id);
        cJSON_AddNumberToObject(vocab, a->content, a->id);
    }
    strmap_free(&seen);

    /* merges in priority order (GGUF SentencePiece: by score; else by rank) */
    hf_merge *mg = gf_malloc((size_t)(m->n_merges ? m->n_merges : 1) * sizeof *mg);
    int n = 0;
    for (size_t s = 0; s < m->merges.cap; s++) {
        if (!m->merges.keys[s]) continue;
        uint64_t key = m->merges.keys[s] - 1;
        int r = m->merges.vals[s];
        mg[n++] = (hf_merge){m->merge_priority ? m->merge_priority[r] : -(double)r, r, (int)(key >> 32),
                             (int)(key & 0xffffffffu)};
    }
    qsort(mg, (size_t)n, sizeof *mg, hf_merge_order);
    cJSON *merges = cJSON_AddArrayToObject(model, "merges");
    for (int r = 0; r < n; r++) add_merge(merges, m->pieces[mg[r].left], m->pieces[mg[r].right]);
    free(mg);
    return root;
}

/* ------------------------------------------------------------ public */

cJSON *tokenizer_export_json(const tokenizer *t) {
    gf_clear_error();
    char *const *pieces;
    const int *lens;
    const float *scores;
    if (llama2c_vocab_view(t, &pieces, &lens, &scores)) return llama2c_json(t, pieces, lens, scores);
    return hf_json(t, t->impl);
}

static void add_token_or_null(cJSON *o, const char *key, const char *text) {
    if (text) cJSON_AddStringToObject(o, key, text);
    else cJSON_AddNullToObject(o, key);
}

cJSON *tokenizer_export_config(const tokenizer *t, int max_len) {
    char *const *pieces;
    const int *lens;
    const float *scores;
    const bool l2c = llama2c_vocab_view(t, &pieces, &lens, &scores);
    const hf_tokenizer *h = l2c ? NULL : t->impl;
    const char *bos = NULL, *eos = NULL, *unk = NULL;
    if (l2c) {
        bos = L2C_SPECIAL[1];
        eos = L2C_SPECIAL[2];
        unk = L2C_SPECIAL[0];
    } else {
        bos = t->bos >= 0 ? hf_piece(h, t->bos) : NULL;
        eos = t->eos >= 0 ? hf_piece(h, t->eos) : NULL;
        unk = h->model.unk_id >= 0 ? hf_piece(h, h->model.unk_id) : NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tokenizer_class", "PreTrainedTokenizerFast");
    add_token_or_null(o, "bos_token", bos);
    add_token_or_null(o, "eos_token", eos);
    add_token_or_null(o, "unk_token", unk);
    cJSON_AddBoolToObject(o, "add_bos_token", bos != NULL);
    cJSON_AddBoolToObject(o, "add_eos_token", false);
    cJSON_AddBoolToObject(o, "clean_up_tokenization_spaces", false);
    const char *inputs[2] = {"input_ids", "attention_mask"}; /* no token_type_ids for a decoder */
    cJSON_AddItemToObject(o, "model_input_names", cJSON_CreateStringArray(inputs, 2));
    if (max_len > 0) cJSON_AddNumberToObject(o, "model_max_length", max_len);
    return o;
}
