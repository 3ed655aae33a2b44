#include "hub/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

static void crypto_failed(const char *what) {
    fprintf(stderr, "graft: libcrypto: %s failed\n", what);
    abort();
}

void digest_start(digest *d, digest_kind kind) {
    if (!d->ctx && !(d->ctx = EVP_MD_CTX_new())) crypto_failed("EVP_MD_CTX_new");
    d->kind = kind;
    if (EVP_DigestInit_ex(d->ctx, kind == DIGEST_SHA1 ? EVP_sha1() : EVP_sha256(), NULL) != 1)
        crypto_failed("EVP_DigestInit_ex");
}

void digest_update(digest *d, const void *data, size_t n) {
    if (n && EVP_DigestUpdate(d->ctx, data, n) != 1) crypto_failed("EVP_DigestUpdate");
}

void digest_final_hex(digest *d, char *hex) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(d->ctx, md, &n) != 1) crypto_failed("EVP_DigestFinal_ex");
    for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[2 * n] = 0;
}

void digest_free(digest *d) {
    EVP_MD_CTX_free(d->ctx);
    d->ctx = NULL;
}

/* Feeds the whole file after an optional prefix into a fresh digest. */
static int hash_file(const char *path, digest_kind kind, bool git_blob, char *hex) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return gf_fail("%s: %s", path, strerror(e));
    }
    digest d = {0};
    digest_start(&d, kind);
    if (git_blob) {
        char head[32];
        int n = snprintf(head, sizeof head, "blob %lld", (long long)st.st_size);
        digest_update(&d, head, (size_t)n + 1); /* with the NUL */
    }
    static _Thread_local unsigned char buf[1 << 16];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            digest_free(&d);
            return gf_fail("%s: %s", path, strerror(e));
        }
        if (r == 0) break;
        digest_update(&d, buf, (size_t)r);
    }
    close(fd);
    digest_final_hex(&d, hex);
    digest_free(&d);
    return 0;
}

int sha256_file_hex(const char *path, char hex[65]) { return hash_file(path, DIGEST_SHA256, false, hex); }
int git_blob_sha1_file(const char *path, char hex[41]) { return hash_file(path, DIGEST_SHA1, true, hex); }
