/* The tokenizer.json normalizers graft supports: NFC, Prepend and Replace of
 * a literal string (the Llama 2 "legacy" layout), in sequence. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/nfc.h"

void byte_buf_append(byte_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (b->len + n + 1 > c) c *= 2;
        b->p = gf_realloc(b->p, c);
        b->cap = c;
    }
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void byte_buf_set(byte_buf *b, const char *s, size_t n) {
    b->len = 0;
    byte_buf_append(b, s, n);
}

int normalize_check_growth(const norm_op *ops, int n, const char *path) {
    double factor = 1, extra = 0; /* normalized length <= factor * length + extra */
    for (int k = 0; k < n; k++) {
        const norm_op *op = &ops[k];
        double f = 1;
        if (op->kind == NORM_NFC) f = NORM_NFC_GROWTH;
        else if (op->kind == NORM_REPLACE && op->alen > 0 && op->blen > op->alen) f = (double)op->blen / (double)op->alen;
        factor *= f;
        extra = extra * f + (op->kind == NORM_PREPEND ? (double)op->alen : 0);
    }
    if (factor > NORM_MAX_GROWTH || extra > NORM_MAX_GROWTH * 4096)
        return gf_fail("%s: the normalizers can make a text %.3gx longer (graft allows %dx)", path, factor,
                       NORM_MAX_GROWTH);
    return 0;
}

static void swap(byte_buf *a, byte_buf *b) {
    byte_buf t = *a;
    *a = *b;
    *b = t;
}

void normalize_apply(const norm_op *ops, int n, byte_buf *b, byte_buf *tmp) {
    for (int k = 0; k < n; k++) {
        const norm_op *op = &ops[k];
        switch (op->kind) {
        case NORM_NFC: {
            size_t out_len;
            char *out = nfc_normalize(b->p, b->len, &out_len);
            if (out) {
                byte_buf_set(b, out, out_len);
                free(out);
            }
            break;
        }
        case NORM_PREPEND:
            if (b->len == 0) break; /* the library leaves empty text alone */
            byte_buf_set(tmp, op->a, op->alen);
            byte_buf_append(tmp, b->p, b->len);
            swap(b, tmp);
            break;
        case NORM_REPLACE: {
            if (op->alen == 0) break;
            tmp->len = 0;
            byte_buf_append(tmp, "", 0);
            size_t i = 0, start = 0;
            while (i + op->alen <= b->len) {
                if (memcmp(b->p + i, op->a, op->alen) == 0) {
                    byte_buf_append(tmp, b->p + start, i - start);
                    byte_buf_append(tmp, op->b, op->blen);
                    i += op->alen;
                    start = i;
                } else {
                    i++;
                }
            }
            byte_buf_append(tmp, b->p + start, b->len - start);
            swap(b, tmp);
            break;
        }
        }
    }
}
