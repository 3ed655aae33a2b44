/* Loads a Hugging Face tokenizer.json (model BPE) into the hf_tokenizer
 * pipeline, and BOS/EOS from tokenizer_config.json beside it when present. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

enum { MAX_VOCAB = 1 << 24 };

/* ---- model ---- */

static int load_vocab(bpe_model *m, const cJSON *vocab, const cJSON *added, const char *path) {
    if (!cJSON_IsObject(vocab)) return gf_fail("%s: model has no \"vocab\" object", path);
    int max_id = -1, count = 0;
    for (const cJSON *e = vocab->child; e; e = e->next, count++) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= MAX_VOCAB || e->valuedouble != e->valueint)
            return gf_fail("%s: vocabulary entry \"%s\" has no valid id", path, e->string);
        if (e->valueint > max_id) max_id = e->valueint;
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= MAX_VOCAB || !hf_json_str(a, "content"))
            return gf_fail("%s: an added token lacks a valid id or content", path);
        if (id->valueint > max_id) max_id = id->valueint;
    }
    if (max_id < 0) return gf_fail("%s: empty vocabulary", path);
    /* the tables below have one slot per id: ids far beyond the number of
     * entries the file holds would make a small file allocate gigabytes */
    const int entries = count + cJSON_GetArraySize(added);
    if (max_id >= 4 * entries + 1024)
        return gf_fail("%s: token id %d is far beyond the %d tokens the file lists", path, max_id, entries);
    m->vocab_size = max_id + 1;
    m->pieces = gf_calloc((size_t)m->vocab_size, sizeof *m->pieces);
    m->piece_len = gf_calloc((size_t)m->vocab_size, sizeof *m->piece_len);
    m->is_added = gf_calloc((size_t)m->vocab_size, sizeof *m->is_added);
    m->byte_of_token = gf_malloc((size_t)m->vocab_size * sizeof *m->byte_of_token);
    for (int i = 0; i < m->vocab_size; i++) m->byte_of_token[i] = -1;
    strmap_init(&m->vocab, (size_t)count);
    for (const cJSON *e = vocab->child; e; e = e->next) {
        size_t n = strlen(e->string);
        strmap_put(&m->vocab, e->string, n, e->valueint);
        free(m->pieces[e->valueint]);
        m->pieces[e->valueint] = gf_strdup(e->string);
        m->piece_len[e->valueint] = (int)n;
    }
    return 0;
}

static int vocab_id(const bpe_model *m, const char *s, size_t n) { return strmap_get(&m->vocab, s, n); }

static int load_merges(bpe_model *m, const cJSON *merges, const char *path) {
    int n = cJSON_GetArraySize(merges);
    m->n_merges = n;
    m->merge_result = gf_malloc((size_t)(n ? n : 1) * sizeof *m->merge_result);
    pair_map_init(&m->merges, (size_t)n);
    char *joined = NULL;
    size_t joined_cap = 0;
    int rank = 0, rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, merges) {
        const char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        if (cJSON_IsString(e)) { /* "a b" */
            const char *sp = strchr(e->valuestring, ' ');
            if (sp) {
                a = e->valuestring;
                la = (size_t)(sp - a);
                b = sp + 1;
                lb = strlen(b);
            }
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
                   cJSON_IsString(e->child->next)) { /* ["a", "b"] */
            a = e->child->valuestring;
            la = strlen(a);
            b = e->child->next->valuestring;
            lb = strlen(b);
        }
        if (!a) {
            rc = gf_fail("%s: merge %d is neither \"a b\" nor [\"a\", \"b\"]", path, rank);
            break;
        }
        int ia = vocab_id(m, a, la), ib = vocab_id(m, b, lb);
        if (la + lb + 1 > joined_cap) {
            joined_cap = (la + lb + 1) * 2;
            joined = gf_realloc(joined, joined_cap);
        }
        memcpy(joined, a, la);
        memcpy(joined + la, b, lb);
        int iab = vocab_id(m, joined, la + lb);
        if (ia < 0 || ib < 0 || iab < 0) {
            joined[la + lb] = 0;
            rc = gf_fail("%s: merge %d (%.*s + %.*s) uses a token missing from the vocabulary (\"%s\")", path, rank,
                         (int)la, a, (int)lb, b, ia < 0 ? "first" : ib < 0 ? "second" : "merged");
            break;
        }
        pair_map_put(&m->merges, ia, ib, rank);
        m->merge_result[rank++] = iab;
    }
    free(joined);
    return rc;
}

