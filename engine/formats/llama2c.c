/* llama2.c checkpoints (legacy header: seven int32, then float32 weights). */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/loaders.h"

typedef struct {
    const float *p;
    size_t left; /* floats left in the file */
} float_reader;

static int take(float_reader *r, float *dst, size_t n, const char *what) {
    if (n > r->left) return gf_fail("truncated file: %s needs %zu floats, %zu left", what, n, r->left);
    memcpy(dst, r->p, n * sizeof(float));
    r->p += n;
    r->left -= n;
    return 0;
}

static int skip(float_reader *r, size_t n, const char *what) {
    if (n > r->left) return gf_fail("truncated file: %s needs %zu floats, %zu left", what, n, r->left);
    r->p += n;
    r->left -= n;
    return 0;
}

/* tokenizer.bin beside the checkpoint, else tok<vocab>.bin, else any tok*.bin. */
static char *find_tokenizer(const char *ckpt, int vocab) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", ckpt);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    char cand[PATH_MAX + 32];
    FILE *f;
    snprintf(cand, sizeof cand, "%s/tokenizer.bin", dir);
    if ((f = fopen(cand, "rb"))) { fclose(f); return gf_strdup(cand); }
    snprintf(cand, sizeof cand, "%s/tok%d.bin", dir, vocab);
    if ((f = fopen(cand, "rb"))) { fclose(f); return gf_strdup(cand); }
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *found = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "tok", 3) == 0 && n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
            snprintf(cand, sizeof cand, "%s/%s", dir, e->d_name);
            found = gf_strdup(cand);
            break;
        }
    }
    closedir(d);
    return found;
}

static int check_dims(const int32_t h[7], const char *path) {
    const char *names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < 7; i++) {
        int32_t v = i == 5 ? (h[i] < 0 ? -h[i] : h[i]) : h[i];
        if (v <= 0 || v > (1 << 24))
            return gf_fail("%s: not a llama2.c checkpoint (header %s = %d)", path, names[i], h[i]);
    }
    if (h[0] % h[3] != 0) return gf_fail("%s: dim %d is not a multiple of n_heads %d", path, h[0], h[3]);
    if (h[3] % h[4] != 0) return gf_fail("%s: n_heads %d is not a multiple of n_kv_heads %d", path, h[3], h[4]);
    if ((h[0] / h[3]) % 2 != 0) return gf_fail("%s: head size %d is odd; RoPE needs pairs", path, h[0] / h[3]);
    return 0;
}

int load_llama2c(model *m, const char *path, const model_load_opts *opts) {
    mapped_file f;
    if (mapped_file_open(&f, path) != 0) return -1;
    int rc = -1;
    if (f.size < 7 * sizeof(int32_t)) {
        gf_fail("%s: truncated file (%zu bytes; a llama2.c header needs 28)", path, f.size);
        goto done;
    }
    int32_t h[7];
    memcpy(h, f.data, sizeof h);
    if (check_dims(h, path) != 0) goto done;

    model_config *c = &m->cfg;
    memset(c, 0, sizeof *c);
    c->arch = ARCH_LLAMA;
    c->source = SOURCE_LLAMA2C;
    c->dim = h[0];
    c->hidden_dim = h[1];
    c->n_layers = h[2];
    c->n_heads = h[3];
    c->n_kv_heads = h[4];
    c->tied_embeddings = h[5] > 0;
    c->vocab_size = h[5] > 0 ? h[5] : -h[5];
    c->max_seq = h[6];
    c->head_dim = c->dim / c->n_heads;
    c->norm_eps = 1e-5f;
    c->rope_theta = 10000.0f;
    c->rope_pairing = ROPE_ADJACENT;
    c->bos_id = 1;
    c->eos_id = 2;
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "f32");

    model_weights_alloc(&m->w, c);
    float_reader r = {(const float *)(f.data + sizeof h), (f.size - sizeof h) / sizeof(float)};
    const size_t D = c->dim, F = c->hidden_dim, L = c->n_layers, V = c->vocab_size;
    const size_t kvd = (size_t)c->n_kv_heads * c->head_dim;
    if (take(&r, m->w.tok_embed, V * D, "token_embedding_table")) goto fail;
    /* llama2.c stores each kind of tensor for all layers together */
#define ALL_LAYERS(field, n, what)                                              \
    for (size_t l = 0; l < L; l++)                                              \
        if (take(&r, m->w.layers[l].field, (n), what)) goto fail;
    ALL_LAYERS(attn_norm, D, "rms_att_weight")
    ALL_LAYERS(wq, D * D, "wq")
    ALL_LAYERS(wk, kvd * D, "wk")
    ALL_LAYERS(wv, kvd * D, "wv")
    ALL_LAYERS(wo, D * D, "wo")
    ALL_LAYERS(ffn_norm, D, "rms_ffn_weight")
    ALL_LAYERS(w_gate, F * D, "w1")
    ALL_LAYERS(w_down, D * F, "w2")
    ALL_LAYERS(w_up, F * D, "w3")
#undef ALL_LAYERS
    if (take(&r, m->w.final_norm, D, "rms_final_weight")) goto fail;
    /* legacy RoPE tables (freq_cis_real, freq_cis_imag): recomputed, not read */
    if (skip(&r, (size_t)c->max_seq * c->head_dim, "freq_cis")) goto fail;
    if (!c->tied_embeddings && take(&r, m->w.lm_head, V * D, "wcls")) goto fail;

    {
        const char *tp = opts->tokenizer_path;
        char *found = tp ? NULL : find_tokenizer(path, c->vocab_size);
        if (!tp) tp = found;
        if (tp && tokenizer_load_llama2c(&m->tok, tp, c->vocab_size) != 0) {
            free(found);
            goto done;
        }
        free(found);
    }
    rc = 0;
    goto done;
fail:
    gf_fail_prefix(path);
done:
    mapped_file_close(&f);
    return rc;
}
