#include "train/checkpoint.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"

#define MAGIC "GRAFTCK3"

void curve_push(curve *c, double x, double y) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->xy = gf_realloc(c->xy, (size_t)c->cap * 2 * sizeof(double));
    }
    c->xy[2 * c->n] = x;
    c->xy[2 * c->n + 1] = y;
    c->n++;
}

void curve_free(curve *c) {
    free(c->xy);
    memset(c, 0, sizeof *c);
}

void train_state_free(train_state *s) {
    curve_free(&s->loss);
    curve_free(&s->eval);
}

/* ---- SHA-256 (libcrypto) ---- */

enum { DIGEST = 32 };

static EVP_MD_CTX *sha_new(void) {
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1) return c;
    EVP_MD_CTX_free(c);
    return NULL;
}

static int sha_done(EVP_MD_CTX *c, unsigned char out[DIGEST]) {
    unsigned int n = 0;
    const int ok = c && EVP_DigestFinal_ex(c, out, &n) == 1 && n == DIGEST;
    EVP_MD_CTX_free(c);
    return ok ? 0 : -1;
}

/* A stream that hashes what passes through it (h may be NULL) and counts bytes. */
typedef struct {
    FILE *f;
    EVP_MD_CTX *h;
    uint64_t pos;
} stream;

static int put(stream *s, const void *p, size_t n) {
    if (fwrite(p, 1, n, s->f) != n) return -1;
    if (s->h && n && EVP_DigestUpdate(s->h, p, n) != 1) return -1;
    s->pos += n;
    return 0;
}

static int get(stream *s, void *p, size_t n) {
    if (fread(p, 1, n, s->f) != n) return -1;
    if (s->h && n && EVP_DigestUpdate(s->h, p, n) != 1) return -1;
    s->pos += n;
    return 0;
}

static int put_curve(stream *f, const curve *c) {
    uint32_t n = (uint32_t)c->n;
    if (put(f, &n, 4)) return -1;
    return n ? put(f, c->xy, (size_t)n * 2 * sizeof(double)) : 0;
}

/* Tensor i's slot [off, end): up to the next tensor's offset (the last: the
 * block's end), so the slots cover the whole block. -1 on a layout whose
 * offsets do not ascend. */
static int slot(const param_layout *pl, int i, size_t *off, size_t *end) {
    *off = pl->t[i].off;
    *end = i + 1 < pl->n ? pl->t[i + 1].off : pl->total;
    return *end >= *off + pl->t[i].n && *end <= pl->total ? 0 : -1;
}

/* One block, slot by slot through a bounded host buffer; each slot's
 * SHA-256 into sums[i]. read: file -> block; else block -> file. */
#define CHUNK ((size_t)1 << 22)

static int stream_block(stream *f, const train_blocks *b, gf_buf blk, float *buf, unsigned char (*sums)[DIGEST],
                        bool read) {
    const param_layout *pl = b->pl;
    for (int i = 0; i < pl->n; i++) {
        size_t off, end;
        if (slot(pl, i, &off, &end) != 0) return gf_fail("checkpoint: tensor offsets of the layout do not ascend");
        f->h = sha_new();
        if (!f->h) return -1;
        for (size_t at = off; at < end; at += CHUNK) {
            const size_t n = end - at < CHUNK ? end - at : CHUNK;
            /* a block given as none (graft halflife reads the parameters alone) is hashed, not uploaded */
            const int bad = read ? get(f, buf, n * sizeof(float)) ||
                                       (!gf_is_none(blk) && be_upload(b->be, gf_at(blk, at), buf, GF_F32, n))
                                 : be_download(b->be, buf, GF_F32, gf_at(blk, at), n) || put(f, buf, n * sizeof(float));
            if (bad) {
                EVP_MD_CTX_free(f->h);
                f->h = NULL;
                return -1;
            }
        }
        const int rc = sha_done(f->h, sums[i]);
        f->h = NULL;
        if (rc) return -1;
    }
    return 0;
}

static const char *const block_names[3] = {"parameters", "first moments", "second moments"};

