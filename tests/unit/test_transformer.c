/* The one transformer (engine/model/transformer.h) beyond the goldens:
 * - a hybrid student's chunked prefill + token-by-token decode (KV cache for
 *   attention layers, recurrent state + conv history for GDN layers) gives
 *   the logits of one full chunked forward;
 * - a decode run refuses positions that do not continue its state;
 * - `graft train --strategy manual:..` and `graft convert --init random` build the same
 *   GDN parameters from the same seed (one random-init path);
 * - training with GDN layers on two threads is bit-reproducible;
 * - recomputing activations in the backward (tf_run_opts.recompute) trains
 *   the same bits in less memory, whatever layers share its one set;
 * - out of memory is an error with one line, not an abort;
 * - KV-cache bytes per token count only attention layers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/train_cli.h"
#include "core/error.h"
#include "formats/model_load.h"
#include "convert/build.h"
#include "train/trainer.h"
#include "be_util.h"
#include "check.h"
#include "model_util.h"

static void load(model *m, const char *name) {
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/%s", root ? root : ".", name);
    if (model_load(m, p, NULL) != 0) fail_msg("%s", gf_last_error());
}

/* A random-init student of m with GDN layers `mask` (conv and q/k/v biases on). */
static void random_student(student *s, model *m, const bool *mask, uint64_t seed) {
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    set.seed = seed;
    set.conv = 1;
    set.qkv_bias = 1;
    set.chunk = 16;
    assert_int_equal(student_init_empty(s, m, &set), 0);
    assert_int_equal(student_build_layers(s, mask, NULL, NULL, NULL), 0);
    assert_int_equal(student_set_gdn(s, mask), 0);
}

/* Chunked prefill of 21 tokens (two chunks of 16), then 19 tokens one at a
 * time, against one forward of all 40 (chunks 16, 16, 8). Float32 through
 * different chunk boundaries and summation orders: 2e-4 absolute on logits of
 * magnitude ~5 (the teacher goldens' tolerance). */
static void hybrid_decode_matches_full_forward(void **state) {
    (void)state;
    model m;
    load(&m, "qwen2");
    student s;
    bool mask[2] = {false, true};
    random_student(&s, &m, mask, 11);
    const int T = 40, P = 21, V = m.cfg.vocab_size;
    int tok[40];
    for (int t = 0; t < T; t++) tok[t] = (t * 29 + 3) % V;
    tf_run *full, *dec;
    const tf_run_opts fo = {.B = 1, .T = T, .logit_rows = T}, dopt = {.B = 1, .T = P, .S = T, .decode = true};
    assert_int_equal(tf_run_open(&full, &s.tf, &fo), 0);
    assert_int_equal(tf_run_open(&dec, &s.tf, &dopt), 0);
    float *want = malloc((size_t)T * V * sizeof *want), *got = malloc((size_t)V * sizeof *got);
    assert_int_equal(tf_forward(full, tok, 1, T, 0, NULL), 0);
    tf_logits(full, 0, T, tf_run_logits(full, NULL));
    tb_get(want, tf_run_logits(full, NULL), (size_t)T * V);
    assert_int_equal(tf_forward(dec, tok, 1, P, 0, NULL), 0);
    tf_logits(dec, P - 1, 1, tf_run_logits(dec, NULL));
    tb_get(got, tf_run_logits(dec, NULL), (size_t)V);
    check_err(max_abs_diff_ff(got, want + (size_t)(P - 1) * V, (size_t)V), 2e-4);
    double worst_err = 0;
    for (int t = P; t < T; t++) {
        assert_int_equal(tf_forward(dec, tok + t, 1, 1, t, NULL), 0);
        tf_logits(dec, 0, 1, tf_run_logits(dec, NULL));
        tb_get(got, tf_run_logits(dec, NULL), (size_t)V);
        worst_err = worst(worst_err, max_abs_diff_ff(got, want + (size_t)t * V, (size_t)V));
    }
    print_message("decode vs full forward: max |logit err| %.2e over %d steps\n", worst_err, T - P);
    check_err(worst_err, 2e-4);
    assert_true(max_abs_f(want, (size_t)T * V) > 0.1); /* not trivially zero */
    /* positions must continue the state */
    assert_int_equal(tf_forward(dec, tok, 1, 1, 5, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "does not continue"));
    /* restarting at 0 resets the state: the prefill again gives the same logits */
    assert_int_equal(tf_forward(dec, tok, 1, P, 0, NULL), 0);
    tf_logits(dec, P - 1, 1, tf_run_logits(dec, NULL));
    tb_get(got, tf_run_logits(dec, NULL), (size_t)V);
    check_err(max_abs_diff_ff(got, want + (size_t)(P - 1) * V, (size_t)V), 2e-4);
    /* KV cache: only the attention layer holds one */
    assert_int_equal(tf_kv_bytes_per_token(&s.tf), 2 * (size_t)m.cfg.n_kv_heads * m.cfg.head_dim * 4);
    free(want);
    free(got);
    tf_run_close(full);
    tf_run_close(dec);
    student_free(&s);
    model_free(&m);
}

