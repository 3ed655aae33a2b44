/* Recovery-training throughput on CPU (phase kl: teacher forward, student
 * forward + backward, AdamW on every group), in training tokens per second,
 * for stories260K (real weights, 50 % uniform: layers 2, 4 GDN) and a
 * synthetic hybrid of the Qwen2.5-0.5B shape (D 896, F 4864, 14/2 heads,
 * head_dim 64, vocab 151936, tied) cut to 4 of its 24 layers (1 and 3 GDN) to
 * fit beside other work in memory. Next to it: the FLOP rate that implies
 * (teacher 2N + student 6N per token, N = multiply-adds of the projections
 * and LM head; attention and GDN recurrences not counted) and the OpenBLAS
 * sgemm rate measured in this run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/error.h"
#include "data/train_data.h"
#include "model/model.h"
#include "train/hybrid.h"
#include "train/trainer.h"

static double proj_macs_per_token(const model_config *c) {
    const double D = c->dim, F = c->hidden_dim, qd = (double)c->n_heads * c->head_dim,
                 kvd = (double)c->n_kv_heads * c->head_dim;
    return (D * qd * 2 + D * kvd * 2 + 3 * D * F) * c->n_layers + D * c->vocab_size;
}

static void run(const char *label, const model_config *c, const model_weights *w, int T, int batch, int steps,
                double sgemm) {
    bool conv[64] = {0};
    for (int l = 0; l < c->n_layers; l++) conv[l] = l % 2 == 1 || (c->n_layers == 5 && l == 4);
    if (c->n_layers == 5) conv[1] = conv[3] = false, conv[2] = conv[4] = true;
    hybrid_mixers h;
    train_model teacher, student;
    if (hybrid_random_gdn(&h, c, w, conv, 1) != 0 ||
        train_model_init(&teacher, c, w, false, false, NULL, T) != 0 ||
        train_model_init(&student, c, w, true, true, h.mixers, T) != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
        return;
    }
    train_data d;
    memset(&d, 0, sizeof d);
    d.ctx = T, d.n_train = 8, d.n_eval = 1, d.perm_epoch = -1, d.seed = 1;
    d.train = malloc((size_t)8 * T * sizeof(int));
    d.eval = malloc((size_t)T * sizeof(int));
    d.perm = malloc(8 * sizeof(int));
    for (int i = 0; i < 8 * T; i++) d.train[i] = (i * 131 + 7) % c->vocab_size;
    for (int i = 0; i < T; i++) d.eval[i] = (i * 17 + 3) % c->vocab_size;
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = batch, o.eval_seqs = 1;
    /* one warm-up step, then the timed steps (each run ends with one held-out evaluation of one sequence) */
    train_result r;
    o.tokens = (long)T * batch;
    train_run(&o, &student, &teacher, &d, NULL, &r);
    train_result_free(&r);
    o.tokens = (long)T * batch * steps;
    double t0 = bench_now();
    if (train_run(&o, &student, &teacher, &d, NULL, &r) != 0) fprintf(stderr, "bench_train: %s\n", gf_last_error());
    double dt = bench_now() - t0;
    const double tok = (double)T * batch * steps;
    const double gf = 8.0 * proj_macs_per_token(c) * tok / dt * 1e-9;
    printf("train %-34s T=%-4d batch %d: %8.0f tokens/s  %6.1f GFLOP/s  (%.0f%% of sgemm %.1f GFLOP/s)\n", label, T,
           batch, tok / dt, gf, 100 * gf / sgemm, sgemm);
    train_result_free(&r);
    train_data_free(&d);
    train_model_free(&student);
    train_model_free(&teacher);
    hybrid_mixers_free(&h);
}

int main(int argc, char **argv) {
    (void)argc;
    if (!getenv("OMP_WAIT_POLICY")) { /* as graft itself runs (src/main.c): spinning OpenMP waits cost 10x here */
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
    }
    const double sgemm = bench_sgemm_gflops(512, 896, 896, 5);
    const char *shared = getenv("GRAFT_SHARED");
    char path[512];
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/stories260K.bin", shared ? shared : "/work/shared");
    model m;
    model_load_opts lo = {0};
    if (model_load(&m, path, &lo) == 0) {
        run("stories260K hybrid (GDN 2,4)", &m.cfg, &m.w, 256, 4, 8, sgemm);
        model_free(&m);
    } else {
        printf("train stories260K: skipped (%s)\n", gf_last_error());
    }
    /* the full 24 layers by default; GRAFT_BENCH_QWEN_LAYERS=4 cuts it where memory is short */
    const char *nl = getenv("GRAFT_BENCH_QWEN_LAYERS");
    model_config c = {0};
    c.arch = ARCH_QWEN2, c.dim = 896, c.hidden_dim = 4864, c.n_layers = nl ? atoi(nl) : 24, c.n_heads = 14, c.n_kv_heads = 2;
    if (c.n_layers < 1 || c.n_layers > 24) c.n_layers = 24;
    c.head_dim = 64, c.vocab_size = 151936, c.max_seq = 32768, c.norm_eps = 1e-6f, c.rope_theta = 1e6f;
    c.qkv_bias = true, c.tied_embeddings = true;
    model_weights w;
    model_weights_alloc(&w, &c);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < w.n_floats; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        w.block[i] = ((float)(s >> 40) / 16777216.0f - 0.5f) * 0.04f;
    }
    for (int l = 0; l < c.n_layers; l++)
        for (int i = 0; i < c.dim; i++) w.layers[l].attn_norm[i] = w.layers[l].ffn_norm[i] = 1;
    for (int i = 0; i < c.dim; i++) w.final_norm[i] = 1;
    char label[64];
    snprintf(label, sizeof label, "Qwen2.5-0.5B shape, %d of 24 layers", c.n_layers);
    run(label, &c, &w, 128, 1, 2, sgemm);
    model_weights_free(&w);
    return 0;
}
