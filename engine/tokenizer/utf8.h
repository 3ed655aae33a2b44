/* UTF-8 helpers for the tokenizers: decoding, encoding, and the repair of
 * invalid input. */
#ifndef GRAFT_TOKENIZER_UTF8_H
#define GRAFT_TOKENIZER_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the code point at s[0..left) of VALID UTF-8; *n gets its length. */
uint32_t utf8_decode(const unsigned char *s, size_t left, size_t *n);

/* Writes cp as UTF-8 into out (4 bytes room); returns the length. */
int utf8_encode(uint32_t cp, char *out);

/* Length of the well-formed sequence at s (1..4), or 0 when s starts an
 * ill-formed one; then *bad gets the length of its maximal subpart (>= 1). */
size_t utf8_valid_len(const unsigned char *s, size_t left, size_t *bad);

/* Repairs text[0..len): each maximal ill-formed subpart becomes U+FFFD, the
 * rule of Python's bytes.decode('utf-8', errors='replace') and Rust's
 * String::from_utf8_lossy, so our ids match the Hugging Face library fed that
 * string. Returns NULL when text is already valid (use it as is), else a
 * malloc'd buffer with its length in *out_len. */
char *utf8_repair(const char *text, size_t len, size_t *out_len);

#endif
