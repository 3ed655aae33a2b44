/* Teacher forward throughput on CPU: stories260K (real weights) and a model of
 * the Qwen2.5-0.5B shape with random weights, each with its achieved GFLOP/s
 * next to the OpenBLAS sgemm rate measured in this run, before and after the
 * forwards (the better of the two: on a shared machine one measurement swings
 * with the neighbours' load, 197-333 GFLOP/s within ten minutes on session
 * 19's machine, while the 0.5B forward moved 232-243 tok/s).
 * FLOPs counted: 2 per multiply-add of every projection (q, k, v, o, gate, up,
 * down, lm_head for every position) plus causal attention 4 * hd per (query,
 * key) pair; norms, RoPE and softmax are not counted. The yardstick is also
 * measured beside each forward without statistics (before the first and after
 * each, outside its clocks): each forward per CPU-second against the better of
 * the two beside it, and their median, a reading of the target's own ratio at
 * the seconds the forward ran (as bench_train's steps). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli/load_env.h"
#include "core/error.h"
#include "formats/hf_config.h"
#include "bench_model.h"
#include "formats/model_load.h"
#include "model/transformer.h"

static double forward_flops(const model_config *c, int T) {
    const double D = c->dim, F = c->hidden_dim, qd = (double)c->n_heads * c->head_dim,
                 kvd = (double)c->n_kv_heads * c->head_dim;
    double per_tok = 2 * (D * qd * 2 + D * kvd * 2 + 3 * D * F) * c->n_layers + 2 * D * c->vocab_size;
    double attn = 4.0 * c->head_dim * c->n_heads * c->n_layers * (double)T * (T + 1) / 2;
    return per_tok * T + attn;
}

#define YARD_M 512 /* the yardstick: sgemm at the 0.5B FFN's shape for 512 rows */
#define YARD_N 4864
#define YARD_K 896
#define REPS_MAX 16

typedef struct {
    char label[64];
    int T;
    double tok_s, gf, gfc, tok_s_stats;
    int reps;
    double beside[REPS_MAX]; /* each forward's GFLOP per CPU-s over the better yardstick beside it */
} fwd_fig;

/* One sequence of T tokens, logits for every row in `rows` rows at a time, with
 * and without the statistics. */
static bool run(fwd_fig *f, const char *label, const model *m, int T, int reps, int rows) {
    transformer tf;
    tf_run *plain, *stats;
    const tf_run_opts po = {.B = 1, .T = T, .logit_rows = rows}, so = {.B = 1, .T = T, .stats = true, .logit_rows = rows};
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0 || tf_run_open(&plain, &tf, &po) != 0 ||
        tf_run_open(&stats, &tf, &so) != 0) {
        printf("forward %s: skipped (%s)\n", label, gf_last_error());
        return false;
    }
    int *ids = malloc((size_t)T * sizeof *ids);
    for (int t = 0; t < T; t++) ids[t] = (t * 131 + 7) % m->cfg.vocab_size;
    double best = 1e30, best_stats = 1e30, best_cpu = 1e30;
    if (reps > REPS_MAX) reps = REPS_MAX;
    f->reps = reps;
    double yard = bench_sgemm_gflops_cpu(YARD_M, YARD_N, YARD_K, 3); /* the one before the first forward */
    for (int r = 0; r < reps; r++) {
        for (int with_stats = 0; with_stats < 2; with_stats++) {
            tf_run *run = with_stats ? stats : plain;
            double t0 = bench_now(), c0 = bench_cpu_now();
            tf_forward(run, ids, 1, T, 0, NULL);
            for (int r0 = 0; r0 < T; r0 += rows) tf_logits(run, r0, T - r0 < rows ? T - r0 : rows, tf_run_logits(run, NULL));
            be_sync(m->be);
            double dt = bench_now() - t0, dc = bench_cpu_now() - c0;
            if (with_stats && dt < best_stats) best_stats = dt;
            if (!with_stats && dt < best) best = dt;
            if (!with_stats && dc < best_cpu) best_cpu = dc;
            if (!with_stats) {
                const double y = bench_sgemm_gflops_cpu(YARD_M, YARD_N, YARD_K, 3);
                f->beside[r] = forward_flops(&m->cfg, T) / dc * 1e-9 / (y > yard ? y : yard);
                yard = y;
            }
        }
    }
    snprintf(f->label, sizeof f->label, "%s, logits %d rows", label, rows);
    f->T = T;
    f->tok_s = T / best;
    f->gf = forward_flops(&m->cfg, T) / best * 1e-9;
    f->gfc = forward_flops(&m->cfg, T) / best_cpu * 1e-9;
    f->tok_s_stats = T / best_stats;
    free(ids);
    tf_run_close(plain);
    tf_run_close(stats);
    tf_free(&tf);
    return true;
}

