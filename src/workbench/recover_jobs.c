#include "workbench/recover_jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/artifact.h"
#include "method/convert.h"
#include "method/method_opts.h"
#include "method/place_lock.h"
#include "method/plan.h"
#include "method/request.h"
#include "method/race_run.h"
#include "core/error.h"
#include "hub/cache.h"
#include "select/select.h"
#include "workbench/build_progress.h"
#include "workbench/job_cost.h"
#include "workbench/json_file.h"
#include "workbench/result_request.h"
#include "workbench/stage1_choice.h"
#include "workbench/wb_event.h"
#include "student/student.h"

static const student_init race_inits[2] = {INIT_RANDOM, INIT_TAYLOR_CALIBRATE};

typedef struct {
    model *m;
    char *corpus, *ckpt_dir, *teacher_path;
    char teacher_name[160];
    double keep, lr_mixer, lr_rest;
    long tokens;
    stage1_choice s1; /* the teacher's Stage 1 options (taylor-calibrate's build) */
    long seed; /* graft tui --seed (graft race's default 1) */
    bool resume; /* continue each run from its checkpoint (an interrupted race; Recover's R) */
    bool recall; /* Settings' race recall: recall accuracy at four evaluations per run */
    result_req_text req_text; /* the strings of the race's request */
} race_arg;

/* What both rows of a race share: the race's options (the rest is each run's outcome). */
static void race_row_base(result_row *row, const char *corpus, const char *device, double keep, long tokens,
                          double lr_mixer, double lr_rest, const stage1_choice *s1, long seed) {
    result_row_init(row);
    row->kind = RUN_RACE;
    snprintf(row->strategy, sizeof row->strategy, "uniform");
    snprintf(row->corpus, sizeof row->corpus, "%s", corpus);
    snprintf(row->device, sizeof row->device, "%s", device);
    row->keep = keep;
    row->ctx = RECOVER_CTX;
    row->race_tokens = tokens;
    row->race_lr_mixer = lr_mixer;
    row->race_lr_rest = lr_rest;
    row->has_stage1 = true, row->stage1 = *s1; /* taylor-calibrate's build, in both rows' command */
    row->seed = seed;
}

/* The race on screen as graft race's request (what its checkpoints are keyed
 * by): the request of its Results rows, so that a row's command is this race. */
static int race_request(race_arg *a, request *r) {
    result_row row;
    char dev[16];
    wb_device_of(a->m->be, dev, sizeof dev);
    race_row_base(&row, a->corpus, dev, a->keep, a->tokens, a->lr_mixer, a->lr_rest, &a->s1, a->seed);
    if (result_request(&row, a->teacher_path, r, &a->req_text) != 0) return -1;
    r->u.race.tc.data = a->corpus; /* whole, where a row's copy is cut */
    return 0;
}

/* what the end of the job gets */
typedef struct {
    char labels[2][32];
    double target, ttt[2], ppl[2], ratio, keep, lr_mixer, lr_rest;
    double teacher_ppl;       /* the teacher on the same held-out sequences as ppl[] (NaN: not measured) */
    int eval_seqs;            /* how many held-out sequences of RECOVER_CTX tokens */
    int window, steps[2];
    long tokens;
    char converted[256], kept[128], corpus[200], teacher[160], device[16];
    stage1_choice s1;
    long seed;
} race_result;

typedef struct {
    job_ctx *ctx;
    race_arg *a;
    train_cli *tc;
    char *conv_buf;
    size_t conv_size;
    int run;                  /* the run training now */
    const char *label, *ckpt;
    char ckpt_buf[1024];      /* ckpt's copy: race_run's own buffer is gone once it returns */
    double t0;                /* when this run's training began */
    int n_conv;               /* converted layers */
} race_live;

static char *phase_name(char *buf, size_t n, const char *what, int i) {
    snprintf(buf, n, "%s %s", what, student_init_name(race_inits[i]));
    return buf;
}

