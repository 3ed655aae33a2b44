#include "workbench/session.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.h"
#include "method/json_fields.h"
#include "workbench/json_file.h"
#include <sys/stat.h>

static int read_int(const cJSON *o, const char *key, int lo, int hi, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi) return -1;
    *out = (int)v->valuedouble;
    return 0;
}

/* The teacher's plain fields in the session file; what needs checking (the
 * plan's sizes, the measured perplexity's counts) is read by hand below. */
#define TEACHER_FIELD(member, key, KIND) JSON_FIELD(teacher_state, member, key, KIND)
static const json_field teacher_names[] = {
    TEACHER_FIELD(arg, "arg", TEXT),
    TEACHER_FIELD(name, "name", TEXT),
    TEACHER_FIELD(model_arg, "model_arg", TEXT),
    TEACHER_FIELD(shape, "shape", TEXT),
};
static const json_field plan_sizes[] = {
    TEACHER_FIELD(n_layers, "layers", INT),
    TEACHER_FIELD(n_heads, "heads", INT),
    TEACHER_FIELD(kv_heads, "kv_heads", INT),
    TEACHER_FIELD(head_dim, "head_dim", INT),
    TEACHER_FIELD(kv_bytes, "kv_bytes", INT),
    TEACHER_FIELD(strategy, "strategy", TEXT),
    TEACHER_FIELD(keep_ratio, "keep_ratio", DOUBLE),
};
static const json_field teacher_ppl_fields[] = {
    TEACHER_FIELD(teacher_ppl, "ppl", DOUBLE),
    TEACHER_FIELD(ppl_corpus, "corpus", TEXT),
    TEACHER_FIELD(ppl_windows, "windows", INT),
    TEACHER_FIELD(ppl_ctx, "ctx", INT),
};

static int read_plan(teacher_state *t, const cJSON *plan, const char *path) {
    int L = 0, H = 0, kvh = 0, hd = 0, kvb = 0;
    if (!cJSON_IsObject(plan) || read_int(plan, "layers", 1, 4096, &L) || read_int(plan, "heads", 0, 4096, &H) ||
        read_int(plan, "kv_heads", 0, 4096, &kvh) || read_int(plan, "head_dim", 0, 65536, &hd) ||
        read_int(plan, "kv_bytes", 0, 8, &kvb) || L == 0)
        return gf_fail("%s: a teacher's \"plan\" needs \"layers\" (1..4096) and small non-negative sizes", path);
    teacher_state_set_shape(t, L, H);
    t->kv_heads = kvh, t->head_dim = hd, t->kv_bytes = kvb;
    json_get_str(plan, "strategy", t->strategy, sizeof t->strategy);
    if (strategy_index(t->strategy) < 0) snprintf(t->strategy, sizeof t->strategy, "uniform");
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(plan, "keep_ratio");
    if (cJSON_IsNumber(keep) && keep->valuedouble > 0 && keep->valuedouble < 1) t->keep_ratio = keep->valuedouble;
    const cJSON *kept = cJSON_GetObjectItemCaseSensitive(plan, "kept"), *c;
    if (cJSON_IsArray(kept)) {
        bool *mask = gf_calloc((size_t)L, sizeof *mask);
        cJSON_ArrayForEach(c, kept) {
            if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble >= L) {
                free(mask);
                return gf_fail("%s: plan kept layers must be numbers in [0, %d)", path, L);
            }
            mask[(int)c->valuedouble] = true;
        }
        teacher_set_kept(t, mask);
        free(mask);
    }
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(plan, "scores");
    for (int s = 0; s < APP_N_STRATEGIES && cJSON_IsObject(scores); s++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(scores, strategy_label(s));
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != L) continue;
        double *v = gf_malloc((size_t)L * sizeof *v);
        int l = 0;
        cJSON_ArrayForEach(c, a) v[l++] = cJSON_IsNumber(c) ? c->valuedouble : NAN;
        free(t->plan_score[s]);
        t->plan_score[s] = v;
    }
    json_get_str(plan, "score_corpus", t->score_corpus, sizeof t->score_corpus);
    if (!t->kept) teacher_plan_recompute(t);
    return 0;
}

