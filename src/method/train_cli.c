#include "method/train_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/mem_check.h"
#include "method/reports.h"
#include "method/method_opts.h"
#include "method/opt_limits.h"
#include "core/error.h"
#include "core/rng.h"
#include "select/select.h"
#include "convert/build.h"
#include "student/student_io.h"

void train_cli_default(train_cli *c) {
    memset(c, 0, sizeof *c);
    c->keep = NAN;
    train_opts_default(&c->to, PHASE_KL);
    c->to.lr_mixer = NAN; /* NaN: take the phase default */
    c->to.lr_rest = NAN;
    c->eval_frac = 0.05;
    c->log_every = 10;
    c->recall_samples = 2;
}

static void print_recall(void *ud, long step, long tokens, double value) {
    (void)ud;
    fprintf(stderr, "recall at step %ld (%ld tokens): %.1f %%\n", step, tokens, 100 * value);
}

static void dump_sample(void *ud, const recall_sample *s) {
    const train_cli *c = ud;
    const recall_dump_at at = {c->recall_label, c->probe.step, c->probe.tokens};
    recall_dump_sample(c->recall_dump_f, s, c->probe.teacher->tok, &at);
}

int train_cli_recall_dump_open(train_cli *c, bool append) {
    if (!c->recall_dump) return 0;
    if (!(c->recall_dump_f = fopen(c->recall_dump, append ? "a" : "w")))
        return gf_fail("--recall-dump %s: cannot be written (%s)", c->recall_dump, strerror(errno));
    return 0;
}

void train_cli_recall_run(train_cli *c, int run, const char *label) {
    c->probe.run = run;
    c->recall_label = label;
}

cJSON *train_cli_recall_cells_json(const train_cli *c, int run) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < c->probe.n_points; i++) {
        const recall_probe_point *pt = &c->probe.points[i];
        if (pt->run != run) continue;
        cJSON *point = cJSON_CreateArray(), *cells = cJSON_CreateArray();
        cJSON_AddItemToArray(point, cJSON_CreateNumber((double)pt->tokens));
        for (int k = 0; k < pt->n_cells; k++) cJSON_AddItemToArray(cells, recall_cell_json(&pt->cells[k]));
        cJSON_AddItemToArray(point, cells);
        cJSON_AddItemToArray(a, point);
    }
    return a;
}

int train_cli_recall_close(train_cli *c) {
    int rc = 0;
    if (c->recall_dump_f && fclose(c->recall_dump_f) != 0)
        rc = gf_fail("--recall-dump %s: write error", c->recall_dump);
    c->recall_dump_f = NULL;
    recall_probe_free(&c->probe);
    return rc;
}