static int make_student(void *ud, int i, cli_student *s, train_student **handle, const char **label) {
    race_live *lv = ud;
    *label = student_init_name(race_inits[i]);
    if (job_cancelled(lv->ctx)) return gf_fail("cancelled");
    char ph[48];
    job_begin_phase(lv->ctx, phase_name(ph, sizeof ph, "build", i));
    char s1[48] = "";
    if (i) stage1_choice_label(&lv->a->s1, s1, sizeof s1);
    job_log(lv->ctx, "building the %s student (keep %.2f, uniform%s%s)", student_init_name(race_inits[i]), lv->a->keep,
            i ? ", stage1 " : "", s1);
    build_progress bp;
    build_progress_init(&bp, lv->ctx, lv->n_conv, 300 /* graft race's --steps default */);
    bp.phase = phase_name(ph, sizeof ph, "build", i);
    bp.s1 = i ? 0.1 : 0;
    bp.s2 = i ? 0.9 : 0;
    bp.total = 1;
    progress_sink sink = build_progress_sink(&bp);
    stage2_observer obs = build_progress_observer(&bp);
    method_cli mo; /* graft race's builder: convert's defaults and the teacher's Stage 1 options (as --stage1 ...) */
    method_cli_default(&mo);
    stage1_cli_text text;
    if (i) stage1_choice_to_cli(&lv->a->s1, &mo, &text);
    return train_student_build(s, handle, lv->a->m, student_init_name(race_inits[i]), "uniform", lv->a->keep,
                               lv->a->corpus, NULL, (long)lv->tc->to.seed, lv->tc->to.ctx, lv->conv_buf,
                               lv->conv_size, &mo, &sink, &obs);
}

static void run_started(void *ud, int i, const char *label, const char *ckpt) {
    race_live *lv = ud;
    lv->run = i, lv->label = label, lv->ckpt = NULL;
    if (ckpt) lv->ckpt = lv->ckpt_buf, snprintf(lv->ckpt_buf, sizeof lv->ckpt_buf, "%s", ckpt);
    lv->t0 = job_now();
    char ph[48];
    job_begin_phase(lv->ctx, phase_name(ph, sizeof ph, "train", i));
    job_log(lv->ctx, "training %s: layers %s converted, %ld tokens%s", label, lv->conv_buf, lv->a->tokens,
            lv->a->resume && ckpt ? " (resumed from its checkpoint where there is one)" : "");
}

static void on_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    (void)lr, (void)gnorm;
    race_live *lv = ud;
    wb_event e = {.kind = WB_RACE_POINT};
    snprintf(e.u.race_point.init, sizeof e.u.race_point.init, "%s", lv->label);
    e.u.race_point.tokens = (double)tokens;
    e.u.race_point.loss = loss;
    wb_emit(lv->ctx, &e);
    double dt = job_now() - lv->t0, rate = dt > 0 ? tokens / dt : 0;
    char label[64];
    snprintf(label, sizeof label, "%s step %ld/%ld, %.0f tokens/s", lv->label, step, total, rate);
    job_progress(lv->ctx, (double)tokens, (double)lv->a->tokens, label); /* within the "train <init>" phase */
    if (lv->ckpt && (step % RECOVER_CKPT_EVERY == 0 || step == total)) {
        wb_event c = {.kind = WB_RACE_CHECKPOINT};
        snprintf(c.u.race_checkpoint.init, sizeof c.u.race_checkpoint.init, "%s", lv->label);
        c.u.race_checkpoint.step = step;
        snprintf(c.u.race_checkpoint.path, sizeof c.u.race_checkpoint.path, "%s", lv->ckpt);
        wb_emit(lv->ctx, &c);
    }
}

static void on_recall(void *ud, long step, long tokens, double acc) {
    race_live *lv = ud;
    wb_event e = {.kind = WB_RECALL_POINT};
    snprintf(e.u.race_point.init, sizeof e.u.race_point.init, "%s", lv->label);
    e.u.race_point.tokens = (double)tokens;
    e.u.race_point.loss = acc;
    wb_emit(lv->ctx, &e);
    job_log(lv->ctx, "recall of %s at step %ld: %.1f %%", lv->label, step, 100 * acc);
}

