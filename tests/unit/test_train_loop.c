/* The training loop's parts: schedules, the tokens-to-target rule, uniform
 * selection, checkpoints (round trip, damaged files), the data loader (text,
 * JSON Lines, folders, held-out split, epoch order), teacher-sampled data
 * (blocks of sequences: the same tokens whatever order asks), and train_run end to end
 * on a tiny random model: KL distillation of a teacher into a perturbed copy
 * and hidden-state alignment of a GDN mixer both lower their losses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "data/train_data.h"
#include "eval/generate.h"
#include "optim/schedule.h"
#include "tokenizer/tokenizer.h"
#include "convert/build.h"
#include "train/checkpoint.h"
#include "train/race.h"
#include "train/trainer.h"
#include "be_util.h"
#include "check.h"
#include "model_util.h"

static uint64_t rs = 0x1234567ull;
static double urand(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }

static void test_schedule(void **s) {
    (void)s;
    lr_schedule c = {LR_COSINE, 10, 110, 0.1};
    assert_true(fabs(lr_factor(&c, 1) - 0.1) < 1e-12);
    assert_true(fabs(lr_factor(&c, 10) - 1.0) < 1e-12);
    assert_true(fabs(lr_factor(&c, 60) - 0.55) < 1e-12); /* half way: (1 + 0.1) / 2 */
    assert_true(fabs(lr_factor(&c, 110) - 0.1) < 1e-12);
    lr_schedule k = {LR_CONSTANT, 4, 100, 0};
    assert_true(fabs(lr_factor(&k, 2) - 0.5) < 1e-12 && lr_factor(&k, 50) == 1.0);
    lr_shape sh;
    assert_int_equal(lr_shape_parse("linear", &sh), -1);
    /* the global gradient norm over two spans (be_sumsq accumulates in double) */
    float g[3] = {3, 0, 4};
    gf_buf G = tb_f32(g, 3), acc = tb_new(GF_F64, NULL, GF_F64, 1);
    be_sumsq(be_default(), acc, G, 2);
    be_sumsq(be_default(), acc, gf_at(G, 2), 1);
    check_close(sqrt(tb_get_f64(acc)), 5.0, 1e-12, 0);
    tb_free(&G), tb_free(&acc);
}

/* be_sumsq over two 64K blocks and a tail of 13 (its running sums and their tail): against a long
 * double sum within 1e-11 relative (n = 131085 positive terms added in double: at most n * 2^-53
 * ~ 1.5e-11 of the sum in the worst order), and the same bits on 1 thread as on 2 */
static void test_sumsq_blocks(void **s) {
    (void)s;
    const size_t n = 2 * 65536 + 13;
    float *x = malloc(n * sizeof *x);
    long double want = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)((i * 2654435761u) % 20001) / 1000.0f - 10.0f;
        want += (long double)x[i] * x[i];
    }
    gf_buf X = tb_f32(x, n), a1 = tb_new(GF_F64, NULL, GF_F64, 1), a2 = tb_new(GF_F64, NULL, GF_F64, 1);
    be_set_threads(be_default(), 1);
    be_sumsq(be_default(), a1, X, n);
    be_set_threads(be_default(), 2);
    be_sumsq(be_default(), a2, X, n);
    be_set_threads(be_default(), 0);
    const double s1 = tb_get_f64(a1), s2 = tb_get_f64(a2);
    check_close(s1, (double)want, 0, 1e-11);
    assert_memory_equal(&s1, &s2, sizeof s1);
    tb_free(&X), tb_free(&a1), tb_free(&a2);
    free(x);
}

