#include "hub/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "hub/repo_ref.h"

static char *fmt_path(const char *a, const char *b, const char *c, const char *d) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + 1;
    char *o = gf_malloc(n);
    snprintf(o, n, "%s%s%s%s", a, b, c, d);
    return o;
}

void hub_cache_init(hub_cache *c, const char *root, const char *repo) {
    char folder[160] = "models--";
    size_t k = strlen(folder);
    for (const char *p = repo; *p && k + 3 < sizeof folder; p++) {
        if (*p == '/') {
            folder[k++] = '-';
            folder[k++] = '-';
        } else {
            folder[k++] = *p;
        }
    }
    folder[k] = 0;
    c->root = gf_strdup(root);
    c->storage = fmt_path(root, "/", folder, "");
    c->locks = fmt_path(root, "/.locks/", folder, "");
}

void hub_cache_free(hub_cache *c) {
    free(c->root);
    free(c->storage);
    free(c->locks);
    c->root = c->storage = c->locks = NULL;
}

char *hub_cache_blob(const hub_cache *c, const char *etag) { return fmt_path(c->storage, "/blobs/", etag, ""); }
char *hub_cache_lock(const hub_cache *c, const char *etag) { return fmt_path(c->locks, "/", etag, ".lock"); }

char *hub_cache_snapshot(const hub_cache *c, const char *commit, const char *file) {
    char *dir = fmt_path(c->storage, "/snapshots/", commit, "");
    if (!file) return dir;
    char *p = fmt_path(dir, "/", file, "");
    free(dir);
    return p;
}

char *hub_pointer_target(const char *file, const char *etag) {
    int depth = 2;
    for (const char *p = file; *p; p++) depth += *p == '/';
    size_t n = 3 * (size_t)depth + strlen("blobs/") + strlen(etag) + 1;
    char *o = gf_malloc(n), *q = o;
    for (int i = 0; i < depth; i++, q += 3) memcpy(q, "../", 3);
    snprintf(q, n - (size_t)(q - o), "blobs/%s", etag);
    return o;
}

int hub_cache_commit_for(const hub_cache *c, const char *rev, char commit[41]) {
    if (hub_is_commit_hash(rev)) {
        memcpy(commit, rev, 41);
        return 0;
    }
    char *ref = fmt_path(c->storage, "/refs/", rev, "");
    FILE *f = fopen(ref, "r");
    free(ref);
    if (!f) return -1;
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = 0;
    if (!hub_is_commit_hash(buf)) return -1;
    memcpy(commit, buf, 41);
    return 0;
}

int hub_mkdirs(const char *path) {
    char *p = gf_strdup(path);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char saved = *s;
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                gf_fail("cannot create %s: %s", p, strerror(e));
                free(p);
                return -1;
            }
            *s = saved;
            if (!saved) break;
        }
    }
    free(p);
    return 0;
}

int hub_mkdirs_parent(const char *path) {
    char *p = gf_strdup(path);
    char *slash = strrchr(p, '/');
    int rc = 0;
    if (slash && slash != p) {
        *slash = 0;
        rc = hub_mkdirs(p);
    }
    free(p);
    return rc;
}

int hub_cache_write_ref(const hub_cache *c, const char *rev, const char *commit) {
    if (hub_is_commit_hash(rev)) return 0;
    char *ref = fmt_path(c->storage, "/refs/", rev, "");
    int rc = hub_mkdirs_parent(ref) == 0 ? atomic_write(ref, commit, strlen(commit)) : -1;
    free(ref);
    return rc;
}

int hub_cache_link(const hub_cache *c, const char *commit, const char *file, const char *etag) {
    char *ptr = hub_cache_snapshot(c, commit, file);
    char *target = hub_pointer_target(file, etag);
    char *tmp = atomic_temp_path(ptr); /* a symlink, renamed over the pointer like a file */
    int rc = -1;
    if (hub_mkdirs_parent(ptr) != 0) goto out;
    unlink(tmp);
    if (symlink(target, tmp) != 0) {
        gf_fail("cannot create link %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (rename(tmp, ptr) != 0) {
        gf_fail("cannot rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(ptr);
    free(target);
    free(tmp);
    return rc;
}

bool hub_cache_has(const hub_cache *c, const char *commit, const char *file) {
    char *p = hub_cache_snapshot(c, commit, file);
    struct stat st;
    bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}
