#include "workbench/state.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "workbench/result_request.h"
#include "workbench/wb_event.h"
#include "student/student.h"

void app_state_init(app_state *st) {
    memset(st, 0, sizeof *st);
    st->cur = -1;
    settings_default(&st->settings);
    snprintf(st->eval_init, sizeof st->eval_init, "%s", student_init_name(INIT_TAYLOR_CALIBRATE));
    st->job.eta = -1;
    st->lock_fd = -1;
}

void app_state_free(app_state *st) {
    if (st->lock_fd > 2) close(st->lock_fd); /* the session's lock goes with it (0-2: never ours) */
    for (int i = 0; i < st->n_teachers; i++) teacher_state_free(st->teachers[i]);
    wb_log_free(&st->log);
    memset(st, 0, sizeof *st);
    st->cur = -1;
}

teacher_state *app_cur(const app_state *st) {
    return st->cur >= 0 && st->cur < st->n_teachers ? st->teachers[st->cur] : NULL;
}

teacher_state *app_find_teacher(const app_state *st, const char *key) {
    for (int i = 0; key && i < st->n_teachers; i++)
        if (!strcmp(st->teachers[i]->key, key)) return st->teachers[i];
    return NULL;
}

static bool owns_running_job(const app_state *st, const teacher_state *t) {
    for (int i = 0; i < st->n_hist; i++) {
        const job_record *r = app_job_at(st, i);
        if (r->owner == t && r->outcome == JOB_RUNNING) return true;
    }
    return false;
}

/* Makes room: the least recently created teacher that is neither current nor busy goes. */
static void evict_one(app_state *st) {
    for (int i = 0; i < st->n_teachers; i++) {
        teacher_state *t = st->teachers[i];
        if (i == st->cur || owns_running_job(st, t)) continue;
        for (int k = 0; k < st->n_hist; k++) { /* its finished jobs no longer route anywhere */
            job_record *r = &st->history[(st->hist_start + k) % JOB_HISTORY_CAP];
            if (r->owner == t) r->owner = NULL;
        }
        teacher_state_free(t);
        memmove(&st->teachers[i], &st->teachers[i + 1], (size_t)(st->n_teachers - i - 1) * sizeof *st->teachers);
        st->n_teachers--;
        if (st->cur > i) st->cur--;
        return;
    }
}

teacher_state *app_teacher(app_state *st, const char *key) {
    teacher_state *t = app_find_teacher(st, key);
    if (t) return t;
    if (st->n_teachers == APP_MAX_TEACHERS) evict_one(st);
    if (st->n_teachers == APP_MAX_TEACHERS) return NULL;
    t = teacher_state_new(key);
    st->teachers[st->n_teachers++] = t;
    return t;
}

void app_switch(app_state *st, teacher_state *t) {
    st->cur = -1;
    for (int i = 0; t && i < st->n_teachers; i++)
        if (st->teachers[i] == t) st->cur = i;
}

void app_log(app_state *st, log_level level, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    wb_log_add(&st->log, level, buf);
}