static void test_race_rule(void **s) {
    (void)s;
    /* baseline: loss 10 - step over 20 steps; other: twice as fast */
    curve c[2] = {0};
    for (int i = 1; i <= 20; i++) {
        curve_push(&c[0], 100.0 * i, 21.0 - i);
        curve_push(&c[1], 100.0 * i, fmax(1.0, 21.0 - 2 * i));
    }
    double target, ttt[2];
    int w;
    assert_int_equal(race_tokens_to_target(c, 2, 0, &target, ttt, &w), 0);
    assert_int_equal(w, 2);
    assert_true(fabs(target - 1.5) < 1e-12);    /* mean of 2 and 1 */
    assert_true(ttt[0] == 2000);                /* reaches it at its end */
    assert_true(ttt[1] == 1100); /* losses 3, 1 at steps 9, 10 (mean 2 > 1.5); 1, 1 at step 11 */
    curve_free(&c[0]);
    curve_free(&c[1]);
    /* easy first batches: a run whose first step is far below the target but whose full windows
     * never are does not reach it (a shorter-window mean at step 0 would say it did at 100) */
    curve e[2] = {0};
    for (int i = 1; i <= 20; i++) {
        curve_push(&e[0], 100.0 * i, 21.0 - i);
        curve_push(&e[1], 100.0 * i, i == 1 ? 0.1 : 5.0);
    }
    assert_int_equal(race_tokens_to_target(e, 2, 0, &target, ttt, &w), 0);
    assert_true(fabs(target - 1.5) < 1e-12);
    assert_true(ttt[1] == -1); /* its windows: (0.1 + 5) / 2 = 2.55, then 5: never at or below 1.5 */
    curve_free(&e[0]);
    curve_free(&e[1]);
    bool conv[28];
    race_uniform_convert(28, 0.25, conv);
    for (int l = 0; l < 28; l++) assert_int_equal(conv[l], l % 4 != 0);
}

static model_config tiny(void) {
    model_config c = {0};
    c.dim = 16, c.hidden_dim = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.head_dim = 4;
    c.vocab_size = 37, c.max_seq = 64, c.norm_eps = 1e-5f, c.rope_theta = 10000.0f;
    return c;
}

/* N(0, 0.3) weights, unit norms; noise > 0 perturbs every tensor by N(0, noise). */
static void fill_weights(float *x, size_t n, tensor_kind k, void *ud) {
    const double noise = ud ? *(const double *)ud : 0;
    const bool norm = k == TK_ATTN_NORM || k == TK_FFN_NORM || k == TK_FINAL_NORM;
    for (size_t i = 0; i < n; i++) x[i] = norm ? 1.0f : (float)(0.3 * nrand());
    for (size_t i = 0; noise > 0 && i < n; i++) x[i] += (float)(noise * nrand());
}

/* Flips one bit of the file at byte `at`. */
static void flip_bit(const char *path, long at, int bit) {
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    int c = fgetc(f);
    assert_true(c != EOF);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    fputc(c ^ (1 << bit), f);
    fclose(f);
}

/* Every checksum of a checkpoint: a flipped bit in the step counter, in a
 * weight, in a moment, in the checksum table, or a byte appended, is refused
 * with the bytes it covers; the file read back unflipped is accepted. */
static void test_checkpoint_checksums(void **s) {
    (void)s;
    model_config c = tiny();
    model m;
    model_random(&m, &c, fill_weights, NULL);
    transformer tm;
    assert_int_equal(tf_trainable(&tm, &m, NULL, NULL, NULL), 0);
    const param_layout *pl = &tm.layout;
    gf_buf M = tb_f32(NULL, pl->total), V = tb_f32(NULL, pl->total);
    train_blocks ck = {be_default(), pl, tm.master, M, V};
    train_state st = {.options_hash = 42, .step = 7, .tokens = 700, .data_cursor = 14, .seed = 3};
    curve_push(&st.loss, 100, 2.5);
    char path[] = "/tmp/graft_ckpt_sum_XXXXXX", copy[64];
    int fd = mkstemp(path);
    close(fd);
    snprintf(copy, sizeof copy, "%s.orig", path);
    assert_int_equal(checkpoint_write(path, &st, &ck), 0);
    assert_int_equal(rename(path, copy), 0);
    /* the layout of checkpoint.h: header, its checksum, three blocks, the table, its checksum */
    const long head = 8 + 8 + 32 + 4 + 8 + 16L * pl->n + 4 + 16 * 1 + 4;
    const long blocks = head + 32, table = blocks + 3L * (long)pl->total * 4;
    char cmd[320], want[160];
    struct { long at; const char *what; } cases[] = {
        {16, "the header (bytes 0..%ld"},                    /* the step counter's low byte */
        {blocks + (long)pl->t[2].off * 4 + 1, "(parameters), bytes %ld.."}, /* a weight */
        {blocks + ((long)pl->total + (long)pl->t[0].off) * 4 + 3, "(first moments), bytes %ld.."},
        {blocks + (2 * (long)pl->total + (long)pl->t[pl->n - 1].off) * 4, "(second moments), bytes %ld.."},
        {table + 5, "the table of tensor checksums (bytes %ld.."},
    };
    const long expect_at[] = {head - 1, blocks + (long)pl->t[2].off * 4, blocks + ((long)pl->total + (long)pl->t[0].off) * 4,
                              blocks + (2 * (long)pl->total + (long)pl->t[pl->n - 1].off) * 4, table};
    train_state got;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", copy, path);
        assert_int_equal(system(cmd), 0);
        flip_bit(path, cases[i].at, (int)i % 8);
        assert_int_equal(checkpoint_read(path, &got, &ck), -1);
        snprintf(want, sizeof want, cases[i].what, expect_at[i]);
        if (!strstr(gf_last_error(), want) || !strstr(gf_last_error(), "damaged checkpoint"))
            fail_msg("flip at %ld: '%s' lacks '%s'", cases[i].at, gf_last_error(), want);
    }
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf x >>'%s'", copy, path, path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(checkpoint_read(path, &got, &ck), -1);
    assert_non_null(strstr(gf_last_error(), "bytes after the checkpoint's end"));
    /* a file of the previous format (no checksums) is refused by name */
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf GRAFTCK2 | dd of='%s' conv=notrunc status=none", copy, path, path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(checkpoint_read(path, &got, &ck), -1);
    assert_non_null(strstr(gf_last_error(), "GRAFTCK2"));
    /* untouched: accepted */
    assert_int_equal(checkpoint_read(copy, &got, &ck), 0);
    assert_true(got.step == 7 && got.tokens == 700);
    train_state_free(&got);
    unlink(path);
    unlink(copy);
    train_state_free(&st);
    tb_free(&M), tb_free(&V);
    tf_free(&tm);
    model_free(&m);
}

