/* World size 1 through NCCL equals no communicator (issue 14), on the GPU:
 *   - a one-rank NCCL communicator (comm_open with force: no MPI) starts on
 *     cuda:0 and its all-reduce (sum, mean, max) and broadcast leave f32, f64
 *     and bf16 device buffers bit for bit as they were;
 *   - recovery training (phase kl, a small random hybrid: odd layers GDN, 8
 *     steps, gradient accumulation 2) with that communicator installed on the
 *     backend (so the trainer all-reduces gradients and loss through NCCL and
 *     broadcasts the parameters at the start) gives the same loss curve,
 *     held-out perplexity and final parameters, bit for bit, as with none.
 *     Tolerance 0: a one-rank sum or broadcast moves no value, and every
 *     other op is the same kernel on the same data.
 *   build/gpu/test_comm_nccl          (make test-gpu)
 * GRAFT_GPU_TEST_DEVICE=cpu runs the same on the CPU backend (a one-rank MPI
 * communicator, no MPI started): a check of this program where there is no GPU.
 * Exit 0 passed, 1 failed, 77 no GPU / no CUDA or NCCL in the build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/comm.h"
#include "core/error.h"
#include "tests/gpu/model/dp_util.h"
#include "train/trainer.h"
#include "tests/gpu/gpu_result.h"

/* The collectives leave n values of type t as they were (compared as bytes). */
static void ops_keep_values(gf_backend *be, gf_comm *c, gf_dtype t) {
    const size_t n = 4099; /* not a multiple of anything NCCL likes */
    const size_t bytes = n * gf_dtype_size(t);
    float *src = malloc(n * sizeof *src);
    unsigned char *want = malloc(bytes), *got = malloc(bytes);
    for (size_t i = 0; i < n; i++) src[i] = (float)sin((double)i * 0.7) * 3.0f;
    gf_buf b;
    if (be_alloc(be, &b, n, t) != 0) {
        result(false, "allocating %zu %s: %s", n, gf_dtype_name(t), gf_last_error());
        return;
    }
    be_upload(be, b, src, GF_F32, n);
    be_download(be, want, t, b, n); /* the values as the device holds them */
    const gf_reduce ops[3] = {GF_REDUCE_SUM, GF_REDUCE_MEAN, GF_REDUCE_MAX};
    const char *names[3] = {"sum", "mean", "max"};
    for (int k = 0; k < 3; k++) {
        const int rc = comm_allreduce(c, b, n, ops[k]);
        const bool ok = rc == 0 && be_download(be, got, t, b, n) == 0 && be_sync(be) == 0 && memcmp(got, want, bytes) == 0;
        result(ok, "one-rank all-reduce (%s) of %zu %s keeps every value%s%s", names[k], n, gf_dtype_name(t),
               rc ? ": " : "", rc ? gf_last_error() : "");
    }
    const int rc = comm_broadcast(c, b, n, 0);
    const bool ok = rc == 0 && be_download(be, got, t, b, n) == 0 && memcmp(got, want, bytes) == 0;
    result(ok, "one-rank broadcast of %zu %s keeps every value", n, gf_dtype_name(t));
    be_free(be, &b);
    free(src), free(want), free(got);
}

typedef struct {
    train_result res;
    float *master;
    size_t n;
} run_out;

