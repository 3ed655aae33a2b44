#include "hub/fetch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "hub/env.h"
#include "hub/errors.h"
#include "hub/http.h"
#include "hub/repo_ref.h"
#include "hub/digest.h"
#include "hub/verify.h"

static char *str3(const char *a, const char *b, const char *c) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *o = gf_malloc(n);
    snprintf(o, n, "%s%s%s", a, b, c);
    return o;
}

/* ---- the blob lock: flock on .locks/models--ORG--NAME/<etag>.lock, as huggingface_hub ---- */

static int lock_blob(const char *lock_path, atomic_int *cancel) {
    if (hub_mkdirs_parent(lock_path) != 0) return -1;
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return gf_fail("cannot open lock %s: %s", lock_path, strerror(errno));
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int e = errno;
            close(fd);
            return gf_fail("cannot lock %s: %s", lock_path, strerror(e));
        }
        if (cancel && *cancel) {
            close(fd);
            return gf_fail("download cancelled");
        }
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return fd;
}

/* ---- partial downloads ---- */

/* A name unique to this process and call: blobs/<etag>.<8 hex>.incomplete. */
static char *unique_incomplete(const char *blob) {
    static _Atomic unsigned counter;
    unsigned x = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ (counter++ * 40503u);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%08x.incomplete", x);
    return str3(blob, suffix, "");
}

/* Holding the blob's lock, any other partial of this blob is stale (its writer
 * died): the largest one (ours: <etag>.<hex>.incomplete, or huggingface_hub's
 * older <etag>.incomplete) becomes ours to resume; the rest are removed. */
static void adopt_stale_partials(const char *blobs_dir, const char *etag, const char *mine) {
    DIR *d = opendir(blobs_dir);
    if (!d) return;
    size_t elen = strlen(etag);
    char *best = NULL;
    long long best_size = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (strncmp(n, etag, elen) != 0 || n[elen] != '.' || len < 11 || strcmp(n + len - 11, ".incomplete") != 0)
            continue;
        char *p = str3(blobs_dir, "/", n);
        struct stat st;
        if (strcmp(p, mine) == 0 || stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        if ((long long)st.st_size > best_size) {
            if (best) unlink(best), free(best);
            best = p;
            best_size = (long long)st.st_size;
        } else {
            unlink(p);
            free(p);
        }
    }
    closedir(d);
    if (best) {
        if (rename(best, mine) != 0) unlink(best);
        free(best);
    }
}

/* ---- the transfer ---- */

typedef struct {
    const hub_fetch_ctx *ctx;
    const char *path;        /* the .incomplete file */
    int fd;
    long long have;          /* bytes in the file */
    long long base;          /* bytes present when this request started */
    long long expected;      /* -1 unknown */
    long long limit;         /* bytes the file may have: the announced size, else hub_unannounced_max() */
    bool over_limit;         /* the server sent more than limit */
    int write_errno;         /* set when a write failed */
    bool last_416;
    hub_hasher hash;         /* of the file's bytes [0, hash.hashed) */
    long long git_size;      /* for the git blob id; -1 when not checked */
    hub_file_progress fp;
} transfer;

static int truncate_to_zero(transfer *t) {
    if (ftruncate(t->fd, 0) != 0 || lseek(t->fd, 0, SEEK_SET) < 0) return -1;
    t->have = t->base = 0;
    hub_hasher_reset(&t->hash, t->git_size);
    return 0;
}

static int prepare(int attempt, http_request *rq, void *user) {
    transfer *t = user;
    if (t->last_416) { /* our partial does not fit the server's file: start over */
        if (truncate_to_zero(t) != 0) return gf_fail("%s: %s", t->path, strerror(errno));
        t->last_416 = false;
    }
    struct stat st;
    if (fstat(t->fd, &st) != 0) return gf_fail("%s: %s", t->path, strerror(errno));
    t->have = (long long)st.st_size;
    if ((t->expected >= 0 && t->have > t->expected) || t->have < t->hash.hashed) {
        if (truncate_to_zero(t) != 0) return gf_fail("%s: %s", t->path, strerror(errno));
    }
    if (lseek(t->fd, t->have, SEEK_SET) < 0) return gf_fail("%s: %s", t->path, strerror(errno));
    if (hub_hasher_catch_up(&t->hash, t->fd, t->have, t->path) != 0) return -1; /* a resumed partial */
    t->base = t->have;
    rq->range_from = t->have;
    hub_progress_update(t->ctx->progress, &t->fp, t->have, attempt == 0 ? HUB_EV_STARTED : HUB_EV_PROGRESS, NULL);
    return 0;
}