static int read_teacher(app_state *st, const cJSON *o, const char *path) {
    char key[1024] = "";
    json_get_str(o, "key", key, sizeof key);
    if (!key[0]) return gf_fail("%s: each teacher needs a \"key\"", path);
    teacher_state *t = app_teacher(st, key);
    if (!t) return gf_fail("%s: too many teachers", path);
    int rc = json_fields_read(o, t, teacher_names, JSON_FIELDS_COUNT(teacher_names), path); /* the fallbacks below, still */
    if (!t->name[0]) snprintf(t->name, sizeof t->name, "%.159s", key);
    if (!t->model_arg[0]) snprintf(t->model_arg, sizeof t->model_arg, "%s", key);
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(o, "lines"), *c;
    if (cJSON_IsArray(lines)) {
        const char *l[16];
        int n = 0;
        cJSON_ArrayForEach(c, lines) if (cJSON_IsString(c) && n < 16) l[n++] = c->valuestring;
        teacher_state_set_lines(t, l, n);
    }
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan");
    if (plan && read_plan(t, plan, path)) rc = -1;
    const cJSON *s1 = cJSON_GetObjectItemCaseSensitive(o, "stage1");
    if (s1 && stage1_choice_from_json(&t->stage1, s1, path) != 0) rc = -1;
    const cJSON *ppl = cJSON_GetObjectItemCaseSensitive(o, "teacher_ppl");
    if (cJSON_IsObject(ppl)) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ppl, "ppl");
        if (cJSON_IsNumber(v)) t->teacher_ppl = v->valuedouble;
        json_get_str(ppl, "corpus", t->ppl_corpus, sizeof t->ppl_corpus);
        read_int(ppl, "windows", 0, 1 << 30, &t->ppl_windows);
        read_int(ppl, "ctx", 0, 1 << 30, &t->ppl_ctx);
    }
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "results");
    if (res && !cJSON_IsArray(res)) rc = gf_fail("%s: a teacher's \"results\" should be an array", path);
    const cJSON *rows = cJSON_IsArray(res) ? res : NULL;
    cJSON_ArrayForEach(c, rows) {
        result_row r;
        if (result_row_from_json(c, &r) != 0) {
            rc = gf_fail("%s: %s", path, gf_last_error());
            continue;
        }
        if (!r.teacher[0]) snprintf(r.teacher, sizeof r.teacher, "%s", t->name);
        teacher_add_result(t, &r);
    }
    return rc;
}

static int read_recent(app_state *st, const cJSON *arr, const char *path) {
    if (!cJSON_IsArray(arr)) return gf_fail("%s: \"recent\" should be an array", path);
    int n = cJSON_GetArraySize(arr);
    if (n > APP_MAX_RECENT) n = APP_MAX_RECENT;
    for (int i = n - 1; i >= 0; i--) { /* oldest first, so the list ends in the saved order */
        const cJSON *it = cJSON_GetArrayItem(arr, i);
        const cJSON *arg = cJSON_GetObjectItemCaseSensitive(it, "arg");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
        if (!cJSON_IsString(arg) || !arg->valuestring[0]) continue;
        app_add_recent(st, arg->valuestring, cJSON_IsString(p) ? p->valuestring : "");
    }
    return 0;
}

static const char *const outcome_names[] = {"running", "done", "failed", "cancelled", "interrupted"};

static void read_jobs(app_state *st, const cJSON *arr) {
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        job_record r;
        memset(&r, 0, sizeof r);
        char outcome[16] = "";
        json_get_str(o, "name", r.name, sizeof r.name);
        json_get_str(o, "outcome", outcome, sizeof outcome);
        int k = 0;
        while (k < 5 && strcmp(outcome, outcome_names[k])) k++;
        if (!r.name[0] || k == 5) continue; /* not a job this version knows: left out */
        r.outcome = (job_outcome)k;
        json_get_str(o, "teacher", r.teacher, sizeof r.teacher);
        json_get_str(o, "text", r.text, sizeof r.text);
        json_get_str(o, "phase", r.phase, sizeof r.phase);
        json_get_str(o, "label", r.label, sizeof r.label);
        json_get_str(o, "checkpoint", r.checkpoint, sizeof r.checkpoint);
        const cJSON *v;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "started"))) r.started = (time_t)v->valuedouble;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "seconds"))) r.seconds = v->valuedouble;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "done"))) r.done = v->valuedouble;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "total"))) r.total = v->valuedouble;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "fraction"))) r.fraction = v->valuedouble;
        r.cancel_latency_s = -1;
        app_restore_job(st, &r);
    }
}