/* The same seed builds bit-identical GDN parameters through graft train
 * --strategy manual:1 (cli_student_build) and graft convert --init random
 * (student_build_layers): one random-init path. */
static void random_init_is_one_path(void **state) {
    (void)state;
    model m;
    load(&m, "llama");
    train_cli tc;
    train_cli_default(&tc);
    tc.strategy = "manual:1"; /* layer 1 keeps attention: 0 and 2 convert */
    cli_student cs;
    assert_int_equal(cli_student_build(&cs, &m, &tc, "random", 7), 0);
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    set.seed = 7;
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    bool mask[3] = {true, false, true};
    assert_int_equal(student_build_layers(&s, mask, NULL, NULL, NULL), 0);
    const size_t n = gdn_param_count(&s.gcfg);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    int checked = 0;
    for (int l = 0; l < 3; l++) {
        const param_entry *e = param_layout_find(&cs.tm.layout, l, TK_GDN);
        assert_true((e != NULL) == mask[l]);
        if (!e) continue;
        assert_int_equal(e->n, n);
        tb_get(a, gf_at(cs.tm.master, e->off), n);
        tb_get(b, s.gdn[l], n);
        assert_memory_equal(a, b, n * sizeof *a);
        checked++;
    }
    assert_int_equal(checked, 2);
    /* another seed differs */
    cli_student other;
    assert_int_equal(cli_student_build(&other, &m, &tc, "random", 8), 0);
    tb_get(a, gf_at(other.tm.master, param_layout_find(&other.tm.layout, 0, TK_GDN)->off), n);
    tb_get(b, s.gdn[0], n);
    assert_true(memcmp(a, b, n * sizeof *a) != 0);
    free(a);
    free(b);
    cli_student_free(&other);
    cli_student_free(&cs);
    student_free(&s);
    model_free(&m);
}

static void fake_data(train_data *d, int ctx, int n_train, int V) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx, d->n_train = n_train, d->n_eval = 2, d->perm_epoch = -1, d->seed = 5;
    d->train = malloc((size_t)n_train * ctx * sizeof(int));
    d->eval = malloc((size_t)2 * ctx * sizeof(int));
    d->perm = malloc((size_t)n_train * sizeof(int));
    for (int i = 0; i < n_train * ctx; i++) d->train[i] = (i * 7919 + 13) % V;
    for (int i = 0; i < 2 * ctx; i++) d->eval[i] = (i * 104729 + 5) % V;
}

/* Training with GDN layers (conv, biases) on a two-thread backend twice from
 * the same start: the same bits (every reduction in a fixed order). T = 80
 * spans several GDN chunks and two attention query blocks. */
static void training_is_bit_reproducible(void **state) {
    (void)state;
    gf_backend *be;
    const gf_backend_opts bo = {"cpu", 2, false};
    assert_int_equal(be_open(&be, &bo), 0);
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    model m;
    const model_load_opts lo = {NULL, be};
    assert_int_equal(model_load(&m, p, &lo), 0);
    student s;
    bool mask[2] = {false, true};
    random_student(&s, &m, mask, 3);
    mixer_kind kinds[2] = {MIX_ATTN, MIX_GDN};
    train_data d;
    fake_data(&d, 80, 8, m.cfg.vocab_size);
    float *bits[2];
    double losses[2][4];
    for (int run = 0; run < 2; run++) {
        transformer teacher, st;
        assert_int_equal(tf_view(&teacher, &m, NULL, NULL, NULL), 0);
        assert_int_equal(tf_trainable(&st, &m, &s.gcfg, kinds, s.gdn), 0);
        train_opts o;
        train_opts_default(&o, PHASE_KL);
        o.ctx = 80, o.batch = 2, o.accum = 2, o.tokens = 80 * 4 * 4, o.lr_mixer = 1e-3, o.lr_rest = 1e-3;
        train_result r;
        assert_int_equal(train_run(&o, &st, &teacher, &d, NULL, &r), 0);
        assert_int_equal(r.st.loss.n, 4);
        for (int i = 0; i < 4; i++) losses[run][i] = r.st.loss.xy[2 * i + 1];
        bits[run] = malloc(st.layout.total * sizeof(float));
        assert_int_equal(be_download(be, bits[run], GF_F32, st.master, st.layout.total), 0);
        if (run == 1) assert_memory_equal(bits[0], bits[1], st.layout.total * sizeof(float));
        train_result_free(&r);
        tf_free(&st);
        tf_free(&teacher);
    }
    for (int i = 0; i < 4; i++) assert_true(losses[0][i] == losses[1][i] && isfinite(losses[0][i]));
    free(bits[0]);
    free(bits[1]);
    train_data_free(&d);
    student_free(&s);
    model_free(&m);
    be_close(be);
}

/* Four steps of KL training of fixture `name` with GDN layers `mask` (NULL:
 * every layer attention) on a two-thread backend: the master weights and the
 * step losses. */
