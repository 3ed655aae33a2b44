/* Data parallelism on several GPUs (issue 14), one process per GPU under
 * mpirun (tests/gpu/bench/dp_scaling.sh runs it at 1, 2, 4 and 8 GPUs):
 *   - allreduce: comm_allreduce (NCCL, sum, f32) of 1 MiB .. 1 GiB and of the
 *     1.5B-shaped hybrid's gradient block: time, algorithm bandwidth
 *     bytes / time and bus bandwidth algbw x 2 (n - 1) / n, as nccl-tests
 *     counts them (only with 2 ranks or more);
 *   - train: recovery steps (phase kl: teacher forward, student forward and
 *     backward, gradient all-reduce, AdamW) of the qwen2.5-1.5b-shaped hybrid
 *     (odd layers GDN, random weights), B sequences of T tokens per GPU (the
 *     global batch grows with the GPUs): step time, tokens/s in all and per GPU;
 *   - stats: the section 4 statistics of the qwen3-8b-shaped teacher (random
 *     weights) over a fixed corpus of S sequences of T tokens split between the
 *     ranks: tokens/s.
 * Rank 0 prints one JSON line per figure. Shapes: GRAFT_BENCH_B (4),
 * GRAFT_BENCH_T (2048), GRAFT_BENCH_STEPS (6 timed after 2), GRAFT_BENCH_STATS_SEQS (64);
 * GRAFT_BENCH_DP_ONLY=allreduce|train|stats. Outside mpirun it runs as one
 * rank only with GRAFT_BENCH_DP=1 (exit 77 otherwise, so make bench-gpu skips it).
 * GRAFT_BENCH_SMOKE=1 GRAFT_BENCH_DEVICE=cpu: toy shapes on the CPU backend
 * (MPI collectives): a check of this program, its figures mean nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/comm.h"
#include "stats/collect.h"
#include "tests/gpu/gpu_open.h"
#include "tests/gpu/model/dp_util.h"
#include "train/trainer.h"

static bool smoke;
static double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int env_int(const char *name, int dflt) {
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}
static bool want(const char *what) {
    const char *only = getenv("GRAFT_BENCH_DP_ONLY");
    return !only || !*only || strcmp(only, what) == 0;
}

static void fail_out(gf_comm *c, const char *what) {
    fprintf(stderr, "bench_dp rank %d: %s: %s\n", comm_rank(c), what, gf_last_error());
    comm_abort(c, 1);
    exit(1);
}

static void allreduce_case(gf_backend *be, gf_comm *c, size_t elems, const char *label) {
    gf_buf b;
    if (be_alloc(be, &b, elems, GF_F32) != 0) fail_out(c, "allreduce buffer");
    be_zero(be, b, elems);
    for (int i = 0; i < 2; i++)
        if (comm_allreduce(c, b, elems, GF_REDUCE_SUM) != 0) fail_out(c, "allreduce");
    const double bytes = 4.0 * (double)elems;
    int reps = (int)(4e9 / bytes);
    if (reps < 5) reps = 5;
    if (reps > 200) reps = 200;
    if (comm_barrier(c) != 0) fail_out(c, "barrier");
    const double t0 = bench_now();
    for (int i = 0; i < reps; i++)
        if (comm_allreduce(c, b, elems, GF_REDUCE_SUM) != 0) fail_out(c, "allreduce");
    const double t = (bench_now() - t0) / reps;
    const int n = comm_size(c);
    const double alg = bytes / t / 1e9, bus = alg * 2.0 * (n - 1) / n;
    if (comm_rank(c) == 0)
        printf("{\"bench\":\"dp_allreduce\",\"what\":\"allreduce f32 sum %s\",\"ranks\":%d,\"bytes\":%.0f,\"ms\":%.4f,"
               "\"algbw_gbs\":%.2f,\"busbw_gbs\":%.2f}\n", label, n, bytes, t * 1e3, alg, bus);
    be_free(be, &b);
}

typedef struct {
    double *t; /* [steps]: when step i ended (rank 0) */
    int n;
} step_clock;
static void on_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    step_clock *k = ud;
    if (step >= 1 && step <= k->n) k->t[step - 1] = bench_now();
}

static void train_case(gf_backend *be, gf_comm *c, const model_config *cfg, int B, int T, int warm, int timed) {
    model m;
    transformer teacher, st;
    int n_gdn = 0;
    if (dp_random_model(&m, cfg, be) != 0) fail_out(c, "random model");
    if (tf_view(&teacher, &m, NULL, NULL, NULL) != 0 || dp_hybrid_student(&st, &m, &n_gdn) != 0)
        fail_out(c, "hybrid student");
    const int W = comm_size(c), steps = warm + timed;
    train_data d;
    if (dp_synthetic_data(&d, B * W * steps, T, cfg->vocab_size) != 0) fail_out(c, "data");
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = B, o.eval_seqs = 1, o.tokens = (long)T * B * W * steps;
    step_clock k = {calloc((size_t)steps, sizeof(double)), steps};
    o.on_step = on_step, o.ud = &k;
    train_result res;
    if (train_run(&o, &st, &teacher, &d, NULL, &res) != 0) fail_out(c, "train_run");
    if (comm_rank(c) == 0) {
        const double step_s = (k.t[steps - 1] - k.t[warm - 1]) / timed;
        const double tok = (double)B * T;
        printf("{\"bench\":\"dp_train\",\"what\":\"%s hybrid %d/%d GDN, kl recovery step, B %d x T %d per GPU\","
               "\"ranks\":%d,\"step_ms\":%.2f,\"tok_s\":%.0f,\"tok_s_per_gpu\":%.0f,\"grad_elems\":%zu,\"loss\":%.5f}\n",
               smoke ? "toy" : "qwen2.5-1.5b", n_gdn, cfg->n_layers, B, T, W, step_s * 1e3, tok * W / step_s,
               tok / step_s, st.layout.total, res.st.loss.n ? res.st.loss.xy[2 * res.st.loss.n - 1] : NAN);
    }
    const size_t grads = st.layout.total;
    free(k.t);
    train_result_free(&res);
    train_data_free(&d);
    tf_free(&st);
    tf_free(&teacher);
    model_free(&m);
    if (W > 1 && want("allreduce")) allreduce_case(be, c, grads, "of the hybrid's gradient block");
}

