/* Unit tests: the BPE model's per-word caches (engine/tokenizer/bpe_model.c)
 * on words that give no ids at all: characters outside the vocabulary with
 * neither byte fallback nor an unknown token, which the tokenizers library
 * drops. Both caches then store an empty run. Storing one must not form a
 * pointer from an empty vector's data (NULL + 0 and memcpy from NULL are
 * undefined behaviour, which the sanitizer build reports as a failure):
 * - the uncached path stores the word's ids (none) from an empty output
 *   vector into the front cache;
 * - the word cache's path copies an empty run into the front cache from
 *   cache_ids, which is still empty when every word so far gave no ids.
 * The second path is reached for certain: more distinct short words than the
 * front cache has slots are encoded twice, so some words' front entries have
 * been taken by others (pigeonhole) and the second pass finds them in the
 * word cache. Results must equal the uncached ones in every pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/vec.h"
#include "tokenizer/hf_tokenizer.h"

/* A sentencepiece-style model (not byte-level) whose vocabulary is "a" (0),
 * "b" (1) and their merge "ab" (2); no byte fallback, no unknown token. */
static void tiny_model(bpe_model *m) {
    memset(m, 0, sizeof *m);
    strmap_init(&m->vocab, 4);
    strmap_put(&m->vocab, "a", 1, 0);
    strmap_put(&m->vocab, "b", 1, 1);
    strmap_put(&m->vocab, "ab", 2, 2);
    m->vocab_size = 3;
    pair_map_init(&m->merges, 1);
    pair_map_put(&m->merges, 0, 1, 0);
    static int merge_result[1] = {2};
    m->merge_result = merge_result;
    m->n_merges = 1;
    m->unk_id = -1;
    for (int i = 0; i < 256; i++) m->byte_sym[i] = -1;
    strmap_init(&m->cache, 1024);
    pthread_mutex_init(&m->cache_lock, NULL);
}

static void free_model(bpe_model *m) {
    m->merge_result = NULL; /* static above */
    bpe_model_free(m);
}

/* Word w (a 3-letter word over 'c'..'z', none of them in the vocabulary). */
static void unknown_word(int w, char out[3]) {
    out[0] = (char)('c' + w % 24);
    out[1] = (char)('c' + w / 24 % 24);
    out[2] = (char)('c' + w / (24 * 24));
}

enum { N_WORDS = 24 * 24 * 24 }; /* 13824 words, more than the 8192 front-cache slots */

static void words_without_ids_stay_empty(void **state) {
    (void)state;
    bpe_model m;
    tiny_model(&m);
    for (int pass = 0; pass < 2; pass++)
        for (int w = 0; w < N_WORDS; w++) {
            char word[3];
            unknown_word(w, word);
            int_vec ids = {0}; /* empty: data is NULL */
            bpe_model_encode_word(&m, word, sizeof word, &ids);
            if (ids.len != 0) fail_msg("pass %d, word %.3s: %zu ids, expected none", pass, word, ids.len);
            int_vec_free(&ids);
        }
    /* the word cache held every word (each an empty run), so nothing went to cache_ids */
    assert_int_equal(m.cache_ids.len, 0);
    assert_int_equal(m.cache.n, N_WORDS);
    free_model(&m);
}

/* Known and unknown characters mixed: the unknown ones are dropped, the rest
 * merge; the same ids from the uncached, word-cache and front-cache paths. */
static void mixed_words_agree_across_caches(void **state) {
    (void)state;
    bpe_model m;
    tiny_model(&m);
    const struct { const char *w; int n, ids[3]; } cases[] = {
        {"ab", 1, {2}}, {"zab", 1, {2}}, {"abz", 1, {2}}, {"azb", 1, {2}} /* z dropped: a and b become adjacent and merge */, {"ba", 2, {1, 0}},
        {"zz", 0, {0}}, {"abab", 2, {2, 2}},
    };
    for (int pass = 0; pass < 3; pass++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int_vec ids = {0};
            bpe_model_encode_word(&m, cases[c].w, strlen(cases[c].w), &ids);
            if ((int)ids.len != cases[c].n) fail_msg("pass %d, %s: %zu ids, expected %d", pass, cases[c].w, ids.len, cases[c].n);
            for (int i = 0; i < cases[c].n; i++) assert_int_equal(ids.data[i], cases[c].ids[i]);
            int_vec_free(&ids);
        }
    free_model(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_without_ids_stay_empty),
        cmocka_unit_test(mixed_words_agree_across_caches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
