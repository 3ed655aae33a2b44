#include "hub/sha1.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

static uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void block(void *state, const uint8_t *p) {
    sha1_ctx *c = state;
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) f = (b & cc) | (~b & d), k = 0x5a827999;
        else if (i < 40) f = b ^ cc ^ d, k = 0x6ed9eba1;
        else if (i < 60) f = (b & cc) | (b & d) | (cc & d), k = 0x8f1bbcdc;
        else f = b ^ cc ^ d, k = 0xca62c1d6;
        uint32_t t = rotl(a, 5) + f + e + k + w[i];
        e = d; d = cc; cc = rotl(b, 30); b = a; a = t;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d; c->h[4] += e;
}

void sha1_init(sha1_ctx *c) {
    static const uint32_t h0[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    memcpy(c->h, h0, sizeof h0);
    memset(&c->m, 0, sizeof c->m);
}

void sha1_update(sha1_ctx *c, const void *data, size_t n) { md_stream_update(&c->m, c, block, data, n); }

void sha1_final_hex(sha1_ctx *c, char hex[41]) {
    md_stream_finish(&c->m, c, block);
    for (int i = 0; i < 5; i++) snprintf(hex + 8 * i, 9, "%08x", (unsigned)c->h[i]);
}

int git_blob_sha1_file(const char *path, char hex[41]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return gf_fail("%s: %s", path, strerror(e));
    }
    sha1_ctx c;
    sha1_init(&c);
    char head[32];
    int n = snprintf(head, sizeof head, "blob %lld", (long long)st.st_size);
    sha1_update(&c, head, (size_t)n + 1); /* with the NUL */
    static _Thread_local uint8_t buf[1 << 16];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return gf_fail("%s: %s", path, strerror(e));
        }
        if (r == 0) break;
        sha1_update(&c, buf, (size_t)r);
    }
    close(fd);
    sha1_final_hex(&c, hex);
    return 0;
}