static void test_checkpoint(void **s) {
    (void)s;
    model_config c = tiny();
    model m;
    model_random(&m, &c, fill_weights, NULL);
    transformer tm;
    assert_int_equal(tf_trainable(&tm, &m, NULL, NULL, NULL), 0);
    const param_layout *pl = &tm.layout;
    float *mh = malloc(pl->total * 4), *vh = malloc(pl->total * 4), *ph = malloc(pl->total * 4);
    for (size_t i = 0; i < pl->total; i++) mh[i] = (float)nrand(), vh[i] = (float)urand();
    gf_buf M = tb_f32(mh, pl->total), V = tb_f32(vh, pl->total);
    train_blocks ck = {be_default(), pl, tm.master, M, V};
    train_state st = {.options_hash = 42, .step = 7, .tokens = 700, .data_cursor = 14, .seed = 3};
    curve_push(&st.loss, 100, 2.5);
    curve_push(&st.eval, 700, 9.5);
    char path[] = "/tmp/graft_ckpt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    assert_int_equal(checkpoint_write(path, &st, &ck), 0);
    tb_get(ph, tm.master, pl->total);
    const float p0 = ph[pl->t[3].off + 5], poke = 99;
    be_upload(be_default(), gf_at(tm.master, pl->t[3].off + 5), &poke, GF_F32, 1);
    gf_buf M2 = tb_f32(NULL, pl->total), V2 = tb_f32(NULL, pl->total);
    train_blocks ck2 = {be_default(), pl, tm.master, M2, V2};
    train_state got;
    assert_int_equal(checkpoint_read(path, &got, &ck2), 0);
    assert_true(got.step == 7 && got.tokens == 700 && got.data_cursor == 14 && got.options_hash == 42);
    assert_true(got.loss.n == 1 && got.loss.xy[1] == 2.5 && got.eval.n == 1 && got.eval.xy[1] == 9.5);
    tb_get(ph, tm.master, pl->total);
    assert_true(ph[pl->t[3].off + 5] == p0);
    float *m2 = malloc(pl->total * 4), *v2 = malloc(pl->total * 4);
    tb_get(m2, M2, pl->total), tb_get(v2, V2, pl->total);
    assert_memory_equal(mh, m2, pl->total * 4);
    assert_memory_equal(vh, v2, pl->total * 4);
    train_state_free(&got);
    /* truncated */
    assert_int_equal(truncate(path, 200), 0);
    assert_int_equal(checkpoint_read(path, &got, &ck2), -1);
    assert_non_null(strstr(gf_last_error(), "truncated"));
    /* another model */
    param_layout other = *pl;
    other.n--;
    train_blocks ck3 = {be_default(), &other, tm.master, M, V};
    assert_int_equal(checkpoint_write(path, &st, &ck3), 0);
    assert_int_equal(checkpoint_read(path, &got, &ck2), -1);
    assert_non_null(strstr(gf_last_error(), "tensors"));
    unlink(path);
    train_state_free(&st);
    free(mh), free(vh), free(ph), free(m2), free(v2);
    tb_free(&M), tb_free(&V), tb_free(&M2), tb_free(&V2);
    tf_free(&tm);
    model_free(&m);
}