void app_add_recent(app_state *st, const char *arg, const char *path) {
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

void app_clear_download(app_state *st) { memset(&st->download, 0, sizeof st->download); }

/* ---- jobs ---- */

/* snprintf "%s" that never ends inside a UTF-8 sequence, whether this copy or an earlier
 * one cut it (what is kept must be valid text: it goes to the session's JSON). */
static void copy_utf8(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src);
    size_t len = strlen(dst), i = len;
    while (i > 0 && len - i < 3 && ((unsigned char)dst[i - 1] & 0xC0) == 0x80) i--;
    if (i == 0 || !((unsigned char)dst[i - 1] & 0x80)) {
        if (i < len) dst[i] = 0; /* continuation bytes with no lead */
        return;
    }
    unsigned char lead = (unsigned char)dst[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (len - (i - 1) < need) dst[i - 1] = 0;
}

const job_record *app_job_at(const app_state *st, int i) {
    if (i < 0 || i >= st->n_hist) return NULL;
    return &st->history[(st->hist_start + i) % JOB_HISTORY_CAP];
}

static job_record *find_record(app_state *st, int id) {
    for (int i = st->n_hist - 1; i >= 0; i--) {
        job_record *r = &st->history[(st->hist_start + i) % JOB_HISTORY_CAP];
        if (r->id == id) return r;
    }
    return NULL;
}

const job_record *app_job_find(const app_state *st, int id) { return find_record((app_state *)st, id); }

static job_record *push_record(app_state *st) {
    if (st->n_hist == JOB_HISTORY_CAP) {
        st->hist_start = (st->hist_start + 1) % JOB_HISTORY_CAP;
        st->n_hist--;
    }
    return &st->history[(st->hist_start + st->n_hist++) % JOB_HISTORY_CAP];
}

int app_start_job(app_state *st, job_runner *jr, const char *name, job_fn fn, void *arg, teacher_state *owner) {
    if (job_start(jr, name, fn, arg) != 0) return -1;
    job_record *r = push_record(st);
    memset(r, 0, sizeof *r);
    r->id = job_current_id(jr);
    snprintf(r->name, sizeof r->name, "%s", name);
    if (owner) snprintf(r->teacher, sizeof r->teacher, "%s", owner->name);
    r->owner = owner;
    r->started = time(NULL);
    r->outcome = JOB_RUNNING;
    r->cancel_latency_s = -1;
    job_status *j = &st->job;
    memset(j, 0, sizeof *j);
    j->active = true;
    j->id = r->id;
    snprintf(j->name, sizeof j->name, "%s", name);
    j->started = job_now();
    j->eta = -1;
    eta_reset(&j->eta_state);
    return 0;
}

void app_job_tick(app_state *st, double now) {
    job_status *j = &st->job;
    if (!j->active) return;
    j->eta = eta_update(&j->eta_state, now - j->started, j->fraction);
    job_record *r = find_record(st, j->id);
    if (r && r->outcome == JOB_RUNNING) r->seconds = now - j->started;
}

bool app_mark_interrupted(app_state *st) {
    if (!st->job.active) return false;
    job_record *r = find_record(st, st->job.id);
    if (!r || r->outcome != JOB_RUNNING) return false;
    r->outcome = JOB_INTERRUPTED;
    r->seconds = job_now() - st->job.started;
    if (r->owner && r->owner->race.checkpoint[0] && !strcmp(r->name, "race"))
        snprintf(r->checkpoint, sizeof r->checkpoint, "%s", r->owner->race.checkpoint);
    st->session_dirty = true;
    return true;
}

void app_job_progress_text(const job_record *r, char *buf, size_t n) {
    long step = -1, steps = -1;
    const char *s = strstr(r->label, "step ");
    if (s) sscanf(s, "step %ld/%ld", &step, &steps); /* a race's "taylor-calibrate step 12/50, ..." */
    int k;
    if (step >= 0 && steps > 0) k = snprintf(buf, n, "at step %ld of %ld", step, steps);
    else if (r->total >= 1 && r->total < 1e12 && r->total == floor(r->total))
        k = snprintf(buf, n, "at step %.0f of %.0f", r->done, r->total);
    else k = snprintf(buf, n, "at %.0f%%", 100 * r->fraction);
    if (k < 0 || (size_t)k >= n) return;
    if (r->phase[0]) snprintf(buf + k, n - (size_t)k, " (%s, %.0f%% of the job)", r->phase, 100 * r->fraction);
    else if (r->fraction > 0) snprintf(buf + k, n - (size_t)k, " (%.0f%% of the job)", 100 * r->fraction);
}

const job_record *app_last_job(const app_state *st, const teacher_state *t, const char *name) {
    for (int i = st->n_hist - 1; i >= 0; i--) {
        const job_record *r = app_job_at(st, i);
        /* never NULL for i in range; newer GCCs see the NULL branch and warn (stringop-overread) */
        if (r && !strcmp(r->name, name) && t && !strcmp(r->teacher, t->name)) return r;
    }
    return NULL;
}

void app_restore_job(app_state *st, const job_record *src) {
    job_record *r = push_record(st);
    *r = *src;
    r->owner = NULL;
    if (r->id >= 0) r->id = -1 - st->n_hist;
    if (r->outcome == JOB_RUNNING) r->outcome = JOB_INTERRUPTED; /* its process ended without a word */
}

void app_cancel_job(app_state *st, job_runner *jr) {
    job_cancel(jr);
    if (st->job.active) st->job.cancel_requested = true;
}

/* ---- applying events ---- */

static void fmt_seconds(char *b, size_t n, double s) {
    if (s < 60) snprintf(b, n, "%.1f s", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

static bool in_range(const teacher_state *t, int layer, int head) {
    return layer >= 0 && layer < t->n_layers && (head < 0 || head < t->n_heads);
}

static bool apply_data(app_state *st, teacher_state *t, int job_id, const wb_event *e) {
    if (!t) return false;
    const int L = t->n_layers, H = t->n_heads;
    switch (e->kind) {
    case WB_HEAD_VALUE: {
        if (!in_range(t, e->u.head_value.layer, e->u.head_value.head) || e->u.head_value.head < 0) return false;
        double *mat = teacher_metric(t, teacher_init_index(t, e->u.head_value.init), e->u.head_value.metric);
        if (!mat) return false;
        mat[e->u.head_value.layer * H + e->u.head_value.head] = e->u.head_value.value;
        return true;
    }
    case WB_STATS_DONE:
        snprintf(t->stats_corpus, sizeof t->stats_corpus, "%s", e->u.stats_done.corpus);
        t->stats_source[0] = 0; /* computed here now, no longer the imported ones */
        return true;
    case WB_LAYER_SCORE:
        teacher_set_score(t, e->u.layer_score.strategy, e->u.layer_score.layer, e->u.layer_score.value);
        snprintf(t->score_corpus, sizeof t->score_corpus, "%s", e->u.layer_score.corpus);
        return true;
    case WB_CALIB_HEAD: {
        if (!in_range(t, e->u.calib_head.layer, e->u.calib_head.head) || e->u.calib_head.head < 0) return false;
        calib_layer *c = method_calib(&t->method, L, H, e->u.calib_head.layer);
        if (!c) return false;
        for (int f = 0; f < CAL_COUNT; f++) c->v[f][e->u.calib_head.head] = e->u.calib_head.v[f];
        return true;
    }
    case WB_CALIB_LAYER: {
        calib_layer *c = method_calib(&t->method, L, H, e->u.calib_layer.layer);
        if (!c) return false;
        c->alpha_star = e->u.calib_layer.alpha;
        c->parts = e->u.calib_layer.parts;
        c->done = true;
        return true;
    }
    case WB_ALIGN_BEGIN: {
        align_layer *a = method_align(&t->method, L, e->u.align_begin.layer);
        if (!a) return false;
        a->v[AL_STEPS] = e->u.align_begin.steps;
        return true;
    }
    case WB_ALIGN_STEP:
        if (!in_range(t, e->u.align_step.layer, -1)) return false;
        method_align_point(&t->method, L, e->u.align_step.layer, e->u.align_step.step, e->u.align_step.loss,
                           e->u.align_step.heldout);
        return true;
    case WB_ALIGN_LAYER: {
        align_layer *a = method_align(&t->method, L, e->u.align_layer.layer);
        if (!a) return false;
        for (int f = 0; f < AL_COUNT; f++) a->v[f] = e->u.align_layer.v[f];
        return true;
    }
    case WB_TEACHER_PPL:
        t->teacher_ppl = e->u.teacher_ppl.ppl;
        snprintf(t->ppl_corpus, sizeof t->ppl_corpus, "%s", e->u.teacher_ppl.corpus);
        t->ppl_windows = e->u.teacher_ppl.windows;
        t->ppl_ctx = e->u.teacher_ppl.ctx;
        return true;
    case WB_RESULT:
        teacher_add_result(t, &e->u.result);
        if (e->u.result.kind != RUN_ABLATE) { /* the command in full, to copy from the Log (ablation rows: one per table) */
            char cmd[1600];
            result_command(&e->u.result, t->model_arg[0] ? t->model_arg : t->key, cmd, sizeof cmd);
            app_log(st, LOG_INFO, "%s row, headless: %s", run_kind_name(e->u.result.kind), cmd);
        }
        return true;
    case WB_RACE_POINT:
    case WB_RECALL_POINT: {
        char name[48];
        snprintf(name, sizeof name, "%s/%s", e->kind == WB_RACE_POINT ? "race" : "recall", e->u.race_point.init);
        teacher_add_point(t, name, e->u.race_point.tokens, e->u.race_point.loss);
        return true;
    }
    case WB_LOG_LONG: return false; /* app_apply_event logs it */
    case WB_OVERWRITE_ASK: return false; /* app_apply_event asks it */
    case WB_GEN_MEMORY:
        if (job_id != t->gen.job_id) return false; /* an earlier generation's late event */
        t->gen.kv_model = e->u.gen_memory.kv_model;
        t->gen.kv_teacher = e->u.gen_memory.kv_teacher;
        t->gen.state_bytes = e->u.gen_memory.state_bytes;
        t->gen.n_layers = e->u.gen_memory.n_layers;
        t->gen.n_gdn = e->u.gen_memory.n_gdn;
        t->gen.max_context = e->u.gen_memory.max_context;
        t->gen.have_memory = true;
        return true;
    case WB_GEN_MEASURED:
        if (job_id != t->gen.job_id) return false;
        t->gen.measured_context = e->u.gen_measured.context;
        t->gen.tok_s_model = e->u.gen_measured.tok_s_model;
        t->gen.tok_s_teacher = e->u.gen_measured.has_teacher ? e->u.gen_measured.tok_s_teacher : 0;
        t->gen.mem_model = e->u.gen_measured.mem_model;
        t->gen.mem_teacher = e->u.gen_measured.has_teacher ? e->u.gen_measured.mem_teacher : 0;
        t->gen.have_measured = true;
        return true;
    case WB_GEN_TEXT: {
        int n = e->u.gen_text.len;
        if (job_id != t->gen.job_id || n < 0 || n > (int)sizeof e->u.gen_text.text) return false;
        gen_append(&t->gen, e->u.gen_text.text, (size_t)n, e->u.gen_text.is_prompt != 0);
        t->gen.context_tokens = e->u.gen_text.context_tokens;
        t->gen.generated = e->u.gen_text.generated;
        t->gen.seconds = e->u.gen_text.seconds;
        return true;
    }
    case WB_RACE_CHECKPOINT: {
        snprintf(t->race.checkpoint, sizeof t->race.checkpoint, "%s step %ld: %s", e->u.race_checkpoint.init,
                 e->u.race_checkpoint.step, e->u.race_checkpoint.path);
        job_record *r = find_record(st, job_id); /* its job's record too: the checkpoint an interruption resumes from */
        if (r) copy_utf8(r->checkpoint, sizeof r->checkpoint, t->race.checkpoint);
        return true;
    }
    }
    return false;
}

static void apply_file(app_state *st, const event *ev) {
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
    if (!ev->text[0]) return;
    int i = 0;
    while (i < d->n_files && strcmp(d->files[i].name, ev->text)) i++;
    if (i == d->n_files) {
        if (d->n_files == APP_MAX_FILES) return; /* the totals still count it */
        d->n_files++;
        snprintf(d->files[i].name, sizeof d->files[i].name, "%s", ev->text);
    }
    d->files[i].state = ev->file.state;
    d->files[i].done = (long long)ev->done;
    d->files[i].total = (long long)ev->total;
}

/* How the last calibrate / align job of a teacher ended, for their screens. */
static void set_outcome(teacher_state *t, const char *job, const char *what) {
    if (!t) return;
    char *dst = !strcmp(job, "calibrate") ? t->method.calib_outcome
                : !strcmp(job, "align")   ? t->method.align_outcome
                                          : NULL;
    if (dst) snprintf(dst, sizeof t->method.calib_outcome, "%.47s", what);
}

static void end_job(app_state *st, const event *ev) {
    job_record *r = find_record(st, ev->job_id);
    char took[32];
    fmt_seconds(took, sizeof took, ev->t);
    if (r) {
        r->seconds = ev->t;
        /* an interrupted job stays interrupted: its cancel came from the workbench ending */
        if (r->outcome != JOB_INTERRUPTED || ev->kind == EV_DONE)
            r->outcome = ev->kind == EV_DONE ? JOB_DONE : ev->kind == EV_ERROR ? JOB_FAILED : JOB_CANCELLED;
        copy_utf8(r->text, sizeof r->text, ev->kind == EV_DONE ? "" : ev->text);
        r->cancel_latency_s = ev->cancel_latency_s;
    }
    st->session_dirty = true; /* every finished job is saved at once (app.c) */
    if (st->job.id == ev->job_id) st->job.active = false;
    teacher_state *owner = r ? r->owner : NULL;
    if (ev->kind == EV_DONE) {
        set_outcome(owner, ev->job_name, "done");
        app_log(st, LOG_INFO, "%s: done in %s", ev->job_name, took);
    } else if (ev->kind == EV_ERROR) {
        set_outcome(owner, ev->job_name, ev->text);
        app_log(st, LOG_ERROR, "%s: error after %s: %s", ev->job_name, took, ev->text);
    } else {
        set_outcome(owner, ev->job_name, "cancelled");
        if (ev->cancel_latency_s >= 0)
            app_log(st, LOG_WARN, "%s: cancelled after %s (stopped %.2f s after c): %s", ev->job_name, took,
                    ev->cancel_latency_s, ev->text);
        else
            app_log(st, LOG_WARN, "%s: cancelled after %s: %s", ev->job_name, took, ev->text);
    }
    if (st->on_end && r) st->on_end(st, r, ev);
    else if (ev->kind == EV_DONE) free(ev->result);
}

bool app_apply_event(app_state *st, const event *ev) {
    switch (ev->kind) {
    case EV_PROGRESS: {
        job_status *j = &st->job;
        if (ev->job_id != j->id || !j->active) return false;
        snprintf(j->label, sizeof j->label, "%s", ev->label);
        snprintf(j->phase, sizeof j->phase, "%s", ev->phase_name);
        j->phase_i = ev->phase;
        j->n_phases = ev->n_phases;
        if (ev->fraction > j->fraction || ev->n_phases <= 1) j->fraction = ev->fraction;
        j->done = ev->done;
        j->total = ev->total;
        j->rate = ev->rate;
        j->eta = eta_update(&j->eta_state, ev->t, j->fraction);
        job_record *r = find_record(st, ev->job_id);
        if (r) { /* where it got to, kept with the session */
            copy_utf8(r->phase, sizeof r->phase, j->n_phases > 1 ? j->phase : "");
            copy_utf8(r->label, sizeof r->label, j->label);
            r->done = j->done, r->total = j->total, r->fraction = j->fraction;
            if (r->owner && r->owner->race.checkpoint[0] && !strcmp(r->name, "race"))
                copy_utf8(r->checkpoint, sizeof r->checkpoint, r->owner->race.checkpoint);
        }
        return true;
    }
    case EV_LOG: app_log(st, LOG_INFO, "%s: %s", ev->job_name, ev->text); return true;
    case EV_DATA: {
        job_record *r = find_record(st, ev->job_id);
        wb_event e;
        if (ev->data_len != sizeof e) return false;
        memcpy(&e, ev->data, sizeof e);
        if (e.kind == WB_LOG_LONG) {
            app_log(st, LOG_INFO, "%s: %.*s", ev->job_name, (int)sizeof e.u.log_long.text, e.u.log_long.text);
            return true;
        }
        if (e.kind == WB_OVERWRITE_ASK) { /* the question waits for the refused job's end (ui.c) */
            st->overwrite.ask = true;
            copy_utf8(st->overwrite.folder, sizeof st->overwrite.folder, e.u.overwrite_ask.folder);
            copy_utf8(st->overwrite.held, sizeof st->overwrite.held, e.u.overwrite_ask.held);
            copy_utf8(st->overwrite.want, sizeof st->overwrite.want, e.u.overwrite_ask.want);
            return true;
        }
        return apply_data(st, r ? r->owner : NULL, ev->job_id, &e);
    }
    case EV_FILE: apply_file(st, ev); return true;
    case EV_DONE:
    case EV_ERROR:
    case EV_CANCELLED: end_job(st, ev); return true;
    }
    return false;
}
