#include "workbench/plan_jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hub/cache.h"
#include "method/ablate.h"
#include "method/evaluate.h"
#include "method/method_opts.h"
#include "method/place_lock.h"
#include "method/select_run.h"
#include "core/error.h"
#include "eval/perplexity.h"
#include "select/select.h"
#include "convert/build.h"
#include "student/report_json.h"
#include "student/student_io.h"
#include "workbench/build_progress.h"
#include "workbench/job_cost.h"
#include "workbench/json_file.h"
#include "workbench/stage1_choice.h"
#include "workbench/wb_event.h"

void plan_split_spec(split_spec *sp, int eval_windows) {
    split_spec_default(sp);
    sp->eval_windows = eval_windows > 0 ? eval_windows : 32;
}

/* ---- shared pieces (worker thread) ---- */


/* Everything a job needs, copied on the UI thread: jobs never read app_state. */
typedef struct {
    model *m;
    char *corpus, *teacher_path;
    char teacher_name[160];
    int strategy, L;
    double keep;
    bool *kept; /* [L] */
    student_init init;
    int steps, ablate_steps, keep_best_heldout, eval_windows;
    stage1_choice s1;           /* the teacher's Stage 1 options (inits with Stage 1) */
    bool ablate_components;     /* ablate: Stage 1 component subsets instead of the six inits */
    long seed; /* graft tui --seed */
    char force_folder[700];     /* evaluate: this folder may be replaced (the y of Results' overwrite question), "" none */
    struct {                    /* the strings of the job's request */
        char strategy[1024], device[16];
        stage1_cli_text s1;
    } req_text;
} plan_arg;

static void plan_arg_free(plan_arg *a) {
    free(a->corpus);
    free(a->teacher_path);
    free(a->kept);
    free(a);
}

int plan_student_settings(student_init init, int steps, int keep_best_heldout, const stage1_choice *s1, long seed,
                          student_settings *set) {
    method_cli mo;
    method_cli_default(&mo);
    mo.steps = steps;
    mo.keep_best = keep_best_heldout ? "heldout" : "train";
    stage1_cli_text text;
    if (init_uses_stage1(init)) stage1_choice_to_cli(s1, &mo, &text);
    return method_cli_settings(&mo, seed, init, set);
}


/* Costs of the split's slices, for phase weights. */
static double calib_tokens(const split_spec *s) { return (double)(s->n_calib + s->n_heldout) * s->ctx; }
static double select_tokens(const split_spec *s) { return (double)s->sel_windows * s->ctx; }
static double eval_tokens(const split_spec *s) { return (double)s->eval_windows * s->ctx; }

static double stage2_cost(const model *m, const split_spec *sp, int steps, int layers) {
    return layers * (cost_stage1_layer(m) + cost_stage2_layer(m, steps, sp->n_calib + sp->n_heldout, sp->ctx));
}

static void emit_ppl(job_ctx *ctx, const plan_arg *a, const split_spec *spec, double ppl) {
    wb_event e = {.kind = WB_TEACHER_PPL};
    e.u.teacher_ppl.ppl = ppl;
    snprintf(e.u.teacher_ppl.corpus, sizeof e.u.teacher_ppl.corpus, "%s", a->corpus);
    e.u.teacher_ppl.windows = spec->eval_windows;
    e.u.teacher_ppl.ctx = spec->ctx;
    wb_emit(ctx, &e);
}

/* ---- select ---- */

static void on_phase(void *ud, const char *name) { job_begin_phase(ud, name); }

/* The Plan's selection as graft select's request (ga-s2: its layers built under
 * taylor-calibrate with the run settings and the teacher's Stage 1 options). */
static void select_request(plan_arg *a, const split_spec *spec, request *r) {
    wb_request_init(r, REQ_SELECT, a->teacher_path, a->seed, a->m->be, a->req_text.device);
    r->co.json = true;
    select_req *q = &r->u.select;
    q->strategy = strategy_name((select_strategy)a->strategy);
    q->keep = a->keep;
    q->text = a->corpus;
    q->mo.split.eval_windows = spec->eval_windows;
    if (a->strategy == STRATEGY_GA_S2) {
        q->mo.steps = a->steps;
        q->mo.keep_best = a->keep_best_heldout ? "heldout" : "train";
        stage1_choice_to_cli(&a->s1, &q->mo, &a->req_text.s1);
    }
}

