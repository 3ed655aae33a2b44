#include "default_teacher.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

static char *if_readable(const char *p) { return access(p, R_OK) == 0 ? gf_strdup(p) : NULL; }

static char *from_hf_cache(void) {
    char hub[PATH_MAX];
    const char *cache = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME"), *h = getenv("HOME");
    if (cache) snprintf(hub, sizeof hub, "%s", cache);
    else if (home) snprintf(hub, sizeof hub, "%s/hub", home);
    else if (h) snprintf(hub, sizeof hub, "%s/.cache/huggingface/hub", h);
    else return NULL;
    char refs[PATH_MAX + 64], commit[128] = {0};
    snprintf(refs, sizeof refs, "%s/models--karpathy--tinyllamas/refs/main", hub);
    FILE *f = fopen(refs, "r");
    if (!f) return NULL;
    if (!fgets(commit, sizeof commit, f)) commit[0] = 0;
    fclose(f);
    commit[strcspn(commit, "\r\n")] = 0;
    if (!commit[0]) return NULL;
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/models--karpathy--tinyllamas/snapshots/%s/stories260K/stories260K.bin", hub, commit);
    return if_readable(p);
}

static char *beside_source(const char *rel) {
    /* the executable lives in <repo>/build/graft or <repo>/graft */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash) return NULL;
        *slash = 0;
        char p[PATH_MAX * 2];
        snprintf(p, sizeof p, "%s/../shared/%s", exe, rel);
        char *r = if_readable(p);
        if (r) return r;
    }
    return NULL;
}

char *default_teacher_path(void) {
    const char *env = getenv("GRAFT_TEACHER");
    if (env && *env) return gf_strdup(env);
    char *p = from_hf_cache();
    if (!p) p = beside_source("models/tinyllamas/stories260K/stories260K.bin");
    if (!p)
        gf_fail("default teacher %s not found in the Hugging Face cache; set GRAFT_TEACHER=PATH or pass a model",
                DEFAULT_TEACHER_REPO);
    return p;
}

char *default_text_path(void) {
    const char *env = getenv("GRAFT_TEXT");
    if (env && *env) return gf_strdup(env);
    return beside_source("data/tinystories.txt");
}