static void test_data_loader(void **s) {
    (void)s;
    const char *shared = getenv("GRAFT_SHARED");
    char tokp[512];
    snprintf(tokp, sizeof tokp, "%s/models/tinyllamas/stories260K/tok512.bin", shared ? shared : "/work/shared");
    tokenizer *tok;
    if (access(tokp, R_OK) != 0 || tokenizer_load_llama2c(&tok, tokp, 512) != 0) skip();
    char dir[] = "/tmp/graft_data_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p1[600], p2[600], p3[600];
    snprintf(p1, sizeof p1, "%s/a.txt", dir);
    snprintf(p2, sizeof p2, "%s/b.jsonl", dir);
    snprintf(p3, sizeof p3, "%s/c.bin", dir);
    FILE *f = fopen(p1, "w");
    for (int i = 0; i < 40; i++) fprintf(f, "Once upon a time there was a little cat named Tom. ");
    fclose(f);
    f = fopen(p2, "w");
    for (int i = 0; i < 30; i++) fprintf(f, "{\"text\": \"The dog ran to the park %d times.\", \"id\": %d}\n\n", i, i);
    fclose(f);
    f = fopen(p3, "w");
    fputs("ignored", f);
    fclose(f);
    train_data a, b, d;
    assert_int_equal(train_data_open(&a, p1, tok, 16, 0.1, 1), 0);
    assert_int_equal(train_data_open(&b, p2, tok, 16, 0.1, 1), 0);
    assert_int_equal(train_data_open(&d, dir, tok, 16, 0.1, 1), 0);
    /* the folder is both files in name order, packed together (one window may straddle them) */
    const int na = a.n_train + a.n_eval, nb = b.n_train + b.n_eval, nd = d.n_train + d.n_eval;
    assert_true(nd >= na + nb && nd <= na + nb + 1);
    assert_memory_equal(d.train, a.train, 16 * sizeof(int));
    assert_true(a.n_eval >= 1 && b.n_eval >= 1);
    assert_int_equal(b.train[0], tokenizer_bos(tok));
    /* an epoch visits every training window once; the next epoch in another order */
    int *seen = calloc((size_t)a.n_train, sizeof *seen), seq[16], first[16], again[16];
    for (long g = 0; g < a.n_train; g++) {
        assert_int_equal(train_data_get(&a, g, seq), 0);
        for (int i = 0; i < a.n_train; i++)
            if (memcmp(seq, a.train + (size_t)i * 16, sizeof seq) == 0) seen[i]++;
    }
    for (int i = 0; i < a.n_train; i++) assert_true(seen[i] >= 1);
    train_data_get(&b, 0, first);
    train_data_get(&b, b.n_train * 3 + 1, seq);
    train_data_get(&b, 0, again);
    assert_memory_equal(first, again, sizeof first); /* deterministic after another epoch */
    free(seen);
    train_data_free(&a);
    train_data_free(&b);
    train_data_free(&d);
    /* errors */
    f = fopen(p2, "w");
    fputs("{\"text\": \"fine\"}\n{\"txt\": 1}\n", f);
    fclose(f);
    assert_int_equal(train_data_open(&a, p2, tok, 4, 0.1, 1), -1);
    assert_non_null(strstr(gf_last_error(), ":2:"));
    assert_int_equal(train_data_open(&a, p1, tok, 100000, 0.1, 1), -1);
    assert_non_null(strstr(gf_last_error(), "at least 2"));
    assert_int_equal(train_data_open(&a, "/nonexistent/x.txt", tok, 16, 0.1, 1), -1);
    unlink(p1), unlink(p2), unlink(p3), rmdir(dir);
    tokenizer_free(tok);
}

/* A corpus of random token windows, built by hand. */
static void fake_data(train_data *d, int ctx, int n_train, int n_eval, int V) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx, d->n_train = n_train, d->n_eval = n_eval, d->perm_epoch = -1, d->seed = 5;
    d->train = malloc((size_t)n_train * ctx * sizeof(int));
    d->eval = malloc((size_t)n_eval * ctx * sizeof(int));
    d->perm = malloc((size_t)n_train * sizeof(int));
    for (int i = 0; i < n_train * ctx; i++) d->train[i] = (int)(urand() * V);
    for (int i = 0; i < n_eval * ctx; i++) d->eval[i] = (int)(urand() * V);
}

