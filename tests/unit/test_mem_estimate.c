/* The device-memory estimate (engine/memory/estimate.h) against hand counts
 * at two shapes, the refusal line, and GRAFT_MEM_LIMIT's parsing. Pure
 * arithmetic: nothing is allocated, so the 1.5B shape runs on any machine.
 * Byte counts are exact integers: compared with ==. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "backend/backend_impl.h" /* a device backend to ask, without a device */
#include "memory/estimate.h"
#include "model/transformer.h" /* tf_logit_rows */

/* a run's buffers start 64-byte aligned */
static size_t r64(size_t b) { return (b + 63) / 64 * 64; }

/* stories260K's shape: D 64, F 172, 5 layers, 8 heads (4 KV) of 8, V 512, tied. */
static model_config tiny(void) {
    model_config c;
    memset(&c, 0, sizeof c);
    c.dim = 64, c.hidden_dim = 172, c.n_layers = 5, c.n_heads = 8, c.n_kv_heads = 4, c.head_dim = 8;
    c.vocab_size = 512, c.max_seq = 512, c.norm_eps = 1e-5f, c.rope_theta = 10000, c.tied_embeddings = true;
    return c;
}

/* Qwen2.5-1.5B's shape (../shared/configs/qwen2.5-1.5b.json): D 1536, F 8960,
 * 28 layers, 12 heads (2 KV) of 128, V 151936, q/k/v biases, tied. */
static model_config qwen15(void) {
    model_config c;
    memset(&c, 0, sizeof c);
    c.dim = 1536, c.hidden_dim = 8960, c.n_layers = 28, c.n_heads = 12, c.n_kv_heads = 2, c.head_dim = 128;
    c.vocab_size = 151936, c.max_seq = 32768, c.norm_eps = 1e-6f, c.rope_theta = 1e6f, c.qkv_bias = true;
    c.tied_embeddings = true;
    return c;
}

/* float32 on the host: the parameters (each tensor padded to 16 values) and
 * one statistics run of 2 x 16 with 4 logit rows, every buffer by hand. */
static void tiny_host_stats_run(void **state) {
    (void)state;
    const model_config c = tiny();
    mem_job j;
    mem_job_init(&j, &c, GF_F32, false);
    j.run[0] = (tf_run_opts){.B = 2, .T = 16, .stats = true, .logit_rows = 4};
    mem_estimate e;
    assert_int_equal(mem_estimate_job(&e, &j), 0);
    /* embed V*D; per layer 2 norms, gate/up/down F*D, q D*D, k v (KV*hd)*D, o D*D; final norm */
    const size_t layer = 64 + 64 + 3 * 11008 + 4096 + 2048 + 2048 + 4096;
    const size_t params = 32768 + 5 * layer + 64;
    assert_int_equal(params, 260032);
    assert_int_equal(e.part[MEM_WEIGHTS], params * 4);
    const size_t N = 32;
    const size_t run = r64(16 * 8 * 4)            /* RoPE table [S, hd] f32 */
                       + r64(N * 4)               /* token ids */
                       + r64(N * 64 * 4)          /* hidden */
                       + r64(4 * 512 * 4)         /* logits [4, V] */
                       + r64(5 * 8 * 5 * 8)       /* statistics [L, H, 5] f64 */
                       + 3 * r64(N * 64 * 4)      /* residual, norm output, mixer / MLP output (shared) */
                       + 2 * r64(N * 172 * 4)     /* gate, up */
                       + 2 * r64(N * 64 * 4)      /* q, heads */
                       + 2 * r64(N * 32 * 4)      /* new k, v rows */
                       + 5 * 2 * r64(2 * 16 * 32 * 4); /* each layer's K and V cache [B, S, KV*hd] */
    assert_int_equal(run, 152768);
    assert_int_equal(e.part[MEM_ACTIVATIONS], run);
    assert_int_equal(e.part[MEM_KV_CACHE], 5 * 2 * 2 * 16 * 32 * 4);
    assert_int_equal(e.part[MEM_SCRATCH], 0); /* the host backend has none of its own */
    assert_int_equal(e.total, params * 4 + run);
    assert_string_equal(e.peak_phase, "run");
}

