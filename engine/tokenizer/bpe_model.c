/* The BPE model of tokenizer.json: a word becomes one symbol per character
 * (per byte character for byte-level vocabularies), unknown characters go to
 * <0xXX> byte tokens (byte_fallback) or to the unknown token, then adjacent
 * pairs merge by rank, lowest rank first and leftmost on ties (bpe_merge.c
 * with priority = -rank). Results are cached per word. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/utf8.h"

enum { CACHE_MAX_WORDS = 1 << 17, CACHE_MAX_WORD_LEN = 256 };

enum { FRONT_SIZE = 1 << 13, FRONT_WORD = 22, FRONT_IDS = 6 };

struct front_entry {
    uint64_t hash; /* 0 = empty */
    uint8_t len, n;
    char word[FRONT_WORD];
    int ids[FRONT_IDS];
};

static uint64_t word_hash(const char *w, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)w[i]) * 1099511628211ULL;
    return (h ^ (h >> 29)) | 1;
}

static size_t pair_slot(uint64_t key, size_t cap) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

void pair_map_init(pair_map *m, size_t expected) {
    m->cap = 16;
    while (m->cap < expected * 2) m->cap *= 2;
    m->keys = gf_calloc(m->cap, sizeof *m->keys);
    m->vals = gf_malloc(m->cap * sizeof *m->vals);
}

/* Sized by pair_map_init for all merges, so it never fills up. */
void pair_map_put(pair_map *m, int a, int b, int rank) {
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    size_t i = pair_slot(key, m->cap);
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    m->keys[i] = key; /* a repeated merge keeps its last rank, like the library's map */
    m->vals[i] = rank;
}

