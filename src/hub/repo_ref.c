#include "hub/repo_ref.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static bool valid_name_part(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-')) return false;
    }
    /* the Hub forbids leading/trailing '-' or '.' */
    if (s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.') return false;
    return true;
}

static int check_repo_id(const char *id) {
    const char *slash = strchr(id, '/');
    if (!slash || strchr(slash + 1, '/'))
        return gf_fail("'%s' is not a repo id (expected ORG/NAME)", id);
    if (!valid_name_part(id, (size_t)(slash - id)) || !valid_name_part(slash + 1, strlen(slash + 1)) ||
        strstr(id, "--") || strstr(id, ".."))
        return gf_fail("'%s' is not a valid repo id (letters, digits, '.', '_', '-'; no '--' or '..')", id);
    if (strlen(id) > 96) return gf_fail("repo id '%s' is longer than 96 characters", id);
    return 0;
}

bool hub_valid_repo_path(const char *path) {
    if (!path[0] || path[0] == '/') return false;
    const char *p = path;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return false;
        if (!e) break;
        p = e + 1;
        if (!*p) return false; /* trailing slash */
    }
    return true;
}

int hub_parse_ref(const char *arg, hub_ref *out) {
    memset(out, 0, sizeof *out);
    char buf[1536];
    if (strlen(arg) >= sizeof buf)
        return gf_fail("the repo reference '%.40s...' has %zu characters, more than the %zu of ORG/NAME[@REV][:PATH]",
                       arg, strlen(arg), sizeof buf - 1);
    strcpy(buf, arg);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        if (!hub_valid_repo_path(colon + 1)) return gf_fail("'%s': bad file path inside the repo", arg);
        if (strlen(colon + 1) >= sizeof out->path) return gf_fail("'%s': path too long", arg);
        strcpy(out->path, colon + 1);
    }
    char *at = strchr(buf, '@');
    if (at) {
        *at = 0;
        const char *rev = at + 1;
        if (!rev[0] || strlen(rev) >= sizeof out->revision || strstr(rev, "..") || rev[0] == '/')
            return gf_fail("'%s': bad revision", arg);
        strcpy(out->revision, rev);
        out->has_revision = true;
    } else {
        strcpy(out->revision, "main");
    }
    if (check_repo_id(buf) != 0) return -1;
    strcpy(out->repo, buf);
    return 0;
}

char *hub_url_escape(const char *s, bool keep_slash) {
    size_t n = strlen(s);
    char *o = gf_malloc(3 * n + 1), *q = o;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '.' || *p == '_' || *p == '~' || *p == '-' || (keep_slash && *p == '/')) {
            *q++ = (char)*p;
        } else {
            sprintf(q, "%%%02X", *p);
            q += 3;
        }
    }
    *q = 0;
    return o;
}

static char *join(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + strlen(e) + strlen(f) + 1;
    char *o = gf_malloc(n);
    snprintf(o, n, "%s%s%s%s%s%s", a, b, c, d, e, f);
    return o;
}

char *hub_url_resolve(const char *endpoint, const char *repo, const char *rev, const char *file) {
    char *r = hub_url_escape(rev, false), *f = hub_url_escape(file, true);
    char *u = join(endpoint, "/", repo, "/resolve/", r, "/");
    char *full = join(u, f, "", "", "", "");
    free(u); free(r); free(f);
    return full;
}

char *hub_url_model_info(const char *endpoint, const char *repo, const char *rev) {
    char *r = hub_url_escape(rev, false);
    char *u = join(endpoint, "/api/models/", repo, "/revision/", r, "?blobs=true");
    free(r);
    return u;
}

bool hub_glob_any(const char *const *patterns, int n, const char *name) {
    for (int i = 0; i < n; i++) {
        const char *p = patterns[i];
        size_t len = strlen(p);
        if (len && p[len - 1] == '/') {
            char tmp[1100];
            snprintf(tmp, sizeof tmp, "%s*", p);
            if (fnmatch(tmp, name, 0) == 0) return true;
        } else if (fnmatch(p, name, 0) == 0) {
            return true;
        }
    }
    return false;
}

bool hub_is_commit_hash(const char *s) {
    size_t n = 0;
    for (; s[n]; n++)
        if (!isxdigit((unsigned char)s[n]) || isupper((unsigned char)s[n])) return false;
    return n == 40;
}