int session_read(app_state *st, const char *path) {
    bool missing;
    cJSON *root = json_read_file(path, &missing);
    if (!root) return missing ? 0 : -1;
    int rc = 0;
    char err[512] = "";
#define NOTE_ERR()                                                           \
    do {                                                                     \
        if (!err[0]) snprintf(err, sizeof err, "%s", gf_last_error());       \
        rc = -1;                                                             \
    } while (0)
    json_get_str(root, "corpus", st->corpus, sizeof st->corpus);
    json_get_str(root, "eval_init", st->eval_init, sizeof st->eval_init);
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "settings");
    if (set && settings_from_json(&st->settings, set, path)) NOTE_ERR();
    const cJSON *teachers = cJSON_GetObjectItemCaseSensitive(root, "teachers"), *t;
    if (teachers && !cJSON_IsArray(teachers)) {
        gf_fail("%s: \"teachers\" should be an array", path);
        NOTE_ERR();
    }
    const cJSON *tlist = cJSON_IsArray(teachers) ? teachers : NULL;
    cJSON_ArrayForEach(t, tlist) if (read_teacher(st, t, path)) NOTE_ERR();
    char cur[1024] = "";
    json_get_str(root, "current", cur, sizeof cur);
    if (cur[0]) app_switch(st, app_find_teacher(st, cur));
    if (!teachers && (cJSON_GetObjectItemCaseSensitive(root, "plan") || cJSON_GetObjectItemCaseSensitive(root, "results")))
        app_log(st, LOG_WARN, "session: %s is of the first format (one plan and results table, no teacher named): "
                              "only its recent teachers are restored", path);
    const cJSON *recent = cJSON_GetObjectItemCaseSensitive(root, "recent");
    if (recent && read_recent(st, recent, path)) NOTE_ERR();
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    if (cJSON_IsArray(jobs)) read_jobs(st, jobs);
#undef NOTE_ERR
    cJSON_Delete(root);
    if (rc) gf_fail("%s", err);
    return rc;
}

static cJSON *teacher_json(const teacher_state *t) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", t->key);
    json_fields_write(o, t, teacher_names, JSON_FIELDS_COUNT(teacher_names));
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (int i = 0; i < t->n_lines; i++) cJSON_AddItemToArray(lines, cJSON_CreateString(t->lines[i]));
    if (t->n_layers > 0) {
        cJSON *plan = cJSON_AddObjectToObject(o, "plan");
        json_fields_write(plan, t, plan_sizes, JSON_FIELDS_COUNT(plan_sizes));
        if (t->kept) {
            cJSON *k = cJSON_AddArrayToObject(plan, "kept");
            for (int l = 0; l < t->n_layers; l++)
                if (t->kept[l]) cJSON_AddItemToArray(k, cJSON_CreateNumber(l));
        }
        cJSON *sc = cJSON_AddObjectToObject(plan, "scores");
        for (int s = 0; s < APP_N_STRATEGIES; s++) {
            if (!t->plan_score[s]) continue;
            cJSON *a = cJSON_AddArrayToObject(sc, strategy_label(s));
            for (int l = 0; l < t->n_layers; l++)
                cJSON_AddItemToArray(a, isfinite(t->plan_score[s][l]) ? cJSON_CreateNumber(t->plan_score[s][l])
                                                                      : cJSON_CreateNull());
        }
        cJSON_AddStringToObject(plan, "score_corpus", t->score_corpus);
    }
    cJSON_AddItemToObject(o, "stage1", stage1_choice_json(&t->stage1));
    if (isfinite(t->teacher_ppl)) {
        cJSON *p = cJSON_AddObjectToObject(o, "teacher_ppl");
        json_fields_write(p, t, teacher_ppl_fields, JSON_FIELDS_COUNT(teacher_ppl_fields));
    }
    cJSON *res = cJSON_AddArrayToObject(o, "results");
    for (int i = 0; i < t->n_results; i++) cJSON_AddItemToArray(res, result_row_json(&t->results[i]));
    return o;
}

