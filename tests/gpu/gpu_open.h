/* What a GPU check does when its CUDA backend does not open: skip (exit 77)
 * only where there is no CUDA device to open (a build without the CUDA
 * backend, or a machine without a GPU: CI); with a device present the failure
 * is the backend's or its configuration's (a bad GRAFT_CUDA_* variable, a
 * variant the kernels do not know), and the check fails with it. */
#ifndef GRAFT_TESTS_GPU_OPEN_H
#define GRAFT_TESTS_GPU_OPEN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

/* After a failed be_open of `what`: prints the SKIP or FAIL line and returns the
 * exit status (77 or 1). */
static inline int gpu_open_failed(const char *what) {
    int n = 0;
    const char *why = gf_last_error();
    char msg[512]; /* kept: counting the devices may set the last error itself */
    snprintf(msg, sizeof msg, "%s", why ? why : "");
    if (be_cuda_device_count(&n) == 0 && n > 0) {
        printf("FAIL  the %s backend did not open on a machine with %d CUDA device%s: %s\n", what, n, n == 1 ? "" : "s",
               msg);
        return 1;
    }
    printf("SKIP: no CUDA backend here: %s\n", msg);
    return 77;
}

/* A GRAFT_CUDA_* value the backend must refuse: sets VAR=VALUE (left set) and opens
 * cuda:0 in fp32 or bf16; true when the open failed with a line holding WANT. That
 * line (or "it opened") goes to why[n]; a backend that opened is closed. */
static inline bool gpu_open_refused(const char *var, const char *value, bool fp32, const char *want, char *why,
                                    size_t n) {
    setenv(var, value, 1);
    const gf_backend_opts o = {"cuda", 1, fp32};
    gf_backend *b = NULL;
    const int rc = be_open(&b, &o);
    const char *last = gf_last_error();
    snprintf(why, n, "%s", rc == 0 ? "it opened" : last ? last : "no message");
    if (rc == 0) be_close(b);
    return rc != 0 && strstr(why, want) != NULL;
}

#endif
