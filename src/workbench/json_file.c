#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "workbench/json_file.h"

char *persist_path(const char *xdg_var, const char *home_fallback, const char *leaf) {
    const char *base = getenv(xdg_var);
    char buf[4096];
    if (base && base[0] == '/') snprintf(buf, sizeof buf, "%s/graft/%s", base, leaf);
    else if (getenv("HOME") && getenv("HOME")[0]) snprintf(buf, sizeof buf, "%s/%s/graft/%s", getenv("HOME"), home_fallback, leaf);
    else return NULL;
    return gf_strdup(buf);
}

int make_parent_dirs(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return gf_fail("%s: %s", dir, strerror(errno));
        *p = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return gf_fail("%s: %s", dir, strerror(errno));
    return 0;
}

int json_write_atomic(const char *path, const cJSON *root) {
    if (make_parent_dirs(path)) return -1;
    char *text = cJSON_Print(root);
    if (!text) return gf_fail("%s: could not serialise JSON", path);
    size_t len = strlen(text);
    text = gf_realloc(text, len + 2);
    memcpy(text + len, "\n", 2);
    int rc = atomic_write(path, text, len + 1);
    free(text);
    return rc;
}

cJSON *json_read_file(const char *path, bool *missing) {
    *missing = false;
    if (access(path, F_OK) != 0) {
        *missing = true;
        return NULL;
    }
    size_t len = 0;
    char *text = read_text_file(path, &len);
    if (!text) return gf_fail("%s: cannot read", path), NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) gf_fail("%s: not valid JSON near byte %ld", path, end ? (long)(end - text) : 0L);
    else if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        root = NULL;
        gf_fail("%s: expected a JSON object", path);
    }
    free(text);
    return root;
}

void json_get_str(const cJSON *o, const char *key, char *dst, size_t n) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v)) snprintf(dst, n, "%s", v->valuestring);
}
