#include "workbench/teacher_jobs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "hub/resolve.h"
#include "tokenizer/tokenizer.h"

/* ---- the load job (worker thread): it reads its argument, never app_state ---- */

#define MAX_STARTED 64

typedef struct {
    char *arg;
    job_ctx *ctx;
    volatile int cancel;
    int n_events;                  /* hub events with a file: none means nothing was transferred */
    char *started[MAX_STARTED];    /* files whose transfer began (the rest were already cached) */
    int n_started;
    char *tokenizer;               /* --tokenizer, or NULL */
} load_arg;

typedef struct {
    model *m;
    char *arg, *local;
} loaded_teacher;

static bool was_started(const load_arg *a, const char *file) {
    for (int i = 0; i < a->n_started; i++)
        if (!strcmp(a->started[i], file)) return true;
    return false;
}

/* Hub events (on the hub's worker threads, one at a time) -> job events. */
static void download_event(const hub_event *ev, void *user) {
    load_arg *a = user;
    if (job_cancelled(a->ctx)) a->cancel = 1;
    job_file_info f = {.name = ev->file, .done = ev->file_done, .total = ev->file_total,
                       .all_done = ev->total_done, .all_total = ev->total_total, .files_done = ev->files_done,
                       .files_total = ev->files_total, .bytes_per_s = ev->bytes_per_s, .eta_s = ev->eta_s};
    switch (ev->state) {
    case HUB_EV_STARTED:
        if (ev->file && a->n_started < MAX_STARTED && !was_started(a, ev->file))
            a->started[a->n_started++] = gf_strdup(ev->file);
        f.state = FILE_ACTIVE;
        break;
    case HUB_EV_PROGRESS:
    case HUB_EV_VERIFIED: f.state = FILE_ACTIVE; break;
    case HUB_EV_DONE:
        f.state = ev->file && !was_started(a, ev->file) ? FILE_CACHED : FILE_DONE;
        if (ev->file) job_log(a->ctx, "%s %s", f.state == FILE_CACHED ? "cached" : "downloaded", ev->file);
        break;
    case HUB_EV_ERROR:
        f.state = FILE_FAILED;
        if (ev->message && ev->file) /* the whole download's error becomes the job's error */
            job_log(a->ctx, "download: %s%s%s", ev->file ? ev->file : "", ev->file ? ": " : "", ev->message);
        break;
    }
    if (ev->file) a->n_events++;
    job_file(a->ctx, &f);
    if (ev->state == HUB_EV_PROGRESS && ev->total_total > 0)
        job_progress(a->ctx, (double)ev->total_done, (double)ev->total_total, "download");
}

static long long file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1;
}

/* Nothing was transferred: list what is on disk (the checkpoint and the
 * tokenizer beside it, or a model folder's files) as cached. */
static void report_on_disk(job_ctx *ctx, const char *local) {
    enum { MAX_LISTED = 24 };
    char *names[MAX_LISTED];
    long long sizes[MAX_LISTED], sum = 0;
    int n = 0;
    struct stat sb;
    if (stat(local, &sb) != 0) return;
    char *dir = gf_strdup(local);
    const char *base = local;
    if (S_ISDIR(sb.st_mode)) {
        base = NULL;
    } else {
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
            base = slash + 1;
        } else {
            free(dir);
            dir = gf_strdup(".");
        }
        names[n] = gf_strdup(base);
        sizes[n] = (long long)sb.st_size;
        n++;
    }
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && n < MAX_LISTED && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (base && !hub_is_tokenizer_beside(de->d_name, base)) continue;
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        char *p = gf_malloc(len);
        snprintf(p, len, "%s/%s", dir, de->d_name);
        long long sz = file_size(p);
        free(p);
        if (sz < 0) continue;
        names[n] = gf_strdup(de->d_name);
        sizes[n++] = sz;
    }
    if (d) closedir(d);
    free(dir);
    for (int i = 0; i < n; i++) sum += sizes[i];
    for (int i = 0; i < n; i++) {
        job_file_info f = {.name = names[i], .state = FILE_CACHED, .done = sizes[i], .total = sizes[i],
                           .all_done = sum, .all_total = sum, .files_done = n, .files_total = n, .eta_s = -1};
        job_file(ctx, &f);
        free(names[i]);
    }
}

static void free_load_arg(load_arg *a) {
    for (int i = 0; i < a->n_started; i++) free(a->started[i]);
    free(a->arg);
    free(a->tokenizer);
    free(a);
}