static int select_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    select_result res;
    bool ran = false;
    int rc = -1;
    split_spec spec;
    plan_split_spec(&spec, a->eval_windows);
    const bool ga = a->strategy == STRATEGY_GA_S2;
    const job_phase phases[] = {
        {"tokenize", cost_tokenize(a->m, a->corpus)},
        {"teacher pass", ga ? cost_forward(a->m, calib_tokens(&spec), spec.ctx) : 0},
        {"stage 1", ga ? a->L * cost_stage1_layer(a->m) : 0},
        {"align", ga ? stage2_cost(a->m, &spec, a->steps, a->L) : 0},
        {ga ? "select ga-s2" : "select ar", a->L * cost_eval(a->m, select_tokens(&spec), spec.ctx)},
    };
    job_set_phases(ctx, phases, 5);
    request r;
    select_request(a, &spec, &r);
    if (request_check(&r) != 0) goto done;
    if (ga) job_log(ctx, "ga-s2: building every layer under taylor-calibrate (%d Stage 2 steps)", a->steps);
    build_progress bp;
    build_progress_init(&bp, ctx, a->L, a->steps);
    progress_sink bs = build_progress_sink(&bp);
    stage2_observer obs = build_progress_observer(&bp);
    const method_hooks h = {.progress = job_sink(ctx), .build = &bs, .obs = &obs, .phase = on_phase, .ud = ctx};
    ran = true;
    if (method_select_run(&r, a->m, &h, &res) != 0) goto done;
    for (int l = 0; l < a->L; l++) {
        wb_event e = {.kind = WB_LAYER_SCORE};
        e.u.layer_score.strategy = res.ss.kind;
        e.u.layer_score.layer = l;
        e.u.layer_score.value = res.sel.score[l];
        snprintf(e.u.layer_score.corpus, sizeof e.u.layer_score.corpus, "%s", a->corpus);
        wb_emit(ctx, &e);
    }
    char cmd[sizeof ((wb_event *)0)->u.log_long.text - 64];
    request_command(&r, cmd, sizeof cmd);
    wb_event lg = {.kind = WB_LOG_LONG};
    snprintf(lg.u.log_long.text, sizeof lg.u.log_long.text, "%s: keep %d of %d layers; headless: %s",
             strategy_name(res.ss.kind), res.sel.k, a->L, cmd);
    wb_emit(ctx, &lg);
    rc = 0;
done:
    if (ran) select_result_free(&res);
    plan_arg_free(a);
    return rc;
}

static plan_arg *make_arg(workbench *wb, app_state *st) {
    teacher_state *t = wb_ready(wb, st);
    if (!t) return NULL;
    if (!wb->corpus) {
        gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
        return NULL;
    }
    if (!wb->m->tok) {
        gf_fail("%s has no tokenizer: these jobs read the corpus with it", t->name);
        return NULL;
    }
    teacher_plan_recompute(t);
    plan_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->teacher_path = gf_strdup(t->model_arg[0] ? t->model_arg : wb->m->path);
    a->seed = wb->seed;
    snprintf(a->teacher_name, sizeof a->teacher_name, "%s", t->name);
    a->L = wb->m->cfg.n_layers;
    a->strategy = strategy_index(t->strategy);
    a->keep = t->keep_ratio;
    a->kept = gf_calloc((size_t)a->L, sizeof *a->kept);
    if (t->kept && t->n_layers == a->L) memcpy(a->kept, t->kept, (size_t)a->L * sizeof *a->kept);
    if (student_init_parse(st->eval_init, &a->init) != 0) a->init = INIT_TAYLOR_CALIBRATE;
    a->steps = st->settings.stage2_steps;
    a->ablate_steps = st->settings.ablate_steps;
    a->keep_best_heldout = st->settings.keep_best_heldout;
    a->eval_windows = st->settings.eval_windows;
    a->s1 = t->stage1;
    a->ablate_components = st->settings.ablate_stage1;
    return a;
}

