/* One recovery-training step of a hybrid student on the CUDA backend against
 * the same step on the CPU backend (the float32 reference): the loss (tau^2
 * KL at tau = 2 against the CPU teacher's logits, plus 0.5 x the hidden
 * alignment of layer 0's output with a fixed random target) and every
 * parameter gradient, for
 *   - the qwen2 fixture (q/k/v biases), layer 1 GDN (conv, q/k/v bias);
 *   - the qwen3 fixture (q/k norms), layer 0 GDN;
 *   - stories260K, layers 2 and 4 GDN (head dim 8: the padded GDN core);
 * with B = 2 sequences of T = 45 tokens (not a multiple of the chunk 16).
 * Both sides build the same student (same seed, host-side draw).
 *
 * Tolerances. fp32: loss 1e-5 relative (two float32 computations in other
 * summation orders, ~1e-6 per op); each gradient tensor 2e-4 relative L2
 * against its own norm (the backward chains ~10 ops per layer through the
 * softmax, KL and GDN state, each 1e-6..1e-5 relative in float32; measured
 * CPU 1 thread vs 2 threads: below 1e-5). bf16: weights and activations
 * rounded to 8 significant bits in every op, and the logits then carry ~3e-2
 * relative error (test_cuda_model's bf16 bound) which the KL gradient, a
 * difference of probabilities, passes on undamped; so the check is coarse, a
 * net for wrong kernels (which give cosines near 0): loss 5e-2 relative, the
 * whole gradient vector 3e-1 relative L2 and cosine >= 0.95 with the CPU's
 * (per-tensor errors are printed as INFO).
 *   build/gpu/test_cuda_train                 (make test-gpu)
 *   GRAFT_GPU_TEST_DEVICE=cpu build/gpu/test_cuda_train   the program itself
 *     checked without a GPU: a 2-thread CPU backend in the GPU's place
 * Exit 0 passed, 1 failed, 77 no GPU / no CUDA in the build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "formats/model_load.h"
#include "model/model.h"
#include "model/transformer.h"
#include "convert/build.h"
#include "student/student.h"
#include "tests/gpu/gpu_result.h"

static double cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

enum { B = 2, T = 45 };
#define TAU 2.0f
#define ALIGN_WEIGHT 0.5

typedef struct {
    double loss;
    float *grads; /* [layout.total] */
    param_layout layout;
} step_out;

/* One step on backend be for model `path` with GDN layers `mask`: teacher
 * logits zt [B*T, V] and the alignment target tgt [B*T, D] are host arrays. */