static int race_job(job_ctx *ctx, void *argp) {
    race_arg *a = argp;
    int rc = -1;
    train_cli tc;
    train_cli_default(&tc);
    tc.teacher = "workbench";
    tc.data = a->corpus;
    tc.to.tokens = a->tokens;
    tc.to.ctx = RECOVER_CTX;
    tc.to.batch = RECOVER_BATCH;
    tc.to.lr_mixer = a->lr_mixer;
    tc.to.lr_rest = a->lr_rest;
    tc.to.ckpt_every = RECOVER_CKPT_EVERY;
    tc.to.seed = (uint64_t)a->seed;
    transformer tt = {0};
    train_data data = {0};
    race_outcome ro = {0};
    place_lock lock = {NULL, -1}; /* the checkpoint folder's, as graft race --ckpt-dir takes it */
    char conv[256] = "uniform";
    const int L = a->m->cfg.n_layers;
    int k = 0;
    bool *kept_mask = gf_calloc((size_t)L, sizeof *kept_mask);
    method_uniform_kept(L, a->keep, kept_mask, &k); /* the keep is checked when the race starts */
    free(kept_mask);
    race_live lv = {.ctx = ctx, .a = a, .tc = &tc, .conv_buf = conv, .conv_size = sizeof conv, .n_conv = L - k};
    /* weights: the builds (capture; Stage 1 and 300 Stage 2 steps for taylor-calibrate), then both runs */
    const double cap = cost_forward(a->m, 5.0 * 256, 256) + cost_tokenize(a->m, a->corpus);
    const double s2 = (L - k) * (cost_stage1_layer(a->m) + cost_stage2_layer(a->m, 300, 5, 256));
    const double run = (double)a->tokens / (RECOVER_CTX * RECOVER_BATCH) * cost_train_step(a->m, RECOVER_BATCH, RECOVER_CTX);
    const job_phase phases[] = {
        {"build random", cap}, {"train random", run}, {"build taylor-calibrate", cap + s2}, {"train taylor-calibrate", run},
    };
    job_set_phases(ctx, phases, 4);
    if (train_cli_finish(&tc, "race") != 0) goto done;
    {   /* what the race needs on its device (graft race's estimate), refused at once when it does not fit */
        method_cli mo;
        method_cli_default(&mo);
        train_cli uniform = tc; /* the builder keeps attention in a->keep of the layers, uniformly */
        uniform.keep = a->keep;
        uniform.strategy = "uniform";
        train_plan plan = {&uniform, 1, NULL, 0, true, &mo};
        mem_job j;
        mem_estimate e;
        gf_backend *be = a->m->be;
        mem_job_init(&j, &a->m->cfg, be_act(be), !be_is_host(be));
        j.tasks = be_tasks_at_once(be);
        train_plan_fill(&j, &plan);
        if (mem_estimate_job(&e, &j) != 0) goto done;
        char need[32], dev[32];
        mem_format(need, sizeof need, e.total);
        wb_device_of(be, dev, sizeof dev);
        job_log(ctx, "race: needs %s on %s (estimate, peak in %s)", need, dev, e.peak_phase);
        size_t f, t;
        if (!be_is_host(be) && (be_mem_info(be, &f, &t) != 0 || mem_check(e.total, f, dev, false) != 0)) goto done;
    }
    if (a->ckpt_dir) { /* state/race/<teacher>-<digest of the race's request>: another race never shares them */
        request req;
        char digest[ARTIFACT_DIGEST_HEX], teacher[64], leaf[128], note[1200];
        cJSON *id;
        if (race_request(a, &req) != 0 || artifact_identity(&req, &id, digest) != 0) goto done;
        cJSON_Delete(id);
        artifact_short_name(a->teacher_path, teacher, sizeof teacher);
        snprintf(leaf, sizeof leaf, "/%s-%.*s", teacher, ARTIFACT_SHORT, digest);
        char *dir = gf_malloc(strlen(a->ckpt_dir) + strlen(leaf) + 1);
        strcpy(dir, a->ckpt_dir);
        strcat(dir, leaf);
        free(a->ckpt_dir);
        a->ckpt_dir = dir;
        if (hub_mkdirs(a->ckpt_dir) != 0 ||
            place_lock_take(&lock, "race checkpoint folder", a->ckpt_dir, "wait for it to end, then race again") != 0 ||
            artifact_claim_record_dir(&req, a->ckpt_dir, false, "remove it to race again", digest, note, sizeof note) != 0)
            goto done;
        if (note[0]) job_log(ctx, "%s", note);
    }
    job_log(ctx, "race on %s: %ld tokens per init, ctx %d, batch %d, lr %g / %g, checkpoints in %s", a->corpus,
            a->tokens, RECOVER_CTX, RECOVER_BATCH, a->lr_mixer, a->lr_rest, a->ckpt_dir ? a->ckpt_dir : "-");
    if (tf_view(&tt, a->m, NULL, NULL, NULL) != 0) goto done;
    if (cli_train_data(&data, a->m, &tc) != 0) goto done;
    if (a->recall) { /* graft race --recall-every: at four evaluations of each run (and its last) */
        const long steps = a->tokens / ((long)RECOVER_CTX * RECOVER_BATCH);
        tc.recall_every = steps >= 4 ? steps / 4 : 1;
        tc.to.eval_every = tc.recall_every;
        if (train_cli_recall(&tc, a->m) != 0) goto done;
        tc.to.on_measure = on_recall;
    }
    tc.to.on_step = on_step;
    tc.to.ud = &lv;
    race_spec spec = {.n = 2, .make = make_student, .make_ud = &lv, .base = tc.to, .ckpt_dir = a->ckpt_dir,
                      .on_run = run_started, .run_ud = &lv, .stop = job_cancel_flag(ctx), .resume = a->resume};
    if (race_run(&spec, &tt, &data, &ro) != 0) goto done;
    if (ro.stopped) {
        job_log(ctx, "checkpoint %s step %ld (stopped): %s", lv.label, ro.res[ro.n_done - 1].st.step,
                lv.ckpt ? lv.ckpt : "none");
        if (lv.ckpt) { /* where the cancelled run can resume from */
            wb_event c = {.kind = WB_RACE_CHECKPOINT};
            snprintf(c.u.race_checkpoint.init, sizeof c.u.race_checkpoint.init, "%s", lv.label);
            c.u.race_checkpoint.step = ro.res[ro.n_done - 1].st.step;
            snprintf(c.u.race_checkpoint.path, sizeof c.u.race_checkpoint.path, "%s", lv.ckpt);
            wb_emit(ctx, &c);
        }
        gf_fail("cancelled (%s checkpointed to %s)", lv.label, lv.ckpt ? lv.ckpt : "-");
        goto done;
    }
    race_result *r = gf_calloc(1, sizeof *r);
    /* the teacher on exactly the held-out sequences each run is scored on (graft race's teacher_eval_ppl) */
    r->eval_seqs = tc.to.eval_seqs > 0 && tc.to.eval_seqs < data.n_eval ? tc.to.eval_seqs : data.n_eval;
    r->teacher_ppl = ro.teacher_ppl; /* race_run measured it */
    for (int i = 0; i < 2; i++) {
        snprintf(r->labels[i], sizeof r->labels[i], "%s", ro.labels[i]);
        r->ttt[i] = ro.ttt[i];
        r->ppl[i] = ro.res[i].final_eval_ppl;
        r->steps[i] = i ? 300 : 0;
    }
    r->target = ro.target, r->window = ro.window, r->ratio = race_ratio(&ro), r->keep = a->keep;
    r->lr_mixer = a->lr_mixer, r->lr_rest = a->lr_rest;
    r->tokens = a->tokens;
    snprintf(r->converted, sizeof r->converted, "%s", conv);
    { /* the layers keeping attention: those the builder did not convert (uniform, as graft race) */
        train_cli u = tc;
        u.keep = a->keep;
        u.strategy = "uniform";
        bool *conv = gf_calloc((size_t)L, sizeof *conv);
        if (train_cli_convert_mask(&u, L, conv) == 0)
            for (int l = 0, at = 0; l < L && at < (int)sizeof r->kept - 8; l++)
                if (!conv[l]) at += snprintf(r->kept + at, sizeof r->kept - (size_t)at, at ? ",%d" : "%d", l);
        free(conv);
    }
    snprintf(r->corpus, sizeof r->corpus, "%s", a->corpus);
    snprintf(r->teacher, sizeof r->teacher, "%s", a->teacher_name);
    wb_device_of(a->m->be, r->device, sizeof r->device);
    r->s1 = a->s1;
    r->seed = a->seed;
    job_set_result(ctx, r);
    rc = 0;
done:
    place_lock_release(&lock);
    train_cli_recall_close(&tc); /* the probe's kept measurements (no dump here) */
    race_outcome_free(&ro);
    train_data_free(&data);
    tf_free(&tt);
    free(a->corpus);
    free(a->ckpt_dir);
    free(a->teacher_path);
    free(a);
    return rc;
}