static int start(app_state *st, job_runner *jr, const char *name, job_fn fn, plan_arg *a) {
    if (wb_start(st, jr, name, fn, a, app_cur(st)) != 0) {
        plan_arg_free(a);
        return -1;
    }
    return 0;
}

int plan_start_select(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    if (a->strategy != STRATEGY_AR && a->strategy != STRATEGY_GA_S2) {
        gf_fail("%s needs no job: the plan is already made", strategy_label(a->strategy));
        plan_arg_free(a);
        return -1;
    }
    return start(st, jr, "select", select_job, a);
}

/* ---- evaluate ---- */

static void kept_text(const bool *kept, int L, char *buf, size_t n) {
    size_t at = 0;
    buf[0] = 0;
    for (int l = 0; l < L && at + 1 < n; l++)
        if (kept[l]) at += (size_t)snprintf(buf + at, n - at, at ? ",%d" : "%d", l);
    if (!at) snprintf(buf, n, "-");
}

static void fill_row(result_row *r, run_kind kind, const plan_arg *a, const split_spec *spec, const char *strategy,
                     double keep, student_init init, const stage1_choice *s1, int steps) {
    result_row_init(r);
    r->kind = kind;
    snprintf(r->teacher, sizeof r->teacher, "%s", a->teacher_name);
    wb_device_of(a->m->be, r->device, sizeof r->device);
    snprintf(r->strategy, sizeof r->strategy, "%s", strategy);
    r->keep = keep;
    snprintf(r->init, sizeof r->init, "%s", student_init_name(init));
    r->stage2_steps = init_uses_stage2(init) ? steps : 0;
    r->keep_best_heldout = init_uses_stage2(init) && a->keep_best_heldout;
    snprintf(r->corpus, sizeof r->corpus, "%s", a->corpus);
    r->eval_windows = spec->eval_windows;
    r->ctx = spec->ctx;
    r->seed = a->seed;
    if (init_uses_stage1(init)) result_set_stage1(r, s1);
}

/* The plan on screen as a convert request: the kept layers as a manual list,
 * the Results init, the run settings, the teacher's Stage 1 options; --text
 * is the corpus whose evaluation slice is scored. Strings live in a->req_text. */
static void plan_request(plan_arg *a, const split_spec *spec, request *r) {
    wb_request_init(r, REQ_CONVERT, a->teacher_path, a->seed, a->m->be, a->req_text.device);
    convert_req *q = &r->u.convert;
    int at = snprintf(a->req_text.strategy, sizeof a->req_text.strategy, "manual:");
    for (int l = 0, n = 0; l < a->L; l++)
        if (a->kept[l]) at += snprintf(a->req_text.strategy + at, sizeof a->req_text.strategy - (size_t)at, n++ ? ",%d" : "%d", l);
    q->strategy = a->req_text.strategy;
    q->init = student_init_name(a->init);
    q->calib = q->text = a->corpus;
    q->mo.steps = a->steps;
    q->mo.keep_best = a->keep_best_heldout ? "heldout" : "train";
    q->mo.split.eval_windows = spec->eval_windows;
    if (init_uses_stage1(a->init)) stage1_choice_to_cli(&a->s1, &q->mo, &a->req_text.s1);
}

