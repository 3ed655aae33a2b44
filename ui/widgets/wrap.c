#include "widgets/wrap.h"

#include <string.h>

#include "grid.h"

/* Bytes and columns of the glyph at s (at most `left` bytes remain). */
static int glyph_at(const char *s, size_t left, int *cols) {
    unsigned char c = (unsigned char)s[0];
    if (c < 0x20 || c == 0x7F) {
        *cols = 1;
        return 1;
    }
    char buf[5] = {0};
    size_t n = left < 4 ? left : 4;
    memcpy(buf, s, n);
    int k = utf8_seq_len(buf);
    if (c >= 0x80 && k == 1) { /* not UTF-8 (or cut short) */
        *cols = 1;
        return 1;
    }
    buf[k] = 0;
    *cols = utf8_width(buf);
    return k;
}

int wrap_lines(const char *text, size_t len, int w, text_span *out, int max) {
    if (w < 1) w = 1;
    int n = 0;
    size_t i = 0;
    for (;;) {
        /* one line from i: glyphs while they fit, the last space seen, where the paragraph ends */
        size_t p = i, space = (size_t)-1;
        int col = 0;
        while (p < len && text[p] != '\n') {
            int gc;
            int k = glyph_at(text + p, len - p, &gc);
            if (col + gc > w) break;
            if (text[p] == ' ' && p > i) space = p;
            col += gc;
            p += (size_t)k;
        }
        size_t end = p, next = p;
        int more = p < len; /* a newline or a break: another line follows, if only an empty one */
        if (p < len && text[p] == '\n') {
            next = p + 1;
        } else if (p < len) { /* the paragraph goes on: break at a space */
            if (text[p] == ' ') next = p + 1;
            else if (space != (size_t)-1) end = space, next = space + 1;
            else if (p == i) { /* one glyph wider than w: it takes the line alone */
                int gc;
                end = next = p + (size_t)glyph_at(text + p, len - p, &gc);
                more = next < len;
            }
        }
        if (out && n < max) out[n] = (text_span){i, end - i};
        n++;
        if (!more) break;
        i = next;
    }
    return n;
}

void wrap_clean(const char *text, size_t len, char *buf, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n;) {
        int gc;
        int k = glyph_at(text + i, len - i, &gc);
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7F) buf[o++] = ' ';
        else if (k == 1 && c >= 0x80) buf[o++] = '?';
        else if (o + (size_t)k + 1 <= n) {
            memcpy(buf + o, text + i, (size_t)k);
            o += (size_t)k;
        } else {
            break;
        }
        i += (size_t)k;
    }
    if (n) buf[o] = 0;
}