/* bf16 on a device: the parameters of Qwen2.5-1.5B, a decode KV cache of
 * 8192 positions, and training a 14-GDN-layer student at 4 x 2048. */
static void qwen15_device_train(void **state) {
    (void)state;
    const model_config c = qwen15();
    mem_job j;
    mem_job_init(&j, &c, GF_BF16, true);
    j.run[0] = (tf_run_opts){.B = 1, .T = 16, .S = 8192, .decode = true, .logit_rows = 1};
    j.train_B = 4, j.train_T = 2048, j.train_gdn = 14, j.eval_B = 4;
    mem_estimate e;
    assert_int_equal(mem_estimate_job(&e, &j), 0);
    /* per layer: norms 2 D; gate/up/down 3 F D; q D*D; k, v 256 D; biases 1536 + 2 * 256; o D*D */
    const size_t attn = 2359296 + 2 * 393216 + 1536 + 2 * 256 + 2359296;
    const size_t layer = 2 * 1536 + 3 * (size_t)8960 * 1536 + attn;
    const size_t params = (size_t)151936 * 1536 + 28 * layer + 1536;
    assert_int_equal(params, 1543714304); /* Qwen2.5-1.5B's 1.54 B */
    assert_int_equal(e.part[MEM_WEIGHTS], params * 2);
    assert_int_equal(e.part[MEM_KV_CACHE], (size_t)28 * 2 * 8192 * 256 * 2);
    /* a GDN layer: W_in [4*12*128 + 2*12, D], A_log and dt_bias [12], w_norm [128], Wo [D, D]; padded to 16 */
    const size_t gdn = (size_t)6168 * 1536 + 12 + 12 + 128 + (size_t)1536 * 1536;
    assert_int_equal(gdn, 11833496);
    const size_t gdn_padded = (gdn + 15) / 16 * 16;
    const size_t n = params - 14 * attn + 14 * gdn_padded;
    /* bf16 parameters + f32 master + f32 gradients; two f32 moments */
    assert_int_equal(e.part[MEM_TRAIN_BLOCKS], n * (2 + 4 + 4));
    assert_int_equal(e.part[MEM_MOMENTS], n * 8);
    /* the attention backward's f32 accumulators: dq for 12 query heads, dk and dv for 2 key-value heads */
    const size_t scratch =
        5 * ((size_t)32 << 20) + ((size_t)64 << 20) + ((size_t)64 << 20) + (size_t)4 * 2048 * (12 + 2 * 2) * 128 * 4;
    assert_int_equal(e.part[MEM_SCRATCH], scratch);
    assert_true(e.part[MEM_TRAIN_RUNS] > 0);
    assert_string_equal(e.peak_phase, "train");
    assert_int_equal(e.total, params * 2 + n * 18 + e.part[MEM_TRAIN_RUNS] + scratch);
    /* 1.5 B: about 3.1 GB of weights; training in the tens of GB */
    assert_true(e.total > (size_t)30e9 && e.total < (size_t)80e9);
}

/* Logit chunks: 256M values on the host, 1280M on a device, where each chunk's LM-head weight
 * gradient re-reads and re-writes the [V, D] f32 gradient; the job's runs carry the chunk. */
static void logit_chunks_by_backend(void **state) {
    (void)state;
    assert_int_equal(tf_logit_rows(8192, 151936, false), 1766);  /* 268435456 / 151936 */
    assert_int_equal(tf_logit_rows(8192, 151936, true), 8192);   /* under 1342177280 / 151936 = 8833 */
    assert_int_equal(tf_logit_rows(32768, 151936, true), 8833);
    assert_int_equal(tf_logit_rows(100, 151936, false), 100);
    assert_int_equal(tf_logit_rows(8192, 2000000000, true), 1); /* at least one row */
    /* the 1.5B's training on a device: the student's and the teacher's runs each hold all 8192 rows of
     * bf16 logits, the evaluation run as well */
    const model_config c = qwen15();
    mem_job j;
    mem_job_init(&j, &c, GF_BF16, true);
    j.train_B = 4, j.train_T = 2048, j.train_gdn = 14, j.eval_B = 4;
    mem_estimate e;
    assert_int_equal(mem_estimate_job(&e, &j), 0);
    assert_true(e.part[MEM_TRAIN_RUNS] > (size_t)3 * 8192 * 151936 * 2);
}

