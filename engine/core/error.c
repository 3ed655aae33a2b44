#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

int gf_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    /* keep it to one line */
    for (char *p = last_error; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

int gf_fail_prefix(const char *prefix) {
    char tmp[2 * sizeof last_error];
    snprintf(tmp, sizeof tmp, "%s: %s", prefix, last_error);
    size_t n = strlen(tmp);
    if (n >= sizeof last_error) n = sizeof last_error - 1;
    memcpy(last_error, tmp, n);
    last_error[n] = 0;
    return -1;
}

const char *gf_last_error(void) { return last_error[0] ? last_error : "unknown error"; }
void gf_clear_error(void) { last_error[0] = 0; }

void gf_assert_failed(const char *expr, const char *file, int line) {
    fprintf(stderr, "graft: internal error: %s:%d: assertion '%s' failed\n", file, line, expr);
    abort();
}

static void oom(size_t n) {
    fprintf(stderr, "graft: out of memory allocating %zu bytes\n", n);
    exit(3);
}

void *gf_try_malloc(size_t n, const char *what) {
    void *p = malloc(n ? n : 1);
    if (!p) gf_fail("out of memory: %.2f GiB asked for %s", (double)n / (1024.0 * 1024.0 * 1024.0), what);
    return p;
}

void *gf_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}
void *gf_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}
void *gf_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}
char *gf_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = gf_malloc(n);
    memcpy(p, s, n);
    return p;
}
