#include "train/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/error.h"

#define MAGIC "GRAFTCK2"

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

static int put(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -1; }

static int put_curve(FILE *f, const curve *c) {
    uint32_t n = (uint32_t)c->n;
    if (put(f, &n, 4)) return -1;
    return n ? put(f, c->xy, (size_t)n * 2 * sizeof(double)) : 0;
}

/* One block, streamed through a bounded host buffer (downloads in pieces). */
#define CHUNK ((size_t)1 << 22)

static int put_block(FILE *f, const train_blocks *b, gf_buf blk, float *buf) {
    for (size_t off = 0; off < b->pl->total; off += CHUNK) {
        const size_t n = b->pl->total - off < CHUNK ? b->pl->total - off : CHUNK;
        if (be_download(b->be, buf, GF_F32, gf_at(blk, off), n) != 0 || put(f, buf, n * sizeof(float))) return -1;
    }
    return 0;
}

int checkpoint_write(const char *path, const train_state *s, const train_blocks *b) {
    atomic_file a;
    if (atomic_file_open(&a, path) != 0) return -1;
    FILE *f = a.f;
    float *buf = gf_malloc(CHUNK * sizeof *buf);
    const param_layout *pl = b->pl;
    errno = 0; /* a backend failure leaves errno alone: report it as such */
    int64_t hdr[4] = {s->step, s->tokens, s->data_cursor, (int64_t)s->seed};
    uint32_t nt = (uint32_t)pl->n;
    uint64_t total = pl->total;
    int bad = put(f, MAGIC, 8) || put(f, &s->options_hash, 8) || put(f, hdr, sizeof hdr) || put(f, &nt, 4) ||
              put(f, &total, 8);
    for (int i = 0; i < pl->n && !bad; i++) {
        uint64_t on[2] = {pl->t[i].off, pl->t[i].n};
        bad = put(f, on, sizeof on);
    }
    bad = bad || put_curve(f, &s->loss) || put_curve(f, &s->eval) || put_block(f, b, b->master, buf) ||
          put_block(f, b, b->m, buf) || put_block(f, b, b->v, buf);
    free(buf);
    if (bad) {
        int e = errno;
        atomic_file_discard(&a);
        return gf_fail("%s: writing the checkpoint failed: %s", path, e ? strerror(e) : "backend error");
    }
    return atomic_file_close(&a);
}

static int get(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

static int get_curve(FILE *f, curve *c) {
    uint32_t n;
    if (get(f, &n, 4) || n > (1u << 26)) return -1;
    for (uint32_t i = 0; i < n; i++) {
        double xy[2];
        if (get(f, xy, sizeof xy)) return -1;
        curve_push(c, xy[0], xy[1]);
    }
    return 0;
}

static int get_block(FILE *f, const train_blocks *b, gf_buf blk, float *buf) {
    for (size_t off = 0; off < b->pl->total; off += CHUNK) {
        const size_t n = b->pl->total - off < CHUNK ? b->pl->total - off : CHUNK;
        if (get(f, buf, n * sizeof(float)) || be_upload(b->be, gf_at(blk, off), buf, GF_F32, n) != 0) return -1;
    }
    return 0;
}

int checkpoint_read(const char *path, train_state *s, const train_blocks *b) {
    memset(s, 0, sizeof *s);
    const param_layout *pl = b->pl;
    FILE *f = fopen(path, "rb");
    if (!f) return gf_fail("%s: cannot open checkpoint: %s", path, strerror(errno));
    char magic[8];
    int64_t hdr[4];
    uint32_t nt;
    uint64_t total;
    float *buf = NULL;
    if (get(f, magic, 8)) goto truncated;
    if (memcmp(magic, MAGIC, 8) != 0) {
        fclose(f);
        return gf_fail("%s: not a graft checkpoint of this version (expected %s)", path, MAGIC);
    }
    if (get(f, &s->options_hash, 8) || get(f, hdr, sizeof hdr) || get(f, &nt, 4) || get(f, &total, 8)) goto truncated;
    s->step = hdr[0], s->tokens = hdr[1], s->data_cursor = hdr[2], s->seed = (uint64_t)hdr[3];
    if ((int)nt != pl->n || total != pl->total) {
        fclose(f);
        return gf_fail("%s: holds %u tensors in %llu values, this model has %d in %zu (another student?)", path, nt,
                       (unsigned long long)total, pl->n, pl->total);
    }
    for (int i = 0; i < pl->n; i++) {
        uint64_t on[2];
        if (get(f, on, sizeof on)) goto truncated;
        if (on[0] != pl->t[i].off || on[1] != pl->t[i].n) {
            fclose(f);
            return gf_fail("%s: tensor %s has %llu values, the model has %zu", path, pl->t[i].name,
                           (unsigned long long)on[1], pl->t[i].n);
        }
    }
    if (get_curve(f, &s->loss) || get_curve(f, &s->eval)) goto truncated;
    buf = gf_malloc(CHUNK * sizeof *buf);
    const bool moments = !gf_is_none(b->m) && !gf_is_none(b->v);
    if (get_block(f, b, b->master, buf) || (moments && (get_block(f, b, b->m, buf) || get_block(f, b, b->v, buf))))
        goto truncated;
    free(buf);
    fclose(f);
    return 0;
truncated:
    free(buf);
    fclose(f);
    train_state_free(s);
    return gf_fail("%s: checkpoint is truncated or corrupt", path);
}