int train_cli_recall(train_cli *c, const model *teacher) {
    if (c->recall_every <= 0) return 0;
    recall_probe_default(&c->probe, teacher, 1024);
    recall_request *rq = &c->probe.rq;
    rq->samples = c->recall_samples;
    rq->seed = c->to.seed;
    if ((c->recall_tasks && recall_parse_tasks(rq, c->recall_tasks) != 0) ||
        (c->recall_lengths && recall_parse_lengths(rq, c->recall_lengths) != 0) ||
        recall_check_prompts(teacher, rq) != 0)
        return gf_fail_prefix("--recall-every");
    c->to.measure_every = c->recall_every;
    c->to.measure = recall_probe_measure;
    c->to.mud = &c->probe;
    c->to.on_measure = print_recall;
    if (c->recall_dump_f) {
        c->probe.on_sample = dump_sample;
        c->probe.sample_ud = c;
    }
    return 0;
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

void train_plan_fill(mem_job *j, void *ud) {
    const train_plan *p = ud;
    const train_cli *tc = p->tc;
    const int L = j->cfg->n_layers;
    int n = 0;
    student_settings set;
    student_settings_default(&set);
    j->teachers = p->teachers > 0 ? p->teachers : 1;
    for (int i = 0; i < p->n_folders; i++) { /* the largest student among the folders */
        int ni;
        student_settings si;
        if (student_folder_peek(p->folders[i], &ni, &si) == 0 && ni >= n) n = ni, set = si;
    }
    if (p->n_folders == 0 && train_cli_converts(tc)) { /* built from the teacher by --keep / --strategy */
        bool *conv = gf_calloc((size_t)(L > 0 ? L : 1), sizeof *conv);
        int k;
        if (train_cli_convert_mask(tc, L, conv) == 0)
            for (int l = 0; l < L; l++) n += conv[l];
        else if (!isnan(tc->keep) && keep_count(tc->keep, L, &k) == 0) /* ar / ga-s2: k layers keep attention */
            n = L - k;
        free(conv);
    }
    if (p->builder) {
        const method_cli *mo = p->method;
        if (mo && method_cli_settings(mo, (long)tc->to.seed, INIT_TAYLOR_CALIBRATE, &set) != 0) student_settings_default(&set);
        set.init = INIT_TAYLOR_CALIBRATE; /* the heaviest build of any init */
        if (mo) {
            cli_mem_capture(j, 0, &mo->split);
            cli_mem_build(j, &mo->split, true, n);
        }
    }
    gf_clear_error(); /* options are reported by the command itself */
    if (n > L) n = L;
    cli_mem_gdn(j, &set);
    j->gdn_blocks = p->n_folders > 0 || p->builder ? n : 0; /* the student's own blocks beside its trainable copy */
    j->train_B = tc->to.batch;
    j->train_T = tc->to.ctx;
    j->train_gdn = n;
    /* train_eval_nll: batches of min(batch, evaluation sequences) */
    j->eval_B = tc->to.eval_seqs > 0 && tc->to.eval_seqs < tc->to.batch ? tc->to.eval_seqs : tc->to.batch;
    j->align = tc->to.phase == PHASE_ALIGN;
    j->recompute = tc->to.recompute;
    j->sample_B = tc->data ? 0 : TRAIN_DATA_SAMPLE_BLOCK; /* no corpus: sequences sampled from the teacher */
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
    if (c->recompute && strcmp(c->recompute, "auto") && strcmp(c->recompute, "on") && strcmp(c->recompute, "off")) {
        gf_fail("--recompute takes auto, on or off, not '%s'", c->recompute);
        goto bad;
    }
    c->to.recompute = c->recompute && !strcmp(c->recompute, "on");
    /* auto: the memory check turns it on when the job fits only with it */
    if (!c->recompute || !strcmp(c->recompute, "auto")) cli_mem_allow_recompute(&c->to.recompute);
    if (!c->teacher) {
        gf_fail("--teacher MODEL is required");
        goto bad;
    }
    /* the parser checked what was given; the phase defaults are checked here too */
    if (opt_check("ctx", c->to.ctx) || opt_check("batch", c->to.batch) || opt_check("accum", c->to.accum) ||
        opt_check("tokens", (double)c->to.tokens) || opt_check("lr-mixer", c->to.lr_mixer) ||
        opt_check("lr-rest", c->to.lr_rest) || opt_check("warmup-frac", c->to.warmup_frac) ||
        opt_check("noise", c->noise) || opt_check("log-every", c->log_every))
        goto bad;
    if (c->recall_every < 0) {
        gf_fail("--recall-every must be >= 0 (0: off), got %ld", (long)c->recall_every);
        goto bad;
    }
    if (c->recall_samples < 1) {
        gf_fail("--recall-samples must be >= 1, got %d", c->recall_samples);
        goto bad;
    }
    if (c->recall_dump && c->recall_every <= 0) {
        gf_fail("--recall-dump needs --recall-every N (the evaluations whose recall samples it writes)");
        goto bad;
    }
    return 0;
bad:
    fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
    return 2;
}

/* a += N(0, (rel * rms(a))^2) on the host copy of one tensor. */
static void perturb(float *a, size_t n, double rel, rng64 *r) {
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (double)a[i] * a[i];
    const double std = rel * sqrt(ss / (n ? n : 1));
    for (size_t i = 0; i < n; i++) a[i] += (float)(std * rng_normal(r));
}

/* The inits without Stage 1 or Stage 2 need no calibration (student_inits). */
int cli_student_init_check(const char *init) {
    char list[160] = "copy";
    size_t n = strlen(list);
    bool ok = strcmp(init, "copy") == 0;
    for (int i = 0; i < INIT_COUNT; i++)
        if (!init_uses_stage1((student_init)i) && !init_uses_stage2((student_init)i)) {
            ok = ok || strcmp(init, student_inits[i].name) == 0;
            n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, ", %s", student_inits[i].name);
        }
    if (!ok)
        return gf_fail("init '%s' needs calibration, which a student built in memory does not have (%s; for the "
                       "others make student folders with graft convert)", init, list);
    return 0;
}