static int load_added(hf_tokenizer *h, const cJSON *added, const char *path) {
    if (added && !cJSON_IsArray(added)) return gf_fail("%s: \"added_tokens\" is not an array", path);
    added_vocab *av = &h->added;
    int n = cJSON_GetArraySize(added);
    av->tok = gf_calloc((size_t)(n ? n : 1), sizeof *av->tok);
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        added_token *t = &av->tok[av->n++];
        const char *content = hf_json_str(a, "content");
        t->content = gf_strdup(content);
        t->len = strlen(content);
        t->match = t->content;
        t->match_len = t->len;
        t->id = cJSON_GetObjectItemCaseSensitive(a, "id")->valueint;
        t->special = hf_json_bool(a, "special", false);
        t->normalized = hf_json_bool(a, "normalized", !t->special);
        t->lstrip = hf_json_bool(a, "lstrip", false);
        t->rstrip = hf_json_bool(a, "rstrip", false);
        t->single_word = hf_json_bool(a, "single_word", false);
        bpe_model *m = &h->model;
        free(m->pieces[t->id]);
        m->pieces[t->id] = gf_strdup(content);
        m->piece_len[t->id] = (int)t->len;
        m->is_added[t->id] = true;
    }
    return 0;
}

/* Tokens with normalized = true are searched in normalized text, so the
 * library normalizes their content too ("Cafe\u0301" matches "Café" under
 * NFC); done once the normalizers are known. */
static void index_added(hf_tokenizer *h) {
    added_vocab *av = &h->added;
    byte_buf b = {0}, tmp = {0};
    for (int i = 0; i < av->n; i++) {
        added_token *t = &av->tok[i];
        if (!t->normalized || h->n_norm == 0) continue;
        byte_buf_set(&b, t->content, t->len);
        normalize_apply(h->norm, h->n_norm, &b, &tmp);
        t->match = gf_malloc(b.len + 1);
        memcpy(t->match, b.p, b.len + 1);
        t->match_len = b.len;
        /* the library keeps (and decodes) the normalized form */
        bpe_model *m = &h->model;
        free(m->pieces[t->id]);
        m->pieces[t->id] = gf_strdup(t->match);
        m->piece_len[t->id] = (int)t->match_len;
    }
    free(b.p);
    free(tmp.p);
    added_vocab_index(av);
}

/* ---- special tokens ---- */

static int token_id(const hf_tokenizer *h, const char *s) {
    for (int i = 0; i < h->added.n; i++)
        if (!strcmp(h->added.tok[i].content, s)) return h->added.tok[i].id;
    return strmap_get(&h->model.vocab, s, strlen(s));
}

/* Reads bos_token / eos_token ("text", {"content": "text"} or null) into *id;
 * leaves *id alone when the key is absent. */
static void config_token(const hf_tokenizer *h, const cJSON *cfg, const char *key, int *id) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (!v) return;
    if (cJSON_IsNull(v)) { *id = -1; return; }
    const char *s = cJSON_IsString(v) ? v->valuestring : hf_json_str(v, "content");
    *id = s ? token_id(h, s) : -1;
}

static void special_tokens(const hf_tokenizer *h, const char *path, int *bos, int *eos) {
    static const char *bos_names[] = {"<s>", "<|begin_of_text|>", "<|startoftext|>", "<bos>"};
    static const char *eos_names[] = {"</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>"};
    *bos = *eos = -1;
    for (size_t i = 0; i < sizeof bos_names / sizeof *bos_names && *bos < 0; i++) *bos = token_id(h, bos_names[i]);
    for (size_t i = 0; i < sizeof eos_names / sizeof *eos_names && *eos < 0; i++) *eos = token_id(h, eos_names[i]);
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    char *cfg_path = gf_malloc(dir + 32);
    memcpy(cfg_path, path, dir);
    strcpy(cfg_path + dir, "tokenizer_config.json");
    struct stat cfg_st;
    if (stat(cfg_path, &cfg_st) == 0) { /* present: read_text_file refuses what is not a regular file */
        size_t len;
        char *text = read_text_file(cfg_path, &len);
        cJSON *cfg = text ? cJSON_ParseWithLength(text, len) : NULL;
        if (cfg) {
            config_token(h, cfg, "bos_token", bos);
            config_token(h, cfg, "eos_token", eos);
        }
        cJSON_Delete(cfg);
        free(text);
        gf_clear_error(); /* a broken config only loses the guesses it would refine */
    }
    free(cfg_path);
}

/* ---- the tokenizer ---- */

void hf_tokenizer_free(hf_tokenizer *h) {
    if (!h) return;
    bpe_model_free(&h->model);
    added_vocab_free(&h->added);
    for (int i = 0; i < h->n_norm; i++) {
        free(h->norm[i].a);
        free(h->norm[i].b);
    }
    free(h->norm);
    for (int i = 0; i < h->n_pre; i++) {
        if (h->pre[i].regex) pretok_regex_free(h->pre[i].regex);
        free(h->pre[i].pattern);
    }
    free(h->pre);
    free(h);
}

static void hf_destroy(void *impl) { hf_tokenizer_free(impl); }