static void print_fig(const fwd_fig *f, double sgemm, double sgemm_cpu) {
    printf("forward %-36s T=%-4d %8.0f tok/s %6.1f GFLOP/s (%3.0f%% of sgemm %.1f) | per CPU-s: %6.1f GFLOP (%3.0f%% of "
           "sgemm %.1f) | with stats %8.0f tok/s\n",
           f->label, f->T, f->tok_s, f->gf, 100 * f->gf / sgemm, sgemm, f->gfc, 100 * f->gfc / sgemm_cpu, sgemm_cpu,
           f->tok_s_stats);
    double v[REPS_MAX];
    printf("    each forward per CPU-s against the yardstick beside it:");
    for (int r = 0; r < f->reps; r++) printf("%s %.0f%%", r ? "," : "", 100 * (v[r] = f->beside[r]));
    printf("; median %.0f%%\n", 100 * bench_median(v, f->reps));
}

int main(int argc, char **argv) {
    (void)argc;
    load_env_reexec(argv); /* as graft itself runs: passive OpenMP waits, OpenBLAS kernels with AVX */
    const char *shared = getenv("GRAFT_SHARED");
    if (!shared) shared = "../shared";
    char path[4096];
    bench_print_blas_core();
    const double y0 = bench_sgemm_gflops(YARD_M, YARD_N, YARD_K, 5), y0c = bench_sgemm_gflops_cpu(YARD_M, YARD_N, YARD_K, 5);
    fwd_fig figs[4];
    int n = 0;
    model m;
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/stories260K.bin", shared);
    if (model_load(&m, path, NULL) == 0) {
        n += run(&figs[n], "stories260K", &m, 256, 5, 64);
        n += run(&figs[n], "stories260K", &m, 512, 3, 64);
        model_free(&m);
    } else {
        printf("forward stories260K: skipped (%s)\n", gf_last_error());
    }

    memset(&m, 0, sizeof m);
    snprintf(path, sizeof path, "%s/configs/qwen2.5-0.5b.json", shared);
    model_config qc;
    if (hf_config_load(&qc, path) == 0 && bench_model_random(&m, &qc, 0.02f) == 0) {
        n += run(&figs[n], "qwen2.5-0.5b-shape", &m, 512, 5, 64);
        n += run(&figs[n], "qwen2.5-0.5b-shape", &m, 512, 5, tf_logit_rows(512, m.cfg.vocab_size, false));
        model_free(&m);
    } else {
        printf("forward qwen2.5-0.5b-shape: skipped (%s)\n", gf_last_error());
    }
    const double y1 = bench_sgemm_gflops(YARD_M, YARD_N, YARD_K, 5), y1c = bench_sgemm_gflops_cpu(YARD_M, YARD_N, YARD_K, 5);
    const double sgemm = y0 > y1 ? y0 : y1, sgemm_cpu = y0c > y1c ? y0c : y1c;
    printf("sgemm 512x4864x896: %.1f GFLOP/s wall, %.1f GFLOP per CPU-second (the better of %.1f / %.1f before "
           "the forwards and %.1f / %.1f after)\n",
           sgemm, sgemm_cpu, y0, y0c, y1, y1c);
    for (int i = 0; i < n; i++) print_fig(&figs[i], sgemm, sgemm_cpu);
    return 0;
}
