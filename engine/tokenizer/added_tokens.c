/* Added tokens are cut out of the text before anything else, leftmost match
 * first and the longest one at that position, as the tokenizers library's
 * leftmost-longest Aho-Corasick does. Candidates are bucketed by first byte;
 * real vocabularies have a few hundred tokens that nearly all start with '<'. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/utf8.h"

void span_push(span_list *l, size_t off, size_t len, int id) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = gf_realloc(l->a, l->cap * sizeof *l->a);
    }
    l->a[l->n++] = (text_span){off, len, id};
}

static const added_token *sort_base;

static int by_length_desc(const void *a, const void *b) {
    size_t la = sort_base[*(const int *)a].match_len, lb = sort_base[*(const int *)b].match_len;
    if (la != lb) return la < lb ? 1 : -1;
    return *(const int *)a - *(const int *)b;
}

void added_vocab_index(added_vocab *av) {
    for (int i = 0; i < av->n; i++) {
        const added_token *t = &av->tok[i];
        if (t->match_len == 0) continue;
        unsigned char c = (unsigned char)t->match[0];
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
    for (int i = 0; i < av->n; i++) {
        if (av->tok[i].match != av->tok[i].content) free(av->tok[i].match);
        free(av->tok[i].content);
    }
    free(av->tok);
    for (int c = 0; c < 256; c++) {
        free(av->raw_first[c]);
        free(av->norm_first[c]);
    }
    memset(av, 0, sizeof *av);
}

/* Unicode White_Space, as Rust's char::is_whitespace */
static bool is_space_cp(uint32_t c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Length of the whitespace code point ending at s[end) (0 when none). */
static size_t space_before(const unsigned char *s, size_t start, size_t end) {
    size_t b = end;
    while (b > start && end - b < 4 && (s[b - 1] & 0xC0) == 0x80) b--;
    if (b == start) return 0;
    b--;
    size_t k;
    uint32_t cp = utf8_decode(s + b, end - b, &k);
    return b + k == end && is_space_cp(cp) ? end - b : 0;
}

static size_t space_after(const unsigned char *s, size_t at, size_t len) {
    size_t k;
    uint32_t cp = utf8_decode(s + at, len - at, &k);
    return is_space_cp(cp) ? k : 0;
}

/* Word characters for single_word: ASCII letters, digits and '_'; any other
 * non-ASCII code point counts as a letter (the library asks Unicode; close
 * enough for the scripts where single_word tokens are used). */
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
            if (t->match_len > len - i || memcmp(s + i, t->match, t->match_len) != 0) continue;
            if (t->single_word && ((i > 0 && is_word_byte(u[i - 1])) ||
                                   (i + t->match_len < len && is_word_byte(u[i + t->match_len]))))
                continue;
            hit = t;
            break;
        }
        if (!hit) { i++; continue; }
        size_t start = i, end = i + hit->match_len, k;
        if (hit->lstrip)
            while ((k = space_before(u, text_start, start)) > 0) start -= k;
        if (hit->rstrip)
            while (end < len && (k = space_after(u, end, len)) > 0) end += k;
        if (start > text_start) span_push(out, text_start, start - text_start, -1);
        span_push(out, start, end - start, hit->id);
        text_start = i = end;
    }
    if (text_start < len || out->n == 0) span_push(out, text_start, len - text_start, -1);
}