int cli_student_build(cli_student *s, const model *src, const train_cli *c, const char *init, uint64_t seed) {
    memset(s, 0, sizeof *s);
    const model_config *cfg = &src->cfg;
    const int L = cfg->n_layers;
    const bool is_copy = strcmp(init, "copy") == 0;
    if (cli_student_init_check(init) != 0) return -1;
    if (!is_copy && !train_cli_converts(c))
        return gf_fail("init '%s' needs the layers to convert (--keep R, or --strategy manual:KEPT)", init);
    int rc = 0;
    if (is_copy) {
        rc = tf_trainable(&s->tm, src, NULL, NULL, NULL);
    } else { /* the one random-init path: engine/student, as graft convert --init random */
        bool *conv = gf_calloc((size_t)L, sizeof *conv);
        mixer_kind *kinds = gf_calloc((size_t)L, sizeof *kinds);
        student st;
        student_settings set;
        student_settings_default(&set);
        set.seed = seed;
        rc = train_cli_convert_mask(c, L, conv);
        if (rc == 0) rc = student_init_parse(init, &set.init);
        if (rc == 0 && (rc = student_init_empty(&st, (model *)src, &set)) == 0) {
            rc = student_build_layers(&st, conv, NULL, NULL, NULL);
            for (int l = 0; l < L; l++) kinds[l] = conv[l] ? MIX_GDN : MIX_ATTN;
            if (rc == 0) rc = tf_trainable(&s->tm, src, &st.gcfg, kinds, st.gdn);
            student_free(&st);
        }
        free(conv);
        free(kinds);
    }
    if (rc != 0) return -1;
    if (c->noise > 0) { /* teacher-format tensors only, each with its own scale */
        rng64 r;
        rng_seed(&r, seed ^ 0xA5A5A5A5ull);
        const param_layout *pl = &s->tm.layout;
        for (int i = 0; i < pl->n && rc == 0; i++) {
            if (pl->t[i].kind == TK_GDN) continue;
            float *x = gf_malloc(pl->t[i].n * sizeof *x);
            const gf_buf v = gf_at(s->tm.master, pl->t[i].off);
            rc = be_download(s->tm.be, x, GF_F32, v, pl->t[i].n);
            perturb(x, pl->t[i].n, c->noise, &r);
            if (rc == 0) rc = be_upload(s->tm.be, v, x, GF_F32, pl->t[i].n);
            free(x);
        }
        if (rc == 0 && !gf_same(s->tm.master, s->tm.params))
            be_copy(s->tm.be, s->tm.params, s->tm.master, pl->total);
    }
    if (rc != 0) cli_student_free(s);
    return rc;
}

void cli_student_free(cli_student *s) {
    tf_free(&s->tm);
    memset(s, 0, sizeof *s);
}

int cli_train_data(train_data *d, const model *teacher, const train_cli *c) {
    if (c->data) {
        if (!teacher->tok) return gf_fail("%s has no tokenizer (pass --tokenizer PATH)", teacher->path);
        return train_data_open(d, c->data, teacher->tok, c->to.ctx, c->eval_frac, c->to.seed);
    }
    return train_data_sampled(d, teacher, c->to.ctx, c->to.eval_seqs > 0 ? c->to.eval_seqs : 16, c->to.seed);
}
