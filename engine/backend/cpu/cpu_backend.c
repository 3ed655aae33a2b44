/* The CPU backend: host memory, the table, tasks over threads. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/blas_serial.h"
#include "backend/cpu/cpu.h"
#include "core/error.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

int cpu_threads(const gf_backend *be, size_t work) {
    int t = be_threads(be);
    if (work < (size_t)t) t = work ? (int)work : 1;
    return t;
}

void *cpu_scratch(gf_backend *be, size_t bytes, const char *what) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) be_set_error(be, "out of memory: %.2f GiB of scratch for %s", (double)bytes / GIB, what);
    return p;
}

void cpu_close(gf_backend *be) { (void)be; }

int cpu_mem_info(gf_backend *be, size_t *free_bytes, size_t *total_bytes) {
    (void)be;
    const long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    if (page <= 0 || phys <= 0) return gf_fail("cannot read the size of host memory");
    if (total_bytes) *total_bytes = (size_t)phys * (size_t)page;
    if (free_bytes) *free_bytes = (size_t)(avail > 0 ? avail : 0) * (size_t)page;
    return 0;
}

int cpu_alloc(gf_backend *be, gf_buf *out, size_t n, gf_dtype t) {
    *out = gf_none();
    const size_t es = gf_dtype_size(t);
    if (n > SIZE_MAX / es - 64) return gf_fail("out of memory: %zu elements of %s asked", n, gf_dtype_name(t));
    size_t bytes = (n * es + 63) / 64 * 64;
    if (!bytes) bytes = 64;
    size_t total = 0;
    /* refuse what no overcommit can honour: it would end in the OOM killer */
    if (cpu_mem_info(be, NULL, &total) == 0 && bytes > total)
        return gf_fail("out of memory: %.2f GiB asked, this machine has %.2f GiB", (double)bytes / GIB,
                       (double)total / GIB);
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0 || !p) {
        size_t avail = 0;
        cpu_mem_info(be, &avail, NULL);
        return gf_fail("out of memory: %.2f GiB asked, %.2f GiB of host memory available", (double)bytes / GIB,
                       (double)avail / GIB);
    }
    out->ptr = p;
    out->dtype = t;
    return 0;
}

void cpu_free(gf_backend *be, gf_buf *b) {
    (void)be;
    free(b->ptr);
    *b = gf_none();
}

void cpu_zero(gf_backend *be, gf_buf b, size_t n) {
    (void)be;
    memset(b.ptr, 0, n * gf_dtype_size(b.dtype));
}

/* bf16 <-> f32 (round to nearest even; NaN stays NaN) */
static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* dst[n] (type dt) <- src[n] (type st); numeric conversion between any two types. */
static void convert(void *dst, gf_dtype dt, const void *src, gf_dtype st, size_t n) {
    if (dt == st) {
        memmove(dst, src, n * gf_dtype_size(dt));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double x = 0;
        switch (st) {
        case GF_F32: x = ((const float *)src)[i]; break;
        case GF_BF16: x = bf16_to_f32(((const uint16_t *)src)[i]); break;
        case GF_F64: x = ((const double *)src)[i]; break;
        case GF_I32: x = ((const int32_t *)src)[i]; break;
        }
        switch (dt) {
        case GF_F32: ((float *)dst)[i] = (float)x; break;
        case GF_BF16: ((uint16_t *)dst)[i] = f32_to_bf16((float)x); break;
        case GF_F64: ((double *)dst)[i] = x; break;
        case GF_I32: ((int32_t *)dst)[i] = (int32_t)x; break;
        }
    }
}

void cpu_copy(gf_backend *be, gf_buf dst, gf_buf src, size_t n) {
    (void)be;
    convert(dst.ptr, dst.dtype, src.ptr, src.dtype, n);
}

int cpu_upload(gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n) {
    (void)be;
    convert(dst.ptr, dst.dtype, src, src_t, n);
    return 0;
}

int cpu_download(gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n) {
    (void)be;
    convert(dst, dst_t, src.ptr, src.dtype, n);
    return 0;
}

int cpu_sync(gf_backend *be) { return be->error[0] ? -1 : 0; }
/* Ops run to completion on the host: checking is syncing. */
int cpu_check(gf_backend *be) { return cpu_sync(be); }

/* Tasks in parallel threads; each task issues its ops on its own sub-backend
 * (threads = 1), whose sticky error is the task's. The first failure's
 * message (lowest task index) is the one reported. */
int cpu_run_tasks(gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud) {
    gf_backend *subs = calloc((size_t)n, sizeof *subs);
    char (*errs)[256] = calloc((size_t)n, sizeof *errs);
    int *rcs = calloc((size_t)n, sizeof *rcs);
    if (!subs || !errs || !rcs) {
        free(subs), free(errs), free(rcs);
        return gf_fail("out of memory starting %d tasks", n);
    }
    for (int i = 0; i < n; i++) {
        subs[i] = *be;
        subs[i].threads = 1;
        subs[i].error[0] = 0;
        snprintf(subs[i].name, sizeof subs[i].name, "%.100s task %d", be->name, i);
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(cpu_threads(be, (size_t)n))
    for (int i = 0; i < n; i++) {
        cpu_region_blas_serial(); /* a task is single-threaded (its sub-backend's threads = 1), BLAS too */
        rcs[i] = fn(ud, i, &subs[i]);
        if (rcs[i] == 0 && be_sync(&subs[i]) != 0) rcs[i] = -1;
        if (rcs[i] != 0) snprintf(errs[i], sizeof errs[i], "%s", gf_last_error());
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (rcs[i] != 0) rc = gf_fail("%s", errs[i]);
    free(subs), free(errs), free(rcs);
    return rc;
}

#define CPU_OP_INIT(ret, name, params) .name = cpu_##name,
const gf_backend_ops cpu_ops = {GF_BACKEND_OPS(CPU_OP_INIT)};
#undef CPU_OP_INIT

int gf_backend_cpu_open(gf_backend *be, const gf_backend_opts *o) {
    int threads = o && o->threads > 0 ? o->threads : omp_get_max_threads();
    if (threads < 1) threads = 1;
    if (o && o->threads > 0) { /* the BLAS pool is process-wide: size it once, here */
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
    }
    be->ops = &cpu_ops;
    be->act = GF_F32;
    be->host = true;
    be->threads = threads;
    be->impl = NULL;
    snprintf(be->name, sizeof be->name, "cpu (%d thread%s)", threads, threads == 1 ? "" : "s");
    return 0;
}
