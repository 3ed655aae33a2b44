/* hub_download: model info -> file selection -> free-space check -> parallel fetches. */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "hub/cache.h"
#include "hub/env.h"
#include "hub/fetch.h"
#include "hub/http.h"
#include "hub/hub.h"
#include "hub/model_info.h"
#include "hub/progress.h"
#include "hub/repo_ref.h"

void hub_result_free(hub_result *r) {
    for (int i = 0; i < r->n_files; i++) free(r->files[i].name);
    free(r->files);
    free(r->path);
    memset(r, 0, sizeof *r);
}

static bool selected(const hub_request *req, const char *name) {
    if (req->n_include > 0 && hub_glob_any(req->include, req->n_include, name)) return true;
    if (req->path && req->path[0])
        return !strcmp(name, req->path) || hub_is_tokenizer_beside(name, req->path);
    return req->n_include == 0 && hub_is_model_file(name);
}

static bool file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Bytes still to fetch must fit on the cache's file system. */
static int check_free_space(const hub_cache *c, const char *commit, const hub_model_info *mi, const int *sel, int n) {
    long long need = 0;
    for (int i = 0; i < n; i++) {
        const hub_sibling *f = &mi->files[sel[i]];
        if (f->size <= 0 || hub_cache_has(c, commit, f->name)) continue;
        if (f->lfs) {
            char *blob = hub_cache_blob(c, f->sha256);
            bool have = file_exists(blob);
            free(blob);
            if (have) continue;
        }
        need += f->size;
    }
    struct statvfs vfs;
    if (need == 0 || statvfs(c->storage, &vfs) != 0) return 0;
    long long avail = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
    if (avail < need)
        return gf_fail("not enough disk space in %s: %.1f MB to download, %.1f MB free", c->root, need / 1e6, avail / 1e6);
    return 0;
}

typedef struct {
    hub_fetch_ctx base;
    const hub_model_info *mi;
    const int *sel;
    int n_sel;
    atomic_int next;
    hub_file_result *results;
    char (*errors)[512]; /* per selected file; "" when it went fine */
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    hub_fetch_ctx ctx = p->base;
    ctx.curl = curl_easy_init();
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n_sel) break;
        if (!ctx.curl) {
            snprintf(p->errors[i], 512, "cannot start libcurl");
            continue;
        }
        if (hub_fetch_file(&ctx, &p->mi->files[p->sel[i]], &p->results[i]) != 0)
            snprintf(p->errors[i], 512, "%s", gf_last_error());
    }
    if (ctx.curl) curl_easy_cleanup(ctx.curl);
    return NULL;
}

/* A snapshot this run began and could not finish: its empty folders go
 * (bottom up); links to verified blobs stay, and the snapshot is marked
 * incomplete (incomplete_marker) so that an offline run refuses it instead
 * of loading half a model. Nothing is followed out of the snapshot. */
static void remove_empty_dirs(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = gf_malloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_empty_dirs(p);
        free(p);
    }
    closedir(d);
    rmdir(dir); /* fails, as it should, when something is left inside */
}

/* $HF_HUB_CACHE/.locks/models--ORG--NAME/<commit>.incomplete: huggingface_hub
 * skips .locks when it scans the cache, so the mark does not disturb it. */
static char *incomplete_marker(const hub_cache *c, const char *commit) {
    size_t n = strlen(c->locks) + strlen(commit) + sizeof "/.incomplete";
    char *p = gf_malloc(n);
    snprintf(p, n, "%s/%s.incomplete", c->locks, commit);
    return p;
}

/* Offline: the snapshot a revision names, and the requested file, must be in the cache. */
static int from_cache(const hub_request *req, const hub_cache *c, const char *rev, hub_result *out) {
    char commit[41];
    const char *what = req->path && req->path[0] ? req->path : NULL;
    if (hub_cache_commit_for(c, rev, commit) != 0) goto missing;
    char *dir = hub_cache_snapshot(c, commit, NULL);
    if (!file_exists(dir)) {
        free(dir);
        goto missing;
    }
    if (what && !hub_cache_has(c, commit, what)) {
        free(dir);
        goto missing;
    }
    char *mark = incomplete_marker(c, commit);
    const bool incomplete = !what && file_exists(mark);
    free(mark);
    if (incomplete) {
        free(dir);
        return gf_fail("%s@%s: the cached snapshot %s is incomplete (an interrupted download); run graft download %s "
                       "with the network", req->repo, rev, commit, req->repo);
    }
    out->path = dir;
    memcpy(out->commit, commit, 41);
    return 0;
missing:
    return gf_fail("%s@%s%s%s is not in the cache (%s) and HF_HUB_OFFLINE is set", req->repo, rev, what ? ":" : "",
                   what ? what : "", c->root);
}

