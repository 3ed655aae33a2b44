#include "method/artifact.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "hub/digest.h"
#include "hub/resolve.h"

#ifndef GRAFT_VERSION
#define GRAFT_VERSION "0.1.0"
#endif

const char *graft_version(void) { return GRAFT_VERSION; }

/* Options that say where a result goes or how it is shown, not what it is. */
static bool neutral(const char *name) {
    static const char *const names[] = {"out", "force", "json", "threads", "device", "help", "ckpt", "ckpt-dir",
                                        "ckpt-every", "ckpt-keep", "resume", "log-every", "log-windows", "recall-dump",
                                        "ranks", "gpus"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return true;
    return false;
}

/* Options whose value names a file or folder read by the request. */
static bool file_option(const char *name) {
    static const char *const names[] = {"text", "calib", "eval", "data", "teacher", "tokenizer"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return true;
    return false;
}

/* ---- content hashes ---- */

static int hash_range(digest *d, int fd, const char *path, off_t at, off_t n, unsigned char *buf, size_t cap) {
    while (n > 0) {
        const size_t want = (size_t)(n < (off_t)cap ? n : (off_t)cap);
        const ssize_t got = pread(fd, buf, want, at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return gf_fail("%s: read failed (%s)", path, got < 0 ? strerror(errno) : "short file");
        digest_update(d, buf, (size_t)got);
        at += got, n -= got;
    }
    return 0;
}

/* SHA-256 of the file, or of its first and last ARTIFACT_HASH_PART bytes when larger than ARTIFACT_HASH_WHOLE */
static int file_hash(const char *path, long long size, char hex[65], bool *whole) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gf_fail("%s: %s", path, strerror(errno));
    const size_t cap = 1 << 20;
    unsigned char *buf = gf_malloc(cap);
    digest d = {0};
    digest_start(&d, DIGEST_SHA256);
    *whole = size <= ARTIFACT_HASH_WHOLE;
    int rc = *whole ? hash_range(&d, fd, path, 0, (off_t)size, buf, cap)
                    : hash_range(&d, fd, path, 0, ARTIFACT_HASH_PART, buf, cap) ||
                          hash_range(&d, fd, path, (off_t)size - ARTIFACT_HASH_PART, ARTIFACT_HASH_PART, buf, cap);
    if (rc == 0) digest_final_hex(&d, hex);
    digest_free(&d);
    free(buf);
    close(fd);
    return rc ? -1 : 0;
}

static cJSON *file_identity(const char *path, const struct stat *st) {
    char hex[65];
    bool whole = false;
    if (file_hash(path, (long long)st->st_size, hex, &whole) != 0) return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "size", (double)st->st_size);
    cJSON_AddStringToObject(o, "sha256", hex);
    cJSON_AddStringToObject(o, "hashed", whole ? "whole" : "first and last 16 MiB");
    return o;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static cJSON *folder_identity(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return gf_fail("%s: %s", dir, strerror(errno)), NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = gf_realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
        names[n++] = gf_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    cJSON *files = cJSON_CreateObject();
    for (size_t i = 0; i < n && files; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue; /* subfolders (a Hub cache's) are not the model */
        cJSON *f = file_identity(p, &st);
        if (!f) {
            cJSON_Delete(files);
            files = NULL;
        } else {
            cJSON_AddItemToObject(files, names[i], f);
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return files;
}

cJSON *artifact_path_identity(const char *path) {
    struct stat st;
    cJSON *o = cJSON_CreateObject();
    if (stat(path, &st) != 0) {
        /* not a path: a Hub reference, owner/name[@revision][:path] */
        if (!strchr(path, '/') || path[0] == '/' || path[0] == '.') {
            cJSON_Delete(o);
            return gf_fail("%s: %s", path, strerror(errno)), NULL;
        }
        char ref[1024];
        snprintf(ref, sizeof ref, "%s", path);
        char *colon = strchr(ref, ':');
        if (colon) *colon = 0;
        char *at = strchr(ref, '@');
        if (at) *at = 0;
        cJSON_AddStringToObject(o, "repo", ref);
        cJSON_AddStringToObject(o, "revision", at ? at + 1 : "main");
        if (colon) cJSON_AddStringToObject(o, "file", colon + 1);
        /* what the revision resolves to in the cache (the snapshot folder names its commit), and its content */
        char *local = NULL;
        if (hub_resolve_cached(path, &local) == 0 && local && strcmp(local, path) != 0) {
            cJSON *snap = artifact_path_identity(local);
            if (snap) cJSON_AddItemToObject(o, "snapshot", snap);
            gf_clear_error();
        }
        free(local);
        return o;
    }
    /* a FIFO or a device would block the hash or never end: refused as every input is */
    if (!S_ISDIR(st.st_mode) && regular_file_check(path) != 0) {
        cJSON_Delete(o);
        return NULL;
    }
    char abs[PATH_MAX];
    cJSON_AddStringToObject(o, "path", realpath(path, abs) ? abs : path);
    cJSON *c = S_ISDIR(st.st_mode) ? folder_identity(path) : file_identity(path, &st);
    if (!c) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddItemToObject(o, S_ISDIR(st.st_mode) ? "files" : "content", c);
    return o;
}

/* ---- a request's identity ---- */

static cJSON *value_json(const opt_spec *s) {
    switch (s->kind) {
    case OPT_FLAG: return cJSON_CreateBool(*(const bool *)s->dst);
    case OPT_INT: return cJSON_CreateNumber(*(const int *)s->dst);
    case OPT_LONG: return cJSON_CreateNumber((double)*(const long *)s->dst);
    case OPT_DOUBLE: {
        const double x = *(const double *)s->dst;
        return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
    }
    case OPT_STR: {
        const char *v = *(const char *const *)s->dst;
        return v ? cJSON_CreateString(v) : cJSON_CreateNull();
    }
    case OPT_STR_LIST: {
        const str_list *l = s->dst;
        cJSON *a = cJSON_CreateArray();
        for (int i = 0; i < l->n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(l->items[i]));
        return a;
    }
    }
    return cJSON_CreateNull();
}

int artifact_identity(const request *r, cJSON **identity, char digest_hex[ARTIFACT_DIGEST_HEX]) {
    cJSON *id = cJSON_CreateObject();
    cJSON_AddStringToObject(id, "kind", req_kind_name(r->kind));
    cJSON *inputs = cJSON_AddArrayToObject(id, "inputs");
    for (int i = 0; i < r->n_pos; i++) {
        cJSON *p = artifact_path_identity(r->pos[i]);
        if (!p) goto fail;
        cJSON_AddItemToArray(inputs, p);
    }
    cJSON *opts = cJSON_AddObjectToObject(id, "options");
    request x = *r;
    opt_spec specs[REQ_MAX_OPTS];
    const int n = request_bind(&x, specs);
    for (int i = 0; i < n; i++) {
        const opt_spec *s = &specs[i];
        if (neutral(s->name)) continue;
        const char *v = s->kind == OPT_STR ? *(const char *const *)s->dst : NULL;
        if (v && file_option(s->name)) {
            cJSON *p = artifact_path_identity(v);
            if (!p) goto fail;
            cJSON_AddItemToObject(opts, s->name, p);
        } else {
            cJSON_AddItemToObject(opts, s->name, value_json(s));
        }
    }
    char *text = cJSON_PrintUnformatted(id);
    digest d = {0};
    digest_start(&d, DIGEST_SHA256);
    digest_update(&d, text, strlen(text));
    digest_final_hex(&d, digest_hex);
    digest_free(&d);
    free(text);
    *identity = id;
    return 0;
fail:
    cJSON_Delete(id);
    return -1;
}

cJSON *artifact_record(const request *r, const cJSON *identity, const char *digest_hex) {
    cJSON *o = cJSON_CreateObject();
    char cmd[4096];
    request_command(r, cmd, sizeof cmd);
    cJSON_AddStringToObject(o, "digest", digest_hex);
    cJSON_AddStringToObject(o, "command", cmd);
    cJSON_AddStringToObject(o, "graft_version", graft_version());
    cJSON_AddItemToObject(o, "identity", cJSON_Duplicate(identity, 1));
    return o;
}

/* ---- folders ---- */

static bool dir_empty(const char *dir, bool *exists) {
    DIR *d = opendir(dir);
    *exists = d != NULL;
    if (!d) return true;
    bool empty = true;
    /* a folder holding only a record (and the lock of a command writing it) holds nothing made yet */
    for (struct dirent *e; empty && (e = readdir(d));) {
        const size_t len = strlen(e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "request.json") &&
            !(len > 5 && !strcmp(e->d_name + len - 5, ".lock")))
            empty = false;
    }
    closedir(d);
    return empty;
}

int artifact_read(const char *dir, const char *record_file, char digest_hex[ARTIFACT_DIGEST_HEX], char *cmd, size_t cmd_n) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, record_file);
    FILE *f = fopen(path, "rb");
    if (!f) return gf_fail("%s: no request recorded (%s)", dir, strerror(errno));
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) text = gf_realloc(text, cap = 2 * cap + 8192);
        const size_t got = fread(text + n, 1, 4096, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    text[n] = 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *rec = root ? cJSON_GetObjectItemCaseSensitive(root, ARTIFACT_KEY) : NULL;
    if (!rec) rec = root;
    const cJSON *dg = rec ? cJSON_GetObjectItemCaseSensitive(rec, "digest") : NULL;
    int rc = 0;
    if (!cJSON_IsString(dg) || strlen(dg->valuestring) != ARTIFACT_DIGEST_HEX - 1) {
        rc = gf_fail("%s: no request recorded in %s", dir, record_file);
    } else {
        memcpy(digest_hex, dg->valuestring, ARTIFACT_DIGEST_HEX);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(rec, "command");
        if (cmd && cmd_n) snprintf(cmd, cmd_n, "%s", cJSON_IsString(c) ? c->valuestring : "?");
    }
    cJSON_Delete(root);
    return rc;
}

int artifact_claim_dir(const char *dir, const char *record_file, const char *digest_hex, bool force, const char *hint,
                       artifact_claim *claim) {
    bool exists;
    if (dir_empty(dir, &exists)) {
        *claim = ARTIFACT_NEW;
        return 0;
    }
    char old[ARTIFACT_DIGEST_HEX], cmd[1024];
    const bool recorded = artifact_read(dir, record_file, old, cmd, sizeof cmd) == 0;
    if (recorded && !strcmp(old, digest_hex)) {
        *claim = ARTIFACT_SAME;
        return 0;
    }
    gf_clear_error();
    if (force) {
        *claim = ARTIFACT_FORCED;
        return 0;
    }
    if (recorded) return gf_fail("%s holds what another request made, with other options or inputs (%.*s: %s): %s", dir, ARTIFACT_SHORT, old, cmd, hint);
    return gf_fail("%s holds files no recorded request made: %s", dir, hint);
}

int artifact_check(const char *dir, const char *record_file, const char *digest_hex) {
    char now[ARTIFACT_DIGEST_HEX], cmd[1024];
    if (artifact_read(dir, record_file, now, cmd, sizeof cmd) != 0)
        return gf_fail("%s no longer holds this row's artifact (%s)", dir, gf_last_error());
    const size_t n = strlen(digest_hex);
    if (n < ARTIFACT_SHORT || strncmp(now, digest_hex, n) != 0)
        return gf_fail("%s no longer holds this row's artifact: it now holds request %.*s (%s), the row's is %.*s", dir,
                       ARTIFACT_SHORT, now, cmd, ARTIFACT_SHORT, digest_hex);
    return 0;
}

int artifact_write_record(const char *dir, const cJSON *record) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/request.json", dir);
    char *text = cJSON_Print(record);
    const int rc = atomic_write(path, text, strlen(text));
    free(text);
    return rc;
}