/* Building layers: Stage 2's arena per task, tasks at once on the host. */
static void build_tasks_multiply(void **state) {
    (void)state;
    const model_config c = tiny();
    mem_job j;
    mem_job_init(&j, &c, GF_F32, false);
    j.build_B = 4, j.build_T = 64, j.held_B = 1, j.held_T = 64, j.stage2 = true, j.tasks = 1;
    mem_estimate one, two;
    assert_int_equal(mem_estimate_job(&one, &j), 0);
    j.tasks = 2;
    assert_int_equal(mem_estimate_job(&two, &j), 0);
    assert_true(one.part[MEM_BUILD] > 0);
    assert_int_equal(two.part[MEM_BUILD], 2 * one.part[MEM_BUILD]);
    assert_string_equal(one.peak_phase, "build");
}

/* How many Stage 2 arenas a job holds at once: the host's threads, or the device's streams
 * (be_run_tasks runs GF_DEVICE_TASKS layers side by side on a GPU). */
static void tasks_at_once(void **state) {
    (void)state;
    gf_backend host = {.host = true, .threads = 3}, device = {.host = false, .threads = 0};
    assert_int_equal(be_tasks_at_once(&host), 3);
    assert_int_equal(be_tasks_at_once(&device), GF_DEVICE_TASKS);
    assert_true(GF_DEVICE_TASKS > 1);
}

static void refusal_line(void **state) {
    (void)state;
    assert_int_equal(mem_check(10, 10, "cuda:0", false), 0);
    assert_int_equal(mem_check((size_t)41200000000ull, (size_t)30100000000ull, "cuda:0", false), -1);
    assert_string_equal(gf_last_error(), "needs 41.2 GB on cuda:0, 30.1 GB free");
    assert_int_equal(mem_check(2000000, 1500000, "cpu", true), -1);
    assert_string_equal(gf_last_error(), "needs 2.0 MB on cpu, 1.5 MB allowed by GRAFT_MEM_LIMIT");
}

static void limit_parsing(void **state) {
    (void)state;
    size_t v;
    setenv("GRAFT_MEM_LIMIT", "40G", 1);
    assert_int_equal(mem_limit_from_env(&v), 0);
    assert_int_equal(v, (size_t)40000000000ull);
    setenv("GRAFT_MEM_LIMIT", "1.5GiB", 1);
    assert_int_equal(mem_limit_from_env(&v), 0);
    assert_int_equal(v, (size_t)1610612736ull);
    setenv("GRAFT_MEM_LIMIT", "512M", 1);
    assert_int_equal(mem_limit_from_env(&v), 0);
    assert_int_equal(v, (size_t)512000000ull);
    setenv("GRAFT_MEM_LIMIT", "123", 1);
    assert_int_equal(mem_limit_from_env(&v), 0);
    assert_int_equal(v, 123);
    const char *bad[] = {"lots", "-3G", "4Q", "0", "1e30"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("GRAFT_MEM_LIMIT", bad[i], 1);
        assert_int_equal(mem_limit_from_env(&v), -1);
        assert_non_null(strstr(gf_last_error(), "GRAFT_MEM_LIMIT"));
    }
    unsetenv("GRAFT_MEM_LIMIT");
    assert_int_equal(mem_limit_from_env(&v), 0);
    assert_int_equal(v, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_host_stats_run),   cmocka_unit_test(qwen15_device_train),
        cmocka_unit_test(build_tasks_multiply), cmocka_unit_test(tasks_at_once), cmocka_unit_test(refusal_line),
        cmocka_unit_test(limit_parsing),        cmocka_unit_test(logit_chunks_by_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
