/* Building blocks of the GDN layer's element-wise kernels (cuda_gdn_layer.cu),
 * beside the V-wide loads and stores of cuda_gdn_dev.cuh (load_vec, store_vec):
 * sums over groups of lanes that share a (token, head) row, the choice between
 * the vector and the scalar path, and the fixed-order block sums behind the
 * parameter gradients. */
#ifndef GRAFT_BACKEND_CUDA_GDN_LAYER_CUH
#define GRAFT_BACKEND_CUDA_GDN_LAYER_CUH

#include <stdint.h>

#include "backend/cuda/cuda_gdn_dev.cuh"

#define GDN_K 4          /* GDN_CONV_K (engine/gdn/gdn.h) */
#define GDN_L2_EPS 1e-6f /* GDN_QK_L2_EPS */

/* Values a lane holds of one head row: rows are split over up to 32 lanes of V
 * values; with V = 1 a lane takes up to 4 of a 128-wide row. */
#define GDN_LANE_VECS(V) ((GDN_MAX_D / (V) + 31) / 32)

/* V values of T kept as their raw bits (bf16: two a register), read one at a
 * time as floats: operands a kernel holds for its whole run (conv taps, inputs)
 * at half the registers of floats. */
template <typename T, int V> struct Packed {
    static constexpr int W = (V * (int)sizeof(T) + 3) / 4;
    uint32_t u[W];
    __device__ __forceinline__ void load(const T *p) {
        if constexpr (V * sizeof(T) % 16 == 0) { /* p 16-byte aligned */
#pragma unroll
            for (int i = 0; i < W; i += 4) {
                uint4 r = ld_raw<uint4>(p + i * 4 / (int)sizeof(T));
                u[i] = r.x, u[i + 1] = r.y, u[i + 2] = r.z, u[i + 3] = r.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < W; i++) u[i] = 0;
#pragma unroll
            for (int e = 0; e < V; e++) set_raw(e, p[e]);
        }
    }
    __device__ __forceinline__ void store(T *p) const { /* the raw bits back; p as for load */
        if constexpr (V * sizeof(T) % 16 == 0) {
#pragma unroll
            for (int i = 0; i < W; i += 4)
                st_raw<uint4>(p + i * 4 / (int)sizeof(T), make_uint4(u[i], u[i + 1], u[i + 2], u[i + 3]));
        } else {
#pragma unroll
            for (int e = 0; e < V; e++) p[e] = raw(e);
        }
    }
    __device__ __forceinline__ T raw(int e) const {
        T x;
        if constexpr (sizeof(T) == 4) {
            memcpy((void *)&x, &u[e], 4);
        } else {
            uint16_t h = (uint16_t)((e & 1) ? u[e >> 1] >> 16 : u[e >> 1] & 0xffffu);
            memcpy((void *)&x, &h, 2);
        }
        return x;
    }
    __device__ __forceinline__ void zero() {
#pragma unroll
        for (int i = 0; i < W; i++) u[i] = 0; /* zero bits: 0 in bf16 and fp32 */
    }
    __device__ __forceinline__ float get(int e) const {
        uint32_t b = sizeof(T) == 4 ? u[e] : (e & 1) ? u[e >> 1] & 0xffff0000u : u[e >> 1] << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    __device__ __forceinline__ void set_raw(int e, T x) {
        if constexpr (sizeof(T) == 4) {
            memcpy(&u[e], &x, 4);
        } else {
            uint16_t h;
            memcpy(&h, &x, 2);
            u[e >> 1] = (e & 1) ? (u[e >> 1] & 0xffffu) | (uint32_t)h << 16 : (u[e >> 1] & 0xffff0000u) | h;
        }
    }
};

/* x rounded to T and back (what a later kernel reads of a stored value). */
template <typename T> __device__ __forceinline__ float act_round(float x) { return to_f(from_f<T>(x)); }

/* Sum over aligned groups of `lanes` lanes (a power of two up to 32). Every
 * lane of the warp calls it, with the same `lanes`. */
__device__ __forceinline__ float group_sum(float v, int lanes) {
    for (int m = lanes >> 1; m >= 1; m >>= 1) v += shfl_xor(v, m);
    return v;
}

/* log2 of the lanes a row of d values takes at V a lane: the next power of two
 * of ceil(d / V), at most 32 (then a lane takes several V-groups). */
static inline int gdn_lane_shift(int d, int V) {
    int need = (d + V - 1) / V, s = 0;
    while ((1 << s) < need && s < 5) s++;
    return s;
}

static inline bool gdn_aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Every thread of the block calls it: vals[0:V] of the `ny` threads that share
 * tx (thread = ty * nx + tx) are added in ty order; the ty == 0 thread gets the
 * sum. red: ny * nx * V floats of shared memory. */
template <int V>
__device__ __forceinline__ void block_sum_over_y(float (&vals)[V], float *red, int tx, int ty, int nx, int ny) {
#pragma unroll
    for (int e = 0; e < V; e++) red[((size_t)ty * nx + tx) * V + e] = vals[e];
    block_sync();
    if (ty == 0)
        for (int y = 1; y < ny; y++)
#pragma unroll
            for (int e = 0; e < V; e++) vals[e] += red[((size_t)y * nx + tx) * V + e];
    block_sync();
}

#endif