int artifact_claim_record_dir(const request *r, const char *dir, bool force, const char *hint,
                              char digest_hex[ARTIFACT_DIGEST_HEX], char *note, size_t note_n) {
    cJSON *id;
    artifact_claim claim;
    if (note_n) note[0] = 0;
    if (artifact_identity(r, &id, digest_hex) != 0) return -1;
    int rc = artifact_claim_dir(dir, "request.json", digest_hex, force, hint, &claim);
    if (rc == 0 && claim != ARTIFACT_SAME) {
        cJSON *rec = artifact_record(r, id, digest_hex);
        rc = artifact_write_record(dir, rec);
        cJSON_Delete(rec);
    }
    if (rc == 0 && claim == ARTIFACT_SAME)
        snprintf(note, note_n, "%s: reused (the same request made it, %.*s)", dir, ARTIFACT_SHORT, digest_hex);
    if (rc == 0 && claim == ARTIFACT_FORCED) snprintf(note, note_n, "%s: taken over (--force)", dir);
    cJSON_Delete(id);
    return rc;
}

int artifact_claim_record_file(const request *r, const char *path, bool force, const char *hint,
                               char digest_hex[ARTIFACT_DIGEST_HEX], char *note, size_t note_n) {
    if (note_n) note[0] = 0;
    char dir[PATH_MAX], rec_name[PATH_MAX], rec_path[PATH_MAX + 16];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash && slash == path) snprintf(dir, sizeof dir, "/");
    snprintf(rec_name, sizeof rec_name, "%s.request.json", slash ? slash + 1 : path);
    snprintf(rec_path, sizeof rec_path, "%s.request.json", path);
    cJSON *id;
    if (artifact_identity(r, &id, digest_hex) != 0) return -1;
    struct stat st;
    const bool exists = stat(path, &st) == 0;
    char old[ARTIFACT_DIGEST_HEX], cmd[1024];
    const bool recorded = artifact_read(dir, rec_name, old, cmd, sizeof cmd) == 0;
    gf_clear_error();
    int rc = 0;
    if (recorded && !strcmp(old, digest_hex)) {
        snprintf(note, note_n, "%s: reused (the same request made it, %.*s)", path, ARTIFACT_SHORT, digest_hex);
    } else if (exists && !force) { /* a record without its checkpoint: nothing was made yet */
        rc = recorded ? gf_fail("%s holds what another request made, with other options or inputs (%.*s: %s): %s", path, ARTIFACT_SHORT, old, cmd, hint)
                      : gf_fail("%s holds a checkpoint no recorded request made: %s", path, hint);
    } else {
        if (exists) snprintf(note, note_n, "%s: taken over (--force)", path);
        cJSON *rec = artifact_record(r, id, digest_hex);
        char *text = cJSON_Print(rec);
        rc = atomic_write(rec_path, text, strlen(text));
        free(text);
        cJSON_Delete(rec);
    }
    cJSON_Delete(id);
    return rc;
}
