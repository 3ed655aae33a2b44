#include "workbench/plan_jobs.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/common.h"
#include "cli/method_opts.h"
#include "core/error.h"
#include "eval/perplexity.h"
#include "persist/persist.h"
#include "select/kv_cost.h"
#include "select/select.h"
#include "student/build.h"
#include "student/report_json.h"
#include "student/student_io.h"

static int env_int(const char *name, int def, int lo) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < lo || x > 1000000 ? def : (int)x;
}

void plan_split_spec(split_spec *sp) {
    split_spec_default(sp);
    sp->eval_windows = env_int("GRAFT_TUI_EVAL_WINDOWS", 32, 1);
}

static int stage2_steps(void) { return env_int("GRAFT_TUI_STEPS", 300, 0); }

void plan_show_model(app_state *st, const model *m) {
    st->kv_heads = m->cfg.n_kv_heads;
    st->head_dim = m->cfg.head_dim;
    st->kv_bytes = kv_dtype_bytes(m->weights_dtype);
    app_state_plan_recompute(st);
}

/* ---- shared pieces (worker thread) ---- */

typedef struct {
    job_ctx *ctx;
    atomic_int cancel;
    progress_sink sink;
} job_progress_bridge;

static void bridge_report(void *ud, const char *what, double done, double total) {
    job_progress_bridge *b = ud;
    if (job_cancelled(b->ctx)) atomic_store(&b->cancel, 1);
    job_progress(b->ctx, done, total, what);
}

static void bridge_init(job_progress_bridge *b, job_ctx *ctx) {
    b->ctx = ctx;
    atomic_init(&b->cancel, 0);
    b->sink = (progress_sink){bridge_report, b, &b->cancel};
}

static int check_cancel(job_ctx *ctx) { return job_cancelled(ctx) ? gf_fail("cancelled") : 0; }

/* Everything a job needs, copied on the UI thread: jobs never read app_state. */
typedef struct {
    model *m;
    char *corpus, *teacher_path;
    int strategy, L;
    double keep;
    bool *kept; /* [L] */
    student_init init;
    long seed;  /* graft tui --seed */
} plan_arg;

static void plan_arg_free(plan_arg *a) {
    free(a->corpus);
    free(a->teacher_path);
    free(a->kept);
    free(a);
}

/* The command line's defaults (--steps and --seed aside), so a workbench
 * student equals `graft convert ... --steps N --seed S`'s. */
static int settings_for(student_init init, int steps, long seed, student_settings *set) {
    method_cli mo;
    method_cli_default(&mo);
    mo.steps = steps;
    return method_cli_settings(&mo, seed, init, set);
}

/* k layers ranked by score: the highest (ar) or the lowest (ga-s2); ties to the lower layer. */
static void rank_kept(const double *v, int L, int k, bool highest, bool *kept) {
    memset(kept, 0, (size_t)L * sizeof *kept);
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int l = 0; l < L; l++)
            if (!kept[l] && (best < 0 || (highest ? v[l] > v[best] : v[l] < v[best]))) best = l;
        kept[best] = true;
    }
}

static double ppl_of(double nll, long count) { return count > 0 ? exp(nll / (double)count) : NAN; }

/* ---- select ---- */

static int select_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    job_progress_bridge br;
    bridge_init(&br, ctx);
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    student s = {0};
    layer_selection sel = {0};
    strategy_spec ss = {.kind = (select_strategy)a->strategy};
    student_settings set;
    int rc = -1, k = 0;
    split_spec spec;
    plan_split_spec(&spec);
    if (keep_count(a->keep, a->L, &k) != 0) goto done;
    if (token_split_make(&sp, a->m->tok, a->corpus, a->corpus, &spec) != 0) goto done;
    if (ss.kind == STRATEGY_GA_S2) {
        job_log(ctx, "ga-s2: building every layer under taylor-calibrate (%d Stage 2 steps)", stage2_steps());
        if (settings_for(INIT_TAYLOR_CALIBRATE, stage2_steps(), a->seed, &set) != 0 ||
            method_capture(a->m, &sp, &cal, &held, &br.sink) != 0 || student_init_empty(&s, a->m, &set) != 0)
            goto done;
        bool *all = gf_malloc((size_t)a->L * sizeof *all);
        for (int l = 0; l < a->L; l++) all[l] = true;
        int r = student_build_layers(&s, all, &cal, held.L ? &held : NULL, &br.sink);
        free(all);
        if (r != 0) goto done;
    }
    if (check_cancel(ctx)) goto done;
    if (select_layers(&sel, &ss, k, a->m, &s, sp.select.data, sp.select.len, spec.ctx, &br.sink) != 0) goto done;
    char label[32];
    snprintf(label, sizeof label, "plan/%s", strategy_name(ss.kind));
    for (int l = 0; l < a->L; l++) job_stat(ctx, label, l, 0, sel.score[l]);
    job_log(ctx, "%s: keep %d of %d layers (graft select MODEL --strategy %s --keep %g --text %s)", strategy_name(ss.kind),
            sel.k, a->L, strategy_name(ss.kind), a->keep, a->corpus);
    rc = 0;
