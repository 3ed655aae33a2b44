/* One-line error reporting shared by every engine module.
 *
 * Functions that can fail return 0 on success and -1 on failure after calling
 * gf_fail(), which records a single human-readable line ("file.bin: header
 * length 912 exceeds file size 64"). The front end prints gf_last_error().
 * The message is thread-local, so jobs on worker threads do not race. */
#ifndef GRAFT_CORE_ERROR_H
#define GRAFT_CORE_ERROR_H

#include <stddef.h>

#if defined(__GNUC__)
#define GF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GF_PRINTF(a, b)
#endif

/* Records the message and returns -1, so callers can `return gf_fail(...)`. */
int gf_fail(const char *fmt, ...) GF_PRINTF(1, 2);
const char *gf_last_error(void);
void gf_clear_error(void);

/* Prefixes the current error with "prefix: " (for adding file names). */
int gf_fail_prefix(const char *prefix);

/* Internal invariant; on failure prints file:line and aborts. Not for input errors. */
#define GF_ASSERT(cond)                                                          \
    do {                                                                         \
        if (!(cond)) gf_assert_failed(#cond, __FILE__, __LINE__);                \
    } while (0)
void gf_assert_failed(const char *expr, const char *file, int line);

/* Allocation that fails like any other error: NULL with "out of memory: X GiB
 * asked for WHAT" in gf_last_error() (for the large host buffers: captures,
 * downloads, loader scratch; a job reports it, nothing exits). */
void *gf_try_malloc(size_t n, const char *what);

/* Allocation that exits with a clear message on out-of-memory (small,
 * bookkeeping-sized buffers only). */
void *gf_malloc(size_t n);
void *gf_calloc(size_t n, size_t size);
void *gf_realloc(void *p, size_t n);
char *gf_strdup(const char *s);

#endif
