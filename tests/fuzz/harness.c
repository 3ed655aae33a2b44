#include "harness.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/vec.h"
#include "eval/perplexity.h"
#include "formats/model_load.h"

static char dir[PATH_MAX];

static int remove_tree(const char *path) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    return system(cmd);
}

static void cleanup(void) {
    if (dir[0]) remove_tree(dir);
}

const char *fuzz_dir(void) {
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/graft-fuzz-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(cleanup);
    }
    return dir;
}

const char *fuzz_path(const char *name) {
    static char ring[4][PATH_MAX + 64];
    static int next;
    char *path = ring[next++ % 4];
    snprintf(path, sizeof ring[0], "%s/%s", fuzz_dir(), name);
    return path;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t n) {
    const char *path = fuzz_path(name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror("fuzz: writing the input");
        abort(); /* the harness's own failure, not the input's */
    }
    return path;
}

void fuzz_rejected(const char *what) {
    if (getenv("GRAFT_FUZZ_VERBOSE")) fprintf(stderr, "fuzz: %s refused: %s\n", what, gf_last_error());
    gf_clear_error();
}

void fuzz_remove(const char *name) { unlink(fuzz_path(name)); }

int fuzz_split(const uint8_t *data, size_t n, const uint8_t **part, size_t *len, int max) {
    const size_t sl = sizeof FUZZ_SEP - 1;
    int k = 0;
    size_t start = 0;
    for (size_t i = 0; k < max - 1 && i + sl <= n; i++) {
        if (memcmp(data + i, FUZZ_SEP, sl) != 0) continue;
        part[k] = data + start;
        len[k++] = i - start;
        start = i + sl;
        i = start - 1;
    }
    part[k] = data + start;
    len[k++] = n - start;
    return k;
}

int fuzz_write_parts(const uint8_t *data, size_t size, const char *const *names, int n, bool keep_absent) {
    const uint8_t *part[8];
    size_t len[8];
    GF_ASSERT(n <= 8);
    int k = fuzz_split(data, size, part, len, n);
    for (int i = 0; i < n; i++) {
        if (i < k) fuzz_write(names[i], part[i], len[i]);
        else if (!keep_absent) fuzz_remove(names[i]);
    }
    return k;
}

void fuzz_load_and_use_model(const char *path) {
    model m;
    if (model_load(&m, path, NULL) != 0) {
        fuzz_rejected("model_load");
        return;
    }
    fuzz_use_model(&m);
    model_free(&m);
}

static void check_ids(const int_vec *ids, int limit, const char *text) {
    for (size_t i = 0; i < ids->len; i++)
        if (ids->data[i] < 0 || ids->data[i] >= limit) {
            fprintf(stderr, "fuzz: encoding \"%s\" gave id %d outside [0, %d)\n", text, ids->data[i], limit);
            abort();
        }
}

void fuzz_use_tokenizer(const tokenizer *t, int vocab_limit) {
    static const char *const texts[] = {
        "Once upon a time, there was a little girl named Lily.",
        "  leading spaces\tand\ttabs\r\nand newlines\n\n",
        "caf\xc3\xa9 na\xc3\xafve e\xcc\x81 \xe2\x84\xab \xea\xb0\x80 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80",
        "bad utf-8: \xff\xfe \xc3 \xe2\x82 \xf0\x9f\x98 \xed\xa0\x80 end",
        "<s></s><unk><|endoftext|><|im_start|>user <0x41> \xe2\x96\x81x 12345 don't I'LL",
        "",
    };
    int_vec ids = {0};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        ids.len = 0;
        tokenizer_encode(t, texts[k], strlen(texts[k]), true, &ids);
        check_ids(&ids, vocab_limit, texts[k]);
        size_t len = 0;
        free(tokenizer_decode(t, ids.data, ids.len, &len));
        for (size_t i = 0; i < ids.len; i++) free(tokenizer_decode_piece(t, i ? ids.data[i - 1] : -1, ids.data[i]));
    }
    int V = tokenizer_vocab_size(t);
    for (int id = 0; id < V && id < 4096; id++) free(tokenizer_decode_piece(t, tokenizer_bos(t), id));
    int_vec_free(&ids);
}

void fuzz_use_model(const model *m) {
    const model_config *c = &m->cfg;
    /* a forward pass over weights this size takes well under a millisecond */
    if (model_param_count(c) > (4u << 20) || (size_t)c->vocab_size * c->dim > (2u << 20)) return;
    int_vec ids = {0};
    if (m->tok) {
        fuzz_use_tokenizer(m->tok, c->vocab_size);
        tokenizer_encode(m->tok, "Once upon a time", 16, true, &ids);
    }
    for (int i = 1; ids.len < 3; i++) int_vec_push(&ids, i % c->vocab_size);
    double nll;
    long count;
    if (eval_nll(m, ids.data, ids.len, 8, &nll, &count, NULL) != 0) fuzz_rejected("forward");
    int_vec_free(&ids);
}