static int on_start(void *user, const http_response *rs) {
    transfer *t = user;
    /* a body announced larger than the file: refused before a byte is written */
    const long long from = rs->status == 206 && rs->range_start >= 0 ? rs->range_start : 0;
    if (rs->content_length > 0 && t->limit >= 0 && rs->content_length > t->limit - from) {
        t->over_limit = true;
        return -1;
    }
    if (rs->status == 200 && t->have > 0) { /* the server ignored Range: restart from byte 0 */
        if (truncate_to_zero(t) != 0) {
            t->write_errno = errno;
            return -1;
        }
        hub_progress_update(t->ctx->progress, &t->fp, 0, HUB_EV_PROGRESS, NULL);
    } else if (rs->status == 206 && rs->range_start != t->have) {
        gf_fail("%s: the server answered a different range (%lld, asked %lld)", t->fp.name, rs->range_start, t->have);
        t->last_416 = true;
        return -1;
    }
    return 0;
}

static size_t sink(const char *data, size_t n, void *user) {
    transfer *t = user;
    if (t->limit >= 0 && (long long)n > t->limit - t->have) { /* more than the file has: stop the transfer */
        t->over_limit = true;
        return 0;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(t->fd, data + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            t->write_errno = w < 0 ? errno : ENOSPC;
            return 0;
        }
        hub_hasher_update(&t->hash, data + off, (size_t)w);
        off += (size_t)w;
        t->have += w;
    }
    return n;
}

static void on_bytes(void *user, long long now) {
    transfer *t = user;
    hub_progress_update(t->ctx->progress, &t->fp, t->have, HUB_EV_PROGRESS, NULL);
}

/* ---- one file ---- */

static int head_file(const hub_fetch_ctx *ctx, const char *name, http_response *rs) {
    char *url = hub_url_resolve(ctx->endpoint, ctx->repo, ctx->commit, name);
    http_request rq = {.method = "HEAD", .url = url, .token = ctx->token,
                       .connect_timeout_s = hub_env_double("HF_HUB_ETAG_TIMEOUT", 10),
                       .stall_s = hub_env_double("HF_HUB_ETAG_TIMEOUT", 10), .cancel = ctx->cancel};
    int rc = http_with_retry(ctx->curl, &rq, rs, NULL, NULL);
    free(url);
    if (rc != 0) return gf_fail_prefix(name);
    if (rs->status != 200 && !(rs->status >= 300 && rs->status < 400))
        return hub_fail_status(rs, ctx->repo, ctx->commit, name, ctx->token != NULL);
    return 0;
}

/* An announced size must fit the cache's file system (a HEAD may announce
 * 1e18 bytes when the model info gives none): refused before a byte is written. */
static int announced_fits(const hub_fetch_ctx *ctx, const hub_sibling *f, long long expected) {
    struct statvfs vfs;
    if (expected <= 0 || statvfs(ctx->cache->storage, &vfs) != 0) return 0;
    const long long avail = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
    if (expected <= avail) return 0;
    return gf_fail("%s: the Hub announces %lld bytes, %.1f MB are free in %s; nothing was downloaded", f->name, expected,
                   avail / 1e6, ctx->cache->root);
}

