#include "app_state.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "select/select.h"

static const metric_info metrics[MET_COUNT] = {
    [MET_MEAN_DIST] = {"mean_dist", "mean attention distance", "tokens", "d", true},
    [MET_ENTROPY] = {"entropy", "attention entropy", "nats", "H", false},
    [MET_CONCENTRATION] = {"concentration", "attention concentration", "", "c", false},
    [MET_OUT_RMS] = {"out_rms", "head output RMS", "", "rms", false},
    [MET_HALFLIFE_IDLE] = {"halflife_idle", "idle half-life", "tokens", "t1/2 idle", true},
    [MET_HALFLIFE_DATA] = {"halflife_data", "data half-life", "tokens", "t1/2 data", true},
    [MET_BETA] = {"beta", "beta*", "", "beta*", false},
    [MET_SIGMA] = {"sigma", "sigma*", "", "sigma*", false},
    [MET_ALIGN_LOSS] = {"align_loss", "alignment loss", "", "loss", true},
};

const metric_info *metric_get(head_metric m) { return &metrics[m < MET_COUNT ? m : 0]; }

int metric_from_key(const char *key) {
    for (int m = 0; m < MET_COUNT; m++)
        if (!strcmp(key, metrics[m].key)) return m;
    return -1;
}

void app_state_init(app_state *st) {
    memset(st, 0, sizeof *st);
    st->keep_ratio = -1;
    st->refresh_hz = 30;
    st->teacher_ppl = NAN;
    snprintf(st->eval_init, sizeof st->eval_init, "taylor-calibrate");
    method_state_init(&st->method);
}

static void drop_layer_arrays(app_state *st) {
    free(st->kept);
    free(st->layer_score);
    st->kept = NULL;
    st->layer_score = NULL;
    for (int i = 0; i < APP_N_STRATEGIES; i++) {
        free(st->plan_score[i]);
        st->plan_score[i] = NULL;
    }
}

static void drop_matrices(app_state *st) {
    for (int i = 0; i < APP_MAX_INITS; i++)
        for (int m = 0; m < MET_COUNT; m++) {
            free(st->inits[i].m[m]);
            st->inits[i].m[m] = NULL;
        }
}

static void drop_all(app_state *st) {
    drop_matrices(st);
    drop_layer_arrays(st);
}

void app_state_free(app_state *st) {
    drop_all(st);
    method_state_free(&st->method);
    for (int i = 0; i < st->n_teacher_lines; i++) free(st->teacher_lines[i]);
    for (int i = 0; i < st->n_series; i++) {
        free(st->series[i].x);
        free(st->series[i].y);
    }
    for (int r = 0; r < st->n_results; r++)
        for (int c = 0; c < APP_RESULT_COLS; c++) free(st->results[r].cells[c]);
    free(st->results);
    for (int i = 0; i < st->n_log; i++) free(st->log[(st->log_start + i) % APP_LOG_CAP]);
    memset(st, 0, sizeof *st);
}

void app_state_set_shape(app_state *st, int n_layers, int n_heads) {
    if (n_layers == st->n_layers && n_heads == st->n_heads) return;
    drop_matrices(st);
    if (n_layers != st->n_layers) drop_layer_arrays(st); /* the plan survives a head count learned later */
    st->n_layers = n_layers > 0 ? n_layers : 0;
    method_state_resize(&st->method, st->n_layers, n_heads);
    st->n_heads = n_heads > 0 ? n_heads : 0;
}

void app_state_add_recent(app_state *st, const char *arg, const char *path) {
    if (!arg || !arg[0]) return;
    int found = -1;
    for (int i = 0; i < st->n_recent; i++)
        if (!strcmp(st->recent[i].arg, arg)) found = i;
    recent_teacher r = {{0}, {0}};
    snprintf(r.arg, sizeof r.arg, "%s", arg);
    snprintf(r.path, sizeof r.path, "%s", path ? path : "");
    if (!r.path[0] && found >= 0) memcpy(r.path, st->recent[found].path, sizeof r.path);
    int n = found >= 0 ? found : (st->n_recent < APP_MAX_RECENT ? st->n_recent++ : APP_MAX_RECENT - 1);
    memmove(&st->recent[1], &st->recent[0], (size_t)n * sizeof r);
    st->recent[0] = r;
}

void app_state_clear_download(app_state *st) { memset(&st->download, 0, sizeof st->download); }

