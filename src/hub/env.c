#include "hub/env.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/mapped_file.h"

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

static char *path_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *o = gf_malloc(n);
    snprintf(o, n, "%s/%s", a, b);
    return o;
}

/* "~/x" -> "$HOME/x", as os.path.expanduser. */
static char *expand_home(const char *p) {
    if (p[0] == '~' && (p[1] == '/' || p[1] == 0)) {
        const char *home = env("HOME") ? env("HOME") : "/";
        return path_join(home, p[1] ? p + 2 : "");
    }
    return gf_strdup(p);
}

char *hub_endpoint(void) {
    char *e = gf_strdup(env("HF_ENDPOINT") ? env("HF_ENDPOINT") : "https://huggingface.co");
    size_t n = strlen(e);
    while (n > 0 && e[n - 1] == '/') e[--n] = 0;
    return e;
}

char *hub_home(void) {
    if (env("HF_HOME")) return expand_home(env("HF_HOME"));
    char *base = env("XDG_CACHE_HOME") ? expand_home(env("XDG_CACHE_HOME")) : expand_home("~/.cache");
    char *h = path_join(base, "huggingface");
    free(base);
    return h;
}

char *hub_cache_dir(void) {
    if (env("HF_HUB_CACHE")) return expand_home(env("HF_HUB_CACHE"));
    if (env("HUGGINGFACE_HUB_CACHE")) return expand_home(env("HUGGINGFACE_HUB_CACHE"));
    char *home = hub_home();
    char *c = path_join(home, "hub");
    free(home);
    return c;
}

static char *trimmed(const char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *o = gf_strdup(s);
    size_t n = strlen(o);
    while (n > 0 && isspace((unsigned char)o[n - 1])) o[--n] = 0;
    if (!o[0]) {
        free(o);
        return NULL;
    }
    return o;
}

char *hub_token(void) {
    const char *t = env("HF_TOKEN") ? env("HF_TOKEN") : env("HUGGING_FACE_HUB_TOKEN");
    if (t) return trimmed(t);
    char *file;
    if (env("HF_TOKEN_PATH")) {
        file = expand_home(env("HF_TOKEN_PATH"));
    } else {
        char *home = hub_home();
        file = path_join(home, "token");
        free(home);
    }
    size_t len = 0;
    char *text = read_text_file(file, &len);
    free(file);
    gf_clear_error(); /* a missing token file is normal */
    if (!text) return NULL;
    char *tok = trimmed(text);
    free(text);
    return tok;
}

static bool truthy(const char *v) {
    return v && (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"));
}

bool hub_offline(void) { return truthy(getenv("HF_HUB_OFFLINE")) || truthy(getenv("TRANSFORMERS_OFFLINE")); }

double hub_env_double(const char *name, double fallback) {
    const char *v = env(name);
    if (!v) return fallback;
    char *end;
    double x = strtod(v, &end);
    return (*end == 0 && x >= 0 && isfinite(x)) ? x : fallback;
}

long long hub_unannounced_max(void) {
    const double x = hub_env_double("GRAFT_HUB_MAX_UNANNOUNCED", 68719476736.0 /* 64 GiB */);
    return x < 9e18 ? (long long)x : (long long)9e18;
}