int recover_start_race(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = wb_ready(wb, st);
    if (!t) return -1;
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    race_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->teacher_path = gf_strdup(t->model_arg[0] ? t->model_arg : wb->m->path);
    a->seed = wb->seed;
    snprintf(a->teacher_name, sizeof a->teacher_name, "%s", t->name);
    a->keep = t->keep_ratio > 0 && t->keep_ratio < 1 ? t->keep_ratio : 0.5;
    a->tokens = st->settings.race_tokens;
    a->lr_mixer = st->settings.race_lr_mixer;
    a->lr_rest = st->settings.race_lr_rest;
    a->s1 = t->stage1;
    a->recall = st->settings.race_recall != 0;
    a->ckpt_dir = persist_path("XDG_STATE_HOME", ".local/state", "race"); /* NULL: no checkpoints (no HOME) */
    a->resume = st->race_resume && a->ckpt_dir;
    st->race_resume = false;
    if (wb_start(st, jr, "race", race_job, a, t) != 0) {
        free(a->corpus);
        free(a->ckpt_dir);
        free(a->teacher_path);
        free(a);
        return -1;
    }
    /* a fresh race: the last race's curves and outcome go */
    teacher_clear_series(t, "race/");
    teacher_clear_series(t, "recall/");
    memset(&t->race, 0, sizeof t->race);
    t->race.tokens = a->tokens;
    return 0;
}

