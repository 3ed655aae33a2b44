/* One HTTP exchange with the Hub over libcurl, and the retry policy.
 *
 * Redirects are followed by hand so the Authorization header goes only to the
 * host it was meant for: a Location on another scheme/host/port (the LFS CDN)
 * is requested without it. HEAD follows same-host redirects only (renamed
 * repos), as huggingface_hub does; the Hub's 302 to the CDN carries the
 * headers we want (X-Linked-Etag, X-Repo-Commit). */
#ifndef GRAFT_HUB_HTTP_H
#define GRAFT_HUB_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    long status;              /* of the last response; 0 when none came */
    long long content_length; /* -1 when absent */
    long long range_start;    /* from Content-Range; -1 when absent */
    long long linked_size;    /* X-Linked-Size; -1 when absent */
    long retry_after_s;       /* -1 when absent */
    char etag[160];           /* quotes and W/ stripped */
    char linked_etag[160];    /* X-Linked-Etag, same treatment */
    char repo_commit[64];     /* X-Repo-Commit */
    char location[2048];
    char error_code[64];      /* X-Error-Code (RepoNotFound, GatedRepo, RevisionNotFound, EntryNotFound) */
    char error_message[256];  /* X-Error-Message */
    char error_body[512];     /* start of an error response's body */
    int curl_code;            /* CURLcode of the transfer */
    char curl_error[256];
    char url[2048];           /* the URL of the last request */
    int redirects;            /* followed */
    bool auth_dropped;        /* a redirect left the token behind */
} http_response;

/* Receives body bytes of a 200/206 answer; returns n to continue, anything else aborts. */
typedef size_t (*http_sink)(const char *data, size_t n, void *user);

typedef struct http_request {
    const char *method;       /* "GET" or "HEAD" */
    const char *url;
    const char *token;        /* sent as Authorization: Bearer to the first host only */
    long long range_from;     /* > 0: ask for bytes=range_from- */
    double connect_timeout_s; /* also the whole-request limit of HEAD and API calls */
    double stall_s;           /* abandon a transfer after this long below 1 byte/s */
    http_sink sink;
    void *sink_user;
    /* Called once per 200/206 response before its first body byte is sunk
     * (and after the transfer for an empty body); non-zero aborts. */
    int (*on_start)(void *user, const http_response *rs);
    /* Called during transfers with bytes received so far in this request. */
    void (*on_bytes)(void *user, long long now);
    void *on_bytes_user;
    atomic_int *cancel;     /* non-zero: abort as soon as possible */
} http_request;

/* One request (plus redirects). 0 when a response arrived, whatever its
 * status; -1 with rs->curl_code/curl_error (and gf error) when the transfer failed. */
int http_perform(void *curl, const http_request *rq, http_response *rs);

/* Called before each attempt (0..): reset buffers, set rq->range_from. Non-zero stops. */
typedef int (*http_prepare)(int attempt, http_request *rq, void *user);

/* http_perform with retries on 408/429/5xx, timeouts, dropped connections and
 * refused connections; exponential backoff (GRAFT_HUB_RETRY_BASE_MS, doubling,
 * 16 s cap) or Retry-After seconds; at most GRAFT_HUB_MAX_RETRIES retries.
 * 0 when a non-retryable response arrived (caller checks rs->status), -1 with
 * a one-line error otherwise (cancelled, unreachable, retries exhausted). */
int http_with_retry(void *curl, http_request *rq, http_response *rs, http_prepare prep, void *user);

/* "W/\"abc\"" -> "abc" in place. */
void http_normalize_etag(char *etag);

/* Process-wide libcurl setup; safe to call more than once. */
void http_global_init(void);

#endif