static int download_blob(const hub_fetch_ctx *ctx, const hub_sibling *f, const char *blob, const char *etag,
                         long long expected, const char *want_sha, const char *want_git, transfer *t,
                         char sha256_out[65]) {
    if (announced_fits(ctx, f, expected) != 0) return -1;
    char *blobs_dir = str3(ctx->cache->storage, "/blobs", "");
    char *part = unique_incomplete(blob);
    adopt_stale_partials(blobs_dir, etag, part);
    free(blobs_dir);
    int rc = -1;
    bool discard = false;
    t->path = part;
    t->expected = expected;
    t->limit = expected >= 0 ? expected : hub_unannounced_max();
    t->fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (t->fd < 0) {
        gf_fail("cannot write %s: %s", part, strerror(errno));
        free(part);
        return -1;
    }
    t->git_size = want_git[0] ? expected : -1;
    hub_hasher_reset(&t->hash, t->git_size);
    struct stat st;
    bool complete = fstat(t->fd, &st) == 0 && expected >= 0 && (long long)st.st_size == expected;
    if (complete) {
        t->have = expected; /* a stale partial that was already whole: just verify it */
    } else {
        char *url = hub_url_resolve(ctx->endpoint, ctx->repo, ctx->commit, f->name);
        http_request rq = {.method = "GET", .url = url, .token = ctx->token,
                           .connect_timeout_s = hub_env_double("HF_HUB_ETAG_TIMEOUT", 10),
                           .stall_s = hub_env_double("HF_HUB_DOWNLOAD_TIMEOUT", 10),
                           .sink = sink, .sink_user = t, .on_start = on_start,
                           .on_bytes = on_bytes, .on_bytes_user = t, .cancel = ctx->cancel};
        http_response *rs = gf_calloc(1, sizeof *rs);
        int hr;
        for (;;) {
            hr = http_with_retry(ctx->curl, &rq, rs, prepare, t);
            if (hr == 0 && rs->status == 416 && !t->last_416 && t->have > 0) {
                t->last_416 = true; /* our partial is longer than the file: once more from 0 */
                continue;
            }
            break;
        }
        free(url);
        if (t->over_limit) {
            if (expected >= 0)
                gf_fail("%s: the server sent (or announced) more than the %lld bytes the Hub gives as its size; the "
                        "partial download was removed", f->name, expected);
            else
                gf_fail("%s: no size was announced and the server sent more than %lld bytes (GRAFT_HUB_MAX_UNANNOUNCED);"
                        " the partial download was removed", f->name, t->limit);
            discard = true;
        } else if (t->write_errno) {
            gf_fail("%s: cannot write %s: %s%s", f->name, part, strerror(t->write_errno),
                    t->write_errno == ENOSPC ? " (disk full; the partial download was removed)" : "");
            discard = true;
        } else if (hr != 0) {
            gf_fail_prefix(f->name);
        } else if (rs->status != 200 && rs->status != 206) {
            hub_fail_status(rs, ctx->repo, ctx->commit, f->name, ctx->token != NULL);
        } else {
            complete = true;
        }
        free(rs);
    }
    if (complete && fsync(t->fd) != 0) {
        gf_fail("%s: cannot write %s: %s", f->name, part, strerror(errno));
        complete = false;
        discard = true;
    }
    if (complete && fstat(t->fd, &st) == 0 && expected >= 0 && (long long)st.st_size != expected) {
        gf_fail("%s: got %lld bytes, expected %lld; the download was discarded", f->name, (long long)st.st_size,
                expected);
        complete = false;
        discard = true;
    }
    /* a stale partial that was already whole is hashed here, from disk */
    if (complete && hub_hasher_catch_up(&t->hash, t->fd, expected >= 0 ? expected : t->have, part) != 0)
        complete = false;
    close(t->fd);
    t->fd = -1;
    if (complete && hub_hasher_check(&t->hash, f->name, want_sha, want_git, sha256_out) != 0) {
        complete = false;
        discard = true;
    }
    if (complete) {
        chmod(part, 0644);
        if (rename(part, blob) != 0) {
            gf_fail("cannot rename %s: %s", part, strerror(errno));
            discard = true;
        } else {
            rc = 0;
        }
    }
    if (rc != 0 && discard) unlink(part);
    free(part);
    return rc;
}

/* Reports the current error as the file's ERROR event; returns -1. */
static int fail_event(const hub_fetch_ctx *ctx, hub_file_progress *fp) {
    hub_progress_update(ctx->progress, fp, fp->done, HUB_EV_ERROR, gf_last_error());
    return -1;
}

