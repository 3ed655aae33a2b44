#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "persist/persist.h"

static void copy_string(const cJSON *root, const char *key, char *dst, size_t n, int *rc, const char *path) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) return;
    if (!cJSON_IsString(v)) {
        *rc = gf_fail("%s: \"%s\" should be a string", path, key);
        return;
    }
    snprintf(dst, n, "%s", v->valuestring);
}

static int read_results(app_state *st, const cJSON *res, const char *path) {
    const cJSON *hdr = cJSON_GetObjectItemCaseSensitive(res, "header");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(res, "rows");
    if (!cJSON_IsArray(hdr) || !cJSON_IsArray(rows)) return gf_fail("%s: \"results\" needs arrays \"header\" and \"rows\"", path);
    const char *cols[APP_RESULT_COLS];
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, hdr) {
        if (!cJSON_IsString(c)) return gf_fail("%s: results header entries must be strings", path);
        if (n < APP_RESULT_COLS) cols[n++] = c->valuestring;
    }
    app_state_set_result_header(st, cols, n);
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        if (!cJSON_IsArray(row)) return gf_fail("%s: each results row must be an array", path);
        const char *cells[APP_RESULT_COLS];
        int k = 0;
        cJSON_ArrayForEach(c, row) {
            if (k < APP_RESULT_COLS) cells[k++] = cJSON_IsString(c) ? c->valuestring : "?";
        }
        app_state_add_result(st, cells, k);
    }
    return 0;
}

static int read_int(const cJSON *o, const char *key, int lo, int hi, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi) return -1;
    *out = (int)v->valuedouble;
    return 0;
}

/* "plan": {"layers", "heads", "kv_heads", "head_dim", "kv_bytes", "kept": [layers], "scores": {"ar": [...]}} */
static int read_plan(app_state *st, const cJSON *plan, const char *path) {
    int L = 0, H = 0, kvh = 0, hd = 0, kvb = 0;
    if (!cJSON_IsObject(plan) || read_int(plan, "layers", 1, 4096, &L) || read_int(plan, "heads", 0, 4096, &H) ||
        read_int(plan, "kv_heads", 0, 4096, &kvh) || read_int(plan, "head_dim", 0, 65536, &hd) ||
        read_int(plan, "kv_bytes", 0, 8, &kvb) || L == 0)
        return gf_fail("%s: \"plan\" needs \"layers\" (1..4096) and small non-negative sizes", path);
    app_state_set_shape(st, L, H);
    st->kv_heads = kvh, st->head_dim = hd, st->kv_bytes = kvb;
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
        app_state_set_kept(st, mask);
        free(mask);
    }
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(plan, "scores");
    for (int s = 0; s < APP_N_STRATEGIES && cJSON_IsObject(scores); s++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(scores, app_state_strategy_name(s));
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != L) continue;
        double *v = gf_malloc((size_t)L * sizeof *v);
        int l = 0;
        cJSON_ArrayForEach(c, a) v[l++] = cJSON_IsNumber(c) ? c->valuedouble : NAN;
        free(st->plan_score[s]);
        st->plan_score[s] = v;
    }
    return 0;
}

/* "recent": [{"arg": "org/name", "path": "/cache/..."}, ...], most recent first.
 * Entries that are not objects with a string "arg" are skipped. */
static int read_recent(app_state *st, const cJSON *arr, const char *path) {
    if (!cJSON_IsArray(arr)) return gf_fail("%s: \"recent\" should be an array", path);
    int n = cJSON_GetArraySize(arr);
    if (n > APP_MAX_RECENT) n = APP_MAX_RECENT;
    /* oldest first, so the list ends in the saved order */
    for (int i = n - 1; i >= 0; i--) {
        const cJSON *it = cJSON_GetArrayItem(arr, i);
        const cJSON *arg = cJSON_GetObjectItemCaseSensitive(it, "arg");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
        if (!cJSON_IsString(arg) || !arg->valuestring[0]) continue;
        app_state_add_recent(st, arg->valuestring, cJSON_IsString(p) ? p->valuestring : "");
    }
    return 0;
}

