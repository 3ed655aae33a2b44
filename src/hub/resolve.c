#include "hub/resolve.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "hub/cache.h"
#include "hub/env.h"
#include "hub/repo_ref.h"

static bool is_file(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = gf_malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    struct stat st;
    bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

/* Every shard named in model.safetensors.index.json's weight_map is present. */
static bool shards_present(const char *dir, const char *index_name) {
    size_t n = strlen(dir) + strlen(index_name) + 2;
    char *p = gf_malloc(n);
    snprintf(p, n, "%s/%s", dir, index_name);
    size_t len;
    char *text = read_text_file(p, &len);
    free(p);
    if (!text) return false;
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    bool ok = cJSON_IsObject(map);
    const cJSON *e;
    cJSON_ArrayForEach(e, map) {
        if (!ok) break;
        ok = cJSON_IsString(e) && hub_valid_repo_path(e->valuestring) && is_file(dir, e->valuestring);
    }
    cJSON_Delete(root);
    return ok;
}

static bool hf_snapshot_complete(const char *dir) {
    if (!is_file(dir, "config.json")) return false;
    if (is_file(dir, "model.safetensors.index.json")) return shards_present(dir, "model.safetensors.index.json");
    return is_file(dir, "model.safetensors");
}

/* tokenizer.bin or tok*.bin beside the checkpoint file. */
static bool tokenizer_beside(const char *file) {
    char *dir = gf_strdup(file);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    DIR *d = opendir(dir);
    bool ok = false;
    struct dirent *e;
    while (d && !ok && (e = readdir(d)))
        ok = (!strcmp(e->d_name, "tokenizer.bin") || fnmatch("tok*.bin", e->d_name, 0) == 0) &&
             is_file(dir, e->d_name);
    if (d) closedir(d);
    free(dir);
    return ok;
}

static int cached_path(const hub_ref *ref, char **local_path) {
    char *root = hub_cache_dir();
    hub_cache c;
    hub_cache_init(&c, root, ref->repo);
    free(root);
    char commit[41];
    int rc = -1;
    if (hub_cache_commit_for(&c, ref->revision, commit) == 0) {
        char *dir = hub_cache_snapshot(&c, commit, NULL);
        if (ref->path[0]) {
            char *file = hub_cache_snapshot(&c, commit, ref->path);
            if (hub_cache_has(&c, commit, ref->path) && tokenizer_beside(file)) {
                *local_path = file;
                file = NULL;
                rc = 0;
            }
            free(file);
        } else if (hf_snapshot_complete(dir)) {
            *local_path = dir;
            dir = NULL;
            rc = 0;
        }
        free(dir);
    }
    hub_cache_free(&c);
    return rc;
}

int hub_resolve_cached(const char *arg, char **local_path) {
    hub_ref ref;
    if (hub_parse_ref(arg, &ref) != 0) {
        gf_clear_error();
        return -1;
    }
    return cached_path(&ref, local_path);
}

int hub_resolve_model(const char *arg, char **local_path, const hub_callbacks *cb) {
    *local_path = NULL;
    struct stat st;
    if (stat(arg, &st) == 0) {
        *local_path = gf_strdup(arg);
        return 0;
    }
    hub_ref ref;
    if (hub_parse_ref(arg, &ref) != 0)
        return gf_fail("%s: no such file or folder, and not a Hub repo (ORG/NAME[@REV][:PATH])", arg);
    if (cached_path(&ref, local_path) == 0) return 0;
    if (hub_offline())
        return gf_fail("%s is not in the cache and HF_HUB_OFFLINE is set (unset it to download)", arg);
    hub_request req = {.repo = ref.repo, .revision = ref.revision, .path = ref.path[0] ? ref.path : NULL};
    hub_result res;
    if (hub_download(&req, cb, &res) != 0) return -1;
    if (ref.path[0]) { /* a repo without a tokenizer beside the file still yields the file */
        size_t n = strlen(res.path) + strlen(ref.path) + 2;
        *local_path = gf_malloc(n);
        snprintf(*local_path, n, "%s/%s", res.path, ref.path);
        hub_result_free(&res);
        return 0;
    }
    hub_result_free(&res);
    if (cached_path(&ref, local_path) != 0)
        return gf_fail("%s: downloaded, but the snapshot lacks config.json or safetensors weights", arg);
    return 0;
}
