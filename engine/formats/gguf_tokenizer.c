/* Tokenizers from GGUF metadata (see gguf_tokenizer.h). The regexes of the
 * pre-tokenizers are the ones llama.cpp (llama-vocab.cpp) and the original
 * tokenizer.json files use; Qwen2's tokenizer.json also normalizes to NFC,
 * which llama.cpp skips; we keep it, to match the model's own tokenizer. */
#include "formats/gguf_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/utf8.h"

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };
enum { MAX_VOCAB = 1 << 24 };

static const char GPT2_REGEX[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char LLAMA3_REGEX[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_REGEX[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char META[] = "\xe2\x96\x81"; /* U+2581, SentencePiece's space */

static bool str_is(gguf_str s, const char *lit) { return s.len == strlen(lit) && !memcmp(s.p, lit, s.len); }

static int push_split(hf_tokenizer *h, const char *regex) {
    pre_op op = {0};
    op.kind = PRE_SPLIT_REGEX;
    op.regex = pretok_regex_compile(regex);
    if (!op.regex) return -1;
    op.pattern = gf_strdup(regex);
    h->pre = gf_realloc(h->pre, (size_t)(h->n_pre + 1) * sizeof *h->pre);
    h->pre[h->n_pre++] = op;
    return 0;
}

static void push_norm(hf_tokenizer *h, norm_kind kind, const char *a, const char *b) {
    norm_op op = {0};
    op.kind = kind;
    if (a) { op.a = gf_strdup(a); op.alen = strlen(a); }
    if (b) { op.b = gf_strdup(b); op.blen = strlen(b); }
    h->norm = gf_realloc(h->norm, (size_t)(h->n_norm + 1) * sizeof *h->norm);
    h->norm[h->n_norm++] = op;
}

/* The pre-tokenizer llama.cpp selects by tokenizer.ggml.pre. */
static int gpt2_pretokenizer(hf_tokenizer *h, const gguf_file *g, const char *path) {
    gguf_str pre = {"default", 7};
    if (gguf_get_str(g, "tokenizer.ggml.pre", &pre) < 0) return -1;
    if (str_is(pre, "llama3") || str_is(pre, "llama-v3") || str_is(pre, "llama-bpe") || str_is(pre, "falcon3")) {
        h->model.ignore_merges = true; /* as Llama 3's tokenizer.json */
        return push_split(h, LLAMA3_REGEX);
    }
    if (str_is(pre, "qwen2") || str_is(pre, "qwen2.5") || str_is(pre, "deepseek-r1-qwen")) {
        push_norm(h, NORM_NFC, NULL, NULL);
        return push_split(h, QWEN2_REGEX);
    }
    if (str_is(pre, "smollm")) /* tokenizer.json: Digits(individual) then ByteLevel's GPT-2 regex */
        return push_split(h, "\\p{N}") != 0 ? -1 : push_split(h, GPT2_REGEX);
    if (str_is(pre, "default") || str_is(pre, "gpt2") || str_is(pre, "gpt-2")) return push_split(h, GPT2_REGEX);
    char pr[64];
    return gf_fail("%s: pre-tokenizer %s is not supported (llama-bpe/llama3, qwen2, smollm, gpt2, default)", path,
                   gguf_printable(pre, pr, sizeof pr));
}

static char *dup_str(gguf_str s) {
    char *p = gf_malloc(s.len + 1);
    memcpy(p, s.p, s.len);
    p[s.len] = 0;
    return p;
}

static int gpt2_merges(bpe_model *m, const gguf_file *g, const char *path) {
    const gguf_kv *mk = gguf_get_array(g, "tokenizer.ggml.merges", GGUF_STRING);
    if (!mk) return gf_fail("%s: tokenizer.ggml.merges (an array of strings) is missing", path);
    if (mk->arr_n > (uint64_t)MAX_VOCAB * 4) return gf_fail("%s: %llu merges is too many", path,
                                                            (unsigned long long)mk->arr_n);
    int n = (int)mk->arr_n;
    m->n_merges = n;
    m->merge_result = gf_malloc((size_t)(n ? n : 1) * sizeof *m->merge_result);
    pair_map_init(&m->merges, (size_t)n);
    char *joined = NULL, pr[64];
    size_t cap = 0;
    int rc = 0;
    for (int r = 0; r < n && rc == 0; r++) {
        gguf_str e = mk->arr_str[r];
        const char *sp = e.len > 1 ? memchr(e.p + 1, ' ', e.len - 1) : NULL;
        if (!sp) {
            rc = gf_fail("%s: merge %d (\"%s\") is not \"a b\"", path, r, gguf_printable(e, pr, sizeof pr));
            break;
        }
        size_t la = (size_t)(sp - e.p), lb = e.len - la - 1;
        if (la + lb > cap) joined = gf_realloc(joined, cap = 2 * (la + lb));
        memcpy(joined, e.p, la);
        memcpy(joined + la, sp + 1, lb);
        int ia = strmap_get(&m->vocab, e.p, la), ib = strmap_get(&m->vocab, sp + 1, lb);
        int iab = strmap_get(&m->vocab, joined, la + lb);
        if (ia < 0 || ib < 0 || iab < 0) {
            rc = gf_fail("%s: merge %d (%s) uses a token missing from the vocabulary", path, r,
                         gguf_printable(e, pr, sizeof pr));
            break;
        }
        pair_map_put(&m->merges, ia, ib, r);
        m->merge_result[r] = iab;
    }
    free(joined);
    return rc;
}

/* SentencePiece BPE: every split of a token into two tokens is a merge whose
 * priority is the token's score (llama.cpp's and sentencepiece's rule). */
static int spm_merges(bpe_model *m, const int *type, const float *score) {
    size_t cap = 0;
    for (int i = 0; i < m->vocab_size; i++)
        if (m->piece_len[i] > 1) cap += (size_t)m->piece_len[i] - 1;
    m->merge_result = gf_malloc((cap ? cap : 1) * sizeof *m->merge_result);
    m->merge_priority = gf_malloc((cap ? cap : 1) * sizeof *m->merge_priority);
    pair_map_init(&m->merges, cap);
    int n = 0;
    for (int i = 0; i < m->vocab_size; i++) {
        if (type[i] != TT_NORMAL || m->piece_len[i] < 2 || m->is_added[i]) continue;
        const char *p = m->pieces[i];
        size_t len = (size_t)m->piece_len[i];
        if (strmap_get(&m->vocab, p, len) != i) continue; /* a duplicate piece: the later id owns the text */
        for (size_t k = 1; k < len; k++) {
            if (((unsigned char)p[k] & 0xC0) == 0x80) continue; /* inside a UTF-8 character */
            int a = strmap_get(&m->vocab, p, k), b = strmap_get(&m->vocab, p + k, len - k);
            if (a < 0 || b < 0 || pair_map_get(&m->merges, a, b) >= 0) continue;
            pair_map_put(&m->merges, a, b, n);
            m->merge_result[n] = i;
            m->merge_priority[n] = score[i];
            n++;
        }
    }
    m->n_merges = n;
    return 0;
}

static int build(hf_tokenizer *h, const gguf_file *g, int *bos, int *eos) {
    const char *path = g->mf.path;
    bpe_model *m = &h->model;
    gguf_str model;
    int r = gguf_get_str(g, "tokenizer.ggml.model", &model);
    if (r <= 0) return r < 0 ? -1 : gf_fail("%s: no tokenizer.ggml.model in the metadata", path);
    bool spm = str_is(model, "llama");
    char pr[64];
    if (!spm && !str_is(model, "gpt2"))
        return gf_fail("%s: tokenizer model %s is not supported (gpt2 byte-level BPE, llama SentencePiece)", path,
                       gguf_printable(model, pr, sizeof pr));
    const gguf_kv *toks = gguf_get_array(g, "tokenizer.ggml.tokens", GGUF_STRING);
    if (!toks) return gf_fail("%s: tokenizer.ggml.tokens (an array of strings) is missing", path);
    if (toks->arr_n == 0 || toks->arr_n > MAX_VOCAB)
        return gf_fail("%s: tokenizer.ggml.tokens has %llu entries", path, (unsigned long long)toks->arr_n);
    const int n = (int)toks->arr_n;
    const gguf_kv *types = gguf_find_kv(g, "tokenizer.ggml.token_type");
    if (types && (types->type != GGUF_ARRAY || types->arr_type != GGUF_INT32 || types->arr_n != (uint64_t)n))
        return gf_fail("%s: tokenizer.ggml.token_type must be %d int32 values", path, n);
    const gguf_kv *scores = gguf_find_kv(g, "tokenizer.ggml.scores");
    if (scores && (scores->type != GGUF_ARRAY || scores->arr_type != GGUF_FLOAT32 || scores->arr_n != (uint64_t)n))
        return gf_fail("%s: tokenizer.ggml.scores must be %d float32 values", path, n);
    if (spm && !scores) return gf_fail("%s: a llama (SentencePiece) tokenizer needs tokenizer.ggml.scores", path);

    m->vocab_size = n;
    m->pieces = gf_calloc((size_t)n, sizeof *m->pieces);
    m->piece_len = gf_calloc((size_t)n, sizeof *m->piece_len);
    m->is_added = gf_calloc((size_t)n, sizeof *m->is_added);
    m->byte_of_token = gf_malloc((size_t)n * sizeof *m->byte_of_token);
    int *type = gf_malloc((size_t)n * sizeof *type);
    float *score = gf_calloc((size_t)n, sizeof *score);
    strmap_init(&m->vocab, (size_t)n);
    m->unk_id = -1;
    int n_added = 0;
    for (int i = 0; i < n; i++) {
        m->byte_of_token[i] = -1;
        type[i] = types ? (int)gguf_arr_int(types, (uint64_t)i) : TT_NORMAL;
        if (scores) score[i] = (float)gguf_arr_float(scores, (uint64_t)i);
        if (type[i] == TT_CONTROL || type[i] == TT_USER_DEFINED) n_added++;
    }
    h->added.tok = gf_calloc((size_t)(n_added ? n_added : 1), sizeof *h->added.tok);
    for (int i = 0; i < n; i++) {
        gguf_str s = toks->arr_str[i];
        m->pieces[i] = dup_str(s);
        m->piece_len[i] = (int)s.len;
        if ((type[i] == TT_CONTROL || type[i] == TT_USER_DEFINED) && s.len > 0) {
            added_token *t = &h->added.tok[h->added.n++];
            t->content = dup_str(s); /* by length: a token may hold NUL bytes */
            t->len = t->match_len = s.len;
            t->match = t->content;
            t->id = i;
            t->special = type[i] == TT_CONTROL;
            m->is_added[i] = true;
            continue;
        }
        if (s.len > 0) strmap_put(&m->vocab, s.p, s.len, i);
        if (type[i] == TT_UNKNOWN && m->unk_id < 0) m->unk_id = i;
    }
    int64_t id;
    if ((r = gguf_get_int(g, "tokenizer.ggml.unknown_token_id", &id)) < 0) goto fail;
    if (r && id >= 0 && id < n) m->unk_id = (int)id;

    if (spm) {
        bool prefix = true;
        if (gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &prefix) < 0) goto fail;
        if (prefix) push_norm(h, NORM_PREPEND, META, NULL);
        push_norm(h, NORM_REPLACE, " ", META);
        m->byte_fallback = true;
        m->bytelevel = false;
        spm_merges(m, type, score);
        memcpy(h->dec_meta, META, sizeof META);
        h->dec_meta_len = strlen(META);
        h->dec_byte_fallback = true;
        h->dec_strip_first = prefix;
    } else {
        m->bytelevel = true;
        /* byte characters missing from the vocabulary are dropped, as llama.cpp
         * and the tokenizers library (no unk_token in these files) do */
        m->unk_id = -1;
        if (gpt2_merges(m, g, path) != 0 || gpt2_pretokenizer(h, g, path) != 0) goto fail;
    }
    free(type);
    free(score);
    type = NULL;
    score = NULL;
    if (hf_tokenizer_finish(h, path) != 0) return -1;

    bool add_bos = spm;
    if (gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &add_bos) < 0) return -1;
    *bos = *eos = -1;
    if ((r = gguf_get_int(g, "tokenizer.ggml.bos_token_id", &id)) < 0) return -1;
    if (r && (id < 0 || id >= n)) return gf_fail("%s: BOS id %lld is out of range", path, (long long)id);
    if (r && add_bos) *bos = (int)id;
    if ((r = gguf_get_int(g, "tokenizer.ggml.eos_token_id", &id)) < 0) return -1;
    if (r && (id < 0 || id >= n)) return gf_fail("%s: EOS id %lld is out of range", path, (long long)id);
    if (r) *eos = (int)id;
    return 0;
fail:
    free(type);
    free(score);
    return -1;
}

int gguf_tokenizer_load(tokenizer **out, const gguf_file *g) {
    *out = NULL;
    hf_tokenizer *h = gf_calloc(1, sizeof *h);
    pthread_mutex_init(&h->model.cache_lock, NULL);
    int bos = -1, eos = -1;
    if (build(h, g, &bos, &eos) != 0) {
        hf_tokenizer_free(h);
        return -1;
    }
    *out = hf_tokenizer_wrap(h, bos, eos);
    return 0;
}

int tokenizer_load_gguf(tokenizer **out, const char *path) {
    *out = NULL;
    gguf_file g;
    if (gguf_open(&g, path) != 0) return -1;
    int rc = gguf_tokenizer_load(out, &g);
    gguf_close(&g);
    return rc;
}
