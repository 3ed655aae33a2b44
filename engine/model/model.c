#include "model/model.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/loaders.h"

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

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

int model_load(model *m, const char *path, const model_load_opts *opts) {
    static const model_load_opts none = {0};
    if (!opts) opts = &none;
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(path, &st) != 0) return gf_fail("%s: no such file or folder", path);
    int rc;
    if (S_ISDIR(st.st_mode))
        rc = load_hf_folder(m, path, opts);
    else if (ends_with(path, ".gguf"))
        rc = gf_fail("%s: GGUF teachers are not supported by this build", path);
    else
        rc = load_llama2c(m, path, opts);
    if (rc != 0) {
        model_free(m);
        return -1;
    }
    m->path = gf_strdup(path);
    m->name = display_name(path);
    return 0;
}

void model_free(model *m) {
    model_weights_free(&m->w);
    if (m->tok) tokenizer_free(m->tok);
    free(m->path);
    free(m->name);
    memset(m, 0, sizeof *m);
}