static void hf_encode_op(const tokenizer *t, const char *text, size_t len, int_vec *ids) {
    hf_encode(t->impl, text, len, ids);
}

static void hf_decode_op(const tokenizer *t, int prev, int id, char **buf, size_t *len, size_t *cap) {
    /* the start of the text, or right after BOS, counts as the first piece */
    hf_decode_piece(t->impl, prev < 0 || prev == t->bos, id, buf, len, cap);
}

static const tokenizer_ops bytelevel_ops = {"bpe-bytelevel", hf_encode_op, hf_decode_op, hf_destroy};
static const tokenizer_ops sentencepiece_ops = {"bpe-sentencepiece", hf_encode_op, hf_decode_op, hf_destroy};

static int build(hf_tokenizer *h, const cJSON *root, const char *path) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) return gf_fail("%s: no \"model\" object", path);
    const char *type = hf_json_str(model, "type");
    if (type && strcmp(type, "BPE") != 0) return gf_fail("%s: model type %s is not supported (only BPE)", path, type);
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsArray(merges)) return gf_fail("%s: BPE model has no \"merges\" array", path);
    const char *prefix = hf_json_str(model, "continuing_subword_prefix"), *suffix = hf_json_str(model, "end_of_word_suffix");
    if ((prefix && *prefix) || (suffix && *suffix))
        return gf_fail("%s: BPE continuing_subword_prefix / end_of_word_suffix are not supported", path);
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    bpe_model *m = &h->model;
    if (load_vocab(m, cJSON_GetObjectItemCaseSensitive(model, "vocab"), added, path) != 0) return -1;
    if (load_merges(m, merges, path) != 0) return -1;
    if (load_added(h, added, path) != 0) return -1;
    m->byte_fallback = hf_json_bool(model, "byte_fallback", false);
    m->fuse_unk = hf_json_bool(model, "fuse_unk", false);
    m->ignore_merges = hf_json_bool(model, "ignore_merges", false);
    m->unk_id = -1;
    const char *unk = hf_json_str(model, "unk_token");
    if (unk && (m->unk_id = strmap_get(&m->vocab, unk, strlen(unk))) < 0)
        return gf_fail("%s: unk_token \"%s\" is not in the vocabulary", path, unk);

    if (hf_load_normalizer(h, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), path) != 0) return -1;
    bool bytelevel = false;
    if (hf_load_pre_tokenizer(h, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), path, &bytelevel) != 0) return -1;
    hf_load_decoder(h, cJSON_GetObjectItemCaseSensitive(root, "decoder"));
    h->model.bytelevel = bytelevel || h->dec_bytelevel;
    return hf_tokenizer_finish(h, path);
}

int hf_tokenizer_finish(hf_tokenizer *h, const char *path) {
    bpe_model *m = &h->model;
    if (normalize_check_growth(h->norm, h->n_norm, path) != 0) return -1;
    index_added(h);
    h->dec_bytelevel = m->bytelevel;
    for (int c = 0; c < 0x144; c++) h->dec_byte[c] = (short)bytelevel_byte((uint32_t)c);
    for (int b = 0; b < 256; b++) {
        char s[8];
        int n;
        if (m->bytelevel) {
            n = utf8_encode(bytelevel_char((unsigned char)b), s);
        } else {
            n = snprintf(s, sizeof s, "<0x%02X>", b);
        }
        m->byte_sym[b] = strmap_get(&m->vocab, s, (size_t)n); /* -1: a byte without a symbol (see the header) */
        if (!m->bytelevel && m->byte_sym[b] >= 0) m->byte_of_token[m->byte_sym[b]] = b;
    }
    strmap_init(&m->cache, 1024);
    return 0;
}

tokenizer *hf_tokenizer_wrap(hf_tokenizer *h, int bos, int eos) {
    tokenizer *t = gf_calloc(1, sizeof *t);
    t->ops = h->model.bytelevel ? &bytelevel_ops : &sentencepiece_ops;
    t->impl = h;
    t->vocab_size = h->model.vocab_size;
    t->bos = bos;
    t->eos = eos;
    return t;
}

int tokenizer_load_hf(tokenizer **out, const char *path) {
    *out = NULL;
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
        free(text);
        return gf_fail("%s: not valid JSON (parse error near byte %zu of %zu)", path, off, len);
    }
    free(text);
    hf_tokenizer *h = gf_calloc(1, sizeof *h);
    pthread_mutex_init(&h->model.cache_lock, NULL);
    int rc = build(h, root, path);
    cJSON_Delete(root);
    if (rc != 0) {
        hf_tokenizer_free(h);
        return -1;
    }
    int bos, eos;
    special_tokens(h, path, &bos, &eos);
    *out = hf_tokenizer_wrap(h, bos, eos);
    return 0;
}