int session_write(const app_state *st, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "version", 2);
    cJSON_AddStringToObject(root, "corpus", st->corpus);
    cJSON_AddStringToObject(root, "eval_init", st->eval_init);
    const teacher_state *cur = app_cur(st);
    cJSON_AddStringToObject(root, "current", cur ? cur->key : "");
    cJSON_AddItemToObject(root, "settings", settings_json(&st->settings));
    cJSON *ts = cJSON_AddArrayToObject(root, "teachers");
    for (int i = 0; i < st->n_teachers; i++) cJSON_AddItemToArray(ts, teacher_json(st->teachers[i]));
    cJSON *recent = cJSON_AddArrayToObject(root, "recent");
    for (int i = 0; i < st->n_recent; i++) {
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "arg", st->recent[i].arg);
        cJSON_AddStringToObject(it, "path", st->recent[i].path);
        cJSON_AddItemToArray(recent, it);
    }
    cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
    for (int i = 0; i < st->n_hist; i++) {
        const job_record *r = app_job_at(st, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "outcome", outcome_names[r->outcome]);
        cJSON_AddStringToObject(o, "teacher", r->teacher);
        cJSON_AddNumberToObject(o, "started", (double)r->started);
        cJSON_AddNumberToObject(o, "seconds", isfinite(r->seconds) ? r->seconds : 0);
        if (r->text[0]) cJSON_AddStringToObject(o, "text", r->text);
        cJSON_AddStringToObject(o, "phase", r->phase);
        cJSON_AddStringToObject(o, "label", r->label);
        cJSON_AddNumberToObject(o, "done", isfinite(r->done) ? r->done : 0);
        cJSON_AddNumberToObject(o, "total", isfinite(r->total) ? r->total : 0);
        cJSON_AddNumberToObject(o, "fraction", isfinite(r->fraction) ? r->fraction : 0);
        if (r->checkpoint[0]) cJSON_AddStringToObject(o, "checkpoint", r->checkpoint);
        cJSON_AddItemToArray(jobs, o);
    }
    int rc = json_write_atomic(path, root);
    cJSON_Delete(root);
    return rc;
}

int session_name_check(const char *name) {
    size_t n = strlen(name);
    bool ok = n > 0 && n < 64 && name[0] != '.' && name[0] != '-';
    for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || strchr("._-", name[i]);
    if (!ok) return gf_fail("--session wants a name of 1-63 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got '%s'", name);
    return 0;
}

char *session_path(const app_state *st) {
    char leaf[128];
    if (st->session_name[0]) snprintf(leaf, sizeof leaf, "sessions/%s.json", st->session_name);
    else snprintf(leaf, sizeof leaf, "session.json");
    return persist_path("XDG_STATE_HOME", ".local/state", leaf);
}


int session_lock(app_state *st, const char *path) {
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", path);
    if (make_parent_dirs(lock)) return -1; /* the lock comes before the first write */
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return gf_fail("%s: %s", lock, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        close(fd);
        if (e != EWOULDBLOCK) return gf_fail("%s: cannot lock: %s", lock, strerror(e));
        st->read_only = true;
        st->lock_holder = n > 0 ? strtol(pid, NULL, 10) : 0;
        return 0;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid only informs the next instance */
    }
    st->lock_fd = fd;
    st->read_only = false;
    return 0;
}

void persist_lock_session(app_state *st) {
    char *path = session_path(st);
    if (path && session_lock(st, path) != 0) { /* no lock possible (a read-only folder): say it, save nothing */
        st->read_only = true;
        snprintf(st->notice, sizeof st->notice, "read-only: %s", gf_last_error());
        app_log(st, LOG_WARN, "warning: %s; this session is read-only here", gf_last_error());
    } else if (st->read_only) {
        char who[48] = "another graft tui";
        if (st->lock_holder > 0) snprintf(who, sizeof who, "graft tui (pid %ld)", st->lock_holder);
        snprintf(st->notice, sizeof st->notice,
                 "read-only: %s writes this session; graft tui --session NAME opens one of your own", who);
        app_log(st, LOG_WARN, "%s (%s)", st->notice, path);
    }
    free(path);
}

void persist_load_session(app_state *st) {
    char *path = session_path(st);
    if (path && session_read(st, path)) app_log(st, LOG_WARN, "warning: %s; the rest of the session is restored", gf_last_error());
    for (int i = 0; i < st->n_hist; i++) { /* what the last run left unfinished */
        const job_record *r = app_job_at(st, i);
        if (r->outcome != JOB_INTERRUPTED || i < st->n_hist - 1) continue;
        char at[200];
        app_job_progress_text(r, at, sizeof at);
        app_log(st, LOG_WARN, "%s%s%s was interrupted %s%s%s", r->name, r->teacher[0] ? " on " : "", r->teacher, at,
                r->checkpoint[0] ? "; checkpoint " : "", r->checkpoint);
    }
    free(path);
}

int persist_save_session(app_state *st) {
    if (st->ephemeral || st->read_only) return 0;
    char *path = session_path(st);
    int rc = path ? session_write(st, path) : 0;
    free(path);
    if (rc == 0) st->session_dirty = false;
    return rc;
}