done:
    layer_selection_free(&sel);
    student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    plan_arg_free(a);
    return rc;
}

static plan_arg *make_arg(workbench *wb, app_state *st) {
    if (!wb->m) {
        gf_fail("no teacher loaded yet");
        return NULL;
    }
    if (!wb->corpus) {
        gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
        return NULL;
    }
    if (!wb->m->tok) {
        gf_fail("the teacher has no tokenizer");
        return NULL;
    }
    app_state_plan_recompute(st);
    plan_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->teacher_path = gf_strdup(wb->m->path);
    a->seed = wb->seed;
    a->L = wb->m->cfg.n_layers;
    a->strategy = app_state_strategy_index(st->strategy);
    a->keep = st->keep_ratio;
    a->kept = gf_calloc((size_t)a->L, sizeof *a->kept);
    if (st->kept && st->n_layers == a->L) memcpy(a->kept, st->kept, (size_t)a->L * sizeof *a->kept);
    if (student_init_parse(st->eval_init, &a->init) != 0) a->init = INIT_TAYLOR_CALIBRATE;
    return a;
}

static int start(job_runner *jr, const char *name, job_fn fn, plan_arg *a) {
    if (job_start(jr, name, fn, a) != 0) {
        plan_arg_free(a);
        return -1;
    }
    return 0;
}

int plan_start_select(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    if (a->strategy != STRATEGY_AR && a->strategy != STRATEGY_GA_S2) {
        plan_arg_free(a);
        return gf_fail("%s needs no job: the plan is already made", st->strategy);
    }
    snprintf(st->corpus, sizeof st->corpus, "%s", wb->corpus);
    return start(jr, "select", select_job, a);
}

/* ---- evaluate ---- */

/* "stories260K" from "/path/stories260K.bin"; only [A-Za-z0-9._-]. */
static void short_name(const char *path, char *out, size_t n) {
    const char *b = strrchr(path, '/');
    b = b && b[1] ? b + 1 : path;
    size_t j = 0;
    for (const char *p = b; *p && j + 1 < n; p++) {
        if (*p == '.' && (!strcmp(p, ".bin") || !strcmp(p, ".gguf"))) break;
        char c = *p;
        out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ? c : '_';
    }
    out[j] = 0;
    if (!j) snprintf(out, n, "teacher");
}

static int mkdir_p(const char *dir) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return gf_fail("%s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return gf_fail("%s: %s", buf, strerror(errno));
    return 0;
}

static void kept_text(const bool *kept, int L, char *buf, size_t n) {
    size_t at = 0;
    buf[0] = 0;
    for (int l = 0; l < L && at + 1 < n; l++)
        if (kept[l]) at += (size_t)snprintf(buf + at, n - at, at ? ",%d" : "%d", l);
    if (!at) snprintf(buf, n, "-");
}

/* One results row (see app_result_columns) as a log event the UI turns into a
 * row. Events carry 255 characters: a longer row keeps the folder's name only. */
static void publish_row(job_ctx *ctx, const char *strategy, double keep, student_init init, double ppl,
                        half_life_summary hl, const char *kept, const char *where) {
    char row[256];
    for (int pass = 0; pass < 2; pass++) {
        int n = snprintf(row, sizeof row, "result\t%s\t%.0f%%\t%s\t%.4f\t%.2f\t%.2f\t%.2f\t%s\t%s", strategy, keep * 100,
                         student_init_name(init), ppl, hl.mean, hl.median, hl.max, kept, where);
        if (n < (int)sizeof row) break;
        const char *slash = strrchr(where, '/');
        if (slash) where = slash + 1;
    }
    job_log(ctx, "%s", row);
}

