/* One recovery-training step against PyTorch (tests/ref/train_step_reference.py,
 * goldens in tests/fixtures/train/): for the llama (tied, GQA, llama3 rope),
 * qwen2 (biases) and qwen3 (q/k norm) fixtures, graft's float32 loss (tau^2 KL
 * at tau = 2 plus 0.5 x the layer-0 hidden alignment), every parameter
 * gradient (first values, norm, probe dot product), the global gradient norm
 * and the parameters after clipping + one AdamW step must match transformers'
 * float64 run. Tolerances (float32 against float64): loss 1e-5 relative;
 * gradient norms and probes 5e-4 x the tensor's gradient scale (norm x probe
 * norm for probes); single values 5e-4 x the tensor's max-scale + 1e-6;
 * parameters after the step 1e-5 absolute on O(0.1..1) values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/model_load.h"
#include "model/model.h"
#include "model/transformer.h"
#include "be_util.h"
#include "check.h"

static double probe_dot(const float *x, size_t n, double *probe_norm) {
    double s = 0, pn = 0;
    for (size_t i = 0; i < n; i++) {
        const double r = (double)(((uint64_t)i * 2654435761ull + 12345ull) % (1ull << 32)) / 4294967296.0 - 0.5;
        s += r * x[i];
        pn += r * r;
    }
    *probe_norm = sqrt(pn);
    return s;
}

static double l2(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s); /* NaN propagates */
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_non_null(v);
    return v->valuedouble;
}

static void floats_of(const cJSON *arr, float *out, size_t n) {
    assert_int_equal(cJSON_GetArraySize(arr), (int)n);
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next) out[i++] = (float)e->valuedouble;
}

/* Compares one tensor summary {first, norm, probe} with x[n]; scale: the
 * magnitude errors are measured against. */
static void check_summary(const char *what, const char *name, const cJSON *ref, const float *x, size_t n,
                          double rel, double abs_tol) {
    const double rn = num(ref, "norm");
    double pn;
    const double pd = probe_dot(x, n, &pn), cn = l2(x, n);
    const double scale = rn > 0 ? rn : 1;
    if (!close_enough(cn, rn, rel * scale + abs_tol, 0) || !close_enough(pd, num(ref, "probe"), rel * scale * pn + abs_tol, 0)) {
        fprintf(stderr, "%s %s: norm %.9g vs %.9g, probe %.9g vs %.9g\n", what, name, cn, rn, pd, num(ref, "probe"));
        fail();
    }
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(ref, "first");
    int i = 0;
    for (const cJSON *e = first->child; e; e = e->next, i++)
        if (!close_enough(x[i], e->valuedouble, rel * scale + abs_tol, 0)) {
            fprintf(stderr, "%s %s[%d]: %.9g vs %.9g\n", what, name, i, x[i], e->valuedouble);
            fail();
        }
}