/* Teacher-sampled data: every sequence is BOS then ids of the vocabulary;
 * sequence g holds the same tokens whether it is asked for in order, alone or
 * out of order (it is sampled with the others of its block), and in a second
 * object with the same seed; held-out sequences too (10: a partial last
 * block); another seed gives other tokens. */
static void test_sampled_data(void **s) {
    (void)s;
    model_config c = tiny();
    c.bos_id = 1;
    model m;
    model_random(&m, &c, fill_weights, NULL);
    const int ctx = 12, n = 24;
    train_data a, b, other;
    assert_int_equal(train_data_sampled(&a, &m, ctx, 10, 7), 0);
    assert_int_equal(train_data_sampled(&b, &m, ctx, 10, 7), 0);
    assert_int_equal(train_data_sampled(&other, &m, ctx, 10, 8), 0);
    int *in_order = malloc((size_t)n * ctx * sizeof(int)), seq[12];
    for (int g = 0; g < n; g++) {
        assert_int_equal(train_data_get(&a, g, in_order + (size_t)g * ctx), 0);
        assert_int_equal(in_order[(size_t)g * ctx], 1);
        for (int t = 0; t < ctx; t++) assert_in_range(in_order[(size_t)g * ctx + t], 0, c.vocab_size - 1);
    }
    const int asks[] = {19, 3, 17, 23, 0, 9};
    for (size_t i = 0; i < sizeof asks / sizeof *asks; i++) {
        assert_int_equal(train_data_get(&b, asks[i], seq), 0);
        assert_memory_equal(seq, in_order + (size_t)asks[i] * ctx, sizeof seq);
    }
    /* block 1 (sequences 8..15) is generate_rows over their seeds, row for row */
    uint64_t seeds[TRAIN_DATA_SAMPLE_BLOCK];
    int rows[TRAIN_DATA_SAMPLE_BLOCK * 12];
    for (int i = 0; i < TRAIN_DATA_SAMPLE_BLOCK; i++) seeds[i] = train_data_sample_seed(&a, TRAIN_DATA_SAMPLE_BLOCK + i);
    assert_int_equal(generate_rows(&m, 1, TRAIN_DATA_SAMPLE_BLOCK, ctx, 1.0, seeds, rows), 0);
    assert_memory_equal(rows, in_order + (size_t)TRAIN_DATA_SAMPLE_BLOCK * ctx, sizeof rows);
    for (int i = 0; i < 10; i++) {
        assert_memory_equal(train_data_eval(&a, i), train_data_eval(&b, i), sizeof seq);
        assert_int_equal(train_data_eval(&a, i)[0], 1);
    }
    int differ = 0;
    for (int g = 0; g < n; g++) {
        assert_int_equal(train_data_get(&other, g, seq), 0);
        differ += memcmp(seq, in_order + (size_t)g * ctx, sizeof seq) != 0;
    }
    assert_true(differ > n / 2);
    free(in_order);
    train_data_free(&a);
    train_data_free(&b);
    train_data_free(&other);
    model_free(&m);
}