static void fmt_ttt(char *b, size_t n, double t) {
    if (t >= 0) snprintf(b, n, "%.0f", t);
    else snprintf(b, n, "never");
}

void recover_race_done(app_state *st, teacher_state *owner, void *result) {
    race_result *r = result;
    char t0[32], t1[32], ratio[32];
    fmt_ttt(t0, sizeof t0, r->ttt[0]);
    fmt_ttt(t1, sizeof t1, r->ttt[1]);
    if (r->ratio > 0) snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
    else snprintf(ratio, sizeof ratio, "undefined");
    app_log(st, LOG_INFO, "race: target loss %.4f (%s at the end of %ld tokens, trailing mean of %d steps)", r->target,
            r->labels[0], r->tokens, r->window);
    app_log(st, LOG_INFO, "race: held-out ppl teacher %.3f, %s %.3f, %s %.3f (the race's %d held-out sequences of %d tokens, "
                          "not the evaluation slice)", r->teacher_ppl, r->labels[0], r->ppl[0], r->labels[1], r->ppl[1],
            r->eval_seqs, RECOVER_CTX);
    app_log(st, LOG_INFO, "race: target reached: %s %s, %s %s -> ratio %s", r->labels[0], t0, r->labels[1], t1, ratio);
    if (owner) {
        owner->race.has_target = true;
        owner->race.target = r->target;
        owner->race.teacher_ppl = r->teacher_ppl;
        owner->race.eval_seqs = r->eval_seqs;
        owner->race.eval_ctx = RECOVER_CTX;
        for (int i = 0; i < 2; i++) {
            snprintf(owner->race.labels[i], sizeof owner->race.labels[i], "%s", r->labels[i]);
            owner->race.ppl[i] = r->ppl[i];
        }
        snprintf(owner->race.reached, sizeof owner->race.reached, "target reached: %s %s, %s %s -> ratio %s",
                 r->labels[0], t0, r->labels[1], t1, ratio);
        for (int i = 0; i < 2; i++) {
            result_row row;
            race_row_base(&row, r->corpus, r->device, r->keep, r->tokens, r->lr_mixer, r->lr_rest, &r->s1, r->seed);
            snprintf(row.teacher, sizeof row.teacher, "%s", r->teacher);
            snprintf(row.init, sizeof row.init, "%s", r->labels[i]);
            row.stage2_steps = r->steps[i];
            snprintf(row.kept, sizeof row.kept, "%s", r->kept);
            row.ppl = r->ppl[i];
            row.teacher_ppl = r->teacher_ppl;
            row.tokens_to_target = r->ttt[i] >= 0 ? r->ttt[i] : -1;
            row.ratio = i ? r->ratio : NAN;
            if (i) result_set_stage1(&row, &r->s1); /* taylor-calibrate's init detail */
            teacher_add_result(owner, &row);
        }
    }
    free(r);
}
