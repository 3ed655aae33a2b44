/* The message buffering and final padding that SHA-1 and SHA-256 share
 * (Merkle-Damgard over 64-byte blocks, big-endian 64-bit bit length). */
#ifndef GRAFT_HUB_MD_STREAM_H
#define GRAFT_HUB_MD_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t n_bytes;
    uint8_t buf[64];
    size_t n_buf;
} md_stream;

/* Compresses one 64-byte block into the hash state. */
typedef void (*md_block_fn)(void *state, const uint8_t *block);

void md_stream_update(md_stream *s, void *state, md_block_fn block, const void *data, size_t n);
/* Appends the padding and the length; the state then holds the digest. */
void md_stream_finish(md_stream *s, void *state, md_block_fn block);

#endif
