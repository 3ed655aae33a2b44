/* The CPU backend's vocabulary-wide losses at the distillation step's shape:
 * KL with temperature 1 and 2 (two softmaxes of the vocabulary a row: the
 * recovery run's loss) and cross-entropy (one), with their gradients, rows of
 * V = 151,936 (Qwen2.5's vocabulary). Reported per row and per vocabulary
 * entry in CPU time (every thread's), best of three calls, so a loaded machine
 * moves the figures less than wall time would. Next to them, in the same run,
 * a plain loop of libm's scalar exp over the same number of doubles: the cost
 * an unvectorized softmax pays for its exps alone.
 *
 *   bench_losses            N = 256 rows
 *   GRAFT_BENCH_LOSS_ROWS=N other row counts (the 0.5B step has 1,024) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "bench_util.h"
#include "core/error.h"

enum { V = 151936 };

/* logits of roughly a trained model's spread: most entries far below the top */
static void fill_logits(float *z, size_t n, unsigned seed) {
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        z[i] = (float)((x >> 8) * (1.0 / 16777216.0)) * 24.0f - 18.0f;
    }
}

static double best_cpu(gf_backend *be, int kind, gf_buf L, gf_buf D, gf_buf S, gf_buf T, gf_buf TG, int N) {
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        be_zero(be, L, 1);
        const double t = bench_cpu_now();
        if (kind == 0) be_kl_div(be, L, D, S, T, N, V, 1.0f, 1.0f / N);
        else if (kind == 1) be_kl_div(be, L, D, S, T, N, V, 2.0f, 1.0f / N);
        else be_cross_entropy(be, L, D, S, TG, N, V, 1.0f / N);
        be_sync(be);
        const double dt = bench_cpu_now() - t;
        if (dt < best) best = dt;
    }
    double loss = NAN;
    be_download(be, &loss, GF_F64, L, 1);
    if (!isfinite(loss)) {
        fprintf(stderr, "bench_losses: non-finite loss %g\n", loss);
        exit(1);
    }
    return best;
}

/* CPU seconds of n scalar exps (libm), best of three */
static double scalar_exp_cpu(const float *z, size_t n) {
    double best = 1e30, sink = 0;
    for (int r = 0; r < 3; r++) {
        const double t = bench_cpu_now();
        double s = 0;
        for (size_t i = 0; i < n; i++) s += exp((double)z[i] - 6.0);
        const double dt = bench_cpu_now() - t;
        sink += s;
        if (dt < best) best = dt;
    }
    if (!isfinite(sink)) exit(1);
    return best;
}

int main(void) {
    const char *rows_env = getenv("GRAFT_BENCH_LOSS_ROWS");
    const int N = rows_env && atoi(rows_env) > 0 ? atoi(rows_env) : 256;
    const size_t n = (size_t)N * V;
    gf_backend *be;
    const gf_backend_opts o = {"cpu", 0, false};
    if (be_open(&be, &o) != 0) {
        fprintf(stderr, "bench_losses: %s\n", gf_last_error());
        return 1;
    }
    float *zs = malloc(n * sizeof *zs), *zt = malloc(n * sizeof *zt);
    int *tg = malloc((size_t)N * sizeof *tg);
    if (!zs || !zt || !tg) {
        fprintf(stderr, "bench_losses: out of memory for %d rows\n", N);
        return 1;
    }
    fill_logits(zs, n, 1);
    fill_logits(zt, n, 2);
    for (int t = 0; t < N; t++) tg[t] = (int)(((unsigned)t * 7919u) % V);
    gf_buf L, D, S, T, TG;
    if (be_alloc(be, &L, 1, GF_F64) || be_alloc(be, &D, n, GF_F32) || be_alloc(be, &S, n, GF_F32) ||
        be_alloc(be, &T, n, GF_F32) || be_alloc(be, &TG, (size_t)N, GF_I32)) {
        fprintf(stderr, "bench_losses: %s\n", gf_last_error());
        return 1;
    }
    be_upload(be, S, zs, GF_F32, n);
    be_upload(be, T, zt, GF_F32, n);
    be_upload(be, TG, tg, GF_I32, (size_t)N);
    be_zero(be, D, n);
    printf("losses on %s, %d rows x V %d (CPU time of every thread, best of 3)\n", be_name(be), N, V);
    const char *names[] = {"KL, tau 1, with gradient", "KL, tau 2, with gradient", "cross-entropy, with gradient"};
    const int exps[] = {2, 2, 1};
    for (int k = 0; k < 3; k++) {
        const double s = best_cpu(be, k, L, D, S, T, TG, N);
        printf("  %-30s %8.2f CPU-ms a row  %6.2f CPU-ns an entry (%d exp an entry)\n", names[k], s / N * 1e3,
               s / (double)n * 1e9, exps[k]);
    }
    const double se = scalar_exp_cpu(zs, n);
    printf("  %-30s %8.2f CPU-ms a row  %6.2f CPU-ns an entry (one thread)\n", "libm scalar exp alone", se / N * 1e3,
           se / (double)n * 1e9);
    be_free(be, &L), be_free(be, &D), be_free(be, &S), be_free(be, &T), be_free(be, &TG);
    be_close(be);
    free(zs), free(zt), free(tg);
    return 0;
}