static int evaluate_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    convert_target tgt = {0};
    place_lock lock = {NULL, -1}; /* the student folder's, as graft convert --out takes it */
    evaluate_result res;
    bool ran = false;
    char *parent = NULL;
    int rc = -1, k = 0;
    split_spec spec;
    plan_split_spec(&spec, a->eval_windows);
    for (int l = 0; l < a->L; l++) k += a->kept[l];
    const int n_gdn = a->L - k;
    const job_phase phases[] = {
        {"tokenize", cost_tokenize(a->m, a->corpus)},
        {"teacher pass", cost_forward(a->m, calib_tokens(&spec), spec.ctx)},
        {"stage 1", init_uses_stage1(a->init) ? n_gdn * cost_stage1_layer(a->m) : 0},
        {"align", init_uses_stage2(a->init) ? stage2_cost(a->m, &spec, a->steps, n_gdn) : 0},
        {"teacher ppl", cost_eval(a->m, eval_tokens(&spec), spec.ctx)},
        {"student ppl", cost_eval(a->m, eval_tokens(&spec), spec.ctx)},
    };
    job_set_phases(ctx, phases, 6);
    request r;
    plan_request(a, &spec, &r);
    if (request_check(&r) != 0) goto done;
    /* the folder: students/<teacher>-<plan>-<init>-<digest of the request> */
    char teacher[64], prefix[200];
    artifact_short_name(a->teacher_path, teacher, sizeof teacher);
    if (a->strategy == STRATEGY_MANUAL)
        snprintf(prefix, sizeof prefix, "%s-manual-%d-of-%d-%s", teacher, k, a->L, r.u.convert.init);
    else
        snprintf(prefix, sizeof prefix, "%s-%s-%.0f-%s", teacher, strategy_label(a->strategy), a->keep * 100, r.u.convert.init);
    parent = persist_path("XDG_DATA_HOME", ".local/share", "students");
    if (!parent) {
        gf_fail("no place for the student: set XDG_DATA_HOME or HOME");
        goto done;
    }
    if (hub_mkdirs(parent) != 0) goto done;
    if (convert_target_resolve(&r, parent, prefix, &tgt) != 0) {
        if (!tgt.refused || strlen(tgt.out) >= sizeof a->force_folder) goto done; /* (too long to ask about: refused) */
        if (strcmp(tgt.out, a->force_folder) != 0) { /* the folder holds another request's student: ask (y = --force) */
            wb_event q = {.kind = WB_OVERWRITE_ASK};
            memcpy(q.u.overwrite_ask.folder, tgt.out, strlen(tgt.out) + 1);
            snprintf(q.u.overwrite_ask.held, sizeof q.u.overwrite_ask.held, "%.*s", ARTIFACT_SHORT, tgt.held);
            snprintf(q.u.overwrite_ask.want, sizeof q.u.overwrite_ask.want, "%.*s", ARTIFACT_SHORT, tgt.digest);
            wb_emit(ctx, &q);
            goto done;
        }
        r.u.convert.force = true; /* the y: this folder, and no other, is replaced */
        if (convert_target_resolve(&r, parent, prefix, &tgt) != 0) goto done;
    }
    if (place_lock_take(&lock, "student folder", tgt.out, "wait for it to end, then build again") != 0) goto done;
    char s1[64] = "";
    if (init_uses_stage1(a->init)) {
        char label[40];
        stage1_choice_label(&a->s1, label, sizeof label);
        snprintf(s1, sizeof s1, ", stage1 %s", label);
    }
    job_log(ctx, "building %d GDN layers under %s (%d Stage 2 steps%s)", n_gdn, student_init_name(a->init),
            init_uses_stage2(a->init) ? a->steps : 0, s1);
    build_progress bp;
    build_progress_init(&bp, ctx, n_gdn, a->steps);
    progress_sink bs = build_progress_sink(&bp);
    stage2_observer obs = build_progress_observer(&bp);
    const method_hooks h = {.progress = job_sink(ctx), .build = &bs, .obs = &obs, .phase = on_phase, .ud = ctx};
    ran = true;
    if (method_evaluate_run(&r, a->m, &tgt, &h, &res) != 0) goto done;
    char note[PATH_MAX + 96];
    if (convert_claim_note(&tgt, note, sizeof note)[0]) job_log(ctx, "%s", note);
    emit_ppl(ctx, a, &spec, res.teacher_ppl);
    wb_event e = {.kind = WB_RESULT};
    result_row *row = &e.u.result;
    fill_row(row, RUN_EVALUATE, a, &spec, strategy_label(a->strategy),
             a->strategy == STRATEGY_MANUAL ? (double)k / a->L : a->keep, a->init, &a->s1, a->steps);
    row->ppl = res.ppl;
    row->hl_mean = res.hl.mean, row->hl_med = res.hl.median, row->hl_max = res.hl.max;
    kept_text(a->kept, a->L, row->kept, sizeof row->kept);
    if (strlen(tgt.out) >= sizeof row->student) {
        gf_fail("%s: the student folder's path is longer than a Results row keeps (%zu bytes)", tgt.out, sizeof row->student - 1);
        goto done;
    }
    memcpy(row->student, tgt.out, strlen(tgt.out) + 1);
    memcpy(row->digest, tgt.digest, sizeof row->digest - 1);
    row->digest[sizeof row->digest - 1] = 0;
    wb_emit(ctx, &e);
    char cmd[sizeof ((wb_event *)0)->u.log_long.text - 32];
    request_command(&r, cmd, sizeof cmd);
    wb_event lg = {.kind = WB_LOG_LONG};
    snprintf(lg.u.log_long.text, sizeof lg.u.log_long.text, "built as: %s", cmd);
    wb_emit(ctx, &lg);
    job_log(ctx, "student ppl %.4f, teacher's on the same slice in the table's first line", res.ppl);
    rc = 0;
