#include "eval/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static uint64_t next_u64(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* argmax (temp <= 0), or a draw from softmax(logits / temp); w [V] scratch */
static int pick(const float *logits, int V, double temp, uint64_t *rng, double *w) {
    int best = 0;
    for (int i = 1; i < V; i++)
        if (logits[i] > logits[best]) best = i;
    if (temp <= 0) return best;
    double z = 0;
    for (int i = 0; i < V; i++) z += w[i] = exp((logits[i] - logits[best]) / temp);
    double r = (double)(next_u64(rng) >> 11) / 9007199254740992.0 * z, acc = 0;
    for (int i = 0; i < V; i++) {
        acc += w[i];
        if (r < acc) return i;
    }
    return best;
}

static uint64_t rng_from(uint64_t seed) { return seed ? seed : 0x9E3779B97F4A7C15ULL; }

int generate(const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out) {
    transformer tf;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    int rc = generate_tf(&tf, m, prompt, n, o, out);
    tf_free(&tf);
    return rc;
}

int generate_tf(transformer *tf, const model *m, const int *prompt, int n, const generate_opts *o, int_vec *out) {
    if (n <= 0) return gf_fail("generation needs at least one prompt token");
    int ctx = n + o->max_new;
    if (m->cfg.max_seq > 0 && ctx > m->cfg.max_seq) {
        if (n >= m->cfg.max_seq)
            return gf_fail("the prompt (%d tokens) fills the model's context of %d", n, m->cfg.max_seq);
        ctx = m->cfg.max_seq;
    }
    gf_backend *be = tf->be;
    tf_run *r;
    const tf_run_opts ro = {.B = 1, .T = n, .S = ctx, .decode = true, .logit_rows = 1, .cancel = o->cancel};
    if (tf_run_open(&r, tf, &ro) != 0) return -1;
    const int V = m->cfg.vocab_size;
    const gf_buf lbuf = tf_run_logits(r, NULL);
    float *logits = gf_malloc((size_t)V * sizeof *logits);
    double *w = gf_malloc((size_t)V * sizeof *w);
    uint64_t rng = rng_from(o->seed);
    int eos = m->tok ? tokenizer_eos(m->tok) : m->cfg.eos_id;
    int bos = m->tok ? tokenizer_bos(m->tok) : m->cfg.bos_id;
    int rc = tf_forward(r, prompt, 1, n, 0, NULL);
    int prev = prompt[n - 1], produced = 0, last_row = n - 1;
    for (int pos = n; rc == 0; pos++) {
        if (o->cancel && atomic_load(o->cancel)) {
            rc = gf_fail("cancelled");
            break;
        }
        tf_logits(r, last_row, 1, lbuf);
        if ((rc = be_download(be, logits, GF_F32, lbuf, (size_t)V)) != 0) break;
        int id = pick(logits, V, o->temperature, &rng, w);
        if (o->stop_at_eos && (id == eos || (m->cfg.source == SOURCE_LLAMA2C && id == bos))) break;
        int_vec_push(out, id);
        produced++;
        if (o->on_token) o->on_token(o->ud, prev, id);
        prev = id;
        if (produced >= o->max_new || pos >= ctx) break;
        rc = tf_forward(r, &id, 1, 1, pos, NULL);
        last_row = 0;
    }
    free(logits);
    free(w);
    tf_run_close(r);
    return rc;
}