int checkpoint_write(const char *path, const train_state *s, const train_blocks *b) {
    atomic_file a;
    if (atomic_file_open(&a, path) != 0) return -1;
    stream f = {a.f, sha_new(), 0};
    const param_layout *pl = b->pl;
    float *buf = gf_malloc(CHUNK * sizeof *buf);
    unsigned char(*sums)[DIGEST] = gf_calloc((size_t)3 * (size_t)(pl->n ? pl->n : 1), DIGEST);
    unsigned char head_sum[DIGEST], table_sum[DIGEST];
    errno = 0; /* a backend failure leaves errno alone: report it as such */
    int64_t hdr[4] = {s->step, s->tokens, s->data_cursor, (int64_t)s->seed};
    uint32_t nt = (uint32_t)pl->n;
    uint64_t total = pl->total;
    int bad = !f.h || put(&f, MAGIC, 8) || put(&f, &s->options_hash, 8) || put(&f, hdr, sizeof hdr) ||
              put(&f, &nt, 4) || put(&f, &total, 8);
    for (int i = 0; i < pl->n && !bad; i++) {
        uint64_t on[2] = {pl->t[i].off, pl->t[i].n};
        bad = put(&f, on, sizeof on);
    }
    bad = bad || put_curve(&f, &s->loss) || put_curve(&f, &s->eval);
    if (f.h) bad = sha_done(f.h, head_sum) || bad;
    f.h = NULL;
    bad = bad || put(&f, head_sum, DIGEST);
    const gf_buf blocks[3] = {b->master, b->m, b->v};
    for (int k = 0; k < 3 && !bad; k++) bad = stream_block(&f, b, blocks[k], buf, sums + (size_t)k * pl->n, false);
    bad = bad || put(&f, sums, (size_t)3 * pl->n * DIGEST) || EVP_Digest(sums, (size_t)3 * pl->n * DIGEST, table_sum,
                                                                         NULL, EVP_sha256(), NULL) != 1 ||
          put(&f, table_sum, DIGEST);
    free(buf);
    free(sums);
    if (bad) {
        int e = errno;
        atomic_file_discard(&a);
        return gf_fail("%s: writing the checkpoint failed: %s", path, e ? strerror(e) : "backend error");
    }
    return atomic_file_close(&a);
}

static int get_curve(stream *f, curve *c) {
    uint32_t n;
    if (get(f, &n, 4) || n > (1u << 26)) return -1;
    for (uint32_t i = 0; i < n; i++) {
        double xy[2];
        if (get(f, xy, sizeof xy)) return -1;
        curve_push(c, xy[0], xy[1]);
    }
    return 0;
}

