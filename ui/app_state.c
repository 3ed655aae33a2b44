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
    method_state_init(&st->method);
}

static void drop_matrices(app_state *st) {
    for (int i = 0; i < APP_MAX_INITS; i++)
        for (int m = 0; m < MET_COUNT; m++) {
            free(st->inits[i].m[m]);
            st->inits[i].m[m] = NULL;
        }
    free(st->kept);
    free(st->layer_score);
    st->kept = NULL;
    st->layer_score = NULL;
}

void app_state_free(app_state *st) {
    drop_matrices(st);
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

static bool apply_stat(app_state *st, const event *ev) {
    if (method_state_stat(&st->method, st->n_layers, st->n_heads, ev->label, ev->layer, ev->head, ev->value))
        return true;
    char init[32] = "teacher";
    const char *key = ev->label, *slash = strchr(ev->label, '/');
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
        app_state_log(st, "%s: %s", ev->job_name, ev->text);
        return true;
    case EV_SCALAR:
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
