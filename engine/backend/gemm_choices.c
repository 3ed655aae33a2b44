#include "backend/gemm_choices.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"

#define FORMAT "graft-gemm-choices"
#define FILE_MAX ((size_t)16 << 20) /* a few hundred choices are ~100 KB */

/* GEMM_ALGO_BYTES bytes from their 2 GEMM_ALGO_BYTES hex digits (libcrypto's decoder, no separator) */
static bool hex_to_algo(const char *s, unsigned char *out) {
    size_t n = 0;
    const bool ok = strlen(s) == 2 * GEMM_ALGO_BYTES && OPENSSL_hexstr2buf_ex(out, GEMM_ALGO_BYTES, &n, s, '\0') == 1 &&
                    n == GEMM_ALGO_BYTES;
    if (!ok) ERR_clear_error(); /* the caller reports it; nothing is left on libcrypto's queue */
    return ok;
}

static gemm_choice *find(gemm_choices *c, const char *key) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0) return &c->v[i];
    return NULL;
}

/* KEY's entry set to ALGO (added when new): 0, or -1 out of host memory. */
static int set(gemm_choices *c, const char *key, const unsigned char *algo) {
    gemm_choice *e = find(c, key);
    if (!e) {
        if (c->n == c->cap) {
            const size_t cap = c->cap ? 2 * c->cap : 64;
            gemm_choice *nv = realloc(c->v, cap * sizeof *nv);
            if (!nv) return gf_fail("GEMM choices: out of host memory");
            c->v = nv, c->cap = cap;
        }
        char *k = strdup(key);
        if (!k) return gf_fail("GEMM choices: out of host memory");
        e = &c->v[c->n++];
        e->key = k;
    }
    memcpy(e->algo, algo, GEMM_ALGO_BYTES);
    return 0;
}

/* The choices of the file at PATH into OUT (an empty table when it does not
 * exist): 0, or -1 naming PATH. */
static int read_into(gemm_choices *out, const char *path) {
    if (access(path, F_OK) != 0) return 0;
    char *text = read_file_bounded(path, FILE_MAX, NULL);
    if (!text) return gf_fail_prefix("GEMM choices");
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *fmt = cJSON_GetObjectItem(root, "format"), *ver = cJSON_GetObjectItem(root, "version");
    const cJSON *ch = cJSON_GetObjectItem(root, "choices");
    int rc = 0;
    if (!root || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) != 0 || !cJSON_IsNumber(ver) ||
        !cJSON_IsObject(ch)) {
        rc = gf_fail("%s: not a graft GEMM choice file (a JSON object with \"format\": \"" FORMAT "\"); move it or "
                     "set GRAFT_CUDA_GEMM_TUNE_FILE",
                     path);
    } else if (ver->valuedouble != 1) {
        rc = gf_fail("%s: GEMM choice file version %g; this graft reads version 1", path, ver->valuedouble);
    } else {
        const cJSON *e;
        unsigned char algo[GEMM_ALGO_BYTES];
        cJSON_ArrayForEach(e, ch) {
            if (!cJSON_IsString(e) || strlen(e->string) >= GEMM_CHOICE_KEY_MAX || !hex_to_algo(e->valuestring, algo)) {
                rc = gf_fail("%s: choice \"%.60s\" is not %d hex bytes under a key shorter than %d", path, e->string,
                             GEMM_ALGO_BYTES, GEMM_CHOICE_KEY_MAX);
                break;
            }
            if ((rc = set(out, e->string, algo)) < 0) break;
        }
    }
    cJSON_Delete(root);
    return rc;
}

int gemm_choices_open(gemm_choices *c, const char *path) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    if (!path) return 0;
    if (!(c->path = strdup(path))) return gf_fail("GEMM choices: out of host memory");
    return read_into(c, path);
}

bool gemm_choices_get(gemm_choices *c, const char *key, unsigned char *algo) {
    pthread_mutex_lock(&c->lock);
    const gemm_choice *e = find(c, key);
    if (e) memcpy(algo, e->algo, GEMM_ALGO_BYTES);
    pthread_mutex_unlock(&c->lock);
    return e != NULL;
}

