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
#include "eval/generate.h"
#include "formats/model_load.h"
#include "model/rope.h"
#include "model/transformer.h"
#include "stats/attn_stats.h"
#include "be_util.h"
#include "check.h"

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
    for (int i = 0; i < c->head_dim / 2; i++) check_close(inv[i], num(freq, i), 0, 1e-8); /* double */
    free(inv);

    const cJSON *ids = cJSON_GetObjectItem(g, "token_ids"), *logits = cJSON_GetObjectItem(g, "logits");
    const int S = cJSON_GetArraySize(ids), T = cJSON_GetArraySize(cJSON_GetArrayItem(ids, 0));
    /* all sequences in one batched forward, statistics on the way */
    transformer tf;
    assert_int_equal(tf_view(&tf, &m, NULL, NULL, NULL), 0);
    tf_run *run;
    const tf_run_opts ro = {.B = S, .T = T, .stats = true, .logit_rows = S * T};
    assert_int_equal(tf_run_open(&run, &tf, &ro), 0);
    attn_stats st;
    attn_stats_init(&st, L, H);
    int *tok = malloc((size_t)S * T * sizeof *tok);
    float *lg = malloc((size_t)S * T * V * sizeof *lg);
    double *want = malloc((size_t)S * T * V * sizeof *want);
    for (int s = 0; s < S; s++)
        for (int t = 0; t < T; t++) {
            tok[s * T + t] = (int)num(cJSON_GetArrayItem(ids, s), t);
            const cJSON *gt = cJSON_GetArrayItem(cJSON_GetArrayItem(logits, s), t);
            for (int v = 0; v < V; v++) want[((size_t)s * T + t) * V + v] = num(gt, v);
        }
    assert_int_equal(tf_forward(run, tok, S, T, 0, NULL), 0);
    const gf_buf lbuf = tf_run_logits(run, NULL);
    tf_logits(run, 0, S * T, lbuf);
    tb_get(lg, lbuf, (size_t)S * T * V);
    const double max_logit_err = max_abs_diff_fd(lg, want, (size_t)S * T * V);
    double *sums = malloc((size_t)L * H * GF_STAT_COUNT * sizeof *sums);
    long rows;
    assert_int_equal(tf_run_stats(run, sums, &rows), 0);
    attn_stats_add(&st, sums, rows);
    free(sums);
    free(want);
    const cJSON *gstat = cJSON_GetObjectItem(g, "attention_stats");
    /* max errors; a NaN anywhere makes the maximum Inf (so the checks below fail) */
    double err_d = 0, err_e = 0, err_r = 0, err_c = 0;
#define WORST(acc, e) acc = isfinite(e) ? ((e) > acc ? (e) : acc) : INFINITY
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            double d = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "mean_distance"), l), h);
            double e = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "entropy"), l), h);
            double r = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "output_rms"), l), h);
            double cc = num(cJSON_GetArrayItem(cJSON_GetObjectItem(gstat, "concentration"), l), h);
            WORST(err_d, fabs(attn_stats_mean_distance(&st, l, h) - d));
            WORST(err_e, fabs(attn_stats_entropy(&st, l, h) - e));
            WORST(err_r, fabs(attn_stats_output_rms(&st, l, h) / r - 1));
            WORST(err_c, fabs(attn_stats_concentration(&st, l, h) - cc));
        }
#undef WORST
    print_message("%-6s max |logit err| %.2e  distance %.2e  entropy %.2e  rms(rel) %.2e  concentration %.2e\n", name,
                  max_logit_err, err_d, err_e, err_r, err_c);
    check_err(max_logit_err, 2e-4);
    check_err(err_d, 1e-4);
    check_err(err_e, 1e-5);
    check_err(err_r, 1e-5);
    check_err(err_c, 1e-4);
    free(tok);
    free(lg);
    attn_stats_free(&st);
    tf_run_close(run);
    tf_free(&tf);
    model_free(&m);
    cJSON_Delete(g);
}

static void llama_bf16_tied_llama3_rope(void **s) { (void)s; check_fixture("llama"); }
static void qwen2_f16_sharded_biases(void **s) { (void)s; check_fixture("qwen2"); }
static void qwen3_f32_qk_norm(void **s) { (void)s; check_fixture("qwen3"); }

/* Generation with the KV cache must match the whole-sequence pass row by row
 * (float32, different summation orders: 1e-4 absolute on logits ~5). */
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
    transformer tf;
    assert_int_equal(tf_view(&tf, &m, NULL, NULL, NULL), 0);
    tf_run *whole, *inc;
    const tf_run_opts wo = {.B = 1, .T = T, .logit_rows = T}, io = {.B = 1, .T = 5, .S = T, .decode = true};
    assert_int_equal(tf_run_open(&whole, &tf, &wo), 0);
    assert_int_equal(tf_run_open(&inc, &tf, &io), 0);
    float *a = malloc((size_t)T * V * sizeof *a), *b = malloc((size_t)V * sizeof *b);
    assert_int_equal(tf_forward(whole, tok, 1, T, 0, NULL), 0);
    tf_logits(whole, 0, T, tf_run_logits(whole, NULL));
    tb_get(a, tf_run_logits(whole, NULL), (size_t)T * V);
    /* a prefix of 5 tokens, then one at a time */
    assert_int_equal(tf_forward(inc, tok, 1, 5, 0, NULL), 0);
    for (int t = 5; t < T; t++) {
        assert_int_equal(tf_forward(inc, tok + t, 1, 1, t, NULL), 0);
        tf_logits(inc, 0, 1, tf_run_logits(inc, NULL));
        tb_get(b, tf_run_logits(inc, NULL), (size_t)V);
        check_err(max_abs_diff_ff(b, a + (size_t)t * V, (size_t)V), 1e-4);
    }
    /* positions past the cache are refused */
    assert_int_equal(tf_forward(inc, tok, 1, 1, T, NULL), -1);
    free(a);
    free(b);
    tf_run_close(whole);
    tf_run_close(inc);
    tf_free(&tf);
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