/* EV_FILE: one file's state, or (name "") the totals alone. */
static bool apply_file(app_state *st, const event *ev) {
    download_state *d = &st->download;
    d->done = ev->file.all_done;
    d->total = ev->file.all_total;
    d->files_done = ev->file.files_done;
    d->files_total = ev->file.files_total;
    d->rate = ev->rate;
    d->eta_s = ev->eta_s;
    /* one file finishing does not end the download; the whole-download event does */
    if (ev->text[0]) d->active = ev->file.state == FILE_ACTIVE || ev->file.files_done < ev->file.files_total;
    else d->active = ev->file.state == FILE_ACTIVE || ev->file.state == FILE_QUEUED;
    if (!ev->text[0]) return true;
    int i = 0;
    while (i < d->n_files && strcmp(d->files[i].name, ev->text)) i++;
    if (i == d->n_files) {
        if (d->n_files == APP_MAX_FILES) return true; /* the totals still count it */
        d->n_files++;
        snprintf(d->files[i].name, sizeof d->files[i].name, "%s", ev->text);
    }
    d->files[i].state = ev->file.state;
    d->files[i].done = (long long)ev->done;
    d->files[i].total = (long long)ev->total;
    return true;
}

int app_state_init_index(app_state *st, const char *name) {
    for (int i = 0; i < st->n_inits; i++)
        if (!strcmp(st->inits[i].name, name)) return i;
    if (st->n_inits == APP_MAX_INITS) return -1;
    snprintf(st->inits[st->n_inits].name, sizeof st->inits[0].name, "%s", name);
    return st->n_inits++;
}

double *app_state_metric(app_state *st, int init, head_metric m) {
    if (init < 0 || init >= st->n_inits || m >= MET_COUNT || !st->n_layers || !st->n_heads) return NULL;
    double **p = &st->inits[init].m[m];
    if (!*p) {
        size_t n = (size_t)st->n_layers * st->n_heads;
        *p = gf_malloc(n * sizeof **p);
        for (size_t i = 0; i < n; i++) (*p)[i] = NAN;
    }
    return *p;
}

void app_state_set_kept(app_state *st, const bool *kept) {
    if (!st->n_layers) return;
    if (!st->kept) st->kept = gf_calloc((size_t)st->n_layers, sizeof *st->kept);
    memcpy(st->kept, kept, (size_t)st->n_layers * sizeof *kept);
}

void app_state_converted(const app_state *st, bool *out) {
    const int L = st->n_layers;
    if (st->kept) {
        for (int l = 0; l < L; l++) out[l] = !st->kept[l];
        return;
    }
    int k = 0, kept[1024];
    for (int l = 0; l < L; l++) out[l] = true;
    if (L <= 0 || L > 1024 || keep_count(0.5, L, &k) != 0) return;
    select_uniform(L, k, kept);
    for (int i = 0; i < k; i++) out[kept[i]] = false;
}

void app_state_set_teacher_lines(app_state *st, const char *const *lines, int n) {
    for (int i = 0; i < st->n_teacher_lines; i++) free(st->teacher_lines[i]);
    st->n_teacher_lines = 0;
    for (int i = 0; i < n && i < 32; i++) st->teacher_lines[st->n_teacher_lines++] = gf_strdup(lines[i]);
}

void app_state_log(app_state *st, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (st->n_log == APP_LOG_CAP) {
        free(st->log[st->log_start]);
        st->log_start = (st->log_start + 1) % APP_LOG_CAP;
        st->n_log--;
    }
    st->log[(st->log_start + st->n_log) % APP_LOG_CAP] = gf_strdup(buf);
    st->n_log++;
    st->log_total++;
}

const char *app_state_log_line(const app_state *st, int i) {
    if (i < 0 || i >= st->n_log) return NULL;
    return st->log[(st->log_start + i) % APP_LOG_CAP];
}

void app_state_set_result_header(app_state *st, const char *const *cols, int n) {
    st->n_result_cols = n < APP_RESULT_COLS ? n : APP_RESULT_COLS;
    for (int c = 0; c < st->n_result_cols; c++)
        snprintf(st->result_header[c], sizeof st->result_header[c], "%s", cols[c]);
}

void app_state_add_result(app_state *st, const char *const *cells, int n) {
    st->results = gf_realloc(st->results, (size_t)(st->n_results + 1) * sizeof *st->results);
    result_row *r = &st->results[st->n_results++];
    memset(r, 0, sizeof *r);
    for (int c = 0; c < n && c < APP_RESULT_COLS; c++) r->cells[c] = gf_strdup(cells[c] ? cells[c] : "");
}

