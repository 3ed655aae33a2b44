#include "hub/http.h"

#include <curl/curl.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "hub/env.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }
void http_global_init(void) { pthread_once(&global_once, global_init_once); }

void http_normalize_etag(char *e) {
    char *s = e;
    if (s[0] == 'W' && s[1] == '/') s += 2;
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    memmove(e, s, n);
    e[n] = 0;
}

typedef struct {
    const http_request *rq;
    http_response *rs;
    size_t err_len;
    bool sink_failed;
    bool started;
    bool stalled;          /* no byte for stall_s: aborted, reported as a timeout */
    long long last_now;    /* bytes at the last change */
    double last_change;    /* monotonic seconds */
} xfer;

static void copy_value(char *dst, size_t cap, const char *v, size_t n) {
    while (n > 0 && isspace((unsigned char)*v)) v++, n--;
    while (n > 0 && isspace((unsigned char)v[n - 1])) n--;
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static bool is_header(const char *line, size_t n, const char *name, const char **value, size_t *vlen) {
    size_t k = strlen(name);
    if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0) return false;
    *value = line + k + 1;
    *vlen = n - k - 1;
    return true;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *user) {
    xfer *x = user;
    http_response *rs = x->rs;
    size_t n = size * nitems;
    const char *v;
    size_t vn;
    char tmp[64];
    if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* a new response (e.g. after "100 Continue"): forget the previous one's headers */
        const char *sp = memchr(line, ' ', n);
        rs->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        rs->content_length = rs->range_start = rs->linked_size = -1;
        rs->retry_after_s = -1;
        rs->etag[0] = rs->linked_etag[0] = rs->repo_commit[0] = rs->location[0] = 0;
        rs->error_code[0] = rs->error_message[0] = rs->error_body[0] = 0;
        x->err_len = 0;
        x->started = false;
    } else if (is_header(line, n, "Content-Length", &v, &vn)) {
        copy_value(tmp, sizeof tmp, v, vn);
        rs->content_length = strtoll(tmp, NULL, 10);
    } else if (is_header(line, n, "Content-Range", &v, &vn)) {
        copy_value(tmp, sizeof tmp, v, vn);
        long long a;
        if (sscanf(tmp, "bytes %lld-", &a) == 1) rs->range_start = a;
    } else if (is_header(line, n, "X-Linked-Size", &v, &vn)) {
        copy_value(tmp, sizeof tmp, v, vn);
        rs->linked_size = strtoll(tmp, NULL, 10);
    } else if (is_header(line, n, "Retry-After", &v, &vn)) {
        copy_value(tmp, sizeof tmp, v, vn);
        char *end;
        long s = strtol(tmp, &end, 10);
        if (end != tmp && *end == 0 && s >= 0) rs->retry_after_s = s; /* HTTP dates are not supported */
    } else if (is_header(line, n, "ETag", &v, &vn)) {
        copy_value(rs->etag, sizeof rs->etag, v, vn);
        http_normalize_etag(rs->etag);
    } else if (is_header(line, n, "X-Linked-Etag", &v, &vn)) {
        copy_value(rs->linked_etag, sizeof rs->linked_etag, v, vn);
        http_normalize_etag(rs->linked_etag);
    } else if (is_header(line, n, "X-Repo-Commit", &v, &vn)) {
        copy_value(rs->repo_commit, sizeof rs->repo_commit, v, vn);
    } else if (is_header(line, n, "Location", &v, &vn)) {
        copy_value(rs->location, sizeof rs->location, v, vn);
    } else if (is_header(line, n, "X-Error-Code", &v, &vn)) {
        copy_value(rs->error_code, sizeof rs->error_code, v, vn);
    } else if (is_header(line, n, "X-Error-Message", &v, &vn)) {
        copy_value(rs->error_message, sizeof rs->error_message, v, vn);
    }
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user) {
    xfer *x = user;
    size_t n = size * nmemb;
    long st = x->rs->status;
    if (st == 200 || st == 206) {
        if (!x->started) {
            x->started = true;
            if (x->rq->on_start && x->rq->on_start(x->rq->sink_user, x->rs) != 0) {
                x->sink_failed = true;
                return 0;
            }
        }
        if (!x->rq->sink) return n;
        size_t got = x->rq->sink(data, n, x->rq->sink_user);
        if (got != n) x->sink_failed = true;
        return got;
    }
    /* keep the start of an error page for the message; drop redirect bodies */
    size_t room = sizeof x->rs->error_body - 1 - x->err_len;
    size_t k = n < room ? n : room;
    memcpy(x->rs->error_body + x->err_len, data, k);
    x->err_len += k;
    x->rs->error_body[x->err_len] = 0;
    return n;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    xfer *x = user;
    if (x->rq->cancel && *x->rq->cancel) return 1;
    /* curl's own low-speed check averages over several seconds; a stall is
     * simpler to see here: no new byte for stall_s seconds */
    double t = clock_now_s();
    if ((long long)dlnow != x->last_now || x->last_change == 0) {
        x->last_now = (long long)dlnow;
        x->last_change = t;
    } else if (x->rq->stall_s > 0 && t - x->last_change > x->rq->stall_s) {
        x->stalled = true;
        return 1;
    }
    if (x->rq->on_bytes && (x->rs->status == 200 || x->rs->status == 206))
        x->rq->on_bytes(x->rq->on_bytes_user, (long long)dlnow);
    return 0;
}