/* The table as the file's JSON text (malloc'd), or NULL out of host memory. */
static char *to_json(const gemm_choices *c) {
    cJSON *root = cJSON_CreateObject(), *ch = cJSON_CreateObject();
    char hex[2 * GEMM_ALGO_BYTES + 1];
    bool ok = root && ch && cJSON_AddStringToObject(root, "format", FORMAT) &&
              cJSON_AddNumberToObject(root, "version", 1) && cJSON_AddItemToObject(root, "choices", ch);
    if (!ok) cJSON_Delete(ch);
    for (size_t i = 0; ok && i < c->n; i++) {
        for (int b = 0; b < GEMM_ALGO_BYTES; b++) snprintf(hex + 2 * b, 3, "%02x", c->v[i].algo[b]);
        ok = cJSON_AddStringToObject(ch, c->v[i].key, hex) != NULL;
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}

/* The file's folder and those above it, made where missing (the cache's graft/,
 * and ~/.cache itself on a fresh account). */
static int make_parents(const char *path) {
    char *dir = strdup(path);
    if (!dir) return gf_fail("GEMM choices: out of host memory");
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = 0;
        for (char *p = dir + 1; rc == 0; p++) {
            const char was = *p;
            if (was != '/' && was != 0) continue;
            *p = 0;
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                rc = gf_fail("%s: cannot create folder (%s)", dir, strerror(errno));
            *p = was;
            if (!was) break;
        }
    }
    free(dir);
    return rc;
}

/* Under PATH.lock: the file's current choices, ours over them, written whole. */
static int merge_into_file(gemm_choices *c) {
    if (make_parents(c->path) < 0) return -1;
    const size_t n = strlen(c->path) + 6;
    char *lock_path = malloc(n);
    if (!lock_path) return gf_fail("GEMM choices: out of host memory");
    snprintf(lock_path, n, "%s.lock", c->path);
    const int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    int rc = fd < 0 ? gf_fail("%s: %s", lock_path, strerror(errno)) : 0;
    if (rc == 0 && flock(fd, LOCK_EX) != 0) rc = gf_fail("%s: cannot lock (%s)", lock_path, strerror(errno));
    gemm_choices disk;
    memset(&disk, 0, sizeof disk);
    if (rc == 0) rc = read_into(&disk, c->path);
    for (size_t i = 0; rc == 0 && i < c->n; i++) rc = set(&disk, c->v[i].key, c->v[i].algo);
    char *text = rc == 0 ? to_json(&disk) : NULL;
    if (rc == 0 && !text) rc = gf_fail("GEMM choices: out of host memory");
    if (rc == 0) rc = atomic_write(c->path, text, strlen(text));
    free(text);
    for (size_t i = 0; i < disk.n; i++) free(disk.v[i].key);
    free(disk.v);
    if (fd >= 0) close(fd); /* releases the lock */
    free(lock_path);
    return rc;
}

int gemm_choices_put(gemm_choices *c, const char *key, const unsigned char *algo) {
    if (strlen(key) >= GEMM_CHOICE_KEY_MAX) return gf_fail("GEMM choices: key \"%.60s...\" too long", key);
    pthread_mutex_lock(&c->lock);
    int rc = set(c, key, algo);
    if (rc == 0 && c->path && (rc = merge_into_file(c)) < 0) {
        free(c->path);
        c->path = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void gemm_choices_free(gemm_choices *c) {
    for (size_t i = 0; i < c->n; i++) free(c->v[i].key);
    free(c->v);
    free(c->path);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}

char *gemm_choices_default_path(void) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *base = xdg && *xdg ? xdg : home && *home ? home : NULL;
    if (!base) return NULL;
    const char *leaf = xdg && *xdg ? "/graft/gemm-choices.json" : "/.cache/graft/gemm-choices.json";
    const size_t n = strlen(base) + strlen(leaf) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", base, leaf);
    return p;
}
