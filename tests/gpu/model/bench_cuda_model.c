/* graft's teacher and training steps on the CUDA backend (bf16) at real
 * shapes with synthetic weights (../shared/configs), each figure next to its
 * floor and naming the PyTorch peer that measures the same work
 * (tests/gpu/peers; table.py prints the ratios):
 *   - teacher forward with the section 4 statistics and logits for every row:
 *     qwen2.5-1.5b at 4 x 2048 and 1 x 8192, qwen3-8b at 1 x 2048; and the
 *     qwen2.5-1.5b ones without logits, as graft stats and the capture run it;
 *   - a training step like the peers' (next-token cross-entropy, backward,
 *     global norm, AdamW on f32 masters) of qwen2.5-1.5b, plain and with every
 *     other layer Gated DeltaNet, 4 x 2048;
 *     and again at a batch that fills the GPU (GRAFT_BENCH_TRAIN_BIG_B, default 16);
 *   - one recovery step (phase kl: teacher forward + student step, train_run);
 *   - Stage 2 of every converted layer of qwen2.5-1.5b at 50 % (the odd
 *     layers: 14), 300 steps on a capture of 4 x 256 tokens and 1 x 256
 *     held out (graft convert's defaults), after the teacher capture.
 * FLOPs as docs/cuda.md counts them (peer_common.py the same). GRAFT_BENCH_TEACHER=PATH
 * also times loading that teacher onto the GPU (warm page cache: load it twice).
 *   build/gpu/bench_cuda_model [forward|train|stage2]     (make bench-gpu)
 *   build/gpu/bench_cuda_model train-plain|train-hybrid   (one B 4 step kind; profile_train.sh)
 *   build/gpu/bench_cuda_model forward-long               (the 1 x 8192 forward alone; profile_steps.sh)
 *   build/gpu/bench_cuda_model forward-targets            (the two forwards with logits issue 36's sdpa
 *                                                          targets name: 4 x 2048 and 1 x 8192, no qwen3-8b)
 *   build/gpu/bench_cuda_model decode [CONTEXT [B [TOKENS [teacher|hybrid|hybrid25|all]]]]
 *       decode steps of the teacher, the 50 % and the 25 % hybrids (attention kept in every second /
 *       fourth layer), graft bench-decode's loop; not in "all"
 * GRAFT_BENCH_SMOKE=1 or GRAFT_GPU_TEST_DEVICE=cpu: toy shapes (bench_gpu.h),
 * a check of this program, its figures mean nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bench_gpu.h"
#include "calibrate/capture.h"
#include "eval/bench_decode.h"
#include "formats/model_load.h"
#include "tests/gpu/model/dp_util.h"
#include "train/trainer.h"

/* ------------------------------------------------------------- FLOPs (docs/cuda.md) */

static double layer_mm(const model_config *c, bool gdn) {
    const double D = c->dim, F = c->hidden_dim, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    if (gdn) return 2 * (4 * D * H * hd + H * hd * D + 2 * D * H) + 6 * D * F;
    return 2 * (D * (H + 2 * KV) * hd + H * hd * D) + 6 * D * F;
}
static double attn_fwd(const model_config *c, int T) { return 4.0 * c->head_dim * c->n_heads * (T + 1) / 2.0; }
static double gdn_core(const model_config *c) {
    const double d = c->head_dim, C = 64;
    return 2 * c->n_heads * (3 * d * d + C * (3 * d + 2 * d) + C * C / 3);
}
static double fwd_per_token(const model_config *c, int T, int n_gdn) {
    const int a = c->n_layers - n_gdn;
    return a * (layer_mm(c, false) + attn_fwd(c, T)) + n_gdn * (layer_mm(c, true) + gdn_core(c)) +
           2.0 * c->dim * c->vocab_size;
}
static double train_per_token(const model_config *c, int T, int n_gdn) {
    const int a = c->n_layers - n_gdn;
    return 3 * (a * layer_mm(c, false) + n_gdn * (layer_mm(c, true) + gdn_core(c)) + 2.0 * c->dim * c->vocab_size) +
           3.5 * a * attn_fwd(c, T);
}

/* ------------------------------------------------------------- a model with random weights on the GPU */

static bool smoke;

static void skip_line(const char *what, const char *why) {
    printf("{\"bench\":\"model\",\"what\":\"%s\",\"skipped\":\"%s\"}\n", what, why);
    fflush(stdout);
}