static int one_step(gf_backend *be, const char *path, const bool *mask, const int *tok, const float *zt,
                    const float *tgt, step_out *out) {
    model m;
    const model_load_opts lo = {NULL, be};
    if (model_load(&m, path, &lo) != 0) return -1;
    const int L = m.cfg.n_layers, V = m.cfg.vocab_size, D = m.cfg.dim, N = B * T;
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    set.seed = 7;
    set.conv = 1;
    set.qkv_bias = m.cfg.qkv_bias ? 1 : 0;
    set.chunk = 16;
    int rc = student_init_empty(&s, &m, &set);
    if (rc == 0) rc = student_build_layers(&s, mask, NULL, NULL, NULL);
    if (rc == 0) rc = student_set_gdn(&s, mask);
    if (rc != 0) {
        model_free(&m);
        return -1;
    }
    mixer_kind *kinds = malloc((size_t)L * sizeof *kinds);
    for (int l = 0; l < L; l++) kinds[l] = mask[l] ? MIX_GDN : MIX_ATTN;
    transformer tm;
    tf_run *run = NULL;
    gf_buf dafter[64], ZT = gf_none(), TGT = gf_none(), acc = gf_none(), acc2 = gf_none();
    for (int l = 0; l < 64; l++) dafter[l] = gf_none();
    rc = tf_trainable(&tm, &m, &s.gcfg, kinds, s.gdn);
    const tf_run_opts ro = {.B = B, .T = T, .train = true, .logit_rows = N};
    if (rc == 0) rc = tf_run_open(&run, &tm, &ro);
    if (rc == 0)
        rc = be_alloc(be, &dafter[0], (size_t)N * D, be_act(be)) | be_alloc(be, &ZT, (size_t)N * V, be_act(be)) |
             be_alloc(be, &TGT, (size_t)N * D, be_act(be)) | be_alloc(be, &acc, 1, GF_F64) |
             be_alloc(be, &acc2, 1, GF_F64);
    if (rc == 0) rc = be_upload(be, ZT, zt, GF_F32, (size_t)N * V) | be_upload(be, TGT, tgt, GF_F32, (size_t)N * D);
    if (rc == 0) {
        be_zero(be, acc, 1), be_zero(be, acc2, 1);
        be_zero(be, dafter[0], (size_t)N * D); /* be_row_l2 adds its gradient */
        tf_zero_grads(&tm);
        rc = tf_forward(run, tok, B, T, 0, NULL);
    }
    if (rc == 0) {
        const gf_buf lg = tf_run_logits(run, NULL);
        tf_logits(run, 0, N, lg);
        be_kl_div(be, acc, lg, lg, ZT, N, V, TAU, 1.0f / N);
        tf_lm_head_backward(run, 0, N, lg);
        be_row_l2(be, acc2, dafter[0], tf_run_layer_output(run, 0), TGT, N, D, (float)(ALIGN_WEIGHT / N));
        rc = tf_backward(run, dafter);
    }
    double kl = 0, al = 0;
    if (rc == 0) rc = be_download(be, &kl, GF_F64, acc, 1) | be_download(be, &al, GF_F64, acc2, 1);
    if (rc == 0) {
        out->loss = kl / N + ALIGN_WEIGHT * al / N;
        out->layout = tm.layout; /* the entries are copied below; index is not used */
        out->layout.index = NULL;
        out->layout.t = malloc((size_t)tm.layout.n * sizeof *tm.layout.t);
        memcpy(out->layout.t, tm.layout.t, (size_t)tm.layout.n * sizeof *tm.layout.t);
        out->grads = malloc(tm.layout.total * sizeof *out->grads);
        rc = be_download(be, out->grads, GF_F32, tm.grads, tm.layout.total);
    }
    if (rc == 0) rc = be_sync(be);
    be_free(be, &dafter[0]), be_free(be, &ZT), be_free(be, &TGT), be_free(be, &acc), be_free(be, &acc2);
    if (run) tf_run_close(run);
    tf_free(&tm);
    free(kinds);
    student_free(&s);
    model_free(&m);
    return rc;
}

/* The teacher's logits on the CPU: the KL target both sides get. */
static int teacher_logits(gf_backend *cpu, const char *path, const int *tok, float **out, int *V, int *D) {
    model m;
    const model_load_opts lo = {NULL, cpu};
    if (model_load(&m, path, &lo) != 0) return -1;
    *V = m.cfg.vocab_size, *D = m.cfg.dim;
    transformer tf;
    tf_run *r = NULL;
    if (tf_view(&tf, &m, NULL, NULL, NULL) != 0) {
        model_free(&m);
        return -1;
    }
    const tf_run_opts o = {.B = B, .T = T, .logit_rows = B * T};
    int rc = tf_run_open(&r, &tf, &o);
    if (rc == 0) rc = tf_forward(r, tok, B, T, 0, NULL);
    if (rc == 0) {
        *out = malloc((size_t)B * T * *V * sizeof **out);
        tf_logits(r, 0, B * T, tf_run_logits(r, NULL));
        rc = be_download(cpu, *out, GF_F32, tf_run_logits(r, NULL), (size_t)B * T * *V);
    }
    if (r) tf_run_close(r);
    tf_free(&tf);
    model_free(&m);
    return rc;
}