int session_read(app_state *st, const char *path) {
    bool missing;
    cJSON *root = json_read_file(path, &missing);
    if (!root) return missing ? 0 : -1;
    int rc = 0;
    copy_string(root, "teacher", st->teacher, sizeof st->teacher, &rc, path);
    copy_string(root, "strategy", st->strategy, sizeof st->strategy, &rc, path);
    copy_string(root, "corpus", st->corpus, sizeof st->corpus, &rc, path);
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(root, "keep_ratio");
    if (keep) {
        if (!cJSON_IsNumber(keep) || keep->valuedouble < 0 || keep->valuedouble > 1)
            rc = gf_fail("%s: keep_ratio must be a number in [0, 1]", path);
        else st->keep_ratio = keep->valuedouble;
    }
    /* an unknown strategy is not an error: the Plan falls back to uniform */
    char init[32] = "";
    copy_string(root, "eval_init", init, sizeof init, &rc, path);
    if (init[0]) snprintf(st->eval_init, sizeof st->eval_init, "%s", init);
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(root, "teacher_ppl");
    if (cJSON_IsNumber(tp)) st->teacher_ppl = tp->valuedouble;
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(root, "plan");
    if (plan && read_plan(st, plan, path)) rc = -1;
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (res && read_results(st, res, path)) rc = -1;
    const cJSON *recent = cJSON_GetObjectItemCaseSensitive(root, "recent");
    if (recent && read_recent(st, recent, path)) rc = -1;
    cJSON_Delete(root);
    return rc;
}

int session_write(const app_state *st, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "teacher", st->teacher);
    cJSON_AddStringToObject(root, "strategy", st->strategy);
    if (st->keep_ratio >= 0) cJSON_AddNumberToObject(root, "keep_ratio", st->keep_ratio);
    cJSON_AddStringToObject(root, "corpus", st->corpus);
    cJSON_AddStringToObject(root, "eval_init", st->eval_init);
    if (isfinite(st->teacher_ppl)) cJSON_AddNumberToObject(root, "teacher_ppl", st->teacher_ppl);
    if (st->n_layers > 0) {
        cJSON *plan = cJSON_AddObjectToObject(root, "plan");
        cJSON_AddNumberToObject(plan, "layers", st->n_layers);
        cJSON_AddNumberToObject(plan, "heads", st->n_heads);
        cJSON_AddNumberToObject(plan, "kv_heads", st->kv_heads);
        cJSON_AddNumberToObject(plan, "head_dim", st->head_dim);
        cJSON_AddNumberToObject(plan, "kv_bytes", st->kv_bytes);
        if (st->kept) {
            cJSON *k = cJSON_AddArrayToObject(plan, "kept");
            for (int l = 0; l < st->n_layers; l++)
                if (st->kept[l]) cJSON_AddItemToArray(k, cJSON_CreateNumber(l));
        }
        cJSON *sc = cJSON_AddObjectToObject(plan, "scores");
        for (int s = 0; s < APP_N_STRATEGIES; s++) {
            if (!st->plan_score[s]) continue;
            cJSON *a = cJSON_AddArrayToObject(sc, app_state_strategy_name(s));
            for (int l = 0; l < st->n_layers; l++)
                cJSON_AddItemToArray(a, isfinite(st->plan_score[s][l]) ? cJSON_CreateNumber(st->plan_score[s][l])
                                                                       : cJSON_CreateNull());
        }
    }
    cJSON *res = cJSON_AddObjectToObject(root, "results");
    cJSON *hdr = cJSON_AddArrayToObject(res, "header");
    for (int c = 0; c < st->n_result_cols; c++) cJSON_AddItemToArray(hdr, cJSON_CreateString(st->result_header[c]));
    cJSON *rows = cJSON_AddArrayToObject(res, "rows");
    for (int r = 0; r < st->n_results; r++) {
        cJSON *row = cJSON_CreateArray();
        for (int c = 0; c < st->n_result_cols; c++)
            cJSON_AddItemToArray(row, cJSON_CreateString(st->results[r].cells[c] ? st->results[r].cells[c] : ""));
        cJSON_AddItemToArray(rows, row);
    }
    cJSON *recent = cJSON_AddArrayToObject(root, "recent");
    for (int i = 0; i < st->n_recent; i++) {
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "arg", st->recent[i].arg);
        cJSON_AddStringToObject(it, "path", st->recent[i].path);
        cJSON_AddItemToArray(recent, it);
    }
    int rc = json_write_atomic(path, root);
    cJSON_Delete(root);
    return rc;
}

void persist_load_session(app_state *st) {
    char *path = persist_path("XDG_STATE_HOME", ".local/state", "session.json");
    if (path && session_read(st, path)) app_state_log(st, "warning: %s; session not restored", gf_last_error());
    free(path);
}

void persist_save_session(app_state *st) {
    if (st->ephemeral) return;
    char *path = persist_path("XDG_STATE_HOME", ".local/state", "session.json");
    if (path && session_write(st, path)) fprintf(stderr, "graft: warning: %s\n", gf_last_error());
    free(path);
}
