/* Recovery-training throughput on CPU (phase kl: teacher forward, student
 * forward + backward of micro-batches of B sequences x T tokens, AdamW on
 * every group), in training tokens per second, for stories260K (real weights,
 * 50 % uniform: layers 2, 4 GDN) and a synthetic hybrid of the Qwen2.5-0.5B
 * shape (D 896, F 4864, 14/2 heads, head_dim 64, vocab 151936, tied; odd
 * layers GDN) with batch 8 x 128. Next to it: the FLOP rate that implies
 * (teacher 2N + student 6N per token, N = multiply-adds of the projections
 * and LM head; attention and GDN recurrences not counted) and the OpenBLAS
 * sgemm rate at the 0.5B step's FFN shape, measured before and after the runs
 * (the better of the two is the yardstick).
 *
 *   bench_train                   the throughput table
 *   bench_train rss MODEL T [B]   one training step (B x T tokens, default B 1)
 *                                 of MODEL (stories | qwen), then its peak RSS
 *                                 (tests/bench/bench_train_memory.sh runs it at
 *                                 T = 512 .. 4096 and fits the slope)
 * GRAFT_BENCH_QWEN_LAYERS=N cuts the 0.5B shape to N of its 24 layers;
 * GRAFT_BENCH_TRAIN_STEPS=N times N steps (default 2) after a first one, whose
 * cost (the run's first touch of its buffers) is printed apart;
 * GRAFT_BENCH_TRAIN_VERBOSE=1 prints each step's CPU time, page faults and
 * resident set. Each run also reports its own sgemm calls' rate, timed while
 * the steps run (bench_gemm_clock.h), and the step's rate against it: a
 * reading that a shared machine's changing speed moves less than the
 * stand-alone yardstick. And the yardstick itself is measured again between
 * the steps (after the first and after each timed one, outside the steps'
 * clocks): each step against the better of the two beside it, the target's
 * own ratio at the seconds the step ran, which the passes before and after
 * the whole run (minutes apart on a 24-layer run) cannot give. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT, for bench_gemm_clock.h */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_gemm_clock.h"
#include "bench_model.h"
#include "bench_util.h"
#include "cli/load_env.h"
#include "core/error.h"
#include "data/train_data.h"
#include "formats/model_load.h"
#include "model/model.h"
#include "model/transformer.h"
#include "convert/build.h"
#include "train/trainer.h"

static double proj_macs_per_token(const model_config *c) {
    const double D = c->dim, F = c->hidden_dim, qd = (double)c->n_heads * c->head_dim,
                 kvd = (double)c->n_kv_heads * c->head_dim;
    return (D * qd * 2 + D * kvd * 2 + 3 * D * F) * c->n_layers + D * c->vocab_size;
}

/* The hybrid student of teacher m: GDN layers with the section 3 random init. */
static int make_student(transformer *st, model *m) {
    const int L = m->cfg.n_layers;
    bool conv[64] = {0};
    mixer_kind kinds[64];
    for (int l = 0; l < L; l++) conv[l] = l % 2 == 1;
    if (L == 5) conv[1] = conv[3] = false, conv[2] = conv[4] = true;
    for (int l = 0; l < L; l++) kinds[l] = conv[l] ? MIX_GDN : MIX_ATTN;
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    int rc = student_init_empty(&s, m, &set);
    if (rc == 0) rc = student_build_layers(&s, conv, NULL, NULL, NULL);
    if (rc == 0) rc = tf_trainable(st, m, &s.gcfg, kinds, s.gdn);
    student_free(&s);
    return rc;
}

static void fake_data(train_data *d, int T, int n, int V) {
    memset(d, 0, sizeof *d);
    d->ctx = T, d->n_train = n, d->n_eval = 1, d->perm_epoch = -1, d->seed = 1;
    d->train = malloc((size_t)n * T * sizeof(int));
    d->eval = malloc((size_t)T * sizeof(int));
    d->perm = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n * T; i++) d->train[i] = (i * 131 + 7) % V;
    for (int i = 0; i < T; i++) d->eval[i] = (i * 17 + 3) % V;
}

/* The process's CPU time (user, system), minor page faults and resident set now. */
typedef struct {
    double user, sys, rss_mib;
    long minflt;
} proc_usage;

static proc_usage usage_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    proc_usage u = {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6,
                    0, ru.ru_minflt};
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) == 2) u.rss_mib = resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
    if (f) fclose(f);
    return u;
}