done:
    if (ran) evaluate_result_free(&res);
    place_lock_release(&lock);
    convert_target_free(&tgt);
    free(parent);
    plan_arg_free(a);
    return rc;
}

int results_start_evaluate(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    snprintf(a->force_folder, sizeof a->force_folder, "%s", st->force_folder);
    st->force_folder[0] = 0; /* read once */
    return start(st, jr, "evaluate", evaluate_job, a);
}

/* ---- ablate: strategies x ratios x variants (the six inits, or Stage 1 component sets) ---- */

/* The table as graft ablate's request: uniform, ar, ga-s2 x 25/50/75 % x the
 * six inits under the teacher's Stage 1 options, or (the ablation setting)
 * one init with Stage 1 (the Results init when it has Stage 1, else
 * taylor-calibrate) under all, none, each component alone and each left out,
 * with the teacher's distance and its half-life override as one more row. */
static void ablate_request(plan_arg *a, const split_spec *spec, request *r) {
    wb_request_init(r, REQ_ABLATE, a->teacher_path, a->seed, a->m->be, a->req_text.device);
    r->co.json = true; /* the command the Log shows prints what the rows show, as JSON */
    ablate_req *q = &r->u.ablate;
    q->calib = q->eval = a->corpus;
    q->mo.steps = a->ablate_steps;
    q->mo.keep_best = a->keep_best_heldout ? "heldout" : "train";
    q->mo.split.eval_windows = spec->eval_windows;
    if (a->ablate_components) {
        const stage1_choice all = {.parts = STAGE1_ALL, .no_sink = a->s1.no_sink, .half_life = a->s1.half_life,
                                   .sigma_fit = a->s1.sigma_fit};
        stage1_choice_to_cli(&all, &q->mo, &a->req_text.s1);
        q->mo.stage1 = NULL; /* the sets come from --stage1-subsets */
        q->subsets = true;
        q->init_list = student_init_name(init_uses_stage1(a->init) ? a->init : INIT_TAYLOR_CALIBRATE);
    } else {
        stage1_choice_to_cli(&a->s1, &q->mo, &a->req_text.s1);
    }
}

typedef struct {
    job_ctx *ctx;
    plan_arg *a;
    const split_spec *spec;
    build_progress *bp;
} ablate_live;

static void ablate_teacher_ppl(void *ud, double ppl) {
    ablate_live *lv = ud;
    emit_ppl(lv->ctx, lv->a, lv->spec, ppl);
}

static void ablate_student(void *ud, int j, int n) {
    ablate_live *lv = ud; /* each student's build is an equal share of the phase */
    lv->bp->base = j;
    lv->bp->total = n > 0 ? n : 1;
    atomic_store(&lv->bp->steps_done, 0);
    job_progress(lv->ctx, j, n, "students");
}

static void ablate_row_event(void *ud, const ablate_plan *p, const ablate_row *row, int i, int n) {
    ablate_live *lv = ud;
    const ablate_variant *v = &p->variants[row->variant];
    const stage1_choice s1 = {.parts = v->stage1, .no_sink = lv->a->s1.no_sink, .half_life = v->half_life, .sigma_fit = v->fit};
    wb_event e = {.kind = WB_RESULT};
    result_row *r = &e.u.result;
    fill_row(r, RUN_ABLATE, lv->a, lv->spec, p->strat_names[row->strategy_i], row->keep, v->init, &s1, p->set0.steps);
    r->ppl = row->ppl;
    r->hl_mean = row->hl.mean, r->hl_med = row->hl.median, r->hl_max = row->hl.max;
    size_t at = 0;
    r->kept[0] = 0;
    for (int q = 0; q < row->k && at + 8 < sizeof r->kept; q++)
        at += (size_t)snprintf(r->kept + at, sizeof r->kept - at, q ? ",%d" : "%d", row->kept[q]);
    if (!row->k) snprintf(r->kept, sizeof r->kept, "-");
    wb_emit(lv->ctx, &e);
    job_progress(lv->ctx, i + 1, n, "rows");
}

