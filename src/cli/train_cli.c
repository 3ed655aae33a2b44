#include "cli/train_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "select/select.h"
#include "train/params.h"

void train_cli_default(train_cli *c) {
    memset(c, 0, sizeof *c);
    c->keep = NAN;
    train_opts_default(&c->to, PHASE_KL);
    c->to.lr_mixer = NAN; /* NaN: take the phase default */
    c->to.lr_rest = NAN;
    c->eval_frac = 0.05;
    c->log_every = 10;
}

bool train_cli_converts(const train_cli *c) { return c->strategy || !isnan(c->keep); }

int train_cli_convert_mask(const train_cli *c, int L, bool *conv) {
    strategy_spec ss;
    const char *strategy = c->strategy ? c->strategy : "uniform";
    if (strategy_parse(strategy, L, &ss) != 0) return -1;
    for (int l = 0; l < L; l++) conv[l] = true;
    if (ss.kind == STRATEGY_MANUAL) {
        for (int i = 0; i < ss.n_manual; i++) conv[ss.manual[i]] = false;
    } else if (ss.kind == STRATEGY_UNIFORM) {
        int k;
        if (isnan(c->keep)) return gf_fail("--strategy uniform needs --keep R (a ratio in (0, 1))");
        if (keep_count(c->keep, L, &k) != 0) return -1;
        int *kept = gf_calloc((size_t)(k ? k : 1), sizeof *kept);
        select_uniform(L, k, kept);
        for (int i = 0; i < k; i++) conv[kept[i]] = false;
        free(kept);
    } else {
        return gf_fail("--strategy %s scores layers on calibration text: build the student with graft convert "
                       "--strategy %s (graft race: with --calib or --data)", strategy, strategy);
    }
    for (int l = 0; l < L; l++)
        if (conv[l]) return 0;
    return gf_fail("--keep / --strategy keep attention in every one of the %d layers: nothing to convert", L);
}

void layer_list_text(const bool *conv, int L, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    for (int l = 0; l < L && len < n; l++)
        if (conv[l]) len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? "," : "", l);
}

cJSON *curve_json(const curve *c) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < c->n; i++) {
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->xy[2 * i]));
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->xy[2 * i + 1]));
        cJSON_AddItemToArray(a, pt);
    }
    return a;
}

int train_cli_finish(train_cli *c, const char *cmd) {
    train_phase ph = PHASE_KL;
    if (c->phase && train_phase_parse(c->phase, &ph) != 0) goto bad;
    train_opts d;
    train_opts_default(&d, ph);
    c->to.phase = ph;
    if (isnan(c->to.lr_mixer)) c->to.lr_mixer = d.lr_mixer;
    if (isnan(c->to.lr_rest)) c->to.lr_rest = d.lr_rest;
    if (c->schedule && lr_shape_parse(c->schedule, &c->to.schedule) != 0) goto bad;
    if (!c->teacher) {
        gf_fail("--teacher MODEL is required");
        goto bad;
    }
    if (c->to.ctx < 2 || c->to.batch < 1 || c->to.accum < 1 || c->to.tokens < 1) {
        gf_fail("--ctx must be >= 2, --batch, --accum and --tokens >= 1");
        goto bad;
    }
    if (!(c->to.warmup_frac >= 0 && c->to.warmup_frac <= 1) || !(c->noise >= 0) || c->log_every < 0) {
        gf_fail("--warmup-frac must be in [0, 1], --noise and --log-every >= 0");
        goto bad;
    }
    return 0;
bad:
    fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
    return 2;
}

static uint64_t sm(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double gauss(uint64_t *s) {
    double u1 = ((double)(sm(s) >> 11) + 0.5) / 9007199254740992.0, u2 = (double)(sm(s) >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void perturb(float *a, size_t n, double rel, uint64_t *s) {
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (double)a[i] * a[i];
    const double std = rel * sqrt(ss / (n ? n : 1));
    for (size_t i = 0; i < n; i++) a[i] += (float)(std * gauss(s));
}

int cli_student_init_check(const char *init) {
    if (strcmp(init, "copy") && strcmp(init, "random") && strcmp(init, "zero-gate") && strcmp(init, "small-gate"))
        return gf_fail("init '%s' needs calibration, which a student built in memory does not have (copy, "
                       "random, zero-gate, small-gate; for the others make student folders with graft convert)",
                       init);
    return 0;
}

int cli_student_build(cli_student *s, const model *src, const train_cli *c, const char *init, uint64_t seed) {
    memset(s, 0, sizeof *s);
    const model_config *cfg = &src->cfg;
    const bool is_copy = strcmp(init, "copy") == 0;
    if (cli_student_init_check(init) != 0) return -1;
    if (!is_copy && !train_cli_converts(c))
        return gf_fail("init '%s' needs the layers to convert (--keep R, or --strategy manual:KEPT)", init);
    model_weights_alloc(&s->w, cfg);
    memcpy(s->w.block, src->w.block, s->w.n_floats * sizeof(float));
    const train_mixer *mixers = NULL;
    if (!is_copy) {
        bool *conv = gf_calloc((size_t)cfg->n_layers, sizeof *conv);
        int rc = train_cli_convert_mask(c, cfg->n_layers, conv);
        if (rc == 0) rc = hybrid_random_gdn(&s->hyb, cfg, &s->w, conv, seed);
        free(conv);
        if (rc != 0) {
            model_weights_free(&s->w);
            return -1;
        }
        s->has_hyb = true;
        for (int l = 0; l < cfg->n_layers; l++) {
            gdn_params *p = &s->hyb.gdn[l].p;
            if (!p->block) continue;
            const size_t n = (size_t)cfg->n_heads * cfg->head_dim * cfg->dim;
            for (size_t i = 0; i < n; i++) p->wg[i] = strcmp(init, "zero-gate") == 0 ? 0.0f
                                                   : strcmp(init, "small-gate") == 0 ? p->wg[i] * 0.02f
                                                                                     : p->wg[i];
        }
        mixers = s->hyb.mixers;
    }
    if (train_model_init(&s->tm, cfg, &s->w, false, true, mixers, c->to.ctx) != 0) {
        cli_student_free(s);
        return -1;
    }
    if (c->noise > 0) { /* teacher-format tensors only, each with its own scale */
        uint64_t rs = seed ^ 0xA5A5A5A5ull;
        param_list pl;
        param_list_build(&pl, &s->tm);
        for (int i = 0; i < pl.n; i++)
            if (!pl.t[i].is_gdn) perturb(pl.t[i].p, pl.t[i].n, c->noise, &rs);
        param_list_free(&pl);
    }
    return 0;
}

void cli_student_free(cli_student *s) {
    train_model_free(&s->tm);
    if (s->has_hyb) hybrid_mixers_free(&s->hyb);
    model_weights_free(&s->w);
    memset(s, 0, sizeof *s);
}

int cli_train_data(train_data *d, const model *teacher, const train_cli *c) {
    if (c->data) {
        if (!teacher->tok) return gf_fail("%s has no tokenizer (pass --tokenizer PATH)", teacher->path);
        return train_data_open(d, c->data, teacher->tok, c->to.ctx, c->eval_frac, c->to.seed);
    }
    return train_data_sampled(d, teacher, c->to.ctx, c->to.eval_seqs > 0 ? c->to.eval_seqs : 16, c->to.seed);
}