/* m: random weights (dp_util.h) in the shape of ../shared/configs/NAME.json,
 * or in smoke mode a toy of the same family; false after a skip line for `what`. */
static bool synthetic_model(model *m, model_config *c, const char *name, gf_backend *be, const char *what) {
    if (dp_load_config(c, name) != 0) {
        skip_line(what, gf_last_error());
        return false;
    }
    if (smoke) { /* a toy of the same family */
        c->dim = 64, c->hidden_dim = 96, c->n_layers = 4, c->n_heads = 4, c->n_kv_heads = 2, c->head_dim = 16;
        c->vocab_size = 512;
    }
    if (dp_random_model(m, c, be) != 0) {
        skip_line(what, gf_last_error());
        return false;
    }
    return true;
}

/* ------------------------------------------------------------- teacher forward + statistics */

typedef struct {
    tf_run *r;
    const int *tok;
    int B, T;
} fwd_ud;

static void fwd_fn(void *p) {
    fwd_ud *u = p;
    if (tf_forward(u->r, u->tok, u->B, u->T, 0, NULL) != 0) return;
    tf_logits(u->r, 0, u->B * u->T, tf_run_logits(u->r, NULL));
}
static void fwd_stats_fn(void *p) { /* as graft stats and the calibration capture run it: no logits */
    fwd_ud *u = p;
    tf_forward(u->r, u->tok, u->B, u->T, 0, NULL);
}

/* logits: every row's logits as the sdpa peer computes them; without, the
 * forward graft stats runs (the peer then stops at the last hidden state). */
static void forward_case(gf_backend *be, const bench_ceilings *ce, const char *name, int B, int T, bool logits) {
    char what[160], peer[160], peer2[160], extra[512];
    snprintf(what, sizeof what, "graft %s B %d T %d fwd+stats, %s", name, B, T, logits ? "logits" : "no logits");
    model_config c;
    model m;
    if (!synthetic_model(&m, &c, name, be, what)) return;
    transformer tf;
    tf_run *r = NULL;
    const tf_run_opts ro = {.B = B, .T = T, .stats = true, .logit_rows = logits ? B * T : 1};
    if (tf_view(&tf, &m, NULL, NULL, NULL) != 0 || tf_run_open(&r, &tf, &ro) != 0) {
        skip_line(what, gf_last_error());
        model_free(&m);
        return;
    }
    int *tok = malloc((size_t)B * T * sizeof *tok);
    for (int i = 0; i < B * T; i++) tok[i] = (int)(((unsigned)i * 2654435761u) % (unsigned)c.vocab_size);
    fwd_ud u = {r, tok, B, T};
    const double t = bench_time(be, logits ? fwd_fn : fwd_stats_fn, &u, 5);
    const double flops = (fwd_per_token(&c, T, 0) - (logits ? 0 : 2.0 * c.dim * c.vocab_size)) * B * T;
    snprintf(peer, sizeof peer, "transformers sdpa %s B %d T %d %s, no stats", name, B, T,
             logits ? "logits" : "hidden states");
    snprintf(peer2, sizeof peer2, "transformers eager+output_attentions+stats %s B %d T %d", name, B, T);
    snprintf(extra, sizeof extra, ",\"tok_s\":%.0f,\"of_roofline\":%.3f,\"peer\":\"%s\",\"peer2\":\"%s\"",
             (double)B * T / t, flops / t / 1e12 / ce->gemm_tflops, peer, peer2);
    /* bytes: the weights once (bf16), the logits once */
    bench_report("model", what, t, flops, 2.0 * m.layout.total + (logits ? 2.0 * B * T * c.vocab_size : 0), ce, extra);
    free(tok);
    tf_run_close(r);
    tf_free(&tf);
    model_free(&m);
}

/* Times loading a real teacher onto the GPU (the second load: warm page cache). */
static void load_case(gf_backend *be, const char *path) {
    model m;
    model_load_opts lo = {NULL, be};
    for (int i = 0; i < 2; i++) {
        const double t0 = bench_now();
        if (model_load(&m, path, &lo) != 0 || be_sync(be) != 0) {
            skip_line("graft teacher load", gf_last_error());
            return;
        }
        const double t = bench_now() - t0;
        if (i == 1)
            printf("{\"bench\":\"model\",\"what\":\"graft load %s to the GPU (warm cache)\",\"ms\":%.1f,\"params\":%zu}\n",
                   m.name ? m.name : path, t * 1e3, m.layout.total);
        model_free(&m);
    }
}