int hub_fetch_file(const hub_fetch_ctx *ctx, const hub_sibling *f, hub_file_result *out) {
    memset(out, 0, sizeof *out);
    out->name = gf_strdup(f->name);
    out->size = f->size;
    transfer t = {.ctx = ctx, .fd = -1, .fp = {.name = f->name, .done = 0, .total = f->size}};
    if (f->lfs) memcpy(out->sha256, f->sha256, 65);

    if (hub_cache_has(ctx->cache, ctx->commit, f->name)) { /* linked earlier: verified then */
        char *ptr = hub_cache_snapshot(ctx->cache, ctx->commit, f->name);
        struct stat st;
        if (stat(ptr, &st) == 0) out->size = t.fp.total = (long long)st.st_size;
        int rc = f->lfs ? 0 : sha256_file_hex(ptr, out->sha256);
        free(ptr);
        if (rc != 0) return fail_event(ctx, &t.fp);
        hub_progress_update(ctx->progress, &t.fp, t.fp.total, HUB_EV_DONE, NULL);
        return 0;
    }

    http_response *rs = gf_calloc(1, sizeof *rs);
    if (head_file(ctx, f->name, rs) != 0) {
        free(rs);
        return fail_event(ctx, &t.fp);
    }
    char etag[160];
    snprintf(etag, sizeof etag, "%s", rs->linked_etag[0] ? rs->linked_etag : rs->etag);
    long long expected = rs->linked_etag[0] ? rs->linked_size : (rs->status == 200 ? rs->content_length : -1);
    if (f->size >= 0) expected = f->size; /* the model info is authoritative; HEAD may omit sizes */
    if (rs->repo_commit[0] && strcmp(rs->repo_commit, ctx->commit) != 0) {
        gf_fail("%s: the Hub served commit %.12s for %.12s", f->name, rs->repo_commit, ctx->commit);
        free(rs);
        return fail_event(ctx, &t.fp);
    }
    free(rs);
    if (!etag[0] || strchr(etag, '/') || strstr(etag, "..")) {
        gf_fail("%s: the Hub sent no usable ETag", f->name);
        return fail_event(ctx, &t.fp);
    }
    /* An LFS file's etag is its sha256; the model info states it too. */
    char want_sha[65] = "";
    if (f->lfs) {
        memcpy(want_sha, f->sha256, 65);
        if (strcmp(etag, f->sha256) != 0) {
            gf_fail("%s: ETag %.12s... differs from the model info's sha256 %.12s...", f->name, etag, f->sha256);
            return fail_event(ctx, &t.fp);
        }
    } else if (strlen(etag) == 64 && !f->blob_id[0]) {
        memcpy(want_sha, etag, 65); /* the model info did not say; a 64-hex linked etag is the sha256 */
    }
    char want_git[41] = "";
    if (!want_sha[0] && expected >= 0 && hub_is_commit_hash(etag)) memcpy(want_git, etag, 41); /* the git blob id */
    t.fp.total = expected;
    out->size = expected;

    char *blob = hub_cache_blob(ctx->cache, etag);
    char *lock_path = hub_cache_lock(ctx->cache, etag);
    int rc = -1;
    int lock_fd = -1;
    if (hub_mkdirs_parent(blob) != 0) goto out;
    lock_fd = lock_blob(lock_path, ctx->cancel);
    if (lock_fd < 0) goto out;
    struct stat st;
    if (stat(blob, &st) == 0) { /* another revision or process brought it already */
        rc = 0;
    } else {
        rc = download_blob(ctx, f, blob, etag, expected, want_sha, want_git, &t, out->sha256);
    }
    if (rc == 0 && !out->sha256[0] && sha256_file_hex(blob, out->sha256) != 0) rc = -1; /* blob was there */
    if (rc == 0) {
        hub_progress_update(ctx->progress, &t.fp, expected >= 0 ? expected : t.have, HUB_EV_VERIFIED, NULL);
        rc = hub_cache_link(ctx->cache, ctx->commit, f->name, etag);
    }
out:
    hub_hasher_free(&t.hash);
    if (lock_fd >= 0) close(lock_fd);
    if (rc == 0) {
        hub_progress_update(ctx->progress, &t.fp, t.fp.done, HUB_EV_DONE, NULL);
    } else {
        fail_event(ctx, &t.fp);
    }
    free(blob);
    free(lock_path);
    return rc;
}
