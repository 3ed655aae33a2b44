#include "train/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/error.h"

#define MAGIC "GRAFTCK1"

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

static int put_floats(FILE *f, const param_list *pl, const float *flat, int which) {
    size_t off = 0;
    for (int i = 0; i < pl->n; i++) {
        const float *src = which == 0 ? pl->t[i].p : flat + off;
        if (put(f, src, pl->t[i].n * sizeof(float))) return -1;
        off += pl->t[i].n;
    }
    return 0;
}

int checkpoint_write(const char *path, const train_state *s, const param_list *pl, const float *m, const float *v) {
    atomic_file a;
    if (atomic_file_open(&a, path) != 0) return -1;
    FILE *f = a.f;
    int64_t hdr[4] = {s->step, s->tokens, s->data_cursor, (int64_t)s->seed};
    uint32_t nt = (uint32_t)pl->n;
    int bad = put(f, MAGIC, 8) || put(f, &s->options_hash, 8) || put(f, hdr, sizeof hdr) || put(f, &nt, 4);
    for (int i = 0; i < pl->n && !bad; i++) {
        uint64_t n = pl->t[i].n;
        bad = put(f, &n, 8);
    }
    bad = bad || put_curve(f, &s->loss) || put_curve(f, &s->eval) || put_floats(f, pl, NULL, 0) ||
          put_floats(f, pl, m, 1) || put_floats(f, pl, v, 1);
    if (bad) {
        int e = errno;
        atomic_file_discard(&a);
        return gf_fail("%s: writing the checkpoint failed: %s", path, strerror(e));
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

int checkpoint_read(const char *path, train_state *s, const param_list *pl, float *m, float *v) {
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) return gf_fail("%s: cannot open checkpoint: %s", path, strerror(errno));
    char magic[8];
    int64_t hdr[4];
    uint32_t nt;
    if (get(f, magic, 8) || memcmp(magic, MAGIC, 8) != 0) {
        fclose(f);
        return gf_fail("%s: not a graft training checkpoint", path);
    }
    if (get(f, &s->options_hash, 8) || get(f, hdr, sizeof hdr) || get(f, &nt, 4)) goto truncated;
    s->step = hdr[0], s->tokens = hdr[1], s->data_cursor = hdr[2], s->seed = (uint64_t)hdr[3];
    if ((int)nt != pl->n) {
        fclose(f);
        return gf_fail("%s: holds %u tensors, this model has %d (another student?)", path, nt, pl->n);
    }
    for (int i = 0; i < pl->n; i++) {
        uint64_t n;
        if (get(f, &n, 8)) goto truncated;
        if (n != pl->t[i].n) {
            fclose(f);
            return gf_fail("%s: tensor %s has %llu values, the model has %zu", path, pl->t[i].name,
                           (unsigned long long)n, pl->t[i].n);
        }
    }
    if (get_curve(f, &s->loss) || get_curve(f, &s->eval)) goto truncated;
    for (int i = 0; i < pl->n; i++)
        if (get(f, pl->t[i].p, pl->t[i].n * sizeof(float))) goto truncated;
    if (get(f, m, pl->total * sizeof(float)) || get(f, v, pl->total * sizeof(float))) goto truncated;
    fclose(f);
    return 0;
truncated:
    fclose(f);
    train_state_free(s);
    return gf_fail("%s: checkpoint is truncated or corrupt", path);
}