/* ------------------------------------------------------------- training */

/* A step as the PyTorch peers take it: next-token cross-entropy, backward,
 * global norm, AdamW over every parameter (f32 masters, bf16 copies). */
typedef struct {
    transformer *tf;
    tf_run *r;
    gf_buf targets, acc, m, v;
    const int *tok;
    int B, T, step;
    double enqueue_s; /* the last step's host time up to the norm's download: near the step's, the host may starve the GPU */
} step_ud;

static void step_fn(void *p) {
    step_ud *u = p;
    gf_backend *be = u->tf->be;
    const int N = u->B * u->T, V = u->tf->cfg.vocab_size;
    const double t0 = bench_now();
    tf_zero_grads(u->tf);
    be_zero(be, u->acc, 2);
    if (tf_forward(u->r, u->tok, u->B, u->T, 0, NULL) != 0) return;
    int rows;
    const gf_buf lg = tf_run_logits(u->r, &rows);
    for (int r0 = 0; r0 < N; r0 += rows) {
        const int nr = N - r0 < rows ? N - r0 : rows;
        tf_logits(u->r, r0, nr, lg);
        be_cross_entropy(be, u->acc, lg, lg, gf_at(u->targets, r0), nr, V, 1.0f / (float)N);
        tf_lm_head_backward(u->r, r0, nr, lg);
    }
    if (tf_backward(u->r, NULL) != 0) return;
    const size_t n = u->tf->layout.total;
    be_sumsq(be, gf_at(u->acc, 1), u->tf->grads, n);
    double acc[2];
    u->enqueue_s = bench_now() - t0;
    if (be_download(be, acc, GF_F64, u->acc, 2) != 0) return; /* the clip factor needs the norm on the host */
    const double gn = sqrt(acc[1]);
    const gf_adamw h = {1e-5f, 0.9f, 0.95f, 1e-8f, 0.01f, ++u->step, (float)(gn > 1.0 ? 1.0 / gn : 1.0)};
    be_adamw(be, u->tf->master, u->tf->master.ptr != u->tf->params.ptr ? u->tf->params : gf_none(), u->tf->grads, u->m,
             u->v, n, &h);
}

static void train_case(gf_backend *be, const bench_ceilings *ce, bool hybrid, int B, int T) {
    const char *name = "qwen2.5-1.5b";
    char what[200], peer[200], peer2[200], extra[700];
    snprintf(what, sizeof what, "graft %s%s B %d T %d train step (CE, AdamW, f32 masters)", name,
             hybrid ? " hybrid 50% GDN" : "", B, T);
    model_config c;
    model m;
    if (!synthetic_model(&m, &c, name, be, what)) return;
    transformer tf;
    int n_gdn = 0;
    if ((hybrid ? dp_hybrid_student(&tf, &m, &n_gdn) : tf_trainable(&tf, &m, NULL, NULL, NULL)) != 0) {
        skip_line(what, gf_last_error());
        model_free(&m);
        return;
    }
    const int N = B * T;
    const int V = c.vocab_size;
    const tf_run_opts ro = {.B = B, .T = T, .train = true}; /* logit rows: tf_logit_rows, as the trainer */
    step_ud u = {&tf, NULL, gf_none(), gf_none(), gf_none(), gf_none(), NULL, B, T, 0, 0};
    int *tok = malloc((size_t)N * sizeof *tok), *tgt = malloc((size_t)N * sizeof *tgt);
    for (int i = 0; i < N; i++) tok[i] = (int)(((unsigned)i * 2654435761u) % (unsigned)V);
    for (int i = 0; i < N; i++) tgt[i] = (i + 1) % T == 0 ? -1 : tok[i + 1];
    u.tok = tok;
    const size_t n = tf.layout.total;
    if (tf_run_open(&u.r, &tf, &ro) != 0 || be_alloc(be, &u.targets, N, GF_I32) != 0 ||
        be_alloc(be, &u.acc, 2, GF_F64) != 0 || be_alloc(be, &u.m, n, GF_F32) != 0 || be_alloc(be, &u.v, n, GF_F32) != 0 ||
        be_upload(be, u.targets, tgt, GF_I32, N) != 0) {
        skip_line(what, gf_last_error());
    } else {
        be_zero(be, u.m, n);
        be_zero(be, u.v, n);
        const double t = bench_time(be, step_fn, &u, 3);
        const double flops = train_per_token(&c, T, n_gdn) * N;
        snprintf(peer, sizeof peer, "torch %s%s B %d T %d torch.compile, fused AdamW, bf16 autocast + f32 master", name,
                 hybrid ? " hybrid 50% GDN (fla chunk)" : "", B, T);
        snprintf(peer2, sizeof peer2, "torch %s%s B %d T %d eager, fused AdamW, bf16 autocast + f32 master", name,
                 hybrid ? (smoke ? " hybrid 50% GDN (torch recurrent, smoke)" : " hybrid 50% GDN (fla chunk)") : "", B, T);
        snprintf(extra, sizeof extra,
                 ",\"tok_s\":%.0f,\"of_roofline\":%.3f,\"host_enqueue_ms\":%.2f,\"peer\":\"%s\",\"peer2\":\"%s\"", N / t,
                 flops / t / 1e12 / ce->gemm_tflops, u.enqueue_s * 1e3, peer, peer2);
        /* bytes: params, grads, masters and moments read and written once */
        bench_report("model", what, t, flops, 2.0 * n + 4.0 * 6 * n, ce, extra);
    }
    free(tok);
    free(tgt);
    if (u.r) tf_run_close(u.r);
    be_free(be, &u.targets), be_free(be, &u.acc), be_free(be, &u.m), be_free(be, &u.v);
    tf_free(&tf);
    model_free(&m);
}

