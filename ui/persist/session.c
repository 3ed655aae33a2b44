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
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (res && read_results(st, res, path)) rc = -1;
    cJSON_Delete(root);
    return rc;
}

int session_write(const app_state *st, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "teacher", st->teacher);
    cJSON_AddStringToObject(root, "strategy", st->strategy);
    if (st->keep_ratio >= 0) cJSON_AddNumberToObject(root, "keep_ratio", st->keep_ratio);
    cJSON_AddStringToObject(root, "corpus", st->corpus);
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
