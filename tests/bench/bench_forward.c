/* Teacher forward throughput on CPU: stories260K (real weights) and a model of
 * the Qwen2.5-0.5B shape with random weights, each with its achieved GFLOP/s
 * next to the OpenBLAS sgemm rate measured in this run.
 * FLOPs counted: 2 per multiply-add of every projection (q, k, v, o, gate, up,
 * down, lm_head for every position) plus causal attention 4 * hd per (query,
 * key) pair; norms, RoPE and softmax are not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/error.h"
#include "formats/hf_config.h"
#include "model/forward.h"
#include "stats/attn_stats.h"

static double forward_flops(const model_config *c, int T) {
    const double D = c->dim, F = c->hidden_dim, qd = (double)c->n_heads * c->head_dim,
                 kvd = (double)c->n_kv_heads * c->head_dim;
    double per_tok = 2 * (D * qd * 2 + D * kvd * 2 + 3 * D * F) * c->n_layers + 2 * D * c->vocab_size;
    double attn = 4.0 * c->head_dim * c->n_heads * c->n_layers * (double)T * (T + 1) / 2;
    return per_tok * T + attn;
}

static void run(const char *label, const model *m, int T, int reps, double sgemm, double sgemm_cpu) {
    forward_ctx fc;
    if (forward_ctx_init(&fc, m, T) != 0) return;
    int *ids = malloc((size_t)T * sizeof *ids);
    for (int t = 0; t < T; t++) ids[t] = (t * 131 + 7) % m->cfg.vocab_size;
    const int rows = 64, V = m->cfg.vocab_size;
    float *logits = malloc((size_t)rows * V * sizeof *logits);
    attn_stats st;
    attn_stats_init(&st, m->cfg.n_layers, m->cfg.n_heads);
    double best = 1e30, best_stats = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        for (int with_stats = 0; with_stats < 2; with_stats++) {
            double t0 = bench_now(), c0 = bench_cpu_now();
            model_forward(&fc, ids, T, 0, with_stats ? &st : NULL, NULL);
            for (int r0 = 0; r0 < T; r0 += rows) model_logits(&fc, r0, T - r0 < rows ? T - r0 : rows, logits);
            double dt = bench_now() - t0, dc = bench_cpu_now() - c0;
            if (with_stats && dt < best_stats) best_stats = dt;
            if (!with_stats && dt < best) best = dt;
            if (!with_stats && dc < best_cpu) best_cpu = dc;
        }
    }
    double gf = forward_flops(&m->cfg, T) / best * 1e-9, gfc = forward_flops(&m->cfg, T) / best_cpu * 1e-9;
    printf("forward %-20s T=%-4d %8.0f tok/s %6.1f GFLOP/s (%3.0f%% of sgemm %.1f) | per CPU-s: %6.1f GFLOP (%3.0f%% of "
           "sgemm %.1f) | with stats %8.0f tok/s\n",
           label, T, T / best, gf, 100 * gf / sgemm, sgemm, gfc, 100 * gfc / sgemm_cpu, sgemm_cpu, T / best_stats);
    attn_stats_free(&st);
    free(logits);
    free(ids);
    forward_ctx_free(&fc);
}

static void fill_random(float *p, size_t n, float scale) {
    uint64_t s = 88172645463325252ULL;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = ((float)(s >> 40) / 16777216.0f - 0.5f) * 2 * scale;
    }
}

int main(void) {
    const char *shared = getenv("GRAFT_SHARED");
    if (!shared) shared = "../shared";
    char path[4096];
    double sgemm = bench_sgemm_gflops(512, 4864, 896, 3), sgemm_cpu = bench_sgemm_gflops_cpu(512, 4864, 896, 3);
    printf("sgemm 512x4864x896: %.1f GFLOP/s wall, %.1f GFLOP per CPU-second\n", sgemm, sgemm_cpu);

    model m;
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/stories260K.bin", shared);
    if (model_load(&m, path, NULL) == 0) {
        run("stories260K", &m, 256, 5, sgemm, sgemm_cpu);
        run("stories260K", &m, 512, 3, sgemm, sgemm_cpu);
        model_free(&m);
    } else {
        printf("forward stories260K: skipped (%s)\n", gf_last_error());
    }

    memset(&m, 0, sizeof m);
    snprintf(path, sizeof path, "%s/configs/qwen2.5-0.5b.json", shared);
    if (hf_config_load(&m.cfg, path) == 0) {
        model_weights_alloc(&m.w, &m.cfg);
        fill_random(m.w.block, m.w.n_floats, 0.02f);
        for (int l = 0; l < m.cfg.n_layers; l++) {
            for (int i = 0; i < m.cfg.dim; i++) m.w.layers[l].attn_norm[i] = m.w.layers[l].ffn_norm[i] = 1.0f;
        }
        for (int i = 0; i < m.cfg.dim; i++) m.w.final_norm[i] = 1.0f;
        run("qwen2.5-0.5b-shape", &m, 512, 2, sgemm, sgemm_cpu);
        model_weights_free(&m.w);
    } else {
        printf("forward qwen2.5-0.5b-shape: skipped (%s)\n", gf_last_error());
    }
    return 0;
}
