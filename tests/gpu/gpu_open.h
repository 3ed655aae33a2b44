/* What a GPU check does when its CUDA backend does not open: skip (exit 77)
 * only where there is no CUDA device to open (a build without the CUDA
 * backend, or a machine without a GPU: CI); with a device present the failure
 * is the backend's or its configuration's (a bad GRAFT_CUDA_* variable, a
 * variant the kernels do not know), and the check fails with it. */
#ifndef GRAFT_TESTS_GPU_OPEN_H
#define GRAFT_TESTS_GPU_OPEN_H

#include <stdio.h>

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

#endif