/* Builds the student afresh (the same every time) and trains it with comm c installed. */
static int train_with(gf_backend *be, model *m, gf_comm *c, run_out *out) {
    memset(out, 0, sizeof *out);
    transformer teacher, st;
    int n_gdn = 0;
    if (tf_view(&teacher, m, NULL, NULL, NULL) != 0) return -1;
    if (dp_hybrid_student(&st, m, &n_gdn) != 0) {
        tf_free(&teacher);
        return -1;
    }
    train_data d;
    const int T = 32, B = 2, accum = 2, steps = 8;
    int rc = dp_synthetic_data(&d, B * accum * steps, T, m->cfg.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = B, o.accum = accum, o.tokens = (long)T * B * accum * steps;
    o.eval_seqs = 2, o.eval_every = 4, o.lr_rest = 1e-3, o.warmup_frac = 0.25;
    be_set_comm(be, c);
    if (rc == 0) rc = train_run(&o, &st, &teacher, &d, NULL, &out->res);
    be_set_comm(be, NULL);
    out->n = st.layout.total;
    out->master = malloc(out->n * sizeof(float));
    if (rc == 0) rc = be_download(be, out->master, GF_F32, st.master, out->n);
    if (rc == 0) rc = be_sync(be);
    train_data_free(&d);
    tf_free(&st);
    tf_free(&teacher);
    return rc;
}

int main(void) {
    const char *dev = getenv("GRAFT_GPU_TEST_DEVICE");
    if (!dev || !*dev) dev = "cuda";
    const bool cuda = strncmp(dev, "cuda", 4) == 0;
#ifndef GRAFT_WITH_NCCL
    if (cuda) {
        printf("SKIP: graft was built without NCCL (no nccl.h beside CUDA: make NCCL_HOME=...)\n");
        return 77;
    }
#endif
    gf_backend *be = NULL;
    const gf_backend_opts bo = {dev, cuda ? 0 : 2, false};
    if (be_open(&be, &bo) != 0) return gpu_open_failed(dev);
    be_set_default(be);
    printf("test_comm_nccl on %s\n", be_name(be));
    gf_comm *c = NULL;
    const gf_comm_opts co = {.force = true};
    if (comm_open(&c, be, &co) != 0 || !c) {
        printf("FAIL  a one-rank communicator on %s: %s\n", be_name(be), c ? "" : gf_last_error());
        return 1;
    }
    result(strcmp(comm_name(c), cuda ? "nccl: 1 rank" : "mpi: 1 rank") == 0 && comm_size(c) == 1 && comm_rank(c) == 0,
           "communicator %s", comm_name(c));
    ops_keep_values(be, c, GF_F32);
    ops_keep_values(be, c, GF_F64);
    if (cuda) ops_keep_values(be, c, GF_BF16);

    model_config cfg = {0};
    cfg.arch = ARCH_QWEN2, cfg.dim = 128, cfg.hidden_dim = 256, cfg.n_layers = 4, cfg.n_heads = 4, cfg.n_kv_heads = 2;
    cfg.head_dim = 32, cfg.vocab_size = 512, cfg.max_seq = 256, cfg.norm_eps = 1e-6f, cfg.rope_theta = 10000.0f;
    cfg.rope_pairing = ROPE_HALF, cfg.qkv_bias = true, cfg.bos_id = 1, cfg.eos_id = 2;
    model m;
    if (dp_random_model(&m, &cfg, be) != 0) {
        printf("FAIL  the random model: %s\n", gf_last_error());
        return 1;
    }
    run_out none, one;
    const int r0 = train_with(be, &m, NULL, &none);
    if (r0 != 0) result(false, "training without a communicator: %s", gf_last_error());
    const int r1 = train_with(be, &m, c, &one);
    if (r1 != 0) result(false, "training with the one-rank communicator: %s", gf_last_error());
    if (r0 == 0 && r1 == 0) {
        const curve *a = &none.res.st.loss, *b = &one.res.st.loss;
        bool same = a->n == b->n && a->n == 8 && memcmp(a->xy, b->xy, (size_t)a->n * 2 * sizeof(double)) == 0;
        for (int i = 0; i < a->n; i++) same = same && isfinite(a->xy[2 * i + 1]);
        result(same, "loss curve: %d steps, bit for bit (first %.6f, last %.6f)", a->n, a->n ? a->xy[1] : NAN,
               a->n ? a->xy[2 * a->n - 1] : NAN);
        const curve *ea = &none.res.st.eval, *eb = &one.res.st.eval;
        result(ea->n == eb->n && ea->n >= 2 && memcmp(ea->xy, eb->xy, (size_t)ea->n * 2 * sizeof(double)) == 0 &&
                   isfinite(none.res.final_eval_ppl),
               "held-out perplexity at %d points, bit for bit (final %.4f)", ea->n, none.res.final_eval_ppl);
        result(none.n == one.n && memcmp(none.master, one.master, none.n * sizeof(float)) == 0,
               "final parameters (%zu f32 masters), bit for bit", none.n);
        result(a->n == 8 && a->xy[2 * a->n - 1] < a->xy[1], "the loss went down (%.6f -> %.6f): the runs trained",
               a->xy[1], a->xy[2 * a->n - 1]);
    }
    train_result_free(&none.res), train_result_free(&one.res);
    free(none.master), free(one.master);
    model_free(&m);
    comm_close(c);
    be_set_default(NULL);
    be_close(be);
    return result_summary();
}
