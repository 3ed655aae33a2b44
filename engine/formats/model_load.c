/* model_load: tells the format of a teacher by its path (a folder with
 * config.json, a folder or file of GGUF, else a llama2.c checkpoint) and
 * hands it to that format's loader (loaders.h). */
#include "formats/model_load.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/path.h"
#include "formats/loaders.h"

static char *display_name(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/') start--;
    char *s = gf_malloc(n - start + 1);
    memcpy(s, path + start, n - start);
    s[n - start] = 0;
    return s;
}

/* A folder without config.json holding exactly one .gguf file (what a Hub
 * download of one GGUF file leaves) is that GGUF teacher. *out stays NULL for
 * anything else; several .gguf files without config.json are an error. */
static int folder_gguf(const char *dir, char **out) {
    *out = NULL;
    char cfg[4096];
    struct stat st;
    if (snprintf(cfg, sizeof cfg, "%s/config.json", dir) >= (int)sizeof cfg) return gf_fail("%s: path too long", dir);
    if (stat(cfg, &st) == 0) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0; /* the HF loader reports it */
    int found = 0;
    char first[256] = "", second[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !str_ends_with(e->d_name, ".gguf")) continue;
        snprintf(found ? second : first, sizeof first, "%s", e->d_name);
        found++;
    }
    closedir(d);
    if (found > 1)
        return gf_fail("%s: %d .gguf files and no config.json (%s, %s, ...): name the file to load", dir, found, first,
                       second);
    if (found == 1) {
        size_t n = strlen(dir) + strlen(first) + 2;
        *out = gf_malloc(n);
        snprintf(*out, n, "%s/%s", dir, first);
    }
    return 0;
}

int model_load(model *m, const char *path, const model_load_opts *opts) {
    return model_load_hooked(m, path, opts, NULL);
}

int model_load_hooked(model *m, const char *path, const model_load_opts *opts, const model_load_hooks *hooks) {
    static const model_load_opts none = {0};
    if (!opts) opts = &none;
    memset(m, 0, sizeof *m);
    m->be = opts->be ? opts->be : be_default();
    m->loading = hooks;
    struct stat st;
    if (stat(path, &st) != 0) return gf_fail("%s: no such file or folder", path);
    int rc;
    char *gguf_in_dir = NULL;
    if (S_ISDIR(st.st_mode) && (rc = folder_gguf(path, &gguf_in_dir)) != 0) return rc;
    if (gguf_in_dir)
        rc = load_gguf(m, gguf_in_dir, opts);
    else if (S_ISDIR(st.st_mode))
        rc = load_hf_folder(m, path, opts);
    else if (str_ends_with(path, ".gguf"))
        rc = load_gguf(m, path, opts);
    else
        rc = load_llama2c(m, path, opts);
    free(gguf_in_dir);
    free(m->stage);
    m->stage = NULL;
    m->stage_bytes = 0;
    m->loading = NULL;
    if (rc != 0) {
        model_free(m);
        return -1;
    }
    m->path = gf_strdup(path);
    m->name = display_name(path);
    return 0;
}
