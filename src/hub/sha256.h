/* SHA-256 (FIPS 180-4), used to verify LFS blobs against the Hub's sha256.
 * None of graft's chosen dependencies exposes a hash (libcurl does not), so
 * this small implementation lives here; tests/unit/test_hub.c checks it
 * against the standard test vectors. */
#ifndef GRAFT_HUB_SHA256_H
#define GRAFT_HUB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "hub/md_stream.h"

typedef struct {
    uint32_t h[8];
    md_stream m;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

/* Hashes a whole file; 0, or -1 with a one-line error. */
int sha256_file_hex(const char *path, char hex[65]);

#endif