/* scheme://host:port of a URL, for deciding whether a redirect leaves the host. */
static void origin_of(const char *url, char *out, size_t cap) {
    out[0] = 0;
    CURLU *u = curl_url();
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
        char *scheme = NULL, *host = NULL, *port = NULL;
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
        curl_url_get(u, CURLUPART_HOST, &host, 0);
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
        snprintf(out, cap, "%s://%s:%s", scheme ? scheme : "", host ? host : "", port ? port : "");
        for (char *p = out; *p; p++) *p = (char)tolower((unsigned char)*p);
        curl_free(scheme);
        curl_free(host);
        curl_free(port);
    }
    curl_url_cleanup(u);
}

/* Resolves a (possibly relative) Location against base; NULL when unusable. */
static char *resolve_location(const char *base, const char *loc) {
    CURLU *u = curl_url();
    char *out = NULL;
    if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_URL, loc, 0) == CURLUE_OK) {
        char *s = NULL;
        if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) out = gf_strdup(s);
        curl_free(s);
    }
    curl_url_cleanup(u);
    return out;
}

static bool is_redirect(long st) { return st == 301 || st == 302 || st == 303 || st == 307 || st == 308; }

int http_perform(void *curl, const http_request *rq, http_response *rs) {
    CURL *h = curl;
    memset(rs, 0, sizeof *rs);
    char *url = gf_strdup(rq->url);
    char first_origin[512];
    origin_of(rq->url, first_origin, sizeof first_origin);
    bool head = strcmp(rq->method, "HEAD") == 0;
    int rc = 0;
    for (int hop = 0;; hop++) {
        char origin[512];
        origin_of(url, origin, sizeof origin);
        bool same_host = strcmp(origin, first_origin) == 0;
        struct curl_slist *hdrs = NULL;
        char line[4200];
        if (rq->token && same_host) {
            snprintf(line, sizeof line, "Authorization: Bearer %s", rq->token);
            hdrs = curl_slist_append(hdrs, line);
        }
        if (!same_host) rs->auth_dropped = rq->token != NULL;
        hdrs = curl_slist_append(hdrs, "Accept-Encoding: identity");
        curl_easy_reset(h);
        xfer x = {.rq = rq, .rs = rs};
        snprintf(rs->url, sizeof rs->url, "%s", url);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "graft/0.1 (huggingface_hub-compatible)");
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
        long connect_ms = (long)(rq->connect_timeout_s * 1000);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms > 0 ? connect_ms : 10000L);
        if (rq->stall_s > 0) {
            curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
            curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)(rq->stall_s + 0.999));
        }
        char errbuf[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
        if (head) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        char range[64];
        if (!head && rq->range_from > 0) {
            snprintf(range, sizeof range, "%lld-", rq->range_from);
            curl_easy_setopt(h, CURLOPT_RANGE, range);
        }
        CURLcode cc = curl_easy_perform(h);
        curl_slist_free_all(hdrs);
        if (cc == CURLE_OK && !head && !x.started && (rs->status == 200 || rs->status == 206) && rq->on_start &&
            rq->on_start(rq->sink_user, rs) != 0) {
            rs->curl_code = CURLE_WRITE_ERROR;
            rs->curl_error[0] = 0;
            rc = -1;
            break;
        }
        rs->curl_code = (int)cc;
        if (cc == CURLE_ABORTED_BY_CALLBACK && x.stalled) {
            rs->curl_code = CURLE_OPERATION_TIMEDOUT;
            snprintf(errbuf, sizeof errbuf, "no data for %g s", rq->stall_s);
        }
        if (cc != CURLE_OK) {
            snprintf(rs->curl_error, sizeof rs->curl_error, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
            size_t n = strlen(rs->curl_error);
            while (n > 0 && rs->curl_error[n - 1] == '\n') rs->curl_error[--n] = 0;
            if (x.sink_failed) rs->curl_error[0] = 0; /* the sink recorded its own error */
            rc = -1;
            break;
        }
        if (!is_redirect(rs->status) || !rs->location[0] || hop >= 10) break;
        char *next = resolve_location(url, rs->location);
        if (!next) break;
        char next_origin[512];
        origin_of(next, next_origin, sizeof next_origin);
        if (head && strcmp(next_origin, first_origin) != 0) {
            free(next); /* HEAD keeps the Hub's answer: its headers name the blob */
            break;
        }
        free(url);
        url = next;
        rs->redirects++;
    }
    free(url);
    return rc;
}