static int evaluate_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    job_progress_bridge br;
    bridge_init(&br, ctx);
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    student s = {0};
    student_settings set;
    char *dir = NULL, *tok = NULL;
    bool *gdn = gf_calloc((size_t)a->L, sizeof *gdn);
    int rc = -1, k = 0;
    split_spec spec;
    plan_split_spec(&spec);
    for (int l = 0; l < a->L; l++) gdn[l] = !a->kept[l], k += a->kept[l];
    if (settings_for(a->init, stage2_steps(), a->seed, &set) != 0) goto done;
    if (token_split_make(&sp, a->m->tok, a->corpus, a->corpus, &spec) != 0) goto done;
    job_log(ctx, "building %d GDN layers under %s", a->L - k, student_init_name(a->init));
    if (method_capture(a->m, &sp, &cal, &held, &br.sink) != 0 || check_cancel(ctx)) goto done;
    if (student_init_empty(&s, a->m, &set) != 0) goto done;
    if (student_build_layers(&s, gdn, &cal, held.L ? &held : NULL, &br.sink) != 0) goto done;
    if (student_set_gdn(&s, gdn) != 0 || check_cancel(ctx)) goto done;
    double nll;
    long cnt;
    if (eval_nll(a->m, sp.eval.data, sp.eval.len, spec.ctx, &nll, &cnt, &br.sink) != 0) goto done;
    job_scalar(ctx, "teacher_ppl", 0, ppl_of(nll, cnt));
    if (student_eval_nll(&s, sp.eval.data, sp.eval.len, spec.ctx, &nll, &cnt, &br.sink) != 0) goto done;
    double ppl = ppl_of(nll, cnt);
    half_life_summary hl = student_half_life_summary(&s, NULL);
    /* the student folder */
    char teacher[64], leaf[256];
    short_name(a->teacher_path, teacher, sizeof teacher);
    snprintf(leaf, sizeof leaf, "students/%s-%s-%.0f-%s", teacher, app_state_strategy_name(a->strategy), a->keep * 100,
             student_init_name(a->init));
    if (a->strategy == STRATEGY_MANUAL) snprintf(leaf, sizeof leaf, "students/%s-manual-%d-of-%d-%s", teacher, k, a->L,
                                                 student_init_name(a->init));
    dir = persist_path("XDG_DATA_HOME", ".local/share", leaf);
    if (!dir) {
        gf_fail("no place for the student: set XDG_DATA_HOME or HOME");
        goto done;
    }
    char *slash = strrchr(dir, '/');
    *slash = 0;
    int mk = mkdir_p(dir);
    *slash = '/';
    if (mk != 0) goto done;
    cJSON *rep = student_report_json(&s);
    cJSON_AddNumberToObject(rep, "keep", a->keep);
    cJSON_AddStringToObject(rep, "strategy", app_state_strategy_name(a->strategy));
    cJSON *ev = cJSON_AddObjectToObject(rep, "workbench_eval");
    cJSON_AddStringToObject(ev, "text", a->corpus);
    cJSON_AddNumberToObject(ev, "ctx", spec.ctx);
    cJSON_AddNumberToObject(ev, "eval_windows", spec.eval_windows);
    cJSON_AddNumberToObject(ev, "tokens", (double)cnt);
    cJSON_AddNumberToObject(ev, "ppl", ppl);
    tok = teacher_tokenizer_path(a->teacher_path, a->m->cfg.vocab_size, NULL);
    int sv = student_save(&s, dir, tok, rep);
    cJSON_Delete(rep);
    if (sv != 0) goto done;
    char kt[512];
    kept_text(a->kept, a->L, kt, sizeof kt);
    publish_row(ctx, app_state_strategy_name(a->strategy), a->strategy == STRATEGY_MANUAL ? (double)k / a->L : a->keep,
                a->init, ppl, hl, kt, dir);
    job_log(ctx, "student ppl %.4f; same number headless: graft eval %s --text %s --split --eval-windows %d --json", ppl,
            dir, a->corpus, spec.eval_windows);
    rc = 0;
done:
    free(gdn);
    free(dir);
    free(tok);
    student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    plan_arg_free(a);
    return rc;
}

int results_start_evaluate(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    snprintf(st->corpus, sizeof st->corpus, "%s", wb->corpus);
    return start(jr, "evaluate", evaluate_job, a);
}

/* ---- ablate: strategies x ratios x inits, quick settings ---- */

