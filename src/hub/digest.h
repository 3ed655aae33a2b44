/* SHA-256 and SHA-1 through OpenSSL's libcrypto (EVP): the Hub states an LFS
 * file's sha256 and a regular file's git blob id, sha1("blob <size>\0" +
 * bytes). libcrypto is already loaded through libcurl, and its assembly
 * hashes several times faster than portable C, which matters because hashing
 * runs inside the download callback. */
#ifndef GRAFT_HUB_DIGEST_H
#define GRAFT_HUB_DIGEST_H

#include <stddef.h>

typedef enum { DIGEST_SHA256, DIGEST_SHA1 } digest_kind;

typedef struct {
    void *ctx; /* EVP_MD_CTX; NULL before the first digest_start */
    digest_kind kind;
} digest;

/* Starts (or restarts) a digest; d must be zeroed before its first start.
 * Aborts with a clear message when libcrypto cannot allocate (like gf_malloc). */
void digest_start(digest *d, digest_kind kind);
void digest_update(digest *d, const void *data, size_t n);
/* Lowercase hex and a NUL: 65 bytes for SHA-256, 41 for SHA-1. The digest
 * can be started again afterwards. */
void digest_final_hex(digest *d, char *hex);
void digest_free(digest *d);

/* Hashes a whole file; 0, or -1 with a one-line error naming it. */
int sha256_file_hex(const char *path, char hex[65]);
/* The git blob id of a file; 0, or -1 with a one-line error. */
int git_blob_sha1_file(const char *path, char hex[41]);

#endif
