/* Added tokens are cut out of the text before anything else, leftmost match
 * first and the longest one at that position, as the tokenizers library's
 * leftmost-longest Aho-Corasick does. Candidates are bucketed by first byte;
 * real vocabularies have a few hundred tokens that nearly all start with '<'. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"

void span_push(span_list *l, size_t off, size_t len, int id) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = gf_realloc(l->a, l->cap * sizeof *l->a);
    }
    l->a[l->n++] = (text_span){off, len, id};
}

static const added_token *sort_base;

static int by_length_desc(const void *a, const void *b) {
    size_t la = sort_base[*(const int *)a].len, lb = sort_base[*(const int *)b].len;
    if (la != lb) return la < lb ? 1 : -1;
    return *(const int *)a - *(const int *)b;
}

void added_vocab_index(added_vocab *av) {
    for (int i = 0; i < av->n; i++) {
        const added_token *t = &av->tok[i];
        if (t->len == 0) continue;
        unsigned char c = (unsigned char)t->content[0];
        int **first = t->normalized ? av->norm_first : av->raw_first;
        int *count = t->normalized ? av->norm_count : av->raw_count;
        first[c] = gf_realloc(first[c], (size_t)(count[c] + 1) * sizeof(int));
        first[c][count[c]++] = i;
        if (t->normalized) av->any_norm = true;
    }
    sort_base = av->tok;
    for (int c = 0; c < 256; c++) {
        if (av->raw_count[c] > 1) qsort(av->raw_first[c], (size_t)av->raw_count[c], sizeof(int), by_length_desc);
        if (av->norm_count[c] > 1) qsort(av->norm_first[c], (size_t)av->norm_count[c], sizeof(int), by_length_desc);
    }
}

void added_vocab_free(added_vocab *av) {
    for (int i = 0; i < av->n; i++) free(av->tok[i].content);
    free(av->tok);
    for (int c = 0; c < 256; c++) {
        free(av->raw_first[c]);
        free(av->norm_first[c]);
    }
    memset(av, 0, sizeof *av);
}

static bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static bool is_word_byte(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}

void added_vocab_split(const added_vocab *av, bool want_normalized, const char *s, size_t len, span_list *out) {
    int *const *first = want_normalized ? av->norm_first : av->raw_first;
    const int *count = want_normalized ? av->norm_count : av->raw_count;
    const unsigned char *u = (const unsigned char *)s;
    size_t text_start = 0, i = 0;
    while (i < len) {
        int c = u[i];
        if (!count[c]) { i++; continue; }
        const added_token *hit = NULL;
        for (int k = 0; k < count[c]; k++) {
            const added_token *t = &av->tok[first[c][k]];
            if (t->len > len - i || memcmp(s + i, t->content, t->len) != 0) continue;
            if (t->single_word && ((i > 0 && is_word_byte(u[i - 1])) ||
                                   (i + t->len < len && is_word_byte(u[i + t->len]))))
                continue;
            hit = t;
            break;
        }
        if (!hit) { i++; continue; }
        size_t start = i, end = i + hit->len;
        if (hit->lstrip)
            while (start > text_start && is_space(u[start - 1])) start--;
        if (hit->rstrip)
            while (end < len && is_space(u[end])) end++;
        if (start > text_start) span_push(out, text_start, start - text_start, -1);
        span_push(out, start, end - start, hit->id);
        text_start = i = end;
    }
    if (text_start < len || out->n == 0) span_push(out, text_start, len - text_start, -1);
}