static int ablate_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    const int L = a->L;
    int rc = -1, steps = a->ablate_steps;
    bool ran = false;
    ablate_result res;
    split_spec spec;
    plan_split_spec(&spec, a->eval_windows);
    request r;
    ablate_request(a, &spec, &r);
    ablate_plan *pl = gf_malloc(sizeof *pl);
    if (request_check(&r) != 0 || ablate_plan_make(&r, pl) != 0) goto done;
    const int n_var = pl->n_var, n_rows = pl->n_strat * pl->n_keep * n_var;
    /* the students' builds (Stage 1 and Stage 2 of every layer), then the rows */
    const double s1 = L * cost_stage1_layer(a->m), s2 = stage2_cost(a->m, &spec, steps, L);
    double total = 0;
    for (int j = 0; j < n_var; j++)
        total += (init_uses_stage1(pl->variants[j].init) && pl->variants[j].stage1 ? s1 : 0) +
                 (init_uses_stage2(pl->variants[j].init) ? s2 : 0);
    const double sel_eval = L * cost_eval(a->m, select_tokens(&spec), spec.ctx);
    const job_phase phases[] = {
        {"tokenize", cost_tokenize(a->m, a->corpus)},
        {"teacher pass", cost_forward(a->m, calib_tokens(&spec), spec.ctx)},
        {"teacher ppl", cost_eval(a->m, eval_tokens(&spec), spec.ctx)},
        {"students", total},
        /* ar scores once, ga-s2 once per student, then every row's evaluation */
        {"rows", sel_eval * (1 + pl->n_studs) + n_rows * cost_eval(a->m, eval_tokens(&spec), spec.ctx)},
    };
    job_set_phases(ctx, phases, 5);
    if (a->ablate_components)
        job_log(ctx, "Stage 1 component ablation (%s): %d strategies x %d ratios x %d component sets, Stage 2 %d steps",
                r.u.ablate.init_list, pl->n_strat, pl->n_keep, n_var, steps);
    else
        job_log(ctx, "ablation: %d strategies x %d ratios x %d variants, Stage 2 %d steps", pl->n_strat, pl->n_keep, n_var,
                steps);
    build_progress bp;
    build_progress_init(&bp, ctx, L, steps);
    bp.phase = "students";
    bp.s1 = 0.1, bp.s2 = 0.9;
    progress_sink bs = build_progress_sink(&bp);
    stage2_observer obs = build_progress_observer(&bp);
    /* engine reports inside the rows are not the job's phases: only the cancel flag goes in */
    const method_hooks h = {.progress = {.report = NULL, .ud = NULL, .cancel = job_cancel_flag(ctx)},
                            .build = &bs, .obs = &obs, .phase = on_phase, .ud = ctx};
    ablate_live lv = {ctx, a, &spec, &bp};
    const ablate_sink sink = {ablate_teacher_ppl, ablate_student, ablate_row_event, &lv};
    ran = true;
    if (method_ablate_run(&r, a->m, &h, &sink, &res) != 0) goto done;
    char cmd[sizeof ((wb_event *)0)->u.log_long.text - 32];
    request_command(&r, cmd, sizeof cmd);
    wb_event e = {.kind = WB_LOG_LONG}; /* longer than a job_log line */
    snprintf(e.u.log_long.text, sizeof e.u.log_long.text, "same table headless: %s", cmd);
    wb_emit(ctx, &e);
    rc = 0;
done:
    if (ran) ablate_result_free(&res);
    free(pl);
    plan_arg_free(a);
    return rc;
}

int results_start_ablate(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    return start(st, jr, "ablate", ablate_job, a);
}