int pair_map_get(const pair_map *m, int a, int b) {
    if (!m->cap) return -1;
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    size_t i = pair_slot(key, m->cap);
    while (m->keys[i]) {
        if (m->keys[i] == key) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

void bpe_model_free(bpe_model *m) {
    strmap_free(&m->vocab);
    if (m->pieces)
        for (int i = 0; i < m->vocab_size; i++) free(m->pieces[i]);
    free(m->pieces);
    free(m->piece_len);
    free(m->is_added);
    free(m->byte_of_token);
    free(m->merges.keys);
    free(m->merges.vals);
    free(m->merge_result);
    free(m->merge_priority);
    free(m->front);
    strmap_free(&m->cache);
    int_vec_free(&m->cache_ids);
    int_vec_free(&m->cache_off);
    pthread_mutex_destroy(&m->cache_lock);
}

static bool rank_pair(void *ctx, int a, int b, double *priority, int *merged) {
    const bpe_model *m = ctx;
    int r = pair_map_get(&m->merges, a, b);
    if (r < 0) return false;
    *priority = m->merge_priority ? (double)m->merge_priority[r] : -(double)r;
    *merged = m->merge_result[r];
    return true;
}

/* Symbols start in a buffer on the stack; long words move to the heap. */
typedef struct {
    bpe_sym *s;
    int n, cap;
    bpe_sym local[64];
} sym_list;

static void sym_push(sym_list *l, int id) {
    if (!l->s) {
        l->s = l->local;
        l->cap = 64;
    }
    if (l->n == l->cap) {
        l->cap *= 2;
        if (l->s == l->local) {
            l->s = gf_malloc((size_t)l->cap * sizeof *l->s);
            memcpy(l->s, l->local, sizeof l->local);
        } else {
            l->s = gf_realloc(l->s, (size_t)l->cap * sizeof *l->s);
        }
    }
    l->s[l->n++].id = id;
}

/* Symbols of a sentencepiece-style word: characters, byte fallback, unknowns. */
static void char_symbols(const bpe_model *m, const char *w, size_t len, sym_list *out) {
    int pending_unk = 0;
    for (size_t i = 0; i < len;) {
        size_t k, bad;
        k = utf8_valid_len((const unsigned char *)w + i, len - i, &bad);
        if (!k) k = bad; /* cannot happen on repaired text; stay safe */
        int id = strmap_get(&m->vocab, w + i, k);
        if (id >= 0) {
            if (pending_unk) { sym_push(out, m->unk_id); pending_unk = 0; }
            sym_push(out, id);
            i += k;
            continue;
        }
        if (m->byte_fallback) {
            bool all = true;
            for (size_t j = 0; j < k; j++) all = all && m->byte_sym[(unsigned char)w[i + j]] >= 0;
            if (all) {
                for (size_t j = 0; j < k; j++) sym_push(out, m->byte_sym[(unsigned char)w[i + j]]);
                i += k;
                continue;
            }
        }
        if (m->unk_id >= 0) {
            if (pending_unk && !m->fuse_unk) sym_push(out, m->unk_id);
            pending_unk = 1;
        }
        i += k;
    }
    if (pending_unk) sym_push(out, m->unk_id);
}

static void encode_uncached(const bpe_model *m, const char *w, size_t len, int_vec *ids) {
    sym_list l;
    l.s = NULL;
    l.n = l.cap = 0;
    if (m->bytelevel) {
        char mapped[4 * CACHE_MAX_WORD_LEN] = {0};
        if (m->ignore_merges && len <= CACHE_MAX_WORD_LEN) {
            size_t o = 0;
            for (size_t i = 0; i < len; i++) o += (size_t)utf8_encode(bytelevel_char((unsigned char)w[i]), mapped + o);
            int id = strmap_get(&m->vocab, mapped, o);
            if (id >= 0) { int_vec_push(ids, id); return; }
        }
        for (size_t i = 0; i < len; i++) {
            int id = m->byte_sym[(unsigned char)w[i]];
            if (id >= 0) sym_push(&l, id);
            else if (m->unk_id >= 0) sym_push(&l, m->unk_id);
        }
    } else {
        if (m->ignore_merges) {
            int id = strmap_get(&m->vocab, w, len);
            if (id >= 0) { int_vec_push(ids, id); return; }
        }
        char_symbols(m, w, len, &l);
    }
    for (int i = 0; i < l.n; i++) {
        l.s[i].prev = i - 1;
        l.s[i].next = i + 1 < l.n ? i + 1 : -1;
    }
    if (l.n > 0) {
        bpe_merge(l.s, l.n, rank_pair, (void *)m);
        for (int i = 0; i >= 0; i = l.s[i].next) int_vec_push(ids, l.s[i].id);
    }
    if (l.s != l.local) free(l.s);
}

/* n ids of src from index `from`. The pointer src->data + from is formed only
 * when there are ids to copy: an empty vector's data is NULL, and NULL + 0
 * (or memcpy from NULL) is undefined behaviour. */
static void front_store(struct front_entry *fe, uint64_t h, const char *w, size_t len, const int_vec *src, size_t from,
                        int n) {
    fe->hash = h;
    fe->len = (uint8_t)len;
    fe->n = (uint8_t)n;
    memcpy(fe->word, w, len);
    if (n > 0) memcpy(fe->ids, src->data + from, (size_t)n * sizeof *fe->ids);
}

void bpe_model_encode_word(bpe_model *m, const char *w, size_t len, int_vec *ids) {
    if (len == 0) return;
    if (len > CACHE_MAX_WORD_LEN) {
        encode_uncached(m, w, len, ids);
        return;
    }
    struct front_entry *fe = NULL;
    uint64_t h = 0;
    if (len <= FRONT_WORD) {
        h = word_hash(w, len);
        pthread_mutex_lock(&m->cache_lock);
        if (!m->front) m->front = gf_calloc(FRONT_SIZE, sizeof *m->front);
        fe = &m->front[h & (FRONT_SIZE - 1)];
        if (fe->hash == h && fe->len == len && memcmp(fe->word, w, len) == 0) {
            for (int i = 0; i < fe->n; i++) int_vec_push(ids, fe->ids[i]);
            pthread_mutex_unlock(&m->cache_lock);
            return;
        }
    } else {
        pthread_mutex_lock(&m->cache_lock);
    }
    int k = strmap_get(&m->cache, w, len);
    if (k >= 0) {
        int off = m->cache_off.data[2 * k], n = m->cache_off.data[2 * k + 1];
        for (int i = 0; i < n; i++) int_vec_push(ids, m->cache_ids.data[off + i]);
        if (fe && n <= FRONT_IDS) front_store(fe, h, w, len, &m->cache_ids, (size_t)off, n);
        pthread_mutex_unlock(&m->cache_lock);
        return;
    }
    pthread_mutex_unlock(&m->cache_lock);
    size_t before = ids->len;
    encode_uncached(m, w, len, ids);
    pthread_mutex_lock(&m->cache_lock);
    if (m->cache.n >= CACHE_MAX_WORDS) { /* full: start over rather than evict */
        strmap_free(&m->cache);
        strmap_init(&m->cache, 1024);
        m->cache_ids.len = m->cache_off.len = 0;
    }
    if (strmap_get(&m->cache, w, len) < 0) {
        int entry = (int)(m->cache_off.len / 2);
        int_vec_push(&m->cache_off, (int)m->cache_ids.len);
        int_vec_push(&m->cache_off, (int)(ids->len - before));
        for (size_t i = before; i < ids->len; i++) int_vec_push(&m->cache_ids, ids->data[i]);
        strmap_put(&m->cache, w, len, entry);
    }
    if (fe && ids->len - before <= FRONT_IDS) front_store(fe, h, w, len, ids, before, (int)(ids->len - before));
    pthread_mutex_unlock(&m->cache_lock);
}
