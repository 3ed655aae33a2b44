#include "hub/model_info.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hub/env.h"
#include "hub/errors.h"
#include "hub/http.h"
#include "hub/repo_ref.h"

/* A byte count: a number in [0, 2^63); anything else (negative, 1e30, NaN) is unknown. */
static long long json_size(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 0x1p63 ? (long long)v->valuedouble : -1;
}

static void json_str(const cJSON *o, const char *key, char *dst, size_t cap) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    dst[0] = 0;
    if (cJSON_IsString(v) && strlen(v->valuestring) < cap) strcpy(dst, v->valuestring);
}

int hub_parse_model_info(const char *json, hub_model_info *out) {
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_Parse(json);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return gf_fail("model info: not a JSON object");
    }
    json_str(root, "sha", out->sha, sizeof out->sha);
    if (!hub_is_commit_hash(out->sha)) {
        cJSON_Delete(root);
        return gf_fail("model info: missing or bad \"sha\" (commit hash)");
    }
    const cJSON *sibs = cJSON_GetObjectItemCaseSensitive(root, "siblings");
    if (!cJSON_IsArray(sibs)) {
        cJSON_Delete(root);
        return gf_fail("model info: no \"siblings\" list");
    }
    int n = cJSON_GetArraySize(sibs);
    out->files = gf_calloc((size_t)(n > 0 ? n : 1), sizeof *out->files);
    const cJSON *s;
    cJSON_ArrayForEach(s, sibs) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "rfilename");
        if (!cJSON_IsString(name) || !hub_valid_repo_path(name->valuestring)) continue; /* never write outside */
        hub_sibling *f = &out->files[out->n_files++];
        f->name = gf_strdup(name->valuestring);
        f->size = json_size(s, "size");
        json_str(s, "blobId", f->blob_id, sizeof f->blob_id);
        const cJSON *lfs = cJSON_GetObjectItemCaseSensitive(s, "lfs");
        if (cJSON_IsObject(lfs)) {
            json_str(lfs, "sha256", f->sha256, sizeof f->sha256);
            f->lfs = strlen(f->sha256) == 64;
            if (json_size(lfs, "size") >= 0) f->size = json_size(lfs, "size");
        }
    }
    cJSON_Delete(root);
    return 0;
}

void hub_model_info_free(hub_model_info *mi) {
    for (int i = 0; i < mi->n_files; i++) free(mi->files[i].name);
    free(mi->files);
    memset(mi, 0, sizeof *mi);
}

const hub_sibling *hub_model_info_find(const hub_model_info *mi, const char *name) {
    for (int i = 0; i < mi->n_files; i++)
        if (!strcmp(mi->files[i].name, name)) return &mi->files[i];
    return NULL;
}

typedef struct {
    char *buf;
    size_t len;
} membuf;

static size_t to_mem(const char *data, size_t n, void *user) {
    membuf *m = user;
    if (m->len + n > (64u << 20)) return 0; /* model info is never this big */
    m->buf = gf_realloc(m->buf, m->len + n + 1);
    memcpy(m->buf + m->len, data, n);
    m->len += n;
    m->buf[m->len] = 0;
    return n;
}

static int reset_mem(int attempt, http_request *rq, void *user) {
    membuf *m = user;
    m->len = 0;
    return 0;
}

int hub_fetch_model_info(void *curl, const char *endpoint, const char *repo, const char *rev, const char *token,
                         atomic_int *cancel, hub_model_info *out) {
    memset(out, 0, sizeof *out);
    char *url = hub_url_model_info(endpoint, repo, rev);
    membuf m = {0};
    http_request rq = {.method = "GET", .url = url, .token = token,
                       .connect_timeout_s = hub_env_double("HF_HUB_ETAG_TIMEOUT", 10),
                       .stall_s = hub_env_double("HF_HUB_DOWNLOAD_TIMEOUT", 10),
                       .sink = to_mem, .sink_user = &m, .cancel = cancel};
    http_response *rs = gf_calloc(1, sizeof *rs);
    int rc = http_with_retry(curl, &rq, rs, reset_mem, &m);
    if (rc == 0 && rs->status != 200) rc = hub_fail_status(rs, repo, rev, NULL, token != NULL);
    if (rc == 0 && !m.buf) rc = gf_fail("%s: empty model info from %s", repo, url);
    if (rc == 0 && hub_parse_model_info(m.buf, out) != 0) rc = gf_fail_prefix(repo);
    free(m.buf);
    free(rs);
    free(url);
    return rc;
}
