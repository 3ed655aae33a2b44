#include "hub/default_teacher.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "hub/resolve.h"

static char *if_readable(const char *p) { return access(p, R_OK) == 0 ? gf_strdup(p) : NULL; }

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
    char *p = NULL;
    if (hub_resolve_cached(HUB_DEFAULT_TEACHER, &p) == 0) return p;
    p = beside_source("models/tinyllamas/stories260K/stories260K.bin");
    if (p) return p;
    /* neither cached nor beside the source: the repo id, which the loaders download */
    return gf_strdup(HUB_DEFAULT_TEACHER);
}

char *default_text_path(void) {
    const char *env = getenv("GRAFT_TEXT");
    if (env && *env) return gf_strdup(env);
    return beside_source("data/tinystories.txt");
}
