/* The teacher forward pass against transformers (float64 goldens written by
 * tests/ref/hf_reference.py for the fixtures of tests/ref/make_hf_fixtures.py).
 *
 * Tolerances (graft computes in float32 with OpenBLAS; the goldens are float64;
 * tests/ref/README.md measured float32 rounding at 3e-6..1.2e-5 on logits of
 * magnitude ~5): logits 2e-4 absolute, mean distance 1e-4 absolute, entropy
 * 1e-5 absolute, output RMS 1e-5 relative, concentration 1e-4 absolute, RoPE
 * frequencies 1e-9 relative (computed in double). Real bugs (wrong RoPE pairs,
 * missing bias or q/k norm, wrong eps) show errors of 2e-3 to 8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "model/forward.h"
#include "ops/ops.h"

static double num(const cJSON *a, int i) { return cJSON_GetArrayItem(a, i)->valuedouble; }

static void check_fixture(const char *name) {
    const char *root = getenv("GRAFT_ROOT");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hf/%s", root ? root : ".", name);
    snprintf(path, sizeof path, "%s/golden.json", dir);
    char *text = read_text_file(path, NULL);
    assert_non_null(text);
    cJSON *g = cJSON_Parse(text);
    free(text);
    assert_non_null(g);

    model m;
    if (model_load(&m, dir, NULL) != 0) fail_msg("%s: %s", name, gf_last_error());
    const model_config *c = &m.cfg;
    const int V = c->vocab_size, L = c->n_layers, H = c->n_heads;

    /* RoPE frequencies, scaling included */
    const cJSON *freq = cJSON_GetObjectItem(g, "rope_inv_freq");
    double *inv = malloc((size_t)(c->head_dim / 2) * sizeof *inv);
    rope_inv_freq(inv, c);
    assert_int_equal(cJSON_GetArraySize(freq), c->head_dim / 2);
    for (int i = 0; i < c->head_dim / 2; i++) assert_true(fabs(inv[i] / num(freq, i) - 1) < 1e-8);
    free(inv);

    const cJSON *ids = cJSON_GetObjectItem(g, "token_ids"), *logits = cJSON_GetObjectItem(g, "logits");
    const int S = cJSON_GetArraySize(ids), T = cJSON_GetArraySize(cJSON_GetArrayItem(ids, 0));
    forward_ctx fc;
    assert_int_equal(forward_ctx_init(&fc, &m, T), 0);
    attn_stats st;
    attn_stats_init(&st, L, H);
    int *tok = malloc((size_t)T * sizeof *tok);
    float *lg = malloc((size_t)T * V * sizeof *lg);
    double max_logit_err = 0;
    for (int s = 0; s < S; s++) {
        const cJSON *row = cJSON_GetArrayItem(ids, s);
        for (int t = 0; t < T; t++) tok[t] = (int)num(row, t);
        assert_int_equal(model_forward(&fc, tok, T, 0, &st, NULL), 0);
        model_logits(&fc, 0, T, lg);
        const cJSON *gs = cJSON_GetArrayItem(logits, s);
        for (int t = 0; t < T; t++) {
            const cJSON *gt = cJSON_GetArrayItem(gs, t);
            for (int v = 0; v < V; v++) {
                double e = fabs(lg[(size_t)t * V + v] - num(gt, v));
                if (e > max_logit_err) max_logit_err = e;
            }
        }
    }
    const cJSON *gstat = cJSON_GetObjectItem(g, "attention_stats");
    double err_d = 0, err_e = 0, err_r = 0, err_c = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            double d = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "mean_distance"), l), h);
            double e = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "entropy"), l), h);
            double r = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "output_rms"), l), h);
            double cc = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "concentration"), l), h);
            err_d = fmax(err_d, fabs(attn_stats_mean_distance(&st, l, h) - d));
            err_e = fmax(err_e, fabs(attn_stats_entropy(&st, l, h) - e));
            err_r = fmax(err_r, fabs(attn_stats_output_rms(&st, l, h) / r - 1));
            err_c = fmax(err_c, fabs(attn_stats_concentration(&st, l, h) - cc));
        }
    print_message("%-6s max |logit err| %.2e  distance %.2e  entropy %.2e  rms(rel) %.2e  concentration %.2e\n", name,
                  max_logit_err, err_d, err_e, err_r, err_c);
    assert_true(max_logit_err < 2e-4);
    assert_true(err_d < 1e-4);
    assert_true(err_e < 1e-5);
    assert_true(err_r < 1e-5);
    assert_true(err_c < 1e-4);
    free(tok);
    free(lg);
    attn_stats_free(&st);
    forward_ctx_free(&fc);
    model_free(&m);
    cJSON_Delete(g);
}

static void llama_bf16_tied_llama3_rope(void **s) { (void)s; check_fixture("llama"); }
static void qwen2_f16_sharded_biases(void **s) { (void)s; check_fixture("qwen2"); }
static void qwen3_f32_qk_norm(void **s) { (void)s; check_fixture("qwen3"); }

/* Generation with the KV cache must match the whole-sequence pass row by row. */
static void incremental_matches_whole(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    model m;
    if (model_load(&m, dir, NULL) != 0) fail_msg("%s", gf_last_error());
    const int T = 12, V = m.cfg.vocab_size;
    int tok[12];
    for (int t = 0; t < T; t++) tok[t] = (t * 37 + 5) % V;
    forward_ctx whole, inc;
    assert_int_equal(forward_ctx_init(&whole, &m, T), 0);
    assert_int_equal(forward_ctx_init(&inc, &m, T), 0);
    float *a = malloc((size_t)T * V * sizeof *a), *b = malloc((size_t)V * sizeof *b);
    assert_int_equal(model_forward(&whole, tok, T, 0, NULL, NULL), 0);
    model_logits(&whole, 0, T, a);
    /* a prefix of 5 tokens, then one at a time */
    assert_int_equal(model_forward(&inc, tok, 5, 0, NULL, NULL), 0);
    for (int t = 5; t < T; t++) {
        assert_int_equal(model_forward(&inc, tok + t, 1, t, NULL, NULL), 0);
        model_logits(&inc, 0, 1, b);
        for (int v = 0; v < V; v++) assert_true(fabs(b[v] - a[(size_t)t * V + v]) < 1e-4);
    }
    /* positions past the cache are refused */
    assert_int_equal(model_forward(&inc, tok, 1, T, NULL, NULL), -1);
    free(a);
    free(b);
    forward_ctx_free(&whole);
    forward_ctx_free(&inc);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama_bf16_tied_llama3_rope),
        cmocka_unit_test(qwen2_f16_sharded_biases),
        cmocka_unit_test(qwen3_f32_qk_norm),
        cmocka_unit_test(incremental_matches_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