static void train_four_steps(const char *name, const bool *mask, bool recompute, float **bits, size_t *n,
                             double losses[4]) {
    gf_backend *be;
    const gf_backend_opts bo = {"cpu", 2, false};
    assert_int_equal(be_open(&be, &bo), 0);
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/%s", root ? root : ".", name);
    model m;
    const model_load_opts lo = {NULL, be};
    assert_int_equal(model_load(&m, p, &lo), 0);
    const int L = m.cfg.n_layers;
    student s;
    mixer_kind kinds[8];
    assert_true(L <= 8);
    for (int l = 0; l < L; l++) kinds[l] = mask && mask[l] ? MIX_GDN : MIX_ATTN;
    if (mask) random_student(&s, &m, mask, 3);
    transformer teacher, st;
    assert_int_equal(tf_view(&teacher, &m, NULL, NULL, NULL), 0);
    assert_int_equal(tf_trainable(&st, &m, mask ? &s.gcfg : NULL, mask ? kinds : NULL, mask ? s.gdn : NULL), 0);
    train_data d;
    fake_data(&d, 80, 8, m.cfg.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = 80, o.batch = 2, o.tokens = 80 * 2 * 4, o.lr_mixer = 1e-3, o.lr_rest = 1e-3, o.recompute = recompute;
    train_result r;
    assert_int_equal(train_run(&o, &st, &teacher, &d, NULL, &r), 0);
    assert_int_equal(r.st.loss.n, 4);
    for (int i = 0; i < 4; i++) losses[i] = r.st.loss.xy[2 * i + 1];
    *n = st.layout.total;
    *bits = malloc(*n * sizeof(float));
    assert_int_equal(be_download(be, *bits, GF_F32, st.master, *n), 0);
    /* the run's own size: one set of layer activations instead of L */
    const tf_run_opts ro = {.B = 2, .T = 80, .train = true, .recompute = recompute};
    const bool dev = !be_is_host(be);
    const size_t with = tf_run_measure(&m.cfg, mask ? &s.gcfg : NULL, mask ? kinds : NULL, &ro, be_act(be), dev);
    const tf_run_opts plain = {.B = 2, .T = 80, .train = true};
    const size_t without = tf_run_measure(&m.cfg, mask ? &s.gcfg : NULL, mask ? kinds : NULL, &plain, be_act(be), dev);
    assert_true(recompute ? with < without : with == without);
    train_result_free(&r);
    train_data_free(&d);
    tf_free(&st);
    tf_free(&teacher);
    if (mask) student_free(&s);
    model_free(&m);
    be_close(be);
}

/* Recompute against keeping every layer's activations: the same bits after
 * four steps (the CPU backend's kernels are deterministic, so the recomputed
 * forward equals the first), with attention layers sharing the one set
 * (llama: attention, GDN, attention; qwen3: both attention, q/k norms), GDN
 * layers sharing it (llama: GDN, attention, GDN) and a GDN + attention mix
 * with conv and biases (qwen2). */
static void recompute_trains_the_same_bits(void **state) {
    (void)state;
    static const bool aga[3] = {false, true, false}, gag[3] = {true, false, true}, ag[2] = {false, true};
    const struct {
        const char *name;
        const bool *mask;
    } cases[] = {{"llama", aga}, {"llama", gag}, {"qwen3", NULL}, {"qwen2", ag}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        float *bits[2];
        size_t n[2];
        double losses[2][4];
        for (int rc = 0; rc < 2; rc++) train_four_steps(cases[c].name, cases[c].mask, rc == 1, &bits[rc], &n[rc], losses[rc]);
        assert_int_equal(n[0], n[1]);
        for (int i = 0; i < 4; i++) assert_true(losses[0][i] == losses[1][i] && isfinite(losses[0][i]));
        assert_memory_equal(bits[0], bits[1], n[0] * sizeof(float));
        free(bits[0]);
        free(bits[1]);
    }
}

/* Activations that cannot fit are refused with one line naming the size. */
static void out_of_memory_is_an_error(void **state) {
    (void)state;
    model m;
    load(&m, "llama");
    transformer tf;
    assert_int_equal(tf_trainable(&tf, &m, NULL, NULL, NULL), 0);
    tf_run *r = NULL;
    const tf_run_opts o = {.B = 1 << 12, .T = 1 << 14, .train = true}; /* ~ 64M rows: terabytes */
    assert_int_equal(tf_run_open(&r, &tf, &o), -1);
    assert_null(r);
    assert_non_null(strstr(gf_last_error(), "out of memory"));
    assert_null(strchr(gf_last_error(), '\n'));
    gf_buf b;
    assert_int_equal(be_alloc(be_default(), &b, (size_t)1 << 50, GF_F32), -1);
    assert_non_null(strstr(gf_last_error(), "GiB asked"));
    tf_free(&tf);
    model_free(&m);
}

int main(void) {
    tb_device_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hybrid_decode_matches_full_forward),
        cmocka_unit_test(random_init_is_one_path),
        cmocka_unit_test(training_is_bit_reproducible),
        cmocka_unit_test(recompute_trains_the_same_bits),
        cmocka_unit_test(out_of_memory_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
