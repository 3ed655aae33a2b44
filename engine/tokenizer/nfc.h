/* Unicode Normalization Form C for the NFC normalizer of Qwen's
 * tokenizer.json, done by utf8proc (Debian libutf8proc-dev, Unicode data of
 * its release). */
#ifndef GRAFT_TOKENIZER_NFC_H
#define GRAFT_TOKENIZER_NFC_H

#include <stddef.h>
#include <stdint.h>

/* NFC of valid UTF-8 s[0..len). Returns NULL when s is already NFC (the
 * common case; text without a code point >= U+0300 is found by a byte scan),
 * else a malloc'd NUL-terminated string with its length in *out_len. Invalid
 * UTF-8 is returned as it is (NULL). */
char *nfc_normalize(const char *s, size_t len, size_t *out_len);

/* Canonical combining class of cp (0 for starters). */
int nfc_ccc(uint32_t cp);

#endif