static void run_fixture(const char *name) {
    const char *root = getenv("GRAFT_ROOT");
    char dir[512], gpath[512];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hf/%s", root ? root : ".", name);
    snprintf(gpath, sizeof gpath, "%s/tests/fixtures/train/%s.json", root ? root : ".", name);
    size_t len;
    char *text = read_text_file(gpath, &len);
    assert_non_null(text);
    cJSON *g = cJSON_Parse(text);
    free(text);
    assert_non_null(g);
    model m;
    model_load_opts lo = {0};
    if (model_load(&m, dir, &lo) != 0) fail_msg("%s", gf_last_error());
    const int T = (int)num(g, "T"), S = (int)num(g, "seqs"), V = m.cfg.vocab_size, D = m.cfg.dim;
    const float tau = (float)num(g, "tau");
    const double aw = num(g, "align_weight");
    const int al = (int)num(g, "align_layer");
    float *zt = malloc((size_t)S * T * V * sizeof *zt), *tgt = malloc((size_t)S * T * D * sizeof *tgt);
    floats_of(cJSON_GetObjectItemCaseSensitive(g, "teacher_logits"), zt, (size_t)S * T * V);
    floats_of(cJSON_GetObjectItemCaseSensitive(g, "align_target"), tgt, (size_t)S * T * D);
    /* both sequences in one batched forward and backward */
    transformer tm;
    assert_int_equal(tf_trainable(&tm, &m, NULL, NULL, NULL), 0);
    tf_run *run;
    const tf_run_opts ro = {.B = S, .T = T, .train = true, .logit_rows = S * T};
    assert_int_equal(tf_run_open(&run, &tm, &ro), 0);
    tf_zero_grads(&tm);
    gf_buf dafter[64];
    for (int l = 0; l < 64; l++) dafter[l] = gf_none();
    dafter[al] = tb_act(NULL, (size_t)S * T * D);
    gf_buf ZT = tb_act(zt, (size_t)S * T * V), TGT = tb_act(tgt, (size_t)S * T * D);
    gf_buf acc = tb_new(GF_F64, NULL, GF_F64, 1), acc2 = tb_new(GF_F64, NULL, GF_F64, 1);
    int tok[64 * 4];
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(g, "token_ids");
    assert_true(S * T <= 64 * 4);
    for (int s = 0; s < S; s++) {
        int t = 0;
        for (const cJSON *e = cJSON_GetArrayItem(ids, s)->child; e; e = e->next) tok[s * T + t++] = e->valueint;
        assert_int_equal(t, T);
    }
    assert_int_equal(tf_forward(run, tok, S, T, 0, NULL), 0);
    const gf_buf lg = tf_run_logits(run, NULL);
    tf_logits(run, 0, S * T, lg);
    be_kl_div(m.be, acc, lg, lg, ZT, S * T, V, tau, 1.0f / (S * T));
    tf_lm_head_backward(run, 0, S * T, lg);
    be_row_l2(m.be, acc2, dafter[al], tf_run_layer_output(run, al), TGT, S * T, D, (float)(aw / (S * T)));
    assert_int_equal(tf_backward(run, dafter), 0);
    const double kl = tb_get_f64(acc) / (S * T), align = tb_get_f64(acc2) / (S * T);
    const double loss = kl + aw * align;
    if (!close_enough(loss, num(g, "loss"), 0, 1e-5) || !close_enough(kl, num(g, "kl"), 0, 1e-5)) {
        fprintf(stderr, "%s: loss %.9g (kl %.9g) vs %.9g (kl %.9g)\n", name, loss, kl, num(g, "loss"), num(g, "kl"));
        fail();
    }
    const param_layout *pl = &tm.layout;
    const cJSON *grads = cJSON_GetObjectItemCaseSensitive(g, "grads");
    assert_int_equal(cJSON_GetArraySize(grads), pl->n);
    float *gh = malloc(pl->total * sizeof *gh), *ph = malloc(pl->total * sizeof *ph);
    tb_get(gh, tm.grads, pl->total);
    double ss = 0;
    for (int i = 0; i < pl->n; i++) {
        const param_entry *t = &pl->t[i];
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(grads, t->name);
        if (!ref) fail_msg("%s: golden has no tensor %s", name, t->name);
        check_summary("gradient", t->name, ref, gh + t->off, t->n, 5e-4, 1e-6);
        ss += l2(gh + t->off, t->n) * l2(gh + t->off, t->n);
    }
    const double gnorm = sqrt(ss);
    check_close(gnorm, num(g, "grad_norm"), 0, 1e-4);
    /* clip to the golden's threshold, one AdamW step per tensor (be_adamw) */
    const cJSON *ad = cJSON_GetObjectItemCaseSensitive(g, "adamw");
    const double f = num(ad, "clip") / gnorm;
    gf_buf M = tb_f32(NULL, pl->total), Vm = tb_f32(NULL, pl->total);
    for (int i = 0; i < pl->n; i++) {
        const param_entry *t = &pl->t[i];
        const gf_adamw h = {(float)num(ad, "lr"), (float)num(ad, "beta1"), (float)num(ad, "beta2"),
                            (float)num(ad, "eps"), (float)num(ad, "weight_decay"), 1, (float)(f < 1 ? f : 1)};
        be_adamw(m.be, gf_at(tm.master, t->off), gf_none(), gf_at(tm.grads, t->off), gf_at(M, t->off),
                 gf_at(Vm, t->off), t->n, &h);
    }
    tb_get(ph, tm.master, pl->total);
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(g, "params_after");
    for (int i = 0; i < pl->n; i++) {
        const param_entry *t = &pl->t[i];
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(after, t->name);
        assert_non_null(ref);
        check_summary("after AdamW", t->name, ref, ph + t->off, t->n, 2e-6, 2e-5);
    }
    free(gh);
    free(ph);
    tb_free(&M), tb_free(&Vm), tb_free(&dafter[al]), tb_free(&ZT), tb_free(&TGT), tb_free(&acc), tb_free(&acc2);
    tf_run_close(run);
    tf_free(&tm);
    model_free(&m);
    free(zt);
    free(tgt);
    cJSON_Delete(g);
}

static void test_llama(void **s) { (void)s; run_fixture("llama"); }
static void test_qwen2(void **s) { (void)s; run_fixture("qwen2"); }
static void test_qwen3(void **s) { (void)s; run_fixture("qwen3"); }

