/* Decoding of tokenizer.json tokenizers, one piece at a time: the byte-level
 * decoder (GPT-2 characters back to bytes) or the SentencePiece-style chain
 * (byte fallback <0xXX> -> byte, "\u2581" -> space, one leading space of the
 * first piece stripped). Added tokens go through it too, as in the library. */
#include <string.h>

#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

void hf_decode_piece(const hf_tokenizer *h, bool first, int id, char **buf, size_t *len, size_t *cap) {
    const bpe_model *m = &h->model;
    const char *p = m->pieces[id];
    if (!p) return;
    size_t n = (size_t)m->piece_len[id];
    /* added tokens go through the decoder too, as in the library */
    if (h->dec_bytelevel) {
        /* like the library: a piece with a character outside the map is copied as is */
        size_t start = *len;
        for (size_t i = 0; i < n;) {
            size_t k;
            uint32_t cp = utf8_decode((const unsigned char *)p + i, n - i, &k);
            int b = cp < 0x144 ? h->dec_byte[cp] : -1;
            if (b < 0) {
                *len = start;
                tok_buf_append(buf, len, cap, p, n);
                return;
            }
            char c = (char)b;
            tok_buf_append(buf, len, cap, &c, 1);
            i += k;
        }
        return;
    }
    if (h->dec_byte_fallback && m->byte_of_token[id] >= 0 && !m->is_added[id]) {
        char c = (char)m->byte_of_token[id];
        tok_buf_append(buf, len, cap, &c, 1);
        return;
    }
    bool strip = first && h->dec_strip_first;
    for (size_t i = 0; i < n;) {
        if (h->dec_meta_len && i + h->dec_meta_len <= n && memcmp(p + i, h->dec_meta, h->dec_meta_len) == 0) {
            if (!(strip && i == 0)) tok_buf_append(buf, len, cap, " ", 1);
            i += h->dec_meta_len;
            continue;
        }
        if (strip && i == 0 && p[0] == ' ') { i++; continue; }
        tok_buf_append(buf, len, cap, p + i, 1);
        i++;
    }
}
