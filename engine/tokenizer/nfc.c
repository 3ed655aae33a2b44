#include "tokenizer/nfc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

int nfc_ccc(uint32_t cp) {
    if (cp > 0x10FFFF) return 0;
    return utf8proc_get_property((utf8proc_int32_t)cp)->combining_class;
}

char *nfc_normalize(const char *s, size_t len, size_t *out_len) {
    /* Every code point below U+0300 is NFC-stable and cannot combine with a
     * neighbour unless a mark (>= U+0300, lead byte >= 0xCC) follows. */
    size_t i = 0;
    while (i < len && (unsigned char)s[i] < 0xCC) i++;
    if (i == len) return NULL;
    utf8proc_uint8_t *out = NULL;
    utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &out,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (n == UTF8PROC_ERROR_NOMEM) {
        fprintf(stderr, "graft: out of memory normalizing %zu bytes of text\n", len);
        abort();
    }
    /* invalid UTF-8 (encoding repairs text first; an added token's content
     * from a file may still hold some) is left as it is, as NFC is only
     * defined on code points */
    if (n < 0) return NULL;
    if ((size_t)n == len && memcmp(out, s, len) == 0) {
        free(out);
        return NULL;
    }
    *out_len = (size_t)n;
    return (char *)out;
}