static void test_kl_distillation(void **s) {
    (void)s;
    model_config c = tiny();
    model tm_, sm_;
    uint64_t keep = rs;
    model_random(&tm_, &c, fill_weights, NULL);
    rs = keep; /* the same draws, then the perturbation */
    double noise = 0.15;
    model_random(&sm_, &c, fill_weights, &noise);
    transformer teacher, student;
    assert_int_equal(tf_view(&teacher, &tm_, NULL, NULL, NULL), 0);
    assert_int_equal(tf_trainable(&student, &sm_, NULL, NULL, NULL), 0);
    train_data d;
    fake_data(&d, 12, 32, 4, c.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_KL);
    o.ctx = 12, o.batch = 2, o.accum = 2, o.tokens = 12 * 4 * 60, o.lr_mixer = 1e-2, o.lr_rest = 1e-2;
    train_result r;
    assert_int_equal(train_run(&o, &student, &teacher, &d, NULL, &r), 0);
    assert_int_equal(r.st.step, 60);
    assert_int_equal(r.st.loss.n, 60);
    const double first = r.st.loss.xy[1], last = r.st.loss.xy[2 * 59 + 1];
    assert_true(last < 0.5 * first);
    train_result_free(&r);
    /* gradient accumulation: one micro-batch of 4 and 4 micro-batches of 1 give
     * the same curve up to float32 summation order (the batched backward sums
     * 48 rows in one GEMM, the other adds four of 12): 1e-5 relative */
    transformer s1, s2;
    assert_int_equal(tf_trainable(&s1, &sm_, NULL, NULL, NULL), 0);
    assert_int_equal(tf_trainable(&s2, &sm_, NULL, NULL, NULL), 0);
    train_result r1, r2;
    o.tokens = 12 * 4 * 5;
    o.batch = 4, o.accum = 1;
    assert_int_equal(train_run(&o, &s1, &teacher, &d, NULL, &r1), 0);
    o.batch = 1, o.accum = 4;
    assert_int_equal(train_run(&o, &s2, &teacher, &d, NULL, &r2), 0);
    assert_int_equal(r1.st.loss.n, 5);
    assert_int_equal(r2.st.loss.n, 5);
    for (int i = 0; i < 10; i++) check_close(r1.st.loss.xy[i], r2.st.loss.xy[i], 0, 1e-5);
    const size_t n = s1.layout.total;
    float *p1 = malloc(n * 4), *p2 = malloc(n * 4);
    tb_get(p1, s1.master, n), tb_get(p2, s2.master, n);
    check_err(max_abs_diff_ff(p1, p2, n), 1e-5); /* 5 AdamW steps of lr 1e-2 on O(0.3) values */
    /* the same micro-batching twice: bit for bit */
    transformer s3;
    train_result r3;
    assert_int_equal(tf_trainable(&s3, &sm_, NULL, NULL, NULL), 0);
    assert_int_equal(train_run(&o, &s3, &teacher, &d, NULL, &r3), 0);
    tb_get(p1, s3.master, n);
    assert_memory_equal(p1, p2, n * 4);
    for (int i = 0; i < 10; i++) assert_true(r3.st.loss.xy[i] == r2.st.loss.xy[i]);
    free(p1), free(p2);
    train_result_free(&r1);
    train_result_free(&r2);
    train_result_free(&r3);
    tf_free(&s1);
    tf_free(&s2);
    tf_free(&s3);
    /* every group frozen is refused */
    o.lr_mixer = o.lr_rest = 0;
    assert_int_equal(train_run(&o, &student, &teacher, &d, NULL, &r), -1);
    train_data_free(&d);
    tf_free(&student);
    tf_free(&teacher);
    model_free(&tm_);
    model_free(&sm_);
}

static void test_gdn_alignment(void **s) {
    (void)s;
    model_config c = tiny();
    model m;
    model_random(&m, &c, fill_weights, NULL);
    /* layer 1 becomes a randomly initialized GDN layer (engine/student's random init) */
    student st;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    set.seed = 3;
    assert_int_equal(student_init_empty(&st, &m, &set), 0);
    bool conv[2] = {false, true};
    assert_int_equal(student_build_layers(&st, conv, NULL, NULL, NULL), 0);
    mixer_kind kinds[2] = {MIX_ATTN, MIX_GDN};
    transformer teacher, student;
    assert_int_equal(tf_view(&teacher, &m, NULL, NULL, NULL), 0);
    assert_int_equal(tf_trainable(&student, &m, &st.gcfg, kinds, st.gdn), 0);
    assert_int_equal(tf_n_gdn(&student), 1);
    train_data d;
    fake_data(&d, 16, 16, 2, c.vocab_size);
    train_opts o;
    train_opts_default(&o, PHASE_ALIGN);
    o.ctx = 16, o.batch = 2, o.tokens = 16 * 2 * 60, o.lr_mixer = 1e-2;
    float emb0, emb1;
    tb_get(&emb0, student.master, 1);
    train_result r;
    assert_int_equal(train_run(&o, &student, &teacher, &d, NULL, &r), 0);
    const double first = r.st.loss.xy[1], last = r.st.loss.xy[2 * (r.st.loss.n - 1) + 1];
    assert_true(last < 0.7 * first);
    tb_get(&emb1, student.master, 1);
    assert_true(emb1 == emb0); /* only GDN parameters train in phase align */
    train_result_free(&r);
    train_data_free(&d);
    tf_free(&student);
    tf_free(&teacher);
    student_free(&st);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule), cmocka_unit_test(test_sumsq_blocks),        cmocka_unit_test(test_race_rule),
        cmocka_unit_test(test_checkpoint),      cmocka_unit_test(test_data_loader),
        cmocka_unit_test(test_sampled_data),    cmocka_unit_test(test_kl_distillation),
        cmocka_unit_test(test_gdn_alignment),   cmocka_unit_test(test_checkpoint_checksums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