/* One recovery step as graft trains (phase kl: teacher forward, student forward and backward, AdamW). */
static void recovery_case(gf_backend *be, const bench_ceilings *ce, int B, int T) {
    char what[200], extra[256];
    snprintf(what, sizeof what, "graft qwen2.5-1.5b hybrid 50%% GDN B %d T %d recovery step (kl vs teacher)", B, T);
    model_config c;
    model m;
    transformer teacher, st;
    int n_gdn = 0;
    if (!synthetic_model(&m, &c, "qwen2.5-1.5b", be, what)) return;
    if (tf_view(&teacher, &m, NULL, NULL, NULL) != 0 || dp_hybrid_student(&st, &m, &n_gdn) != 0) {
        skip_line(what, gf_last_error());
        model_free(&m);
        return;
    }
    const int steps = 3;
    train_data d;
    int rc = dp_synthetic_data(&d, B * (steps + 2), T, c.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = T, o.batch = B, o.eval_seqs = 1, o.tokens = (long)T * B; /* warm-up: one step */
    train_result res;
    if (rc == 0) {
        rc = train_run(&o, &st, &teacher, &d, NULL, &res);
        train_result_free(&res);
    }
    o.tokens = (long)T * B * steps;
    const double t0 = bench_now();
    if (rc == 0) rc = train_run(&o, &st, &teacher, &d, NULL, &res);
    const double t = (bench_now() - t0) / steps; /* includes one held-out evaluation of one sequence */
    if (rc != 0) {
        skip_line(what, gf_last_error());
    } else {
        const double flops = (fwd_per_token(&c, T, 0) + train_per_token(&c, T, n_gdn)) * B * T;
        snprintf(extra, sizeof extra, ",\"tok_s\":%.0f,\"of_roofline\":%.3f", (double)B * T / t,
                 flops / t / 1e12 / ce->gemm_tflops);
        bench_report("model", what, t, flops, 0, ce, extra);
        train_result_free(&res);
    }
    train_data_free(&d);
    tf_free(&st);
    tf_free(&teacher);
    model_free(&m);
}

/* Stage 2 of every converted layer (align-only: Stage 2 from the default
 * init, so the time is Stage 2's), after a teacher capture that is timed on
 * its own. FLOPs per step and layer: the GDN layer's projections and core,
 * forward and backward (3x forward), over the calibration tokens, plus the
 * held-out forward; docs/cuda.md. */
static void stage2_case(gf_backend *be, const bench_ceilings *ce, int seqs, int T, int steps) {
    char what[200], extra[256];
    snprintf(what, sizeof what, "graft qwen2.5-1.5b 50%% Stage 2, every converted layer, %d steps, %d x %d tokens",
             steps, seqs, T);
    model_config c;
    model m;
    if (!synthetic_model(&m, &c, "qwen2.5-1.5b", be, what)) return;
    const int L = c.n_layers;
    bool conv[256] = {0};
    int n_conv = 0;
    for (int l = 0; l < L && l < 256; l++) conv[l] = l % 2 == 1, n_conv += conv[l];
    int *ids = malloc((size_t)(seqs + 1) * T * sizeof *ids);
    for (int i = 0; i < (seqs + 1) * T; i++) ids[i] = (int)(((unsigned)i * 2654435761u + 17u) % (unsigned)c.vocab_size);
    teacher_capture cal, held;
    memset(&cal, 0, sizeof cal), memset(&held, 0, sizeof held);
    double t0 = bench_now();
    int rc = teacher_capture_run(&cal, &m, ids, seqs, T, 0, NULL);
    if (rc == 0) rc = teacher_capture_run(&held, &m, ids + (size_t)seqs * T, 1, T, 0, NULL);
    const double t_cap = bench_now() - t0;
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_ALIGN_ONLY;
    set.steps = steps;
    bool have = false;
    if (rc == 0) rc = student_init_empty(&s, &m, &set), have = rc == 0;
    t0 = bench_now();
    if (rc == 0) rc = student_build_layers(&s, conv, &cal, &held, NULL);
    if (rc == 0) rc = be_sync(be);
    const double t = bench_now() - t0;
    if (rc != 0) {
        skip_line(what, gf_last_error());
    } else {
        const double gdn_fwd = layer_mm(&c, true) - 6.0 * c.dim * c.hidden_dim + gdn_core(&c); /* no MLP in Stage 2 */
        const double flops = (double)n_conv * steps * (3.0 * seqs * T + T) * gdn_fwd;
        /* stage2_s: the align phase alone (layers side by side), without the per-layer init on the host */
        snprintf(extra, sizeof extra, ",\"layers\":%d,\"s_per_layer\":%.3f,\"capture_s\":%.3f,\"stage2_s\":%.3f", n_conv,
                 t / n_conv, t_cap, s.stage2_wall_s);
        bench_report("model", what, t, flops, 0, ce, extra);
    }
    if (have) student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    free(ids);
    model_free(&m);
}

/* ------------------------------------------------------------- decoding */

/* graft bench-decode's loop (engine/eval/bench_decode.c) on the synthetic
 * teacher or its 50 % hybrid: the step's time beside its bytes (every weight
 * once, each sequence's KV cache and GDN state once). */
/* keep_every: 0 the teacher, 2 the 50 % hybrid (attention in layers 0, 2, ...), 4 the 25 % one */
static void decode_case(gf_backend *be, const bench_ceilings *ce, int keep_every, int B, int context, int tokens) {
    char what[200], extra[256];
    const bool hybrid = keep_every > 0;
    snprintf(what, sizeof what, "graft qwen2.5-1.5b%s decode B %d context %d",
             !hybrid ? "" : keep_every == 2 ? " hybrid 50% GDN" : " hybrid 25% GDN", B, context);
    model_config c;
    model m;
    if (!synthetic_model(&m, &c, "qwen2.5-1.5b", be, what)) return;
    transformer tf;
    int n_gdn = 0;
    if ((hybrid ? dp_hybrid_student_every(&tf, &m, keep_every, &n_gdn) : tf_view(&tf, &m, NULL, NULL, NULL)) != 0) {
        skip_line(what, gf_last_error());
        model_free(&m);
        return;
    }
    const decode_bench_opts o = {.context = context, .batch = B, .tokens = tokens, .prefill_chunk = 4096, .seed = 1};
    decode_bench_point pt;
    if (decode_bench_run(&tf, &o, &pt) != 0) {
        skip_line(what, gf_last_error());
    } else {
        const double weights = (double)(hybrid ? tf.layout.total : m.layout.total) * (double)gf_dtype_size(be_act(be));
        const double bytes = weights + (double)B * (double)(pt.kv_bytes_per_seq + pt.state_bytes_per_seq);
        snprintf(extra, sizeof extra, ",\"tok_s\":%.0f,\"kv_mib_per_seq\":%.2f,\"state_mib_per_seq\":%.2f,\"gdn_layers\":%d",
                 pt.decode_tok_s, pt.kv_bytes_per_seq / 1048576.0, pt.state_bytes_per_seq / 1048576.0, n_gdn);
        bench_report("model", what, pt.ms_per_step / 1e3, 0, bytes, ce, extra);
    }
    tf_free(&tf);
    model_free(&m);
}

static const char *const modes[] = {"all",   "forward",     "forward-long", "forward-targets", "decode",
                                    "train", "train-plain", "train-hybrid", "stage2"};
#define N_MODES (sizeof modes / sizeof *modes)

static bool known_mode(const char *which) {
    for (size_t i = 0; i < N_MODES; i++)
        if (strcmp(which, modes[i]) == 0) return true;
    return false;
}

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "all";
    if (!known_mode(which)) { /* before the GPU opens: a mistyped mode would otherwise time nothing and pass */
        fprintf(stderr, "bench_cuda_model: unknown mode '%s' (", which);
        for (size_t i = 0; i < N_MODES; i++) fprintf(stderr, "%s%s", modes[i], i + 1 < N_MODES ? ", " : ")\n");
        return 2;
    }
    gf_backend *be = bench_open_or_skip();
    smoke = bench_smoke_mode;
    be_set_default(be);
    fprintf(stderr, "bench_cuda_model on %s\n", be_name(be));
    const bench_ceilings ce = bench_measure_ceilings(be);
    const int Bl = smoke ? 2 : 4, Tl = smoke ? 64 : 2048;
    const char *bb = getenv("GRAFT_BENCH_TRAIN_BIG_B");
    const int Bbig = smoke ? 3 : bb && atoi(bb) > 0 ? atoi(bb) : 16;
    const char *teacher = getenv("GRAFT_BENCH_TEACHER");
    if (teacher && *teacher) load_case(be, teacher);
    const bool all = strcmp(which, "all") == 0;
    if (all || strcmp(which, "forward") == 0) {
        forward_case(be, &ce, "qwen2.5-1.5b", Bl, Tl, true);
        forward_case(be, &ce, "qwen2.5-1.5b", 1, 4 * Tl, true);
        forward_case(be, &ce, "qwen3-8b", 1, Tl, true);
        forward_case(be, &ce, "qwen2.5-1.5b", Bl, Tl, false);
        forward_case(be, &ce, "qwen2.5-1.5b", 1, 4 * Tl, false);
    }
    /* one kind of step alone (tests/gpu/bench/profile_train.sh profiles them) */
    if (strcmp(which, "forward-long") == 0) forward_case(be, &ce, "qwen2.5-1.5b", 1, 4 * Tl, true);
    if (strcmp(which, "forward-targets") == 0) {
        forward_case(be, &ce, "qwen2.5-1.5b", Bl, Tl, true);
        forward_case(be, &ce, "qwen2.5-1.5b", 1, 4 * Tl, true);
    }
    if (strcmp(which, "decode") == 0) {
        const int ctx = argc > 2 ? atoi(argv[2]) : smoke ? 64 : 8192, B = argc > 3 ? atoi(argv[3]) : 1;
        const int tokens = argc > 4 ? atoi(argv[4]) : smoke ? 4 : 64;
        const char *only = argc > 5 ? argv[5] : "all"; /* teacher, hybrid (50 %), hybrid25 or all */
        if (!strcmp(only, "all") || !strcmp(only, "teacher")) decode_case(be, &ce, 0, B, ctx, tokens);
        if (!strcmp(only, "all") || !strcmp(only, "hybrid")) decode_case(be, &ce, 2, B, ctx, tokens);
        if (!strcmp(only, "all") || !strcmp(only, "hybrid25")) decode_case(be, &ce, 4, B, ctx, tokens);
    }
    if (strcmp(which, "train-plain") == 0) train_case(be, &ce, false, Bl, Tl);
    if (strcmp(which, "train-hybrid") == 0) train_case(be, &ce, true, Bl, Tl);
    if (all || strcmp(which, "train") == 0) {
        train_case(be, &ce, false, Bl, Tl);
        train_case(be, &ce, true, Bl, Tl);
        train_case(be, &ce, false, Bbig, Tl);
        train_case(be, &ce, true, Bbig, Tl);
        recovery_case(be, &ce, Bl, Tl);
    }
    if (all || strcmp(which, "stage2") == 0) stage2_case(be, &ce, 4, smoke ? 64 : 256, smoke ? 20 : 300);
    be_set_default(NULL);
    be_close(be);
    return 0;
}