loss_series *app_state_series(app_state *st, const char *name) {
    for (int i = 0; i < st->n_series; i++)
        if (!strcmp(st->series[i].name, name)) return &st->series[i];
    if (st->n_series == APP_MAX_SERIES) return NULL;
    loss_series *s = &st->series[st->n_series++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

void app_state_add_point(app_state *st, const char *series, double x, double y) {
    loss_series *s = app_state_series(st, series);
    if (!s) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->x = gf_realloc(s->x, s->cap * sizeof *s->x);
        s->y = gf_realloc(s->y, s->cap * sizeof *s->y);
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
}

/* ---- the Plan ---- */

static const char *const strategy_names[APP_N_STRATEGIES] = {"uniform", "ar", "ga-s2", "manual"};

int app_state_strategy_index(const char *name) {
    for (int i = 0; i < APP_N_STRATEGIES; i++)
        if (!strcmp(name, strategy_names[i])) return i;
    return -1;
}

const char *app_state_strategy_name(int i) { return i >= 0 && i < APP_N_STRATEGIES ? strategy_names[i] : "?"; }

int app_state_keep_count(const app_state *st) {
    int k = 0;
    if (st->n_layers <= 0 || keep_count(st->keep_ratio, st->n_layers, &k) != 0) return 0;
    return k;
}

static bool scores_complete(const double *v, int n) {
    if (!v) return false;
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

void app_state_plan_recompute(app_state *st) {
    if (app_state_strategy_index(st->strategy) < 0) snprintf(st->strategy, sizeof st->strategy, "uniform");
    if (!(st->keep_ratio > 0 && st->keep_ratio < 1)) st->keep_ratio = 0.5;
    const int L = st->n_layers;
    if (L <= 0) return;
    if (!st->kept) st->kept = gf_calloc((size_t)L, sizeof *st->kept);
    int s = app_state_strategy_index(st->strategy), k = app_state_keep_count(st);
    if (s == STRATEGY_UNIFORM) {
        int *kept = gf_malloc((size_t)(k ? k : 1) * sizeof *kept);
        select_uniform(L, k, kept);
        memset(st->kept, 0, (size_t)L * sizeof *st->kept);
        for (int i = 0; i < k; i++) st->kept[kept[i]] = true;
        free(kept);
    } else if ((s == STRATEGY_AR || s == STRATEGY_GA_S2) && scores_complete(st->plan_score[s], L)) {
        /* ar keeps the highest (removal hurts most), ga-s2 the lowest; ties: lower layer */
        const double *v = st->plan_score[s];
        memset(st->kept, 0, (size_t)L * sizeof *st->kept);
        for (int i = 0; i < k; i++) {
            int best = -1;
            for (int l = 0; l < L; l++)
                if (!st->kept[l] && (best < 0 || (s == STRATEGY_AR ? v[l] > v[best] : v[l] < v[best]))) best = l;
            st->kept[best] = true;
        }
    }
}

const char *const app_result_columns[] = {"strategy", "keep", "init", "ppl", "hl mean", "hl med", "hl max", "kept", "student"};
const int app_n_result_columns = sizeof app_result_columns / sizeof app_result_columns[0];

void app_state_use_result_columns(app_state *st) {
    bool same = st->n_result_cols == app_n_result_columns;
    for (int c = 0; same && c < app_n_result_columns; c++) same = !strcmp(st->result_header[c], app_result_columns[c]);
    if (same) return;
    /* another table (demo, an older session): start a new one */
    for (int r = 0; r < st->n_results; r++)
        for (int c = 0; c < APP_RESULT_COLS; c++) free(st->results[r].cells[c]);
    free(st->results);
    st->results = NULL;
    st->n_results = 0;
    app_state_set_result_header(st, app_result_columns, app_n_result_columns);
}

static bool apply_result_row(app_state *st, const char *text) {
    char buf[sizeof ((event *)0)->text];
    snprintf(buf, sizeof buf, "%s", text + strlen("result\t"));
    const char *cells[APP_RESULT_COLS];
    int n = 0;
    char *p = buf;
    while (n < APP_RESULT_COLS) {
        cells[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    app_state_use_result_columns(st);
    app_state_add_result(st, cells, n);
    return true;
}

static bool apply_score(app_state *st, const event *ev, const char *name) {
    int s = app_state_strategy_index(name);
    if (s < 0 || ev->layer < 0 || ev->layer >= st->n_layers) return false;
    if (!st->plan_score[s]) {
        st->plan_score[s] = gf_malloc((size_t)st->n_layers * sizeof *st->plan_score[s]);
        for (int l = 0; l < st->n_layers; l++) st->plan_score[s][l] = NAN;
    }
    st->plan_score[s][ev->layer] = ev->value;
    if (app_state_strategy_index(st->strategy) == s) app_state_plan_recompute(st);
    return true;
}

static bool apply_stat(app_state *st, const event *ev) {
    if (method_state_stat(&st->method, st->n_layers, st->n_heads, ev->label, ev->layer, ev->head, ev->value))
        return true;
    char init[32] = "teacher";
    const char *key = ev->label, *slash = strchr(ev->label, '/');
    if (!strncmp(ev->label, "plan/", 5)) return apply_score(st, ev, ev->label + 5);
    if (slash) {
        snprintf(init, sizeof init, "%.*s", (int)(slash - ev->label), ev->label);
        key = slash + 1;
    }
    int m = metric_from_key(key);
    if (m < 0 || ev->layer < 0 || ev->layer >= st->n_layers || ev->head < 0 || ev->head >= st->n_heads)
        return false;
    double *mat = app_state_metric(st, app_state_init_index(st, init), (head_metric)m);
    if (!mat) return false;
    mat[ev->layer * st->n_heads + ev->head] = ev->value;
    return true;
}

/* How the last calibrate / align job ended, for their screens. */
static void set_outcome(app_state *st, const char *job, const char *what) {
    char *dst = !strcmp(job, "calibrate") ? st->method.calib_outcome
                : !strcmp(job, "align")   ? st->method.align_outcome
                                          : NULL;
    if (dst) snprintf(dst, sizeof st->method.calib_outcome, "%.47s", what);
}

bool app_state_apply_event(app_state *st, const event *ev) {
    switch (ev->kind) {
    case EV_PROGRESS:
        st->job.active = true;
        snprintf(st->job.name, sizeof st->job.name, "%s", ev->job_name);
        snprintf(st->job.label, sizeof st->job.label, "%s", ev->label);
        st->job.fraction = ev->fraction;
        st->job.done = ev->done;
        st->job.total = ev->total;
        st->job.eta_s = ev->eta_s;
        return true;
    case EV_LOG:
        if (!strncmp(ev->text, "result\t", 7)) return apply_result_row(st, ev->text);
        app_state_log(st, "%s: %s", ev->job_name, ev->text);
        return true;
    case EV_SCALAR:
        if (!strcmp(ev->label, "teacher_ppl")) st->teacher_ppl = ev->value;
        app_state_log(st, "%s: %s[%ld] = %g", ev->job_name, ev->label, ev->step, ev->value);
        return true;
    case EV_STAT:
        return apply_stat(st, ev);
    case EV_LOSS:
        if (method_state_loss(&st->method, st->n_layers, ev->label, ev->step, ev->value)) return true;
        app_state_add_point(st, ev->label, (double)ev->step, ev->value);
        return true;
    case EV_DONE:
        st->job.active = false;
        set_outcome(st, ev->job_name, "done");
        app_state_log(st, "%s: done", ev->job_name);
        if (st->on_done) st->on_done(st, ev->job_name, ev->result);
        else free(ev->result);
        return true;
    case EV_ERROR:
        st->job.active = false;
        set_outcome(st, ev->job_name, ev->text);
        app_state_log(st, "%s: error: %s", ev->job_name, ev->text);
        if (!strcmp(ev->job_name, "load")) {
            snprintf(st->teacher_error, sizeof st->teacher_error, "%s", ev->text);
            st->opening[0] = 0;
            size_t n = strlen(st->teacher), k = strlen(" (loading)");
            if (n >= k && !strcmp(st->teacher + n - k, " (loading)")) st->teacher[0] = 0; /* nothing loaded */
            st->download.active = false;
        }
        return true;
    case EV_FILE:
        return apply_file(st, ev);
    case EV_CANCELLED:
        st->job.active = false;
        set_outcome(st, ev->job_name, "cancelled");
        if (!strcmp(ev->job_name, "load")) {
            snprintf(st->teacher_error, sizeof st->teacher_error, "opening %.200s was cancelled", st->opening);
            st->opening[0] = 0;
            st->download.active = false;
        }
        app_state_log(st, "%s: cancelled", ev->job_name);
        return true;
    }
    return false;
}
