#include "formats/model_load.h"
#include "workbench/teacher_jobs.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "hub/resolve.h"
#include "memory/estimate.h"
#include "workbench/meter.h"
#include "select/kv_cost.h"
#include "tokenizer/tokenizer.h"
#include "workbench/import_runs.h"
#include "workbench/plan_jobs.h"

/* ---- the load job (worker thread): it reads its argument, never app_state ---- */

#define MAX_STARTED 64

typedef struct {
    char *arg;
    char device[16];               /* the Settings' device and threads when the load started */
    int threads;
    job_ctx *ctx;
    int n_events;                  /* hub events with a file: none means nothing was transferred */
    char *started[MAX_STARTED];    /* files whose transfer began (the rest were already cached) */
    int n_started;
    char *tokenizer;               /* --tokenizer, or NULL */
} load_arg;

typedef struct {
    model *m;
    gf_backend *be;                /* the model's, opened by the load */
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
    /* a GGUF file carries its tokenizer: a tokenizer.bin beside it is not the teacher's */
    size_t ll = strlen(local);
    const bool gguf = ll > 5 && !strcmp(local + ll - 5, ".gguf");
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
        if (base && (gguf || !hub_is_tokenizer_beside(de->d_name, base))) continue;
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

/* Before the parameters are allocated: on a device, refuse a teacher that does not fit. */
static int check_fits(void *ud, const model_config *cfg, gf_backend *be) {
    mem_job j;
    mem_estimate e;
    mem_job_init(&j, cfg, be_act(be), !be_is_host(be));
    if (mem_estimate_job(&e, &j) != 0) return -1;
    char need[32];
    mem_format(need, sizeof need, e.total);
    job_log(ud, "the parameters need %s on %s", need, be_name(be));
    size_t f, t;
    if (be_is_host(be)) return 0;
    if (be_mem_info(be, &f, &t) != 0) return -1;
    char dev[32];
    wb_device_of(be, dev, sizeof dev);
    return mem_check(e.total, f, dev, false);
}

static int load_job(job_ctx *ctx, void *argp) {
    load_arg *a = argp;
    a->ctx = ctx;
    const job_phase phases[] = {{"resolving", 1}, {"loading", 4}};
    job_set_phases(ctx, phases, 2);
    job_progress(ctx, 0, 1, "resolving");
    hub_callbacks cb = {.on_event = download_event, .user = a, .cancel = job_cancel_flag(ctx)};
    char *local = NULL;
    int rc = hub_resolve_model(a->arg, &local, &cb);
    if (rc != 0) {
        free_load_arg(a);
        return -1;
    }
    if (a->n_events == 0) report_on_disk(ctx, local);
    if (job_cancelled(ctx)) {
        free(local);
        free_load_arg(a);
        return gf_fail("cancelled before loading");
    }
    job_progress(ctx, 0, 1, "loading");
    /* the teacher goes where the Settings say every job runs */
    gf_backend *be;
    const gf_backend_opts bo = {a->device, a->threads, false};
    if (be_open(&be, &bo) != 0) {
        free(local);
        free_load_arg(a);
        return -1;
    }
    job_log(ctx, "loading onto %s", be_name(be));
    model *m = gf_calloc(1, sizeof *m);
    const model_load_opts lo = {a->tokenizer, be};
    const model_load_hooks hk = {.on_config = check_fits, .ud = ctx};
    if (model_load_hooked(m, local, &lo, &hk) != 0) {
        free(m);
        be_close(be);
        free(local);
        free_load_arg(a);
        return -1;
    }
    job_progress(ctx, 1, 1, "loading");
    loaded_teacher *t = gf_calloc(1, sizeof *t);
    t->m = m;
    t->be = be;
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
    snprintf(a->device, sizeof a->device, "%s", settings_device_name(&st->settings));
    a->threads = st->settings.threads;
    if (wb->tokenizer && !strcmp(arg, wb->tokenizer_for)) a->tokenizer = gf_strdup(wb->tokenizer);
    if (wb_start(st, jr, "load", load_job, a, NULL) != 0) {
        free_load_arg(a);
        return -1;
    }
    if (wb->model_arg != arg) {
        free(wb->model_arg);
        wb->model_arg = gf_strdup(arg);
    }
    snprintf(st->opening, sizeof st->opening, "%s", arg);
    st->teacher_error[0] = 0;
    app_clear_download(st);
    return 0;
}

int teacher_open(app_state *st, job_runner *jr, const char *arg) {
    workbench *wb = st->user;
    if (!wb) return gf_fail("no workbench is attached");
    if (!arg || !arg[0]) return gf_fail("name a teacher: ORG/NAME[@REV][:PATH] or a local path");
    st->fallback_note[0] = 0;
    if (import_show_teacher(st, arg)) return 0; /* imported runs of a teacher whose file is not here */
    return teacher_start_load(wb, st, jr, arg);
}

static void show_teacher(teacher_state *t, const model *m) {
    const model_config *c = &m->cfg;
    snprintf(t->shape, sizeof t->shape, "%d layers · %d heads (%d KV) · d %d", c->n_layers, c->n_heads,
             c->n_kv_heads, c->dim);
    char buf[10][1100];
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
    teacher_state_set_lines(t, lines, 10);
    teacher_state_set_shape(t, c->n_layers, c->n_heads);
    t->kv_heads = c->n_kv_heads;
    t->head_dim = c->head_dim;
    t->kv_bytes = kv_dtype_bytes(m->weights_dtype);
    if (!t->kept) teacher_plan_recompute(t);
}

/* "stories260K.bin" from a path; the repo id for a Hub teacher. */
static void display_name(const loaded_teacher *lt, char *buf, size_t n) {
    if (strcmp(lt->arg, lt->local)) { /* a repo id names the teacher better than its snapshot folder */
        snprintf(buf, n, "%s", lt->arg);
        return;
    }
    const char *slash = strrchr(lt->local, '/');
    snprintf(buf, n, "%s", slash && slash[1] ? slash + 1 : lt->local);
}

/* The header's GPU slot: the teacher's device, when it is one (the UI thread
 * samples it; the backend changes only on the UI thread, in teacher_loaded). */
static gf_backend *meter_be;
static int gpu_query(gpu_sample *out) {
    gf_backend *be = meter_be;
    size_t f, t;
    if (!be || be_is_host(be) || be_mem_info(be, &f, &t) != 0) return -1;
    snprintf(out->name, sizeof out->name, "%s", be_name(be));
    out->present = true;
    out->mem_used = (double)(t - f);
    out->mem_total = (double)t;
    out->util = -1;
    return 0;
}

void teacher_loaded(workbench *wb, app_state *st, void *result) {
    loaded_teacher *lt = result;
    if (!lt) return;
    if (wb->m) {
        model_free(wb->m);
        free(wb->m);
    }
    be_close(wb->be); /* after its model: nothing else holds its memory */
    wb->be = lt->be;
    meter_be = wb->be;
    meter_set_gpu_query(be_is_host(wb->be) ? NULL : gpu_query);
    wb->m = lt->m;
    /* a teacher is its file: a relative path is remembered absolute (the next session may start
     * elsewhere); a Hub snapshot path stays as it is (its files are links into the blob store) */
    char *abs = lt->local[0] == '/' ? NULL : realpath(lt->local, NULL);
    const char *key = abs ? abs : lt->local;
    free(wb->m_key);
    wb->m_key = gf_strdup(key);
    import_adopt_teacher(st, key); /* runs imported for this file name before it was here */
    teacher_state *t = app_teacher(st, key);
    if (!t) { /* cannot happen: app_teacher makes room */
        app_log(st, LOG_ERROR, "load: no room for another teacher");
        free(abs);
        free(lt->arg), free(lt->local), free(lt);
        return;
    }
    bool repo = strcmp(lt->arg, lt->local) != 0;
    snprintf(t->arg, sizeof t->arg, "%s", repo ? lt->arg : key);
    snprintf(t->model_arg, sizeof t->model_arg, "%s", repo ? lt->arg : key);
    display_name(lt, t->name, sizeof t->name);
    t->loaded = true;
    show_teacher(t, wb->m);
    if (wb->plan_for && !strcmp(lt->arg, wb->plan_for)) { /* graft tui --keep / --strategy, once */
        if (!isnan(wb->plan_keep)) t->keep_ratio = wb->plan_keep;
        if (wb->plan_strategy[0]) snprintf(t->strategy, sizeof t->strategy, "%s", wb->plan_strategy);
        teacher_plan_recompute(t);
        free(wb->plan_for);
        wb->plan_for = NULL;
    }
    /* its files: what the load reported */
    t->n_files = st->download.n_files;
    memcpy(t->files, st->download.files, sizeof t->files);
    app_switch(st, t);
    st->opening[0] = 0;
    st->teacher_error[0] = 0;
    app_clear_download(st);
    app_add_recent(st, t->arg, key);
    app_log(st, LOG_INFO, "loaded %s (%s)", t->name, wb->m->path);
    free(abs);
    free(lt->arg);
    free(lt->local);
    free(lt);
}
