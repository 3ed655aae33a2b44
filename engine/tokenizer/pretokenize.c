/* Pre-tokenizers: regex Split (behavior Isolated), ByteLevel (optional prefix
 * space and the GPT-2 regex) and Metaspace. Each step turns the current list
 * of words into a finer one, like the tokenizers library's PreTokenizedString;
 * empty words are dropped. Regexes run on PCRE2 in UTF + UCP mode with JIT. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"

/* Oniguruma's \s (used by the tokenizers library) is Unicode White_Space,
 * which includes U+0085; PCRE2's UCP \s does not, so we spell it out. */
#define WHITE_SPACE "\\t-\\r\\x{85}\\p{Z}"

static char *rewrite_spaces(const char *p) {
    size_t n = strlen(p);
    char *out = gf_malloc(n * 24 + 1);
    size_t o = 0;
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < n) {
            char d = p[i + 1];
            const char *rep = NULL;
            if (d == 's') rep = in_class ? WHITE_SPACE : "[" WHITE_SPACE "]";
            else if (d == 'S' && !in_class) rep = "[^" WHITE_SPACE "]";
            if (rep) {
                memcpy(out + o, rep, strlen(rep));
                o += strlen(rep);
            } else {
                out[o++] = c;
                out[o++] = d;
            }
            i++;
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            out[o++] = c;
            /* a ']' right after '[' or '[^' is a literal */
            if (i + 1 < n && p[i + 1] == '^') out[o++] = p[++i];
            if (i + 1 < n && p[i + 1] == ']') out[o++] = p[++i];
            continue;
        }
        if (c == ']' && in_class) in_class = 0;
        out[o++] = c;
    }
    out[o] = 0;
    return out;
}

void *pretok_regex_compile(const char *pattern) {
    char *pat = rewrite_spaces(pattern);
    int err;
    PCRE2_SIZE where;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &where, NULL);
    free(pat);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        gf_fail("pre-tokenizer regex does not compile (%s at offset %zu)", (const char *)msg, (size_t)where);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter when JIT is unavailable */
    return re;
}

void pretok_regex_free(void *re) { pcre2_code_free(re); }

static void word_reset(word_list *w) {
    w->buf.len = 0;
    byte_buf_append(&w->buf, "", 0);
    w->words.n = 0;
}

static void swap_lists(word_list *a, word_list *b) {
    word_list t = *a;
    *a = *b;
    *b = t;
}

/* Isolated split: every match and every gap between matches is a word. */
static void split_regex(pcre2_code *re, word_list *w) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    size_t jit_size = 0;
    bool jit = pcre2_pattern_info(re, PCRE2_INFO_JITSIZE, &jit_size) == 0 && jit_size > 0;
    span_list in = w->words;
    span_list out = {0};
    for (size_t k = 0; k < in.n; k++) {
        PCRE2_SPTR subj = (PCRE2_SPTR)(w->buf.p + in.a[k].off);
        size_t len = in.a[k].len, base = in.a[k].off, pos = 0, gap = 0;
        while (pos < len) {
            /* the text is valid UTF-8 (repaired on entry), so skip the check */
            int rc = jit ? pcre2_jit_match(re, subj, len, pos, 0, md, NULL)
                         : pcre2_match(re, subj, len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
            if (rc == PCRE2_ERROR_JIT_STACKLIMIT) /* pathological input: the interpreter keeps its stack on the heap */
                rc = pcre2_match(re, subj, len, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, NULL);
            if (rc < 0) break; /* no match (or a limit): the rest is one gap word */
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t s = ov[0], e = ov[1];
            if (e == s) { /* empty match: step over one character */
                pos = s + 1;
                while (pos < len && (subj[pos] & 0xC0) == 0x80) pos++;
                continue;
            }
            if (s > gap) span_push(&out, base + gap, s - gap, -1);
            span_push(&out, base + s, e - s, -1);
            gap = pos = e;
        }
        if (gap < len) span_push(&out, base + gap, len - gap, -1);
    }
    pcre2_match_data_free(md);
    free(in.a);
    w->words = out;
}

static void prefix_space(word_list *w, word_list *tmp) {
    word_reset(tmp);
    for (size_t k = 0; k < w->words.n; k++) {
        const text_span *s = &w->words.a[k];
        size_t off = tmp->buf.len;
        if (w->buf.p[s->off] != ' ') byte_buf_append(&tmp->buf, " ", 1);
        byte_buf_append(&tmp->buf, w->buf.p + s->off, s->len);
        span_push(&tmp->words, off, tmp->buf.len - off, -1);
    }
    swap_lists(w, tmp);
}

static void metaspace(const pre_op *op, bool first_segment, word_list *w, word_list *tmp) {
    word_reset(tmp);
    for (size_t k = 0; k < w->words.n; k++) {
        const text_span *s = &w->words.a[k];
        const char *p = w->buf.p + s->off;
        size_t off = tmp->buf.len;
        bool starts = s->len >= op->meta_len && memcmp(p, op->meta, op->meta_len) == 0;
        if (!starts && p[0] == ' ') starts = true; /* the space becomes the replacement below */
        bool at_start = first_segment && s->off == 0;
        if (!starts && (op->scheme == PREPEND_ALWAYS || (op->scheme == PREPEND_FIRST && at_start)))
            byte_buf_append(&tmp->buf, op->meta, op->meta_len);
        for (size_t i = 0; i < s->len; i++) {
            if (p[i] == ' ') byte_buf_append(&tmp->buf, op->meta, op->meta_len);
            else byte_buf_append(&tmp->buf, p + i, 1);
        }
        size_t end = tmp->buf.len;
        if (!op->split) {
            span_push(&tmp->words, off, end - off, -1);
            continue;
        }
        /* MergedWithNext: cut before every replacement character */
        size_t start = off;
        for (size_t i = off + 1; i + op->meta_len <= end; i++) {
            if (memcmp(tmp->buf.p + i, op->meta, op->meta_len) == 0) {
                span_push(&tmp->words, start, i - start, -1);
                start = i;
                i += op->meta_len - 1;
            }
        }
        span_push(&tmp->words, start, end - start, -1);
    }
    swap_lists(w, tmp);
}

void pretokenize(const pre_op *ops, int n, const char *text, size_t len, bool first_segment, word_list *out,
                 word_list *tmp) {
    word_reset(out);
    if (len == 0) return;
    byte_buf_append(&out->buf, text, len);
    span_push(&out->words, 0, len, -1);
    for (int k = 0; k < n; k++) {
        const pre_op *op = &ops[k];
        switch (op->kind) {
        case PRE_SPLIT_REGEX:
            split_regex(op->regex, out);
            break;
        case PRE_BYTELEVEL:
            if (op->add_prefix_space) prefix_space(out, tmp);
            if (op->regex) split_regex(op->regex, out);
            break;
        case PRE_METASPACE:
            metaspace(op, first_segment, out, tmp);
            break;
        }
    }
}