/* What the steps of one run cost: the first step apart (it touches the run's
 * freshly allocated buffers, optimizer moments and activations, for the first
 * time: page faults and system time paid once per run), then the steps after
 * it (the steady state every further step of a long run repeats). */
/* The yardstick: sgemm at the 0.5B step's FFN shape (B 8 x T 128 rows, F 4864, D 896). */
enum { YARD_M = 1024, YARD_N = 4864, YARD_K = 896 };

/* The yardstick per CPU-second, best of reps (between the steps: 3). */
static double yard_cpu(int reps) { return bench_sgemm_gflops_cpu(YARD_M, YARD_N, YARD_K, reps); }

#define BESIDE_MAX 64 /* timed steps that get a yardstick beside them */
typedef struct {
    bool verbose;     /* GRAFT_BENCH_TRAIN_VERBOSE=1: a line per step */
    proc_usage start; /* before train_run */
    proc_usage last;  /* at the previous step's end */
    proc_usage first; /* the first step's own cost (includes opening the run) */
    gemm_clock_sum gemm[2]; /* the sgemm calls since the first step's end, at the last step's end */
    double seg_wall, seg_cpu;  /* the clocks when the step now running started (after the yardstick before it) */
    double timed_wall, timed_cpu; /* the timed steps' own time, the yardsticks between them left out */
    int n;                     /* timed steps seen */
    double step_cpu[BESIDE_MAX]; /* each timed step's CPU seconds */
    double yard[BESIDE_MAX + 1]; /* the yardstick (GFLOP per CPU-s) after the first step and after each timed one */
} step_log;

static void on_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    (void)tokens, (void)lr, (void)gnorm;
    step_log *g = ud;
    const double wall = bench_now(), cpu = bench_cpu_now();
    const proc_usage now = usage_now();
    if (g->verbose) {
        printf("  step %ld/%ld: loss %.4f  user %.1f s  sys %.1f s  minor faults %ld  rss %.0f MiB\n", step, total, loss,
               now.user - g->last.user, now.sys - g->last.sys, now.minflt - g->last.minflt, now.rss_mib);
        fflush(stdout);
    }
    if (step == 1) {
        g->first = (proc_usage){now.user - g->start.user, now.sys - g->start.sys, now.rss_mib,
                                now.minflt - g->start.minflt};
        g->yard[0] = yard_cpu(3);
        gemm_clock_start();
    } else {
        gemm_clock_read(g->gemm);
        g->timed_wall += wall - g->seg_wall, g->timed_cpu += cpu - g->seg_cpu;
        if (g->n < BESIDE_MAX) {
            g->step_cpu[g->n] = cpu - g->seg_cpu;
            gemm_clock_stop();
            g->yard[g->n + 1] = yard_cpu(3);
            gemm_clock_resume();
            g->n++;
        }
    }
    g->last = usage_now(); /* after the yardstick: the next step's usage is its own */
    g->seg_wall = bench_now(), g->seg_cpu = bench_cpu_now();
}

/* One run's figures, printed once the yardstick is measured again after all runs. */
typedef struct {
    char label[64];
    int batch, T;
    bool ok;
    double tok_s, gf, gfc, cpu_per_step; /* GFLOP per wall second and per CPU-second */
    double first_cpu, first_sys;
    long first_flt;
    gemm_clock_sum gemm[2]; /* its own sgemm calls in the timed steps, small and big (bench_gemm_clock.h) */
    double steps_cpu;       /* the timed steps' CPU seconds */
    int n;                  /* timed steps with a yardstick beside them */
    double beside[BESIDE_MAX]; /* each one's GFLOP per CPU-s over the better yardstick beside it */
    double yard[BESIDE_MAX + 1]; /* the yardsticks between the steps (GFLOP per CPU-s) */
} train_fig;

