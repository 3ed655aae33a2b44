#include "train/trainer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/comm.h"
#include "core/error.h"

void train_opts_default(train_opts *o, train_phase phase) {
    memset(o, 0, sizeof *o);
    o->phase = phase;
    o->ctx = 256;
    o->batch = 4;
    o->accum = 1;
    o->tokens = 1L << 20;
    o->lr_mixer = phase == PHASE_ALIGN ? 1e-3 : 1e-4;
    o->lr_rest = phase == PHASE_ALIGN ? 0 : 7e-6;
    o->schedule = LR_COSINE;
    o->warmup_frac = 0.05;
    o->min_lr_ratio = 0.1;
    o->beta1 = 0.9;
    o->beta2 = 0.95;
    o->eps = 1e-8;
    o->weight_decay = 0.01;
    o->clip = 1.0;
    o->temperature = 1.0;
    o->eval_seqs = 16;
    o->seed = 1;
}

int train_phase_parse(const char *name, train_phase *out) {
    if (strcmp(name, "align") == 0 || strcmp(name, "a") == 0) *out = PHASE_ALIGN;
    else if (strcmp(name, "kl") == 0 || strcmp(name, "b") == 0) *out = PHASE_KL;
    else return gf_fail("unknown phase '%s' (align or kl)", name);
    return 0;
}

void train_result_free(train_result *r) {
    train_state_free(&r->st);
    curve_free(&r->measure);
}

/* FNV-1a over the options that must match for a resume to continue the same
 * run. The batch enters as the global one (sequences per step over every
 * rank, written where batch and accum were with accum 1, so checkpoints of
 * one-process runs without accumulation keep their hash): a checkpoint
 * resumes under any world size, batch and accum of the same product. */