int generate_rows(const model *m, int first, int n, int len, double temperature, const uint64_t *seeds, int *out) {
    if (n < 1 || len < 1) return gf_fail("generate_rows: %d rows of %d tokens", n, len);
    const int ctx = m->cfg.max_seq > 0 && len > m->cfg.max_seq ? m->cfg.max_seq : len;
    for (int i = 0; i < n * len; i++) out[i] = first;
    if (ctx < 2) return 0;
    transformer tf;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    tf_run *r;
    const tf_run_opts ro = {.B = n, .T = 1, .S = ctx, .decode = true, .logit_rows = n};
    if (tf_run_open(&r, &tf, &ro) != 0) {
        tf_free(&tf);
        return -1;
    }
    const int V = m->cfg.vocab_size;
    const gf_buf lbuf = tf_run_logits(r, NULL);
    float *logits = gf_malloc((size_t)n * V * sizeof *logits);
    double *w = gf_malloc((size_t)V * sizeof *w);
    uint64_t *rng = gf_malloc((size_t)n * sizeof *rng);
    int *ids = gf_malloc((size_t)n * sizeof *ids);
    for (int i = 0; i < n; i++) rng[i] = rng_from(seeds[i]), ids[i] = first;
    int rc = 0;
    for (int pos = 0; pos + 1 < ctx && rc == 0; pos++) { /* the token at pos in, the one at pos + 1 out */
        if ((rc = tf_forward(r, ids, n, 1, pos, NULL)) != 0) break;
        tf_logits(r, 0, n, lbuf);
        if ((rc = be_download(tf.be, logits, GF_F32, lbuf, (size_t)n * V)) != 0) break;
        for (int i = 0; i < n; i++) out[(size_t)i * len + pos + 1] = ids[i] = pick(logits + (size_t)i * V, V, temperature, &rng[i], w);
    }
    free(ids);
    free(rng);
    free(w);
    free(logits);
    tf_run_close(r);
    tf_free(&tf);
    return rc;
}

/* ---- text in, text out ---- */

typedef struct {
    const tokenizer *tok;
    void (*on_text)(void *ud, const char *text, int context, int generated);
    void *ud;
    int prompt, produced; /* tokens */
} text_stream;

static void stream_piece(void *p, int prev, int id) {
    text_stream *ts = p;
    ts->produced++;
    if (!ts->on_text) return;
    char *s = tokenizer_decode_piece(ts->tok, prev, id);
    ts->on_text(ts->ud, s, ts->prompt + ts->produced, ts->produced);
    free(s);
}

int generate_text(transformer *tf, const model *m, const char *prompt, const generate_opts *o,
                  void (*on_text)(void *ud, const char *text, int context, int generated), void *ud,
                  generated_text *out) {
    memset(out, 0, sizeof *out);
    if (!m->tok) return gf_fail("%s has no tokenizer (pass --tokenizer PATH)", m->path ? m->path : "the model");
    int_vec in = {0}, gen = {0};
    tokenizer_encode(m->tok, prompt, strlen(prompt), true, &in);
    if (in.len == 0) { /* no BOS and no prompt: nothing to condition on */
        int_vec_free(&in);
        return gf_fail("this tokenizer has no BOS token; give a prompt");
    }
    const int bos = tokenizer_bos(m->tok);
    out->bos = bos >= 0 && in.data[0] == bos;
    if (on_text) { /* the prompt as the tokenizer reads it back (llama2.c drops the space after BOS) */
        char *p = tokenizer_decode(m->tok, in.data, in.len, NULL);
        on_text(ud, p, (int)in.len, 0);
        free(p);
    }
    text_stream ts = {m->tok, on_text, ud, (int)in.len, 0};
    generate_opts go = *o;
    go.on_token = stream_piece;
    go.ud = &ts;
    int rc = generate_tf(tf, m, in.data, (int)in.len, &go, &gen);
    for (size_t i = out->bos ? 1 : 0; i < in.len; i++) int_vec_push(&out->ids, in.data[i]);
    out->prompt_tokens = (int)out->ids.len;
    for (size_t i = 0; i < gen.len; i++) int_vec_push(&out->ids, gen.data[i]);
    out->generated = (int)gen.len;
    int_vec_free(&in);
    int_vec_free(&gen);
    return rc;
}

void generated_text_free(generated_text *g) {
    int_vec_free(&g->ids);
    memset(g, 0, sizeof *g);
}