int checkpoint_read(const char *path, train_state *s, const train_blocks *b) {
    memset(s, 0, sizeof *s);
    const param_layout *pl = b->pl;
    if (regular_file_check(path) != 0) return -1; /* a FIFO would block the fopen */
    FILE *fp = fopen(path, "rb");
    if (!fp) return gf_fail("%s: cannot open checkpoint: %s", path, strerror(errno));
    stream f = {fp, sha_new(), 0};
    char magic[8];
    int64_t hdr[4];
    uint32_t nt;
    uint64_t total;
    float *buf = NULL;
    unsigned char(*sums)[DIGEST] = NULL, (*stored)[DIGEST] = NULL;
    unsigned char want[DIGEST], got[DIGEST];
    int rc = -1;
    if (!f.h) {
        gf_fail("%s: libcrypto could not start SHA-256", path);
        goto out;
    }
    if (get(&f, magic, 8)) goto truncated;
    if (memcmp(magic, "GRAFTCK2", 8) == 0) {
        gf_fail("%s: a checkpoint without checksums (GRAFTCK2, from an older graft) cannot be verified; start the run "
                "again without --resume", path);
        goto out;
    }
    if (memcmp(magic, MAGIC, 8) != 0) {
        gf_fail("%s: not a graft checkpoint of this version (expected %s)", path, MAGIC);
        goto out;
    }
    if (get(&f, &s->options_hash, 8) || get(&f, hdr, sizeof hdr) || get(&f, &nt, 4) || get(&f, &total, 8)) goto truncated;
    if ((int)nt != pl->n || total != pl->total) {
        gf_fail("%s: holds %u tensors in %llu values, this model has %d in %zu (another student, or a damaged file)",
                path, nt, (unsigned long long)total, pl->n, pl->total);
        goto out;
    }
    uint64_t *table = gf_malloc((size_t)(pl->n ? pl->n : 1) * 2 * sizeof *table);
    for (int i = 0; i < pl->n; i++)
        if (get(&f, table + 2 * i, 2 * sizeof *table)) {
            free(table);
            goto truncated;
        }
    if (get_curve(&f, &s->loss) || get_curve(&f, &s->eval)) {
        free(table);
        goto truncated;
    }
    /* the header's checksum, before any of its values is used */
    const uint64_t head_end = f.pos;
    const int sum_bad = sha_done(f.h, got);
    f.h = NULL;
    if (sum_bad || get(&f, want, DIGEST)) {
        free(table);
        goto truncated;
    }
    if (memcmp(got, want, DIGEST) != 0) {
        free(table);
        gf_fail("%s: the header (bytes 0..%llu: step, tokens, seed, tensor table, curves) differs from its checksum: a "
                "damaged checkpoint", path, (unsigned long long)head_end - 1);
        goto out;
    }
    s->step = hdr[0], s->tokens = hdr[1], s->data_cursor = hdr[2], s->seed = (uint64_t)hdr[3];
    for (int i = 0; i < pl->n; i++)
        if (table[2 * i] != pl->t[i].off || table[2 * i + 1] != pl->t[i].n) {
            gf_fail("%s: tensor %s has %llu values, the model has %zu", path, pl->t[i].name,
                    (unsigned long long)table[2 * i + 1], pl->t[i].n);
            free(table);
            goto out;
        }
    free(table);
    /* the blocks, then the table of their checksums and its own */
    const uint64_t blocks_at = f.pos;
    const size_t n_sums = (size_t)3 * pl->n;
    buf = gf_malloc(CHUNK * sizeof *buf);
    sums = gf_calloc(n_sums ? n_sums : 1, DIGEST);
    stored = gf_calloc(n_sums ? n_sums : 1, DIGEST);
    const gf_buf blocks[3] = {b->master, b->m, b->v};
    for (int k = 0; k < 3; k++)
        if (stream_block(&f, b, blocks[k], buf, sums + (size_t)k * pl->n, true) != 0) goto truncated;
    const uint64_t table_at = f.pos;
    if (get(&f, stored, n_sums * DIGEST) || get(&f, want, DIGEST)) goto truncated;
    if (EVP_Digest(stored, n_sums * DIGEST, got, NULL, EVP_sha256(), NULL) != 1) goto truncated;
    if (memcmp(got, want, DIGEST) != 0) {
        gf_fail("%s: the table of tensor checksums (bytes %llu..%llu) differs from its checksum: a damaged checkpoint",
                path, (unsigned long long)table_at, (unsigned long long)(table_at + n_sums * DIGEST - 1));
        goto out;
    }
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < pl->n; i++) {
            if (memcmp(sums[(size_t)k * pl->n + i], stored[(size_t)k * pl->n + i], DIGEST) == 0) continue;
            size_t off, end;
            slot(pl, i, &off, &end);
            const uint64_t first = blocks_at + ((uint64_t)k * pl->total + off) * sizeof(float);
            gf_fail("%s: tensor %s (%s), bytes %llu..%llu, differs from its checksum: a damaged checkpoint", path,
                    pl->t[i].name, block_names[k], (unsigned long long)first,
                    (unsigned long long)(first + (end - off) * sizeof(float) - 1));
            goto out;
        }
    if (fgetc(fp) != EOF) {
        gf_fail("%s: bytes after the checkpoint's end (%llu): a damaged checkpoint", path, (unsigned long long)f.pos);
        goto out;
    }
    rc = 0;
    goto out;
truncated:
    gf_fail("%s: checkpoint is truncated or corrupt", path);
out:
    EVP_MD_CTX_free(f.h);
    free(buf);
    free(sums);
    free(stored);
    fclose(fp);
    if (rc != 0) train_state_free(s);
    return rc;
}