static int ablate_job(job_ctx *ctx, void *argp) {
    plan_arg *a = argp;
    job_progress_bridge br;
    bridge_init(&br, ctx);
    static const double keeps[] = {0.25, 0.5, 0.75};
    static const select_strategy strats[] = {STRATEGY_UNIFORM, STRATEGY_AR, STRATEGY_GA_S2};
    const int L = a->L, n_keep = 3, n_strat = 3, n_init = INIT_COUNT;
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    student studs[INIT_COUNT] = {0};
    layer_selection ar = {0}, ga[INIT_COUNT] = {0};
    bool *all = gf_malloc((size_t)L * sizeof *all), *kept = gf_malloc((size_t)L * sizeof *kept),
         *gdn = gf_malloc((size_t)L * sizeof *gdn);
    int rc = -1, steps = stage2_steps() < 50 ? stage2_steps() : 50;
    split_spec spec;
    plan_split_spec(&spec);
    for (int l = 0; l < L; l++) all[l] = true;
    if (token_split_make(&sp, a->m->tok, a->corpus, a->corpus, &spec) != 0) goto done;
    if (method_capture(a->m, &sp, &cal, &held, &br.sink) != 0) goto done;
    double nll;
    long cnt;
    if (eval_nll(a->m, sp.eval.data, sp.eval.len, spec.ctx, &nll, &cnt, &br.sink) != 0) goto done;
    job_scalar(ctx, "teacher_ppl", 0, ppl_of(nll, cnt));
    job_log(ctx, "ablation: %d strategies x %d ratios x %d inits, Stage 2 %d steps", n_strat, n_keep, n_init, steps);
    for (int j = 0; j < n_init; j++) {
        student_settings set;
        if (settings_for((student_init)j, steps, a->seed, &set) != 0 || student_init_empty(&studs[j], a->m, &set) != 0 ||
            student_build_layers(&studs[j], all, &cal, held.L ? &held : NULL, &br.sink) != 0 || check_cancel(ctx))
            goto done;
    }
    strategy_spec ar_spec = {.kind = STRATEGY_AR}, ga_spec = {.kind = STRATEGY_GA_S2};
    for (int si = 0; si < n_strat; si++)
        for (int ki = 0; ki < n_keep; ki++) {
            int k;
            if (keep_count(keeps[ki], L, &k) != 0) goto done;
            for (int j = 0; j < n_init; j++) {
                if (check_cancel(ctx)) goto done;
                if (strats[si] == STRATEGY_UNIFORM) {
                    int *ids = gf_malloc((size_t)(k ? k : 1) * sizeof *ids);
                    select_uniform(L, k, ids);
                    memset(kept, 0, (size_t)L * sizeof *kept);
                    for (int i = 0; i < k; i++) kept[ids[i]] = true;
                    free(ids);
                } else if (strats[si] == STRATEGY_AR) {
                    if (!ar.score && select_layers(&ar, &ar_spec, k, a->m, NULL, sp.select.data, sp.select.len, spec.ctx,
                                                   &br.sink) != 0)
                        goto done;
                    rank_kept(ar.score, L, k, true, kept);
                } else {
                    if (!ga[j].score && select_layers(&ga[j], &ga_spec, k, a->m, &studs[j], sp.select.data, sp.select.len,
                                                      spec.ctx, &br.sink) != 0)
                        goto done;
                    rank_kept(ga[j].score, L, k, false, kept);
                }
                for (int l = 0; l < L; l++) gdn[l] = !kept[l];
                if (student_set_gdn(&studs[j], gdn) != 0) goto done;
                if (student_eval_nll(&studs[j], sp.eval.data, sp.eval.len, spec.ctx, &nll, &cnt, &br.sink) != 0) goto done;
                char kt[512];
                kept_text(kept, L, kt, sizeof kt);
                publish_row(ctx, strategy_name(strats[si]), keeps[ki], (student_init)j, ppl_of(nll, cnt),
                            student_half_life_summary(&studs[j], gdn), kt, "-");
                job_progress(ctx, (si * n_keep + ki) * n_init + j + 1, n_strat * n_keep * n_init, "ablate rows");
            }
        }
    job_log(ctx, "same table headless: graft ablate MODEL --calib %s --eval %s --steps %d --eval-windows %d --json",
            a->corpus, a->corpus, steps, spec.eval_windows);
    rc = 0;
done:
    for (int j = 0; j < n_init; j++) {
        student_free(&studs[j]);
        layer_selection_free(&ga[j]);
    }
    layer_selection_free(&ar);
    free(all);
    free(kept);
    free(gdn);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    plan_arg_free(a);
    return rc;
}

int results_start_ablate(workbench *wb, app_state *st, job_runner *jr) {
    plan_arg *a = make_arg(wb, st);
    if (!a) return -1;
    return start(jr, "ablate", ablate_job, a);
}
