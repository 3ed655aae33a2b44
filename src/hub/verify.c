#include "hub/verify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

void hub_hasher_reset(hub_hasher *h, long long git_size) {
    digest_start(&h->s256, DIGEST_SHA256);
    h->git = git_size >= 0;
    h->git_size = git_size;
    h->hashed = 0;
    if (h->git) {
        char head[32];
        int n = snprintf(head, sizeof head, "blob %lld", git_size);
        digest_start(&h->s1, DIGEST_SHA1);
        digest_update(&h->s1, head, (size_t)n + 1); /* with the NUL */
    }
}

void hub_hasher_update(hub_hasher *h, const void *data, size_t n) {
    digest_update(&h->s256, data, n);
    if (h->git) digest_update(&h->s1, data, n);
    h->hashed += (long long)n;
}

int hub_hasher_catch_up(hub_hasher *h, int fd, long long upto, const char *path) {
    static _Thread_local unsigned char buf[1 << 16];
    while (h->hashed < upto) {
        size_t want = upto - h->hashed < (long long)sizeof buf ? (size_t)(upto - h->hashed) : sizeof buf;
        ssize_t r = pread(fd, buf, want, (off_t)h->hashed);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return gf_fail("%s: %s", path, strerror(errno));
        if (r == 0) return gf_fail("%s: shorter than expected while hashing", path);
        hub_hasher_update(h, buf, (size_t)r);
    }
    return 0;
}

int hub_hasher_check(hub_hasher *h, const char *name, const char *want_sha256, const char *want_git,
                     char sha256_out[65]) {
    digest_final_hex(&h->s256, sha256_out);
    if (want_sha256[0] && strcmp(sha256_out, want_sha256) != 0)
        return gf_fail("%s: checksum mismatch (sha256 %.12s..., expected %.12s...); the download was discarded", name,
                       sha256_out, want_sha256);
    if (want_git[0]) {
        char got[41];
        if (!h->git || h->git_size != h->hashed) return gf_fail("%s: size changed while hashing", name);
        digest_final_hex(&h->s1, got);
        if (strcmp(got, want_git) != 0)
            return gf_fail("%s: checksum mismatch (git blob id %.12s..., expected %.12s...); the download was "
                           "discarded", name, got, want_git);
    }
    return 0;
}

void hub_hasher_free(hub_hasher *h) {
    digest_free(&h->s256);
    digest_free(&h->s1);
}
