/* The Gated DeltaNet family of the CPU emulation (make test-gdn-emu): a "cuda"
 * backend over host memory whose GDN ops are engine/backend/cuda/cuda_gdn*.cu
 * compiled against the emulation (emu.h). It defines gf_backend_cuda_open, so
 * tests/gpu/test_cuda_gdn.c runs unchanged through be_open("cuda") / be_alloc /
 * be_upload / be_gdn_*.
 *
 * Only the emulation's link uses this file, and that link takes the engine
 * WITHOUT the real CUDA objects (emu.mk: emu/libengine.a), so the two
 * gf_backend_cuda_open never meet; linking both would fail (a duplicate
 * symbol), never pick one silently. The ops the GDN test does not call (dense,
 * attention, losses, optimizer) are absent from the table (NULL). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_dev.cuh"
extern "C" {
#include "core/error.h"
}

static float bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f32_to_bf16(float f) { /* nearest even, as __float2bfloat16 */
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0xffffu) ? 0x40u : 0));
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static bool is_float(gf_dtype t) { return t == GF_F32 || t == GF_BF16; }

/* dst[n] (type dt) <- src[n] (type st): same type, or F32 <-> BF16. */
static int convert(void *dst, gf_dtype dt, const void *src, gf_dtype st, size_t n) {
    if (dt == st) {
        memcpy(dst, src, n * gf_dtype_size(dt));
        return 0;
    }
    if (!is_float(dt) || !is_float(st)) return -1;
    for (size_t i = 0; i < n; i++) {
        float f = st == GF_F32 ? ((const float *)src)[i] : bf16_to_f32(((const uint16_t *)src)[i]);
        if (dt == GF_F32) ((float *)dst)[i] = f;
        else ((uint16_t *)dst)[i] = f32_to_bf16(f);
    }
    return 0;
}

static void emu_close(gf_backend *be) { free(be->impl); }

static int emu_mem_info(gf_backend *, size_t *free_bytes, size_t *total_bytes) {
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), ps = sysconf(_SC_PAGESIZE);
    *total_bytes = pages > 0 && ps > 0 ? (size_t)pages * ps : 0;
    *free_bytes = avail > 0 && ps > 0 ? (size_t)avail * ps : 0;
    return 0;
}

static int emu_alloc(gf_backend *, gf_buf *out, size_t n, gf_dtype t) {
    out->dtype = t;
    out->ptr = malloc(n * gf_dtype_size(t) + 16);
    if (!out->ptr) return gf_fail("out of memory: %zu bytes asked (GDN emulation)", n * gf_dtype_size(t));
    memset(out->ptr, 0xA5, n * gf_dtype_size(t)); /* garbage, as cudaMalloc leaves it */
    return 0;
}
static void emu_free(gf_backend *, gf_buf *b) {
    free(b->ptr);
    b->ptr = nullptr;
}
static void emu_zero(gf_backend *, gf_buf b, size_t n) { memset(b.ptr, 0, n * gf_dtype_size(b.dtype)); }
static void emu_copy(gf_backend *be, gf_buf dst, gf_buf src, size_t n) {
    if (convert(dst.ptr, dst.dtype, src.ptr, src.dtype, n))
        be_set_error(be, "copy: cannot convert %s to %s", gf_dtype_name(src.dtype), gf_dtype_name(dst.dtype));
}
static int emu_upload(gf_backend *, gf_buf dst, const void *src, gf_dtype src_t, size_t n) {
    if (convert(dst.ptr, dst.dtype, src, src_t, n))
        return gf_fail("upload: cannot convert %s to %s", gf_dtype_name(src_t), gf_dtype_name(dst.dtype));
    return 0;
}
static int emu_download(gf_backend *, void *dst, gf_dtype dst_t, gf_buf src, size_t n) {
    if (convert(dst, dst_t, src.ptr, src.dtype, n))
        return gf_fail("download: cannot convert %s to %s", gf_dtype_name(src.dtype), gf_dtype_name(dst_t));
    return 0;
}
static int emu_sync(gf_backend *be) {
    if (!be->error[0]) return 0;
    gf_fail("%s", be->error);
    be->error[0] = 0;
    return -1;
}
static int emu_run_tasks(gf_backend *be, int n, int (*fn)(void *, int, gf_backend *), void *ud) {
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (fn(ud, i, be) < 0) rc = -1;
    return rc;
}

static gf_backend_ops emu_table(void) {
    gf_backend_ops t;
    memset(&t, 0, sizeof t);
    t.close = emu_close;
    t.mem_info = emu_mem_info;
    t.alloc = emu_alloc;
    t.free = emu_free;
    t.zero = emu_zero;
    t.copy = emu_copy;
    t.upload = emu_upload;
    t.download = emu_download;
    t.sync = emu_sync;
    t.check = emu_sync;
    t.run_tasks = emu_run_tasks;
    t.gdn_core = cuda_gdn_core;
    t.gdn_core_backward = cuda_gdn_core_backward;
    t.gdn_prep = cuda_gdn_prep;
    t.gdn_prep_backward = cuda_gdn_prep_backward;
    t.gdn_gated_norm = cuda_gdn_gated_norm;
    t.gdn_gated_norm_backward = cuda_gdn_gated_norm_backward;
    return t;
}
static const gf_backend_ops table = emu_table();

/* backend.c's be_cuda_device_count: the one emulated device */
extern "C" int gf_backend_cuda_count(int *count) {
    *count = 1;
    return 0;
}

extern "C" int gf_backend_cuda_open(gf_backend *be, const gf_backend_opts *o, const gf_backend_variants *v) {
    cuda_impl *im = (cuda_impl *)calloc(1, sizeof *im);
    if (!im) return gf_fail("out of host memory");
    im->fp32 = o->fp32;
    im->prop.sharedMemPerBlockOptin = 232448; /* an H100 / H200's opt-in limit */
    im->prop.multiProcessorCount = 132;
    if (cuda_gdn_variants(im, v) != 0) { /* the GDN kernel variants a test forces, as the real backend takes them */
        free(im);
        return -1;
    }
    snprintf(im->prop.name, sizeof im->prop.name, "CPU emulation");
    be->ops = &table;
    be->impl = im;
    be->act = o->fp32 ? GF_F32 : GF_BF16;
    be->host = false;
    be->threads = 1;
    snprintf(be->name, sizeof be->name, "cuda:0 CPU emulation of the GDN kernels (%s)", o->fp32 ? "fp32" : "bf16");
    return 0;
}