static uint64_t options_hash(const train_opts *o, const train_data *d, const param_layout *pl, int world) {
    char s[512];
    int n = snprintf(s, sizeof s, "%d %d %d %d %ld %.17g %.17g %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
                     "%llu %d %d %d %zu",
                     o->phase, o->ctx, o->batch * o->accum * world, 1, o->tokens, o->lr_mixer, o->lr_rest, o->schedule,
                     o->warmup_frac, o->min_lr_ratio, o->beta1, o->beta2, o->eps, o->weight_decay, o->clip,
                     o->temperature, (unsigned long long)o->seed, d->sampled, d->n_train, pl->n, pl->total);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n && i < (int)sizeof s; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

/* A contiguous span of the flat block trained with one learning rate. */
typedef struct {
    size_t off, n;
    double lr;
} span;

/* Maximal runs of consecutive layout entries that train with the same rate. */
static int trained_spans(const transformer *tf, const train_opts *o, span *out) {
    int k = 0;
    for (int i = 0; i < tf->layout.n; i++) {
        const param_entry *e = &tf->layout.t[i];
        if (!tf->train[e->group]) continue;
        const double lr = e->group == PGROUP_REST ? o->lr_rest : o->lr_mixer;
        if (k > 0 && out[k - 1].lr == lr && i > 0 && tf->train[tf->layout.t[i - 1].group] &&
            (tf->layout.t[i - 1].group == PGROUP_REST) == (e->group == PGROUP_REST)) {
            out[k - 1].n = e->off + e->n - out[k - 1].off;
            continue;
        }
        out[k++] = (span){e->off, e->n, lr};
    }
    return k;
}

int train_eval_nll(transformer *tf, const train_data *data, int n, int batch, double *nll) {
    const int T = data->ctx, V = tf->cfg.vocab_size;
    if (n <= 0 || n > data->n_eval) n = data->n_eval;
    if (batch <= 0) batch = 4;
    if (batch > n) batch = n > 0 ? n : 1;
    gf_backend *be = tf->be;
    /* several ranks: each its contiguous share of the sequences, the sums added */
    gf_comm *comm = be_comm(be);
    long s_lo = 0, s_hi = n;
    comm_share(comm, n, &s_lo, &s_hi);
    tf_run *r;
    const tf_run_opts ro = {.B = batch, .T = T};
    if (tf_run_open(&r, tf, &ro) != 0) return -1;
    int rows;
    const gf_buf logits = tf_run_logits(r, &rows);
    gf_buf targets = gf_none(), loss = gf_none();
    int *tok = gf_malloc((size_t)batch * T * sizeof *tok), *tg = gf_malloc((size_t)rows * sizeof *tg);
    int rc = be_alloc(be, &targets, (size_t)rows, GF_I32) != 0 || be_alloc(be, &loss, 1, GF_F64) != 0 ? -1 : 0;
    if (rc == 0) be_zero(be, loss, 1);
    for (int s = (int)s_lo; s < (int)s_hi && rc == 0; s += batch) {
        const int b = (int)s_hi - s < batch ? (int)s_hi - s : batch;
        for (int i = 0; i < b; i++) memcpy(tok + (size_t)i * T, train_data_eval(data, s + i), (size_t)T * sizeof *tok);
        if ((rc = tf_forward(r, tok, b, T, 0, NULL)) != 0) break;
        for (int r0 = 0; r0 < b * T; r0 += rows) { /* row b*T + t predicts token t + 1; the last row predicts nothing */
            const int nr = b * T - r0 < rows ? b * T - r0 : rows;
            for (int i = 0; i < nr; i++) {
                const int row = r0 + i, t = row % T;
                tg[i] = t + 1 < T ? tok[(size_t)(row / T) * T + t + 1] : -1;
            }
            be_upload(be, targets, tg, GF_I32, (size_t)nr);
            tf_logits(r, r0, nr, logits);
            be_cross_entropy(be, loss, gf_none(), logits, targets, nr, V, 1.0f);
        }
    }
    double total = NAN;
    if (rc == 0) rc = be_download(be, &total, GF_F64, loss, 1);
    if (rc == 0) rc = be_sync(be);
    if (rc == 0) rc = comm_allreduce_host(comm, &total, 1, GF_REDUCE_SUM);
    *nll = total / ((double)n * (T - 1));
    be_free(be, &targets);
    be_free(be, &loss);
    free(tok);
    free(tg);
    tf_run_close(r);
    return rc;
}

int train_eval_ppl(const train_opts *o, transformer *tf, const train_data *data, double *ppl) {
    double nll;
    if (train_eval_nll(tf, data, o->eval_seqs, o->batch, &nll) != 0) return -1;
    *ppl = exp(nll);
    return 0;
}

static int evaluate(const train_opts *o, transformer *student, train_data *data, train_result *res, atomic_int *stop) {
    if (train_eval_ppl(o, student, data, &res->final_eval_ppl) != 0) return -1;
    curve_push(&res->st.eval, (double)res->st.tokens, res->final_eval_ppl);
    const bool rank0 = comm_rank(be_comm(student->be)) == 0;
    if (o->on_eval && rank0) o->on_eval(o->ud, res->st.step, res->st.tokens, res->final_eval_ppl);
    const long step = res->st.step;
    if (rank0 && o->measure && o->measure_every > 0 && (step % o->measure_every == 0 || step == res->total_steps)) {
        double v;
        if (o->measure(o->mud, student, step, res->st.tokens, stop, &v) != 0) {
            if (!(stop && atomic_load(stop))) return -1;
            gf_clear_error(); /* stopped inside the measure: the loop checkpoints and stops */
            return 0;
        }
        curve_push(&res->measure, (double)res->st.tokens, v);
        if (o->on_measure) o->on_measure(o->ud, step, res->st.tokens, v);
    }
    return 0;
}

/* Everything a run allocates on the backend besides the models, opened once
 * per run and reused by every step (the tf_runs hold the activations, logit
 * chunks and backward scratch for B x T). So only a run's first step pays the
 * first touch of these pages; the steps after it take no page faults (on CPU,
 * `GRAFT_BENCH_TRAIN_VERBOSE=1 build/bench/bench_train` shows it per step),
 * and no allocator setting (mallopt) is needed: keeping freed blocks would only
 * help a second run in the same process, at the price of holding them after. */
typedef struct {
    tf_run *sr, *tr;      /* student (training) and teacher (inference) runs, B x T */
    gf_buf m, v;          /* F32 AdamW moments, the parameter layout */
    gf_buf acc;           /* F64 [2]: loss, sum of squares */
    gf_buf *t_after;      /* [L] teacher residual after converted layers (align) */
    gf_buf *d_after;      /* [L] their gradients */
    gf_buf pair;          /* the buffers above, one allocation */
} train_bufs;

static void bufs_free(gf_backend *be, train_bufs *b, int L) {
    tf_run_close(b->sr);
    tf_run_close(b->tr);
    be_free(be, &b->m);
    be_free(be, &b->v);
    be_free(be, &b->pair);
    free(b->t_after);
    free(b->d_after);
    (void)L;
    memset(b, 0, sizeof *b);
}

static int bufs_open(train_bufs *b, const train_opts *o, transformer *student, transformer *teacher,
                     const atomic_int *stop) {
    memset(b, 0, sizeof *b);
    gf_backend *be = student->be;
    const model_config *c = &student->cfg;
    const int L = c->n_layers, N = o->batch * o->ctx;
    /* both runs stop between layers when *stop is set; ranks of a job stop
     * together after a step instead (a rank leaving a step half-way would
     * leave the others waiting in the gradient all-reduce) */
    if (comm_size(be_comm(be)) > 1) stop = NULL;
    /* logit rows: tf_logit_rows for both (the KL loop walks their chunks together) */
    const tf_run_opts so = {.B = o->batch, .T = o->ctx, .train = true, .recompute = o->recompute, .cancel = stop};
    const tf_run_opts to = {.B = o->batch, .T = o->ctx, .cancel = stop};
    if (tf_run_open(&b->sr, student, &so) != 0 || tf_run_open(&b->tr, teacher, &to) != 0) return -1;
    const size_t n = student->layout.total;
    if (be_alloc(be, &b->m, n, GF_F32) != 0 || be_alloc(be, &b->v, n, GF_F32) != 0)
        return gf_fail_prefix("the optimizer's moments");
    be_zero(be, b->m, n);
    be_zero(be, b->v, n);
    int n_conv = o->phase == PHASE_ALIGN ? tf_n_gdn(student) : 0;
    const size_t per = ((size_t)N * c->dim + 15) / 16 * 16;
    if (be_alloc(be, &b->pair, 2 * per * (size_t)n_conv + 16, be_act(be)) != 0) return gf_fail_prefix("alignment buffers");
    b->acc = gf_bytes(b->pair, 2 * per * (size_t)n_conv * gf_dtype_size(be_act(be)), GF_F64);
    b->t_after = gf_calloc((size_t)L, sizeof *b->t_after);
    b->d_after = gf_calloc((size_t)L, sizeof *b->d_after);
    for (int l = 0, k = 0; l < L; l++)
        if (n_conv && student->kind[l] == MIX_GDN) {
            b->t_after[l] = gf_at(b->pair, (size_t)(2 * k) * per);
            b->d_after[l] = gf_at(b->pair, (size_t)(2 * k + 1) * per);
            k++;
        }
    return 0;
}

/* One micro-batch: teacher forward, student forward, loss, backward. Adds the
 * summed loss (before scaling) into acc[0]. */
static int micro_batch(const train_opts *o, transformer *student, train_bufs *b, const int *tok, double scale,
                       int n_conv) {
    gf_backend *be = student->be;
    const model_config *c = &student->cfg;
    const int B = o->batch, T = o->ctx, N = B * T, L = c->n_layers, V = c->vocab_size;
    const tf_hooks th = {NULL, NULL, o->phase == PHASE_ALIGN ? b->t_after : NULL, NULL};
    if (tf_forward(b->tr, tok, B, T, 0, &th) != 0 || tf_forward(b->sr, tok, B, T, 0, NULL) != 0) return -1;
    if (o->phase == PHASE_KL) {
        int rows;
        const gf_buf slog = tf_run_logits(b->sr, &rows), tlog = tf_run_logits(b->tr, NULL);
        for (int r0 = 0; r0 < N; r0 += rows) { /* row chunks: logits never exist for all rows at once */
            const int nr = N - r0 < rows ? N - r0 : rows;
            tf_logits(b->tr, r0, nr, tlog);
            tf_logits(b->sr, r0, nr, slog);
            be_kl_div(be, b->acc, slog, slog, tlog, nr, V, (float)o->temperature, (float)scale);
            tf_lm_head_backward(b->sr, r0, nr, slog);
        }
        return tf_backward(b->sr, NULL);
    }
    for (int l = 0; l < L; l++) {
        if (gf_is_none(b->d_after[l])) continue;
        be_zero(be, b->d_after[l], (size_t)N * c->dim);
        be_row_l2(be, b->acc, b->d_after[l], tf_run_layer_output(b->sr, l), b->t_after[l], N, c->dim,
                  (float)(scale / n_conv));
    }
    return tf_backward(b->sr, b->d_after);
}

/* st's scalars and curves from rank 0 to every rank (got: rank 0's, filled elsewhere). */
static int broadcast_state(gf_comm *comm, train_state *got) {
    if (!comm) return 0;
    struct {
        uint64_t hash, seed;
        int64_t step, tokens, cursor;
        int32_t n_loss, n_eval;
    } h = {got->options_hash, got->seed, got->step, got->tokens, got->data_cursor, got->loss.n, got->eval.n};
    if (comm_broadcast_host(comm, &h, sizeof h, 0) != 0) return -1;
    if (comm_rank(comm) != 0) {
        memset(got, 0, sizeof *got);
        got->options_hash = h.hash, got->seed = h.seed;
        got->step = (long)h.step, got->tokens = (long)h.tokens, got->data_cursor = (long)h.cursor;
        got->loss.n = got->loss.cap = h.n_loss;
        got->eval.n = got->eval.cap = h.n_eval;
        got->loss.xy = gf_calloc((size_t)h.n_loss * 2 + 1, sizeof(double));
        got->eval.xy = gf_calloc((size_t)h.n_eval * 2 + 1, sizeof(double));
    }
    if (comm_broadcast_host(comm, got->loss.xy, (size_t)h.n_loss * 2 * sizeof(double), 0) != 0 ||
        comm_broadcast_host(comm, got->eval.xy, (size_t)h.n_eval * 2 * sizeof(double), 0) != 0)
        return -1;
    return 0;
}

/* The state every rank starts from: a resumed checkpoint (read by rank 0 and
 * broadcast, so only rank 0 needs the file), and rank 0's parameters (ranks
 * that built their students on different hardware start identical). */
static int start_state(const train_opts *o, train_state *st, const train_blocks *ck, transformer *student,
                       gf_comm *comm, train_result *res) {
    gf_backend *be = student->be;
    const bool lead = comm_rank(comm) == 0;
    int32_t have = lead && o->resume && o->ckpt_path && access(o->ckpt_path, F_OK) == 0;
    if (comm_broadcast_host(comm, &have, sizeof have, 0) != 0) return -1;
    if (have) {
        train_state got = {0};
        if (lead && checkpoint_read(o->ckpt_path, &got, ck) != 0) return -1;
        if (broadcast_state(comm, &got) != 0) {
            train_state_free(&got);
            return -1;
        }
        if (got.options_hash != st->options_hash) {
            train_state_free(&got);
            return gf_fail("%s was written by a run with other options or data; resume with the same ones (any "
                           "number of ranks, with the same global batch: ranks x batch x accum)", o->ckpt_path);
        }
        *st = got;
        res->resumed_from = st->step;
    }
    const size_t n = student->layout.total;
    if (comm && (comm_broadcast(comm, ck->master, n, 0) != 0 ||
                 (have && (comm_broadcast(comm, ck->m, n, 0) != 0 || comm_broadcast(comm, ck->v, n, 0) != 0))))
        return -1;
    if ((have || comm) && !gf_same(student->master, student->params)) be_copy(be, student->params, student->master, n);
    return 0;
}

/* The numbers of the options, checked so that NaN fails (callers other than
 * the command line reach the trainer too); each refusal names its option. */
static int check_numbers(const train_opts *o) {
    const struct { const char *name; double x, lo, hi; bool open_lo; } v[] = {
        {"--lr-mixer", o->lr_mixer, 0, 1e30, false}, {"--lr-rest", o->lr_rest, 0, 1e30, false},
        {"--warmup-frac", o->warmup_frac, 0, 1, false}, {"--min-lr-ratio", o->min_lr_ratio, 0, 1, false},
        {"--clip", o->clip, 0, 1e6, false}, {"--wd", o->weight_decay, 0, 1, false},
        {"--temperature", o->temperature, 0, 100, true}, {"AdamW beta1", o->beta1, 0, 1, false},
        {"AdamW beta2", o->beta2, 0, 1, false}, {"AdamW eps", o->eps, 0, 1, true}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const bool above = v[i].open_lo ? v[i].x > v[i].lo : v[i].x >= v[i].lo;
        if (!(above && v[i].x <= v[i].hi))
            return gf_fail("%s must be in %c%g, %g], got %g", v[i].name, v[i].open_lo ? '(' : '[', v[i].lo, v[i].hi,
                           v[i].x);
    }
    return 0;
}

/* PATH.step-N: a second name for the checkpoint just written (its rename made a new file). */
static int keep_checkpoint(const char *path, long step) {
    char kept[4096];
    snprintf(kept, sizeof kept, "%s.step-%ld", path, step);
    if ((unlink(kept) != 0 && errno != ENOENT) || link(path, kept) != 0)
        return gf_fail("%s: cannot keep the checkpoint: %s", kept, strerror(errno));
    return 0;
}

int train_run(const train_opts *o, transformer *student, transformer *teacher, train_data *data,
              atomic_int *stop, train_result *res) {
    memset(res, 0, sizeof *res);
    res->resumed_from = -1;
    const model_config *c = &student->cfg;
    const int L = c->n_layers, T = o->ctx;
    if (!tf_is_trainable(student)) return gf_fail("the student is not trainable");
    if (o->ctx != data->ctx) return gf_fail("sequence length %d does not fit the data (%d)", o->ctx, data->ctx);
    if (teacher->cfg.vocab_size != c->vocab_size || teacher->cfg.dim != c->dim || teacher->cfg.n_layers != L)
        return gf_fail("teacher and student shapes differ (vocab %d/%d, dim %d/%d, layers %d/%d)",
                       teacher->cfg.vocab_size, c->vocab_size, teacher->cfg.dim, c->dim, teacher->cfg.n_layers, L);
    if (o->batch < 1) return gf_fail("--batch must be at least 1, got %d", o->batch);
    if (o->accum < 1) return gf_fail("--accum must be at least 1, got %d", o->accum);
    if (o->tokens < 1) return gf_fail("--tokens must be positive, got %lld", (long long)o->tokens);
    const int n_conv = tf_n_gdn(student);
    if (o->phase == PHASE_ALIGN && n_conv == 0)
        return gf_fail("--phase align trains converted (GDN) layers, and this student has none");
    if (check_numbers(o) != 0) return -1;
    student->train[PGROUP_GDN] = o->lr_mixer > 0;
    student->train[PGROUP_ATTN] = o->phase == PHASE_KL && o->lr_mixer > 0;
    student->train[PGROUP_REST] = o->phase == PHASE_KL && o->lr_rest > 0;
    if (!student->train[PGROUP_GDN] && !student->train[PGROUP_ATTN] && !student->train[PGROUP_REST])
        return gf_fail("--lr-mixer is 0%s: every parameter group is frozen, nothing would train",
                       o->phase == PHASE_KL ? " and --lr-rest is 0" : " (phase align trains only the GDN layers)");

    gf_backend *be = student->be;
    train_bufs b;
    span *spans = gf_malloc((size_t)(student->layout.n + 1) * sizeof *spans);
    const int nspan = trained_spans(student, o, spans);
    int *tok = gf_malloc((size_t)o->batch * T * sizeof *tok);
    FILE *wlog = NULL;      /* the window log (rank 0) */
    double *win_ids = NULL; /* the step's window ids, each rank filling its slots */
    int rc = 0;
    train_state *st = &res->st;
    if (bufs_open(&b, o, student, teacher, stop) != 0) {
        rc = -1;
        goto done;
    }
    const train_blocks ck = {be, &student->layout, student->master, b.m, b.v};
    /* data parallel (backend/comm.h): rank r takes the global step's windows
     * [r * per_rank, (r + 1) * per_rank), so a step sees the same windows in
     * the same order as one process with accum x world micro-batches */
    gf_comm *comm = be_comm(be);
    const int world = comm_size(comm), rank = comm_rank(comm);
    const long per_rank = (long)o->batch * o->accum, per_step = per_rank * world;
    res->total_steps = o->tokens / ((long)T * per_step);
    if (res->total_steps < 1) res->total_steps = 1;
    st->options_hash = options_hash(o, data, &student->layout, world);
    st->seed = o->seed;
    if (start_state(o, st, &ck, student, comm, res) != 0) {
        rc = -1;
        goto done;
    }
    size_t g_lo = student->layout.total, g_hi = 0; /* the gradients the all-reduce covers: every trained span */
    for (int i = 0; i < nspan; i++) {
        if (spans[i].off < g_lo) g_lo = spans[i].off;
        if (spans[i].off + spans[i].n > g_hi) g_hi = spans[i].off + spans[i].n;
    }
    if (o->window_log) win_ids = gf_calloc((size_t)per_step, sizeof *win_ids);
    if (o->window_log && rank == 0 && !(wlog = fopen(o->window_log, res->resumed_from >= 0 ? "a" : "w"))) {
        rc = gf_fail("cannot write the window log %s", o->window_log);
        goto done;
    }
    const lr_schedule sched = {o->schedule, (long)(o->warmup_frac * res->total_steps + 0.5), res->total_steps,
                               o->min_lr_ratio};
    const double scale = 1.0 / ((double)per_step * T);
    long last_good = res->resumed_from;
    while (st->step < res->total_steps) {
        const long step = st->step + 1;
        tf_zero_grads(student);
        be_zero(be, b.acc, 2);
        for (int mb = 0; mb < o->accum && rc == 0; mb++) {
            for (int i = 0; i < o->batch && rc == 0; i++) {
                const long g = st->data_cursor + rank * per_rank + (long)mb * o->batch + i;
                rc = train_data_get(data, g, tok + (size_t)i * T);
                if (win_ids) win_ids[rank * per_rank + (long)mb * o->batch + i] = (double)train_data_window(data, g);
            }
            if (rc == 0) rc = micro_batch(o, student, &b, tok, scale, n_conv);
        }
        if (rc != 0) {
            if (world == 1 && stop && atomic_load(stop)) { /* stopped inside the step: keep the last completed one */
                gf_clear_error();
                rc = 0;
                if (o->ckpt_path && checkpoint_write(o->ckpt_path, st, &ck) != 0) rc = -1;
                res->stopped_by = atomic_load(stop);
            }
            goto done;
        }
        /* the gradient of the global batch (and its summed loss): every rank the same values */
        if (comm && (comm_allreduce(comm, gf_at(student->grads, g_lo), g_hi - g_lo, GF_REDUCE_SUM) != 0 ||
                     comm_allreduce(comm, b.acc, 1, GF_REDUCE_SUM) != 0)) {
            rc = -1;
            goto done;
        }
        if (win_ids) { /* every rank filled its slots: the sum is the global batch's list */
            if (comm_allreduce_host(comm, win_ids, (size_t)per_step, GF_REDUCE_SUM) != 0) {
                rc = -1;
                goto done;
            }
            if (wlog) {
                fprintf(wlog, "step %ld:", step);
                for (long i = 0; i < per_step; i++) fprintf(wlog, " %.0f", win_ids[i]);
                fprintf(wlog, "\n");
                fflush(wlog);
            }
            memset(win_ids, 0, (size_t)per_step * sizeof *win_ids);
        }
        for (int i = 0; i < nspan; i++) be_sumsq(be, gf_at(b.acc, 1), gf_at(student->grads, spans[i].off), spans[i].n);
        double acc[2] = {NAN, NAN};
        if ((rc = be_download(be, acc, GF_F64, b.acc, 2)) != 0 || (rc = be_sync(be)) != 0) goto done;
        const double loss = acc[0] * scale / (o->phase == PHASE_ALIGN ? n_conv : 1), gnorm = sqrt(acc[1]);
        if (!isfinite(loss) || !isfinite(gnorm)) {
            char kept[256] = "no checkpoint was written";
            if (o->ckpt_path && last_good >= 0)
                snprintf(kept, sizeof kept, "the last good checkpoint is %s (step %ld)", o->ckpt_path, last_good);
            rc = gf_fail("non-finite %s (%g) at step %ld; training stopped, %s", isfinite(loss) ? "gradient norm" : "loss",
                         isfinite(loss) ? gnorm : loss, step, kept);
            goto done;
        }
        const double clipf = o->clip > 0 && gnorm > o->clip ? o->clip / gnorm : 1.0;
        const double lrf = lr_factor(&sched, step);
        for (int i = 0; i < nspan; i++) {
            const gf_adamw h = {(float)(spans[i].lr * lrf), (float)o->beta1, (float)o->beta2, (float)o->eps,
                                (float)o->weight_decay, (int)step, (float)clipf};
            const size_t off = spans[i].off;
            be_adamw(be, gf_at(student->master, off),
                     !gf_same(student->master, student->params) ? gf_at(student->params, off) : gf_none(),
                     gf_at(student->grads, off), gf_at(b.m, off), gf_at(b.v, off), spans[i].n, &h);
        }
        if ((rc = be_sync(be)) != 0) goto done;
        st->step = step;
        st->data_cursor += per_step;
        st->tokens += per_step * T;
        curve_push(&st->loss, (double)st->tokens, loss);
        if (o->on_step && rank == 0) o->on_step(o->ud, step, res->total_steps, st->tokens, loss, o->lr_mixer * lrf, gnorm);
        const bool last = step == res->total_steps;
        if (!last && o->eval_every > 0 && step % o->eval_every == 0 && evaluate(o, student, data, res, stop) != 0) {
            rc = -1;
            goto done;
        }
        /* ranks stop together: after the step in which any of them saw the signal */
        double stop_sig = stop ? atomic_load(stop) : 0;
        if (comm_allreduce_host(comm, &stop_sig, 1, GF_REDUCE_MAX) != 0) {
            rc = -1;
            goto done;
        }
        const bool stopping = stop_sig > 0;
        if (o->ckpt_path && (stopping || (o->ckpt_every > 0 && step % o->ckpt_every == 0) || last)) {
            if (last && evaluate(o, student, data, res, stop) != 0) {
                rc = -1;
                goto done;
            }
            if (rank == 0 && checkpoint_write(o->ckpt_path, st, &ck) != 0) { /* written once */
                rc = -1;
                goto done;
            }
            if (rank == 0 && o->ckpt_keep && keep_checkpoint(o->ckpt_path, step) != 0) {
                rc = -1;
                goto done;
            }
            last_good = step;
        }
        if (stopping) {
            res->stopped_by = (int)stop_sig;
            goto done;
        }
    }
    /* the final evaluation (also when resuming a finished run) */
    if (st->eval.n == 0 || st->eval.xy[2 * (st->eval.n - 1)] != (double)st->tokens) {
        if (evaluate(o, student, data, res, stop) != 0) rc = -1;
    } else {
        res->final_eval_ppl = st->eval.xy[2 * (st->eval.n - 1) + 1];
    }
done:
    if (wlog) fclose(wlog);
    free(win_ids);
    bufs_free(be, &b, L);
    free(tok);
    free(spans);
    return rc;
}