static bool retryable_status(long st) { return st == 408 || st == 429 || st == 500 || st == 502 || st == 503 || st == 504; }

static bool retryable_curl(int cc) {
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR: return true;
    default: return false;
    }
}

static void sleep_ms_cancellable(long ms, atomic_int *cancel) {
    while (ms > 0 && !(cancel && *cancel)) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {step / 1000, (step % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static int fail_transport(const http_request *rq, const http_response *rs, int attempts) {
    char origin[512];
    origin_of(rs->url[0] ? rs->url : rq->url, origin, sizeof origin);
    switch (rs->curl_code) {
    case CURLE_ABORTED_BY_CALLBACK: return gf_fail("download cancelled");
    case CURLE_COULDNT_RESOLVE_HOST:
        return gf_fail("cannot resolve the host of %s (no network? HF_HUB_OFFLINE=1 uses the cache only)", origin);
    case CURLE_COULDNT_CONNECT:
        return gf_fail("cannot connect to %s after %d attempts: %s (no network? HF_HUB_OFFLINE=1 uses the cache only)",
                       origin, attempts, rs->curl_error);
    case CURLE_OPERATION_TIMEDOUT:
        return gf_fail("%s: timed out after %d attempts (%s)", rs->url, attempts, rs->curl_error);
    default:
        if (!rs->curl_error[0]) return -1; /* the sink's own error (disk full...) is already set */
        return gf_fail("%s: %s (after %d attempts)", rs->url, rs->curl_error, attempts);
    }
}

int http_with_retry(void *curl, http_request *rq, http_response *rs, http_prepare prep, void *user) {
    int max_retries = (int)hub_env_double("GRAFT_HUB_MAX_RETRIES", 5);
    double base_ms = hub_env_double("GRAFT_HUB_RETRY_BASE_MS", 1000);
    for (int attempt = 0;; attempt++) {
        if (rq->cancel && *rq->cancel) return gf_fail("download cancelled");
        if (prep && prep(attempt, rq, user) != 0) return -1;
        int rc = http_perform(curl, rq, rs);
        bool retry;
        if (rc != 0) {
            retry = retryable_curl(rs->curl_code) && !(rq->cancel && *rq->cancel);
            /* a refused connection rarely heals in seconds: retry it twice at most */
            int limit = rs->curl_code == CURLE_COULDNT_CONNECT && max_retries > 2 ? 2 : max_retries;
            if (!retry || attempt >= limit) return fail_transport(rq, rs, attempt + 1);
        } else {
            retry = retryable_status(rs->status);
            if (!retry) return 0;
            if (attempt >= max_retries) return 0; /* the caller reports the status */
        }
        double delay = base_ms * (double)(1L << (attempt < 14 ? attempt : 14));
        if (delay > 16000) delay = 16000;
        if (rc == 0 && rs->retry_after_s >= 0) delay = 1000.0 * (rs->retry_after_s < 300 ? rs->retry_after_s : 300);
        sleep_ms_cancellable((long)delay, rq->cancel);
    }
}