static void one_case(gf_backend *gpu, gf_backend *cpu, const char *mode, const char *name, const char *path,
                     const bool *mask) {
    int tok[B * T], V = 0, D = 0;
    float *zt = NULL;
    unsigned s = 4242;
    /* ids below 120: every model here has a larger vocabulary */
    for (int i = 0; i < B * T; i++) tok[i] = i % T == 0 ? 1 : (int)((s = s * 1103515245u + 12345u) >> 16) % 120;
    if (teacher_logits(cpu, path, tok, &zt, &V, &D) != 0) {
        result(false, "%-5s %-12s teacher: %s", mode, name, gf_last_error());
        return;
    }
    float *tgt = malloc((size_t)B * T * D * sizeof *tgt);
    for (size_t i = 0; i < (size_t)B * T * D; i++) tgt[i] = (float)((s = s * 1103515245u + 12345u) >> 16) / 32768.0f - 1.0f;
    step_out g = {0}, c = {0};
    if (one_step(gpu, path, mask, tok, zt, tgt, &g) != 0 || one_step(cpu, path, mask, tok, zt, tgt, &c) != 0) {
        result(false, "%-5s %-12s training step: %s", mode, name, gf_last_error());
    } else {
        const bool f32 = be_act(gpu) == GF_F32;
        const double el = fabs(g.loss - c.loss) / fabs(c.loss);
        const double tl = f32 ? 1e-5 : 5e-2;
        result(isfinite(g.loss) && el <= tl, "%-5s %-12s loss %.6f vs CPU %.6f: rel %.2e (%.0e)", mode, name, g.loss,
               c.loss, el, tl);
        double worst = 0;
        const char *worst_name = "";
        for (int i = 0; i < c.layout.n; i++) {
            const param_entry *t = &c.layout.t[i];
            const double e = rel_l2_f(g.grads + t->off, c.grads + t->off, t->n);
            if (!(e <= worst)) worst = e, worst_name = t->name;
            if (f32) result(e <= 2e-4, "%-5s %-12s gradient %-22s rel L2 %.2e (2e-4)", mode, name, t->name, e);
            else printf("INFO  %-5s %-12s gradient %-22s rel L2 %.2e\n", mode, name, t->name, e);
        }
        if (!f32) {
            const double e = rel_l2_f(g.grads, c.grads, c.layout.total), cs = cosine(g.grads, c.grads, c.layout.total);
            result(e <= 3e-1 && cs >= 0.95, "%-5s %-12s whole gradient rel L2 %.2e (3e-1), cosine %.5f (>= 0.95); worst "
                   "tensor %s %.2e", mode, name, e, cs, worst_name, worst);
        }
    }
    free(g.grads), free(c.grads), free(g.layout.t), free(c.layout.t), free(zt), free(tgt);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const gf_backend_opts co = {"cpu", 1, false};
    gf_backend *cpu = NULL;
    if (be_open(&cpu, &co) != 0) {
        fprintf(stderr, "cpu backend: %s\n", gf_last_error());
        return 1;
    }
    const char *root = getenv("GRAFT_ROOT"), *shared = getenv("GRAFT_SHARED");
    char qwen2[4096], qwen3[4096], stories[4096];
    snprintf(qwen2, sizeof qwen2, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    snprintf(qwen3, sizeof qwen3, "%s/tests/fixtures/hf/qwen3", root ? root : ".");
    snprintf(stories, sizeof stories, "%s/models/tinyllamas/stories260K/stories260K.bin", shared ? shared : "../shared");
    const bool m_qwen2[2] = {false, true}, m_qwen3[2] = {true, false}, m_stories[5] = {false, false, true, false, true};
    for (int fp32 = 1; fp32 >= 0; fp32--) {
        const char *mode;
        gf_backend *be = open_device_or_skip(fp32 != 0, 2, &mode);
        if (!be) {
            be_close(cpu);
            return 77;
        }
        one_case(be, cpu, mode, "qwen2", qwen2, m_qwen2);
        one_case(be, cpu, mode, "qwen3", qwen3, m_qwen3);
        one_case(be, cpu, mode, "stories260K", stories, m_stories);
        const bool cpu_stand_in = be_is_host(be);
        be_close(be);
        if (cpu_stand_in) break; /* GRAFT_GPU_TEST_DEVICE=cpu: no bf16 mode there */
    }
    be_close(cpu);
    return result_summary();
}
