/* SHA-1 (FIPS 180-4), only to check regular (non-LFS) files against their
 * ETag, which the Hub sets to the git blob id: sha1("blob <size>\0" + bytes).
 * No chosen dependency exposes it; tests/unit/test_hub.c checks the vectors. */
#ifndef GRAFT_HUB_SHA1_H
#define GRAFT_HUB_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "hub/md_stream.h"

typedef struct {
    uint32_t h[5];
    md_stream m;
} sha1_ctx;

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *data, size_t n);
void sha1_final_hex(sha1_ctx *c, char hex[41]);

/* The git blob id of a file; 0, or -1 with a one-line error. */
int git_blob_sha1_file(const char *path, char hex[41]);

#endif
