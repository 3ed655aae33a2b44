#include "hub/md_stream.h"

#include <string.h>

void md_stream_update(md_stream *s, void *state, md_block_fn block, const void *data, size_t n) {
    const uint8_t *p = data;
    s->n_bytes += n;
    if (s->n_buf) {
        size_t take = 64 - s->n_buf < n ? 64 - s->n_buf : n;
        memcpy(s->buf + s->n_buf, p, take);
        s->n_buf += take;
        p += take;
        n -= take;
        if (s->n_buf < 64) return;
        block(state, s->buf);
        s->n_buf = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(state, p);
    memcpy(s->buf, p, n);
    s->n_buf = n;
}

void md_stream_finish(md_stream *s, void *state, md_block_fn block) {
    uint64_t bits = s->n_bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t npad = (s->n_buf < 56 ? 56 : 120) - s->n_buf;
    for (int i = 0; i < 8; i++) pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
    md_stream_update(s, state, block, pad, npad + 8);
}