static void stats_case(gf_backend *be, gf_comm *c, const model_config *cfg, int S, int T) {
    model m;
    if (dp_random_model(&m, cfg, be) != 0) fail_out(c, "random model");
    int *seqs = malloc((size_t)S * T * sizeof *seqs);
    for (size_t i = 0; i < (size_t)S * T; i++) seqs[i] = (int)((i * 2654435761u) % (size_t)cfg->vocab_size);
    attn_stats st;
    attn_stats_init(&st, cfg->n_layers, cfg->n_heads);
    if (collect_attn_stats(&m, seqs, comm_size(c) < S ? comm_size(c) : S, T, &st, NULL) != 0) /* warm-up */
        fail_out(c, "stats");
    attn_stats_reset(&st);
    if (comm_barrier(c) != 0) fail_out(c, "barrier");
    const double t0 = bench_now();
    if (collect_attn_stats(&m, seqs, S, T, &st, NULL) != 0) fail_out(c, "stats");
    const double t = bench_now() - t0;
    if (comm_rank(c) == 0)
        printf("{\"bench\":\"dp_stats\",\"what\":\"%s statistics, %d x %d tokens split between the ranks\",\"ranks\":%d,"
               "\"ms\":%.1f,\"tok_s\":%.0f,\"mean_distance_l0h0\":%.4f}\n",
               smoke ? "toy" : "qwen3-8b", S, T, comm_size(c), t * 1e3, (double)S * T / t,
               attn_stats_mean_distance(&st, 0, 0));
    attn_stats_free(&st);
    free(seqs);
    model_free(&m);
}

int main(void) {
    smoke = env_int("GRAFT_BENCH_SMOKE", 0) == 1;
    gf_world w;
    comm_world_env(&w);
    if (!(w.launched && w.size != 1) && env_int("GRAFT_BENCH_DP", 0) != 1) {
        printf("SKIP: bench_dp runs under mpirun (tests/gpu/bench/dp_scaling.sh), or with GRAFT_BENCH_DP=1\n");
        return 77;
    }
    const char *devenv = getenv("GRAFT_BENCH_DEVICE");
    char dev[32];
    if (smoke && devenv && *devenv) snprintf(dev, sizeof dev, "%s", devenv);
    else snprintf(dev, sizeof dev, "cuda:%d", w.local_rank); /* one process per GPU */
    gf_backend *be = NULL;
    const gf_backend_opts bo = {dev, strcmp(dev, "cpu") == 0 ? 1 : 0, false};
    if (be_open(&be, &bo) != 0) return gpu_open_failed(dev);
    be_set_default(be);
    gf_comm *c = NULL;
    if (comm_open(&c, be, NULL) != 0) {
        fprintf(stderr, "bench_dp: %s\n", gf_last_error());
        return 1;
    }
    be_set_comm(be, c);
    if (comm_rank(c) == 0) fprintf(stderr, "bench_dp: %d rank(s), %s, rank 0 on %s\n", comm_size(c), comm_name(c), be_name(be));
    const int B = env_int("GRAFT_BENCH_B", smoke ? 2 : 4), T = env_int("GRAFT_BENCH_T", smoke ? 32 : 2048);
    const int timed = env_int("GRAFT_BENCH_STEPS", smoke ? 2 : 6);
    model_config small = {0};
    small.arch = ARCH_QWEN2, small.dim = 64, small.hidden_dim = 128, small.n_layers = 4, small.n_heads = 4;
    small.n_kv_heads = 2, small.head_dim = 16, small.vocab_size = 256, small.max_seq = 256, small.norm_eps = 1e-6f;
    small.rope_theta = 10000.0f, small.qkv_bias = true, small.tied_embeddings = true;
    model_config c15 = small, c8 = small;
    if (!smoke && (dp_load_config(&c15, "qwen2.5-1.5b") != 0 || dp_load_config(&c8, "qwen3-8b") != 0)) fail_out(c, "configs");
    if (comm_size(c) > 1 && want("allreduce"))
        for (size_t bytes = (size_t)1 << 20; bytes <= ((size_t)1 << (smoke ? 22 : 30)); bytes <<= 2) {
            char label[32];
            snprintf(label, sizeof label, "%zu MiB", bytes >> 20);
            allreduce_case(be, c, bytes / 4, label);
        }
    if (want("train")) train_case(be, c, &c15, B, T, 2, timed);
    if (want("stats")) stats_case(be, c, &c8, env_int("GRAFT_BENCH_STATS_SEQS", smoke ? 8 : 64), T);
    be_set_comm(be, NULL);
    comm_close(c);
    be_set_default(NULL);
    be_close(be);
    return 0;
}