int hub_download(const hub_request *req, const hub_callbacks *cb, hub_result *out) {
    memset(out, 0, sizeof *out);
    const char *rev = req->revision && req->revision[0] ? req->revision : "main";
    char *root = hub_cache_dir();
    hub_cache cache;
    hub_cache_init(&cache, root, req->repo);
    free(root);
    hub_progress prog;
    hub_progress_init(&prog, cb, 0, 0);
    int rc = -1;
    hub_model_info mi = {0};
    int *sel = NULL;
    pool p = {0};
    char *endpoint = NULL, *token = NULL;
    if (hub_offline()) {
        rc = from_cache(req, &cache, rev, out);
        goto done;
    }
    http_global_init();
    endpoint = hub_endpoint();
    token = hub_token();
    atomic_int *cancel = cb ? cb->cancel : NULL;
    CURL *curl = curl_easy_init();
    if (!curl) {
        gf_fail("cannot start libcurl");
        goto done;
    }
    int mrc = hub_fetch_model_info(curl, endpoint, req->repo, rev, token, cancel, &mi);
    curl_easy_cleanup(curl);
    if (mrc != 0) goto done;

    sel = gf_calloc((size_t)(mi.n_files + 1), sizeof *sel);
    int n = 0;
    long long total = 0;
    for (int i = 0; i < mi.n_files; i++)
        if (selected(req, mi.files[i].name)) {
            sel[n++] = i;
            total += mi.files[i].size > 0 ? mi.files[i].size : 0;
        }
    if (req->path && req->path[0] && !hub_model_info_find(&mi, req->path)) {
        gf_fail("%s@%s: no file '%s' in the repo", req->repo, rev, req->path);
        goto done;
    }
    if (n == 0) {
        gf_fail(req->n_include ? "%s@%s: no file matches the --include patterns"
                               : "%s@%s: no Hugging Face model files (config.json, *.safetensors); "
                                 "name a file with REPO:PATH or use --include GLOB",
                req->repo, rev);
        goto done;
    }
    if (hub_mkdirs(cache.storage) != 0) goto done;
    if (hub_cache_write_ref(&cache, rev, mi.sha) != 0) goto done;
    if (check_free_space(&cache, mi.sha, &mi, sel, n) != 0) goto done;

    char *snapshot = hub_cache_snapshot(&cache, mi.sha, NULL);
    const bool new_snapshot = !file_exists(snapshot); /* removed again if this run fails */
    prog.total_total = total;
    prog.files_total = n;
    p.base = (hub_fetch_ctx){.cache = &cache, .endpoint = endpoint, .repo = req->repo, .commit = mi.sha,
                             .token = token, .cancel = cancel, .progress = &prog};
    p.mi = &mi;
    p.sel = sel;
    p.n_sel = n;
    atomic_init(&p.next, 0);
    p.results = gf_calloc((size_t)n, sizeof *p.results);
    p.errors = gf_calloc((size_t)n, sizeof *p.errors);
    int jobs = (int)hub_env_double("GRAFT_HUB_JOBS", 4);
    if (jobs < 1) jobs = 1;
    if (jobs > n) jobs = n;
    pthread_t th[16];
    if (jobs > 16) jobs = 16;
    int started = 0;
    for (int i = 0; i < jobs; i++)
        if (pthread_create(&th[i], NULL, worker, &p) == 0) started++;
    if (started == 0) worker(&p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);

    int failed = 0;
    for (int i = 0; i < n; i++)
        if (p.errors[i][0] && failed++ == 0) gf_fail("%s", p.errors[i]);
    if (failed > 1) {
        char first[600];
        snprintf(first, sizeof first, "%s", gf_last_error());
        gf_fail("%s (and %d more files failed)", first, failed - 1);
    }
    char *mark = incomplete_marker(&cache, mi.sha);
    if (failed && new_snapshot) { /* no half folder that looks whole */
        remove_empty_dirs(snapshot);
        if (file_exists(snapshot) && hub_mkdirs(cache.locks) == 0) {
            char first[600];
            snprintf(first, sizeof first, "%s", gf_last_error());
            (void)atomic_write(mark, "incomplete\n", 11); /* best effort: the error below is the news */
            gf_fail("%s", first);
        }
    } else if (!failed) {
        unlink(mark); /* whole now */
    }
    free(mark);
    free(snapshot);
    if (failed) goto done;
    out->path = hub_cache_snapshot(&cache, mi.sha, NULL);
    memcpy(out->commit, mi.sha, 41);
    out->files = p.results;
    out->n_files = n;
    p.results = NULL;
    rc = 0;
done:
    if (rc == 0) {
        hub_progress_final(&prog, HUB_EV_DONE, NULL);
    } else {
        hub_progress_final(&prog, HUB_EV_ERROR, gf_last_error());
    }
    if (p.results)
        for (int i = 0; i < p.n_sel; i++) free(p.results[i].name);
    free(p.results);
    free(p.errors);
    free(sel);
    hub_model_info_free(&mi);
    hub_progress_destroy(&prog);
    hub_cache_free(&cache);
    free(endpoint);
    free(token);
    return rc;
}
