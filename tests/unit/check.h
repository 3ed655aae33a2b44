/* The one tolerance check for numeric comparisons in the unit tests.
 *
 * Every comparison goes through check_close / check_err: they FAIL on NaN or
 * Inf on either side (a plain `err > tol` lets NaN through, fmax() drops a NaN
 * argument, and cmocka's assert_float_equal casts to float), print what was
 * compared with the tolerance, and take the tolerance as atol + rtol * |want|.
 * Include after <cmocka.h>. */
#ifndef GRAFT_TESTS_CHECK_H
#define GRAFT_TESTS_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* true when got and want are finite and |got - want| <= atol + rtol |want|. */
static inline bool close_enough(double got, double want, double atol, double rtol) {
    return isfinite(got) && isfinite(want) && fabs(got - want) <= atol + rtol * fabs(want);
}

#define check_close(got, want, atol, rtol)                                                                \
    do {                                                                                                  \
        const double got_ = (got), want_ = (want);                                                       \
        if (!close_enough(got_, want_, (atol), (rtol))) {                                                \
            print_error("%s:%d: %s = %.10g, want %s = %.10g (atol %g, rtol %g)\n", __FILE__, __LINE__, #got, \
                        got_, #want, want_, (double)(atol), (double)(rtol));                             \
            fail();                                                                                       \
        }                                                                                                 \
    } while (0)

/* An error measure (max |a - b|, a relative error, ...) must be finite and <= tol. */
#define check_err(err, tol)                                                                               \
    do {                                                                                                  \
        const double err_ = (err);                                                                        \
        if (!(isfinite(err_) && err_ <= (tol))) {                                                         \
            print_error("%s:%d: %s = %.4g exceeds %g (or is not finite)\n", __FILE__, __LINE__, #err, err_, \
                        (double)(tol));                                                                    \
            fail();                                                                                       \
        }                                                                                                 \
    } while (0)

/* Running maximum of error measures that stays Inf once a NaN or Inf was seen
 * (fmax() would drop a NaN). */
static inline double worst(double acc, double e) { return isfinite(acc) && isfinite(e) ? (e > acc ? e : acc) : INFINITY; }

/* max |a[i] - b[i]|; INFINITY when any value on either side is NaN or Inf. */
static inline double max_abs_diff_ff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        const double d = fabs((double)a[i] - (double)b[i]);
        m = d > m ? d : m;
    }
    return m;
}
static inline double max_abs_diff_fd(const float *a, const double *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        const double d = fabs((double)a[i] - b[i]);
        m = d > m ? d : m;
    }
    return m;
}
static inline double max_abs_diff_dd(const double *a, const double *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        const double d = fabs(a[i] - b[i]);
        m = d > m ? d : m;
    }
    return m;
}
/* max |x|; INFINITY when any value is NaN or Inf. */
static inline double max_abs_f(const float *x, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return INFINITY;
        m = fabs((double)x[i]) > m ? fabs((double)x[i]) : m;
    }
    return m;
}
static inline double max_abs_d(const double *x, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return INFINITY;
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    }
    return m;
}
/* max |a - b| / max |b| (b's scale; 1 when b is all zero); INFINITY on NaN / Inf. */
static inline double rel_err_fd(const float *a, const double *b, size_t n) {
    const double s = max_abs_d(b, n);
    return max_abs_diff_fd(a, b, n) / (s > 0 ? s : 1);
}
static inline double rel_err_ff(const float *a, const float *b, size_t n) {
    const double s = max_abs_f(b, n);
    return max_abs_diff_ff(a, b, n) / (s > 0 ? s : 1);
}
static inline double rel_err_dd(const double *a, const double *b, size_t n) {
    const double s = max_abs_d(b, n);
    return max_abs_diff_dd(a, b, n) / (s > 0 ? s : 1);
}

#endif
