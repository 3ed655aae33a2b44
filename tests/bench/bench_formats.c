/* Benchmark: loading a Hugging Face folder at a real shape (Qwen2.5-0.5B from
 * $GRAFT_SHARED/configs, synthetic bf16 weights) and raw half -> float32
 * conversion speed. Prints one line per measurement; never a pass/fail test. */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/hf_config.h"
#include "formats/model_load.h"
#include "formats/safetensors.h"
#include "model/model.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

typedef struct { char name[96]; long d0, d1; } spec;

static int specs_of(const model_config *c, spec *s) {
    int n = 0;
    long D = c->dim, F = c->hidden_dim, qd = (long)c->n_heads * c->head_dim, kvd = (long)c->n_kv_heads * c->head_dim;
#define ADD(fmt, l, a, b) (snprintf(s[n].name, sizeof s[n].name, fmt, l), s[n].d0 = (a), s[n].d1 = (b), n++)
    ADD("model.embed_tokens.weight%.0d", 0, c->vocab_size, D);
    for (int l = 0; l < c->n_layers; l++) {
        ADD("model.layers.%d.input_layernorm.weight", l, D, 0);
        ADD("model.layers.%d.self_attn.q_proj.weight", l, qd, D);
        ADD("model.layers.%d.self_attn.k_proj.weight", l, kvd, D);
        ADD("model.layers.%d.self_attn.v_proj.weight", l, kvd, D);
        ADD("model.layers.%d.self_attn.o_proj.weight", l, D, qd);
        if (c->qkv_bias) {
            ADD("model.layers.%d.self_attn.q_proj.bias", l, qd, 0);
            ADD("model.layers.%d.self_attn.k_proj.bias", l, kvd, 0);
            ADD("model.layers.%d.self_attn.v_proj.bias", l, kvd, 0);
        }
        if (c->qk_norm) {
            ADD("model.layers.%d.self_attn.q_norm.weight", l, c->head_dim, 0);
            ADD("model.layers.%d.self_attn.k_norm.weight", l, c->head_dim, 0);
        }
        ADD("model.layers.%d.post_attention_layernorm.weight", l, D, 0);
        ADD("model.layers.%d.mlp.gate_proj.weight", l, F, D);
        ADD("model.layers.%d.mlp.up_proj.weight", l, F, D);
        ADD("model.layers.%d.mlp.down_proj.weight", l, D, F);
    }
    ADD("model.norm.weight%.0d", 0, D, 0);
    if (!c->tied_embeddings) ADD("lm_head.weight%.0d", 0, c->vocab_size, D);
#undef ADD
    return n;
}

/* Streams a bf16 model.safetensors for the config into dir; returns its size. */
static size_t write_model(const char *dir, const model_config *c) {
    spec *s = calloc(16 + (size_t)c->n_layers * 16, sizeof *s);
    int n = specs_of(c, s);
    size_t cap = 256 + (size_t)n * 200, len = 0, off = 0;
    char *h = malloc(cap);
    len += snprintf(h, cap, "{");
    for (int i = 0; i < n; i++) {
        size_t nb = (size_t)s[i].d0 * (s[i].d1 ? s[i].d1 : 1) * 2;
        if (s[i].d1)
            len += snprintf(h + len, cap - len, "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%ld,%ld],\"data_offsets\":[%zu,%zu]}",
                            i ? "," : "", s[i].name, s[i].d0, s[i].d1, off, off + nb);
        else
            len += snprintf(h + len, cap - len, "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%ld],\"data_offsets\":[%zu,%zu]}",
                            i ? "," : "", s[i].name, s[i].d0, off, off + nb);
        off += nb;
    }
    len += snprintf(h + len, cap - len, "}");
    while (len % 8) h[len++] = ' ';
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *f = fopen(path, "wb");
    unsigned long long hl = len;
    fwrite(&hl, 8, 1, f);
    fwrite(h, 1, len, f);
    size_t chunk = 1 << 24;
    unsigned short *buf = malloc(chunk * 2);
    for (size_t i = 0; i < chunk; i++) buf[i] = (unsigned short)(0x3c00 + (i % 512)); /* small positive bf16 */
    for (size_t left = off; left;) {
        size_t k = left < chunk * 2 ? left : chunk * 2;
        fwrite(buf, 1, k, f);
        left -= k;
    }
    fclose(f);
    free(buf);
    free(h);
    free(s);
    return 8 + len + off;
}

int main(void) {
    const char *shared = getenv("GRAFT_SHARED");
    char cfg_path[PATH_MAX], dir[] = "/tmp/graft-bench-formats-XXXXXX";
    snprintf(cfg_path, sizeof cfg_path, "%s/configs/qwen2.5-0.5b.json", shared ? shared : "../shared");
    model_config c;
    if (hf_config_load(&c, cfg_path) != 0) {
        printf("bench_formats: skipped (%s)\n", gf_last_error());
        return 0;
    }
    if (!mkdtemp(dir)) return 1;
    size_t len;
    char *text = read_text_file(cfg_path, &len);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/config.json", dir);
    FILE *f = fopen(p, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    size_t bytes = write_model(dir, &c);

    model m;
    double t0 = now();
    int rc = model_load(&m, dir, NULL);
    double t1 = now();
    if (rc != 0) {
        printf("bench_formats: load failed: %s\n", gf_last_error());
    } else {
        printf("bench_formats: load qwen2.5-0.5b shape, bf16 safetensors %.0f MB -> %.0f MB float32: %.2f s (%.2f GB/s read)\n",
               bytes / 1e6, m.layout.total * 4 / 1e6, t1 - t0, bytes / 1e9 / (t1 - t0));
        model_free(&m);
    }
    /* conversion alone, page cache warm */
    st_file sf;
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    if (st_open(&sf, p) == 0) {
        const st_tensor *t = st_find(&sf, "model.embed_tokens.weight");
        float *dst = malloc(t->n_elems * sizeof(float));
        st_read_f32(t, dst, t->n_elems);
        double best = 1e9;
        for (int r = 0; r < 3; r++) {
            double a = now();
            st_read_f32(t, dst, t->n_elems);
            double b = now();
            if (b - a < best) best = b - a;
        }
        printf("bench_formats: bf16 -> f32 conversion, %zu values: %.3f s (%.2f Gvalues/s)\n", t->n_elems, best,
               t->n_elems / 1e9 / best);
        free(dst);
        st_close(&sf);
    }
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}
