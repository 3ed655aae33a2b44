/* GPT-2's reversible byte -> character map: printable Latin-1 bytes map to
 * themselves, the other 68 bytes to U+0100 onwards in byte order. Byte-level
 * BPE vocabularies are written in these characters ("Ġ" is the space). */
#include <stdbool.h>

#include "tokenizer/hf_tokenizer.h"

static bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

uint32_t bytelevel_char(unsigned char b) {
    if (printable(b)) return b;
    int n = 0; /* rank of b among the non-printable bytes */
    for (int k = 0; k < b; k++) n += !printable(k);
    return 0x100 + (uint32_t)n;
}

int bytelevel_byte(uint32_t cp) {
    if (cp < 0x100) return printable((int)cp) ? (int)cp : -1;
    if (cp >= 0x100 + 68) return -1;
    int n = (int)(cp - 0x100);
    for (int b = 0; b < 256; b++)
        if (!printable(b) && n-- == 0) return b;
    return -1;
}
