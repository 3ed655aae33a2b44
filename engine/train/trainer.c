#include "train/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "optim/adamw.h"
#include "train/losses.h"
#include "train/params.h"

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

void train_result_free(train_result *r) { train_state_free(&r->st); }

/* FNV-1a over the options that must match for a resume to be exact. */
static uint64_t options_hash(const train_opts *o, const train_data *d, const param_list *pl) {
    char s[512];
    int n = snprintf(s, sizeof s, "%d %d %d %d %ld %.17g %.17g %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
                     "%llu %d %d %d %zu",
                     o->phase, o->ctx, o->batch, o->accum, o->tokens, o->lr_mixer, o->lr_rest, o->schedule,
                     o->warmup_frac, o->min_lr_ratio, o->beta1, o->beta2, o->eps, o->weight_decay, o->clip,
                     o->temperature, (unsigned long long)o->seed, d->sampled, d->n_train, pl->n, pl->total);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n && i < (int)sizeof s; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static bool is_trained(const train_model *tm, const param_tensor *t) {
    if (t->group == PGROUP_REST) return tm->grad_rest;
    return t->is_gdn ? tm->grad_mixer : tm->grad_attn;
}

int train_eval_nll(train_model *student, const train_data *data, int n, double *nll) {
    const int T = data->ctx, V = student->cfg.vocab_size;
    if (n <= 0 || n > data->n_eval) n = data->n_eval;
    double total = 0;
    for (int i = 0; i < n; i++) {
        const int *seq = train_data_eval(data, i);
        if (train_forward(student, seq, T) != 0) return -1;
        train_logits(student, T);
        total += loss_ce_rows(NULL, student->logits, seq + 1, T - 1, V, 1);
    }
    *nll = total / ((double)n * (T - 1));
    return 0;
}

static int evaluate(const train_opts *o, train_model *student, train_data *data, train_result *res) {
    double nll;
    if (train_eval_nll(student, data, o->eval_seqs, &nll) != 0) return -1;
    res->final_eval_ppl = exp(nll);
    curve_push(&res->st.eval, (double)res->st.tokens, res->final_eval_ppl);
    if (o->on_eval) o->on_eval(o->ud, res->st.step, res->st.tokens, res->final_eval_ppl);
    return 0;
}

/* One sequence: forward both, loss, backward. Returns the summed loss. */
static int sequence_step(const train_opts *o, train_model *s, train_model *t, const int *seq, double scale,
                         float **dafter, int n_conv, double *loss) {
    const int T = o->ctx, L = s->cfg.n_layers, D = s->cfg.dim;
    if (train_forward(t, seq, T) != 0 || train_forward(s, seq, T) != 0) return -1;
    if (o->phase == PHASE_KL) {
        train_logits(t, T);
        train_logits(s, T);
        *loss += loss_kl_rows(s->dlogits, s->logits, t->logits, T, s->cfg.vocab_size, (float)o->temperature,
                              (float)scale);
        return train_backward(s, seq, T, s->dlogits, NULL);
    }
    double sum = 0;
    for (int l = 0; l < L; l++) {
        if (!dafter[l]) continue;
        memset(dafter[l], 0, (size_t)T * D * sizeof(float));
        sum += loss_align_rows(dafter[l], train_layer_output(s, l), train_layer_output(t, l), T, D,
                               (float)(scale / n_conv));
    }
    *loss += sum / n_conv;
    return train_backward(s, seq, T, NULL, dafter);
}

int train_run(const train_opts *o, train_model *student, train_model *teacher, train_data *data,
              atomic_int *stop, train_result *res) {
    memset(res, 0, sizeof *res);
    res->resumed_from = -1;
    const model_config *c = &student->cfg;
    const int L = c->n_layers, T = o->ctx;
    if (o->ctx != data->ctx || o->ctx > student->max_T || o->ctx > teacher->max_T)
        return gf_fail("sequence length %d does not fit the data (%d) or the models", o->ctx, data->ctx);
    if (teacher->cfg.vocab_size != c->vocab_size || teacher->cfg.dim != c->dim || teacher->cfg.n_layers != L)
        return gf_fail("teacher and student shapes differ (vocab %d/%d, dim %d/%d, layers %d/%d)",
                       teacher->cfg.vocab_size, c->vocab_size, teacher->cfg.dim, c->dim, teacher->cfg.n_layers, L);
    if (o->batch < 1 || o->accum < 1) return gf_fail("--batch and --accum must be at least 1");
    if (o->tokens < 1) return gf_fail("--tokens must be positive");
    int n_conv = 0;
    for (int l = 0; l < L; l++) n_conv += train_model_is_mixer_layer(student, l);
    if (o->phase == PHASE_ALIGN && n_conv == 0)
        return gf_fail("phase align trains converted (GDN) layers, and this student has none");
    if (o->lr_mixer < 0 || o->lr_rest < 0) return gf_fail("learning rates must be >= 0");
    student->grad_mixer = o->lr_mixer > 0;
    student->grad_attn = o->phase == PHASE_KL && o->lr_mixer > 0;
    student->grad_rest = o->phase == PHASE_KL && o->lr_rest > 0;
    if (!student->grad_mixer && !student->grad_attn && !student->grad_rest)
        return gf_fail("every parameter group is frozen (learning rates are 0)");

    param_list pl;
    param_list_build(&pl, student);
    float *m = gf_calloc(pl.total ? pl.total : 1, sizeof(float));
    float *v = gf_calloc(pl.total ? pl.total : 1, sizeof(float));
    float **dafter = gf_calloc((size_t)L, sizeof *dafter);
    if (o->phase == PHASE_ALIGN)
        for (int l = 0; l < L; l++)
            if (train_model_is_mixer_layer(student, l)) dafter[l] = gf_malloc((size_t)T * c->dim * sizeof(float));
    int *seq = gf_malloc((size_t)T * sizeof(int));
    int rc = 0;
    student->cancel = teacher->cancel = stop; /* checked between layers */
    train_state *st = &res->st;
    const long per_step = (long)o->batch * o->accum;
    res->total_steps = o->tokens / ((long)T * per_step);
    if (res->total_steps < 1) res->total_steps = 1;
    st->options_hash = options_hash(o, data, &pl);
    st->seed = o->seed;
    if (o->resume && o->ckpt_path && access(o->ckpt_path, F_OK) == 0) {
        train_state got;
        if (checkpoint_read(o->ckpt_path, &got, &pl, m, v) != 0) {
            rc = -1;
            goto done;
        }
        if (got.options_hash != st->options_hash) {
            train_state_free(&got);
            rc = gf_fail("%s was written by a run with other options or data; resume with the same ones",
                         o->ckpt_path);
            goto done;
        }
        *st = got;
        res->resumed_from = st->step;
    }
    const lr_schedule sched = {o->schedule, (long)(o->warmup_frac * res->total_steps + 0.5), res->total_steps,
                               o->min_lr_ratio};
    const double scale = 1.0 / ((double)per_step * T);
    long last_good = res->resumed_from;
    while (st->step < res->total_steps) {
        const long step = st->step + 1;
        train_zero_grads(student);
        double loss = 0;
        for (long i = 0; i < per_step && rc == 0; i++) {
            rc = train_data_get(data, st->data_cursor + i, seq);
            if (rc == 0) rc = sequence_step(o, student, teacher, seq, scale, dafter, n_conv, &loss);
        }
        if (rc != 0) {
            if (stop && atomic_load(stop)) { /* stopped inside the step: keep the last completed one */
                gf_clear_error();
                rc = 0;
                if (o->ckpt_path && checkpoint_write(o->ckpt_path, st, &pl, m, v) != 0) rc = -1;
                res->stopped_by = atomic_load(stop);
            }
            goto done;
        }
        loss *= scale;
        double ss = 0;
        for (int i = 0; i < pl.n; i++)
            if (is_trained(student, &pl.t[i])) ss += sum_squares(pl.t[i].g, pl.t[i].n);
        const double gnorm = sqrt(ss);
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
        size_t off = 0;
        for (int i = 0; i < pl.n; i++) {
            param_tensor *t = &pl.t[i];
            if (is_trained(student, t)) {
                if (clipf != 1.0) scale_floats(t->g, t->n, clipf);
                const double lr = (t->group == PGROUP_MIXER ? o->lr_mixer : o->lr_rest) * lrf;
                adamw_step(t->p, t->g, m + off, v + off, t->n, (float)lr, (float)o->beta1, (float)o->beta2,
                           (float)o->eps, (float)o->weight_decay, step);
            }
            off += t->n;
        }
        st->step = step;
        st->data_cursor += per_step;
        st->tokens += per_step * T;
        curve_push(&st->loss, (double)st->tokens, loss);
        if (o->on_step) o->on_step(o->ud, step, res->total_steps, st->tokens, loss, o->lr_mixer * lrf, gnorm);
        const bool last = step == res->total_steps;
        if (!last && o->eval_every > 0 && step % o->eval_every == 0 && evaluate(o, student, data, res) != 0) {
            rc = -1;
            goto done;
        }
        const bool stopping = stop && atomic_load(stop);
        if (o->ckpt_path && (stopping || (o->ckpt_every > 0 && step % o->ckpt_every == 0) || last)) {
            if (last && evaluate(o, student, data, res) != 0) {
                rc = -1;
                goto done;
            }
            if (checkpoint_write(o->ckpt_path, st, &pl, m, v) != 0) {
                rc = -1;
                goto done;
            }
            last_good = step;
        }
        if (stopping) {
            res->stopped_by = atomic_load(stop);
            goto done;
        }
    }
    /* the final evaluation (also when resuming a finished run) */
    if (st->eval.n == 0 || st->eval.xy[2 * (st->eval.n - 1)] != (double)st->tokens) {
        if (evaluate(o, student, data, res) != 0) rc = -1;
    } else {
        res->final_eval_ppl = st->eval.xy[2 * (st->eval.n - 1) + 1];
    }
done:
    student->cancel = teacher->cancel = NULL;
    free(seq);
    for (int l = 0; l < L; l++) free(dafter[l]);
    free(dafter);
    free(m);
    free(v);
    param_list_free(&pl);
    return rc;
}