/* AdamW by hand for one element over two steps (bias correction, decoupled decay). */
static void test_adamw_hand(void **s) {
    (void)s;
    float p = 1.0f, m = 0, v = 0;
    const float g1 = 0.5f, g2 = -0.25f;
    tb_adamw(&p, &g1, &m, &v, 1, 0.1f, 0.9f, 0.99f, 0.0f, 0.0f, 1);
    check_close(p, 0.9, 1e-6, 0); /* first step: m^/sqrt(v^) = sign(g); float32 */
    tb_adamw(&p, &g2, &m, &v, 1, 0.1f, 0.9f, 0.99f, 0.0f, 0.5f, 2);
    const double mm = 0.9 * 0.05 + 0.1 * -0.25, vv = 0.99 * 0.0025 + 0.01 * 0.0625;
    const double want = 0.9 - 0.1 * (mm / 0.19) / sqrt(vv / (1 - 0.99 * 0.99)) - 0.1 * 0.5 * 0.9;
    check_close(p, want, 1e-6, 0);
}

/* The CPU's vectorized AdamW against the scalar loop in PyTorch's order, bit for bit: lengths that
 * leave a vector tail and cross the 64K-element block the threads split at, with and without the
 * compute-type copy, gradient scales 1 and 0.7 (clipping), two steps. Vector lanes round as scalar
 * operations do, so any difference is a changed order of operations. */
static void test_adamw_cpu_bits(void **s) {
    (void)s;
    gf_backend *be;
    const gf_backend_opts o = {.device = "cpu", .threads = 2};
    assert_int_equal(be_open(&be, &o), 0);
    static const size_t lens[] = {1, 7, 131109};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        const size_t n = lens[li];
        float *h[5], *want[3]; /* p, g, m, v, p_act; the reference's p, m, v */
        for (int k = 0; k < 5; k++) h[k] = calloc(n, sizeof(float));
        for (int k = 0; k < 3; k++) want[k] = calloc(n, sizeof(float));
        srand(7);
        for (size_t i = 0; i < n; i++) {
            h[0][i] = want[0][i] = (float)rand() / RAND_MAX - 0.5f;
            h[1][i] = ((float)rand() / RAND_MAX - 0.5f) * 0.01f;
        }
        gf_buf b[5];
        for (int k = 0; k < 5; k++) {
            assert_int_equal(be_alloc(be, &b[k], n, GF_F32), 0);
            assert_int_equal(be_upload(be, b[k], h[k], GF_F32, n), 0);
        }
        for (int step = 1; step <= 2; step++) {
            const gf_adamw a = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, step, step == 1 ? 1.0f : 0.7f};
            be_adamw(be, b[0], step == 2 ? b[4] : gf_none(), b[1], b[2], b[3], n, &a);
            const double bc1 = 1.0 - pow(a.beta1, step), bc2 = 1.0 - pow(a.beta2, step);
            const float decay = 1.0f - a.lr * a.weight_decay, step_size = (float)(a.lr / bc1),
                        inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
            for (size_t i = 0; i < n; i++) {
                const float gi = a.grad_scale == 1.0f ? h[1][i] : h[1][i] * a.grad_scale;
                want[0][i] *= decay;
                want[1][i] = a.beta1 * want[1][i] + (1.0f - a.beta1) * gi;
                want[2][i] = a.beta2 * want[2][i] + (1.0f - a.beta2) * gi * gi;
                want[0][i] -= step_size * want[1][i] / (sqrtf(want[2][i]) * inv_sqrt_bc2 + a.eps);
            }
        }
        for (int k = 0; k < 5; k++) assert_int_equal(be_download(be, h[k], GF_F32, b[k], n), 0);
        for (size_t i = 0; i < n; i++) assert_true(isfinite(h[0][i]) && isfinite(h[2][i]) && isfinite(h[3][i]));
        assert_memory_equal(h[0], want[0], n * sizeof(float));
        assert_memory_equal(h[2], want[1], n * sizeof(float));
        assert_memory_equal(h[3], want[2], n * sizeof(float));
        assert_memory_equal(h[4], want[0], n * sizeof(float)); /* the copy of step 2 */
        for (int k = 0; k < 5; k++) be_free(be, &b[k]), free(h[k]);
        for (int k = 0; k < 3; k++) free(want[k]);
    }
    be_close(be);
}

int main(void) {
    tb_device_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama),
        cmocka_unit_test(test_qwen2),
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_adamw_hand),
        cmocka_unit_test(test_adamw_cpu_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
