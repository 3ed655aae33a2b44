#include "tokenizer/utf8.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

uint32_t utf8_decode(const unsigned char *s, size_t left, size_t *n) {
    unsigned char c = s[0];
    if (c < 0x80 || left < 2) { *n = 1; return c; }
    if (c < 0xE0) { *n = 2; return ((uint32_t)(c & 0x1F) << 6) | (s[1] & 0x3F); }
    if (c < 0xF0 || left < 4) {
        *n = 3;
        return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    }
    *n = 4;
    return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) | ((uint32_t)(s[2] & 0x3F) << 6) |
           (s[3] & 0x3F);
}

int utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t utf8_valid_len(const unsigned char *s, size_t left, size_t *bad) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;       /* no overlongs */
        else if (c == 0xED) hi = 0x9F;  /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F;  /* <= U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    size_t i = 1;
    for (; i < need && i < left; i++) {
        unsigned char b = s[i];
        unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h) break;
    }
    if (i == need) return need;
    *bad = i; /* the lead byte plus the continuation bytes that fit */
    return 0;
}

char *utf8_repair(const char *text, size_t len, size_t *out_len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, bad = 0;
    while (i < len) {
        if (s[i] < 0x80) { i++; continue; }
        size_t k = utf8_valid_len(s + i, len - i, &bad);
        if (!k) break;
        i += k;
    }
    if (i == len) return NULL;
    /* worst case every byte becomes 3 bytes of U+FFFD */
    char *out = gf_malloc(len * 3 + 1);
    memcpy(out, text, i);
    size_t o = i;
    while (i < len) {
        size_t k = utf8_valid_len(s + i, len - i, &bad);
        if (k) {
            memcpy(out + o, text + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += bad;
        }
    }
    out[o] = 0;
    *out_len = o;
    return out;
}
