/* Unicode Normalization Form C (canonical decomposition, canonical ordering,
 * canonical composition), for the NFC normalizer of Qwen's tokenizer.json. */
#ifndef GRAFT_TOKENIZER_NFC_H
#define GRAFT_TOKENIZER_NFC_H

#include <stddef.h>
#include <stdint.h>

/* NFC of valid UTF-8 s[0..len). Returns NULL when s is already NFC (the
 * common case, found by a quick scan), else a malloc'd NUL-terminated string
 * with its length in *out_len. */
char *nfc_normalize(const char *s, size_t len, size_t *out_len);

/* Canonical combining class of cp (0 for starters). */
int nfc_ccc(uint32_t cp);

#endif