static int load_job(job_ctx *ctx, void *argp) {
    load_arg *a = argp;
    a->ctx = ctx;
    job_progress(ctx, 0, 1, "resolving");
    hub_callbacks cb = {.on_event = download_event, .user = a, .cancel = &a->cancel};
    char *local = NULL;
    int rc = hub_resolve_model(a->arg, &local, &cb);
    if (rc != 0) {
        free_load_arg(a);
        return -1;
    }
    if (a->n_events == 0) report_on_disk(ctx, local);
    job_progress(ctx, 0, 1, "loading");
    model *m = gf_calloc(1, sizeof *m);
    model_load_opts lo = {a->tokenizer};
    if (model_load(m, local, &lo) != 0) {
        free(m);
        free(local);
        free_load_arg(a);
        return -1;
    }
    job_progress(ctx, 1, 1, "loaded");
    loaded_teacher *t = gf_calloc(1, sizeof *t);
    t->m = m;
    t->arg = a->arg;
    t->local = local;
    a->arg = NULL;
    free_load_arg(a);
    job_set_result(ctx, t);
    return 0;
}

/* ---- front end (UI thread) ---- */

int teacher_start_load(workbench *wb, app_state *st, job_runner *jr, const char *arg) {
    load_arg *a = gf_calloc(1, sizeof *a);
    a->arg = gf_strdup(arg);
    if (wb->tokenizer && !strcmp(arg, wb->tokenizer_for)) a->tokenizer = gf_strdup(wb->tokenizer);
    if (job_start(jr, "load", load_job, a) != 0) {
        free_load_arg(a);
        return -1;
    }
    if (wb->model_arg != arg) {
        free(wb->model_arg);
        wb->model_arg = gf_strdup(arg);
    }
    snprintf(st->opening, sizeof st->opening, "%s", arg);
    st->teacher_error[0] = 0;
    app_state_clear_download(st);
    return 0;
}

int teacher_open(app_state *st, job_runner *jr, const char *arg) {
    workbench *wb = st->user;
    if (!wb) return gf_fail("no workbench is attached");
    if (!arg || !arg[0]) return gf_fail("name a teacher: ORG/NAME[@REV][:PATH] or a local path");
    return teacher_start_load(wb, st, jr, arg);
}

static void show_teacher(app_state *st, const model *m) {
    const model_config *c = &m->cfg;
    snprintf(st->teacher, sizeof st->teacher, "%s", m->name);
    snprintf(st->shape, sizeof st->shape, "%d layers · %d heads (%d KV) · d %d", c->n_layers, c->n_heads,
             c->n_kv_heads, c->dim);
    char buf[10][160];
    snprintf(buf[0], sizeof buf[0], "path        %s", m->path);
    snprintf(buf[1], sizeof buf[1], "format      %s (%s weights)", model_source_name(c->source), m->weights_dtype);
    snprintf(buf[2], sizeof buf[2], "arch        %s", model_arch_name(c->arch));
    snprintf(buf[3], sizeof buf[3], "layers      %d", c->n_layers);
    snprintf(buf[4], sizeof buf[4], "hidden      %d (MLP %d)", c->dim, c->hidden_dim);
    snprintf(buf[5], sizeof buf[5], "heads       %d query, %d key/value, head_dim %d", c->n_heads, c->n_kv_heads,
             c->head_dim);
    snprintf(buf[6], sizeof buf[6], "vocab       %d   context %d", c->vocab_size, c->max_seq);
    snprintf(buf[7], sizeof buf[7], "rope        theta %g, %s pairs", c->rope_theta,
             c->rope_pairing == ROPE_ADJACENT ? "adjacent" : "half-split");
    snprintf(buf[8], sizeof buf[8], "parameters  %zu", model_param_count(c));
    snprintf(buf[9], sizeof buf[9], "tokenizer   %s", m->tok ? tokenizer_kind(m->tok) : "none found");
    const char *lines[10];
    for (int i = 0; i < 10; i++) lines[i] = buf[i];
    app_state_set_teacher_lines(st, lines, 10);
    app_state_set_shape(st, c->n_layers, c->n_heads);
}

void teacher_loaded(workbench *wb, app_state *st, void *result) {
    loaded_teacher *t = result;
    if (!t) return;
    if (wb->m) {
        model_free(wb->m);
        free(wb->m);
    }
    wb->m = t->m;
    show_teacher(st, wb->m);
    /* a repo id names the teacher better than its snapshot folder (a commit hash) */
    if (strcmp(t->arg, t->local)) snprintf(st->teacher, sizeof st->teacher, "%s", t->arg);
    st->opening[0] = 0;
    st->teacher_error[0] = 0;
    st->download.active = false;
    /* a local path is remembered absolute: the next session may start elsewhere */
    char *abs = !strcmp(t->arg, t->local) ? realpath(t->local, NULL) : NULL;
    app_state_add_recent(st, abs ? abs : t->arg, abs ? abs : t->local);
    free(abs);
    app_state_log(st, "loaded %s", wb->m->path);
    free(t->arg);
    free(t->local);
    free(t);
}