static int run(const char *label, model *m, int T, int batch, int steps, train_fig *f) {
    *f = (train_fig){.batch = batch, .T = T};
    snprintf(f->label, sizeof f->label, "%s", label);
    transformer teacher, student;
    if (tf_view(&teacher, m, NULL, NULL, NULL) != 0 || make_student(&student, m) != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
        return -1;
    }
    train_data d;
    fake_data(&d, T, batch * (steps + 1), m->cfg.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = batch, o.eval_seqs = 1;
    /* one run of 1 + steps steps: the first warms up (and pays the run's
     * first touch of its buffers, reported apart), the others are timed */
    train_result r;
    o.tokens = (long)T * batch * (steps + 1);
    const char *verbose = getenv("GRAFT_BENCH_TRAIN_VERBOSE");
    step_log g = {.verbose = verbose && atoi(verbose) > 0};
    g.start = g.last = usage_now();
    o.on_step = on_step, o.ud = &g;
    int rc = train_run(&o, &student, &teacher, &d, NULL, &r);
    gemm_clock_stop();
    const double dt = g.timed_wall, dc = g.timed_cpu; /* the yardsticks between the steps left out */
    if (rc != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
    } else {
        const double tok = (double)T * batch * steps, flop = 8.0 * proj_macs_per_token(&m->cfg) * tok;
        f->ok = true;
        f->tok_s = tok / dt, f->gf = flop / dt * 1e-9, f->gfc = flop / dc * 1e-9, f->cpu_per_step = dc / steps;
        f->first_cpu = g.first.user + g.first.sys, f->first_sys = g.first.sys, f->first_flt = g.first.minflt;
        f->gemm[0] = g.gemm[0], f->gemm[1] = g.gemm[1], f->steps_cpu = dc;
        for (int c = 0; c < 2; c++) f->gemm[c].calls /= steps;
        const double flop_step = flop / steps;
        f->n = g.n;
        memcpy(f->yard, g.yard, sizeof f->yard);
        for (int i = 0; i < g.n; i++) {
            const double y = g.yard[i] > g.yard[i + 1] ? g.yard[i] : g.yard[i + 1];
            f->beside[i] = flop_step / g.step_cpu[i] * 1e-9 / y;
        }
        train_result_free(&r);
    }
    train_data_free(&d);
    tf_free(&student);
    tf_free(&teacher);
    return rc;
}

static void print_fig(const train_fig *f, double sgemm, double sgemm_cpu) {
    if (!f->ok) return;
    printf("train %-34s B %d x T %-4d: %8.1f tokens/s  %6.1f GFLOP/s  (%.0f%% of sgemm %.1f GFLOP/s) | "
           "per CPU-s %.1f GFLOP (%.0f%% of sgemm's %.1f; %.1f CPU-s per step)\n"
           "    first step of the run, not in the figures above: %.1f CPU-s, %.1f of them system, %ld minor faults\n",
           f->label, f->batch, f->T, f->tok_s, f->gf, 100 * f->gf / sgemm, sgemm, f->gfc, 100 * f->gfc / sgemm_cpu,
           sgemm_cpu, f->cpu_per_step, f->first_cpu, f->first_sys, f->first_flt);
    const gemm_clock_sum *sm = &f->gemm[0], *bg = &f->gemm[1];
    const double all_f = sm->flops + bg->flops, all_c = sm->cpu_s + bg->cpu_s;
    if (all_c > 0 && bg->cpu_s > 0)
        printf("    its own sgemm calls, timed in the steps: %.1f GFLOP per CPU-s, %.0f%% of the steps' CPU time; "
               "big (%ld a step) %.1f, small (%ld a step) %.1f; the step's %.1f per CPU-s is %.0f%% of all, "
               "%.0f%% of the big ones' rate\n",
               all_f / all_c * 1e-9, 100 * all_c / f->steps_cpu, bg->calls, bg->flops / bg->cpu_s * 1e-9, sm->calls,
               sm->cpu_s > 0 ? sm->flops / sm->cpu_s * 1e-9 : 0.0, f->gfc, 100 * f->gfc / (all_f / all_c * 1e-9),
               100 * f->gfc / (bg->flops / bg->cpu_s * 1e-9));
}

static void print_beside(const train_fig *f) {
    if (!f->ok || f->n < 1) return;
    double v[BESIDE_MAX];
    memcpy(v, f->beside, (size_t)f->n * sizeof *v);
    const double med = bench_median(v, f->n);
    printf("    the yardstick between the steps, GFLOP per CPU-s:");
    for (int i = 0; i <= f->n; i++) printf("%s %.1f", i ? "," : "", f->yard[i]);
    printf("\n    each step against the better one beside it:");
    for (int i = 0; i < f->n; i++) printf("%s %.0f%%", i ? "," : "", 100 * f->beside[i]);
    printf("; median %.0f%%\n", 100 * med);
}

static model_config qwen_shape(void) {
    const char *nl = getenv("GRAFT_BENCH_QWEN_LAYERS");
    model_config c = {0};
    c.arch = ARCH_QWEN2, c.dim = 896, c.hidden_dim = 4864, c.n_layers = nl ? atoi(nl) : 24, c.n_heads = 14;
    c.n_kv_heads = 2;
    if (c.n_layers < 1 || c.n_layers > 24) c.n_layers = 24;
    c.head_dim = 64, c.vocab_size = 151936, c.max_seq = 32768, c.norm_eps = 1e-6f, c.rope_theta = 1e6f;
    c.qkv_bias = true, c.tied_embeddings = true;
    return c;
}

static int load_stories(model *m) {
    const char *shared = getenv("GRAFT_SHARED");
    char path[512];
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/stories260K.bin", shared ? shared : "/work/shared");
    model_load_opts lo = {0};
    return model_load(m, path, &lo);
}

/* One training step of B x T, then the process's peak resident set. */
static int rss_mode(const char *which, int T, int B) {
    model m;
    const bool qwen = strcmp(which, "qwen") == 0;
    model_config c = qwen_shape();
    if ((qwen ? bench_model_random(&m, &c, 0.02f) : load_stories(&m)) != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
        return 1;
    }
    transformer teacher, student;
    if (tf_view(&teacher, &m, NULL, NULL, NULL) != 0 || make_student(&student, &m) != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double before = ru.ru_maxrss / 1024.0;
    train_data d;
    fake_data(&d, T, B * 2, m.cfg.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = B, o.eval_seqs = 1, o.tokens = (long)T * B;
    train_result r;
    const double t0 = bench_now();
    if (train_run(&o, &student, &teacher, &d, NULL, &r) != 0) {
        fprintf(stderr, "bench_train: %s\n", gf_last_error());
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("rss %s layers %d B %d T %d: peak %.1f MiB (%.1f MiB before training; step %.1f s)\n", which,
           m.cfg.n_layers, B, T, ru.ru_maxrss / 1024.0, before, bench_now() - t0);
    train_result_free(&r);
    train_data_free(&d);
    tf_free(&student);
    tf_free(&teacher);
    model_free(&m);
    return 0;
}

int main(int argc, char **argv) {
    load_env_reexec(argv); /* as graft itself runs: passive OpenMP waits, OpenBLAS kernels with AVX */
    if (argc >= 4 && strcmp(argv[1], "rss") == 0) return rss_mode(argv[2], atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
    /* The yardstick before and after the runs; the figures are against the better of the two (on a shared
     * machine one measurement swings with the neighbours' load; the better one is the machine's rate). */
    bench_print_blas_core();
    const double y0 = bench_sgemm_gflops(YARD_M, YARD_N, YARD_K, 5), y0c = yard_cpu(5);
    train_fig fig[2] = {{.ok = false}, {.ok = false}}; /* a run that fails or is skipped prints nothing */
    model m;
    if (load_stories(&m) == 0) {
        run("stories260K hybrid (GDN 2,4)", &m, 256, 4, 8, &fig[0]);
        model_free(&m);
    } else {
        printf("train stories260K: skipped (%s)\n", gf_last_error());
    }
    model_config c = qwen_shape();
    if (bench_model_random(&m, &c, 0.02f) != 0) {
        printf("train Qwen2.5-0.5B shape: skipped (%s)\n", gf_last_error());
    } else {
        char label[64];
        snprintf(label, sizeof label, "Qwen2.5-0.5B shape, %d of 24 layers", c.n_layers);
        /* GRAFT_BENCH_TRAIN_STEPS: timed steps after the untimed first one (default 2) */
        const char *ns = getenv("GRAFT_BENCH_TRAIN_STEPS");
        const int steps = ns && atoi(ns) > 0 ? atoi(ns) : 2;
        run(label, &m, 128, 8, steps, &fig[1]);
        model_free(&m);
    }
    const double y1 = bench_sgemm_gflops(YARD_M, YARD_N, YARD_K, 5), y1c = yard_cpu(5);
    const double sgemm = y0 > y1 ? y0 : y1, sgemm_cpu = y0c > y1c ? y0c : y1c;
    printf("sgemm %dx%dx%d (the 0.5B step's FFN GEMM), before / after the runs: %.1f / %.1f GFLOP/s wall, "
           "%.1f / %.1f GFLOP per CPU-second; the figures below are against the better\n",
           YARD_M, YARD_N, YARD_K, y0, y1, y0c, y1c);
    for (int i = 0; i < 2; i++) {
        print_fig(&fig[i], sgemm, sgemm_cpu);
        print_beside(&fig[i]);
    }
    return 0;
}
