#include "eval/bench_decode.h"

#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/rng.h"

static double cpu_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tf_run_opts decode_bench_run_opts(const decode_bench_opts *o) {
    const int chunk = o->prefill_chunk > 0 && o->prefill_chunk < o->context ? o->prefill_chunk : o->context;
    /* one warm-up decode step past the timed ones */
    return (tf_run_opts){.B = o->batch, .T = chunk, .S = o->context + o->tokens + 1, .decode = true,
                         .logit_rows = o->batch, .cancel = o->cancel};
}

/* Greedy ids of the B rows of logits [B, V] (lowest id on ties, as generate picks); rows in
 * parallel: 16 rows of a 151,936-token vocabulary are ~2.4M compares a step on one core. */
static void argmax_rows(const float *logits, int B, int V, int *ids) {
#pragma omp parallel for if (B > 1) schedule(static)
    for (int b = 0; b < B; b++) {
        const float *x = logits + (size_t)b * V;
        int best = 0;
        for (int i = 1; i < V; i++)
            if (x[i] > x[best]) best = i;
        ids[b] = best;
    }
}

/* logits of the B rows at row0, row0 + stride, ... of the last forward -> ids */
static int next_ids(tf_run *r, gf_backend *be, int B, int V, int row0, int stride, gf_buf lbuf, float *host, int *ids) {
    if (stride == 1) tf_logits(r, row0, B, lbuf);
    else
        for (int b = 0; b < B; b++) tf_logits(r, row0 + b * stride, 1, gf_at(lbuf, (size_t)b * V));
    if (be_download(be, host, GF_F32, lbuf, (size_t)B * V) != 0) return -1;
    argmax_rows(host, B, V, ids);
    return 0;
}

/* Prefill of the B x context prompt in chunks from position 0. */
static int prefill(tf_run *r, const int *prompt, int B, int context, int chunk, int *rows_last) {
    int *part = gf_malloc((size_t)B * chunk * sizeof *part);
    int rc = 0, T = 0;
    for (int p0 = 0; p0 < context && rc == 0; p0 += T) {
        T = context - p0 < chunk ? context - p0 : chunk;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) part[(size_t)b * T + t] = prompt[(size_t)b * context + p0 + t];
        rc = tf_forward(r, part, B, T, p0, NULL);
    }
    free(part);
    *rows_last = T;
    return rc;
}

int decode_bench_run(transformer *tf, const decode_bench_opts *o, decode_bench_point *out) {
    const model_config *c = &tf->cfg;
    if (o->context < 1 || o->batch < 1 || o->tokens < 1)
        return gf_fail("decode benchmark: context %d, batch %d, tokens %d must be >= 1", o->context, o->batch,
                       o->tokens);
    const tf_run_opts ro = decode_bench_run_opts(o);
    if (c->max_seq > 0 && ro.S > c->max_seq)
        return gf_fail("context %d + %d decoded tokens (+1 warm-up) exceeds the model's context of %d", o->context,
                       o->tokens, c->max_seq);
    tf_run *r;
    if (tf_run_open(&r, tf, &ro) != 0) return -1;
    gf_backend *be = tf->be;
    const int B = o->batch, V = c->vocab_size, chunk = ro.T;
    int *prompt = gf_malloc((size_t)B * o->context * sizeof *prompt);
    float *host = gf_malloc((size_t)B * V * sizeof *host);
    int *ids = gf_malloc((size_t)B * sizeof *ids);
    rng64 g;
    rng_seed(&g, o->seed);
    for (size_t i = 0; i < (size_t)B * o->context; i++) prompt[i] = (int)(rng_next(&g) % (uint64_t)V);
    const gf_buf lbuf = tf_run_logits(r, NULL);
    int rows = 0;
    /* warm-up: the first chunk once (plans and scratch made for its shape), untimed;
     * the timed prefill starts again at position 0, which resets the GDN state */
    int rc = tf_forward(r, prompt, B, 1, 0, NULL);
    if (rc == 0) rc = be_sync(be);
    const double t0 = clock_now_s(), c0 = cpu_now_s();
    if (rc == 0) rc = prefill(r, prompt, B, o->context, chunk, &rows);
    if (rc == 0) rc = next_ids(r, be, B, V, rows - 1, rows, lbuf, host, ids);
    if (rc == 0) rc = be_sync(be);
    const double t1 = clock_now_s(), c1 = cpu_now_s();
    int pos = o->context;
    /* one untimed decode step (the T = 1 shapes' plans), then the timed ones */
    if (rc == 0) rc = tf_forward(r, ids, B, 1, pos++, NULL);
    if (rc == 0) rc = next_ids(r, be, B, V, 0, 1, lbuf, host, ids);
    if (rc == 0) rc = be_sync(be);
    const double t2 = clock_now_s(), c2 = cpu_now_s();
    for (int s = 0; s < o->tokens && rc == 0; s++) {
        rc = tf_forward(r, ids, B, 1, pos++, NULL);
        if (rc == 0) rc = next_ids(r, be, B, V, 0, 1, lbuf, host, ids);
    }
    if (rc == 0) rc = be_sync(be);
    const double t3 = clock_now_s(), c3 = cpu_now_s();
    if (rc == 0) {
        size_t total, kv, state;
        tf_run_bytes(r, &total, &kv, &state);
        *out = (decode_bench_point){
            .context = o->context,
            .batch = B,
            .tokens = o->tokens,
            .prefill_chunk = chunk,
            .prefill_s = t1 - t0,
            .decode_s = t3 - t2,
            .prefill_tok_s = (double)B * o->context / (t1 - t0),
            .decode_tok_s = (double)B * o->tokens / (t3 - t2),
            .ms_per_step = 1e3 * (t3 - t2) / o->tokens,
            .prefill_cpu_s = c1 - c0,
            .decode_cpu_s = c3 - c2,
            .kv_bytes_per_seq = kv / (size_t)B,
            .state_bytes_per_seq = state / (size_t)B,
            .run_bytes = total,
        };
    }
    free(ids);
    free(host);
    free(prompt);
    tf_run_close(r);
    return rc;
}
