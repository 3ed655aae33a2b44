/* ggml block formats to float32 (see gguf_dequant.h). Sources are unaligned
 * bytes in a mapping, so every multi-byte field is assembled byte by byte. */
#include "formats/gguf_dequant.h"

#include <string.h>

#include "core/error.h"
#include "formats/gguf_reader.h"
#include "formats/safetensors.h"

static float f16_at(const uint8_t *p) { return st_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

void dequant_f32(const uint8_t *src, float *dst, size_t n) { memcpy(dst, src, n * sizeof *dst); }

void dequant_f16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f16_at(src + 2 * i);
}

void dequant_bf16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = st_bf16_to_f32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
}

/* Q8_0: {f16 d; int8 q[32]}, x = d * q */
void dequant_q8_0(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 32; b++, src += 34, dst += 32) {
        float d = f16_at(src);
        for (int j = 0; j < 32; j++) dst[j] = d * (float)(int8_t)src[2 + j];
    }
}

/* Q4_0: {f16 d; u8 qs[16]}; low nibbles are elements 0..15, high nibbles
 * 16..31; x = d * (q - 8) */
void dequant_q4_0(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 32; b++, src += 18, dst += 32) {
        float d = f16_at(src);
        const uint8_t *qs = src + 2;
        for (int j = 0; j < 16; j++) {
            dst[j] = d * (float)((qs[j] & 15) - 8);
            dst[j + 16] = d * (float)((qs[j] >> 4) - 8);
        }
    }
}

/* Q4_1: {f16 d; f16 m; u8 qs[16]}; x = d * q + m */
void dequant_q4_1(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 32; b++, src += 20, dst += 32) {
        float d = f16_at(src), m = f16_at(src + 2);
        const uint8_t *qs = src + 4;
        for (int j = 0; j < 16; j++) {
            dst[j] = d * (float)(qs[j] & 15) + m;
            dst[j + 16] = d * (float)(qs[j] >> 4) + m;
        }
    }
}

/* Q5_0: {f16 d; u32 qh; u8 qs[16]}; bit j of qh is the fifth bit of element
 * j; x = d * (q - 16) */
void dequant_q5_0(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 32; b++, src += 22, dst += 32) {
        float d = f16_at(src);
        uint32_t qh = (uint32_t)src[2] | (uint32_t)src[3] << 8 | (uint32_t)src[4] << 16 | (uint32_t)src[5] << 24;
        const uint8_t *qs = src + 6;
        for (int j = 0; j < 16; j++) {
            int lo = (qs[j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * (float)(lo - 16);
            dst[j + 16] = d * (float)(hi - 16);
        }
    }
}

/* Q5_1: {f16 d; f16 m; u32 qh; u8 qs[16]}; x = d * q + m */
void dequant_q5_1(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 32; b++, src += 24, dst += 32) {
        float d = f16_at(src), m = f16_at(src + 2);
        uint32_t qh = (uint32_t)src[4] | (uint32_t)src[5] << 8 | (uint32_t)src[6] << 16 | (uint32_t)src[7] << 24;
        const uint8_t *qs = src + 8;
        for (int j = 0; j < 16; j++) {
            int lo = (qs[j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * (float)lo + m;
            dst[j + 16] = d * (float)hi + m;
        }
    }
}

/* K-quant super-blocks of 256 in 8 sub-blocks of 32: 12 bytes pack eight
 * 6-bit scales and eight 6-bit mins. Sub-blocks 0..3 use the low 6 bits of
 * bytes 0..3 (scales) and 4..7 (mins); 4..7 take their low 4 bits from
 * bytes 8..11 and their top 2 bits from the spare bits of bytes 0..7. */
static void scale_min_k4(int j, const uint8_t *q, int *sc, int *mn) {
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4;
        *mn = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
    }
}

/* Q4_K: {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}; each 64 elements use 32
 * bytes of qs, low nibbles first; x = d*sc*q - dmin*m */
void dequant_q4_k(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 256; b++, src += 144) {
        float d = f16_at(src), dmin = f16_at(src + 2);
        const uint8_t *scales = src + 4, *q = src + 16;
        for (int j = 0; j < 8; j += 2, q += 32) {
            int sc, mn;
            scale_min_k4(j, scales, &sc, &mn);
            float d1 = d * (float)sc, m1 = dmin * (float)mn;
            scale_min_k4(j + 1, scales, &sc, &mn);
            float d2 = d * (float)sc, m2 = dmin * (float)mn;
            for (int l = 0; l < 32; l++) *dst++ = d1 * (float)(q[l] & 15) - m1;
            for (int l = 0; l < 32; l++) *dst++ = d2 * (float)(q[l] >> 4) - m2;
        }
    }
}

/* Q5_K: {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}; the fifth
 * bit of element l of sub-block s is bit s of qh[l] */
void dequant_q5_k(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 256; b++, src += 176) {
        float d = f16_at(src), dmin = f16_at(src + 2);
        const uint8_t *scales = src + 4, *qh = src + 16, *q = src + 48;
        for (int j = 0; j < 8; j += 2, q += 32) {
            int sc, mn;
            scale_min_k4(j, scales, &sc, &mn);
            float d1 = d * (float)sc, m1 = dmin * (float)mn;
            scale_min_k4(j + 1, scales, &sc, &mn);
            float d2 = d * (float)sc, m2 = dmin * (float)mn;
            for (int l = 0; l < 32; l++) *dst++ = d1 * (float)((q[l] & 15) + ((qh[l] >> j) & 1) * 16) - m1;
            for (int l = 0; l < 32; l++) *dst++ = d2 * (float)((q[l] >> 4) + ((qh[l] >> (j + 1)) & 1) * 16) - m2;
        }
    }
}

/* Q6_K: {u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d}; 16 sub-blocks of
 * 16; each half of 128 elements uses 64 bytes of ql (low then high nibbles of
 * two 32-byte runs) and 32 bytes of qh (2 bits per element); x = d*sc*(q-32) */
void dequant_q6_k(const uint8_t *src, float *dst, size_t n) {
    for (size_t b = 0; b < n / 256; b++, src += 210) {
        const uint8_t *ql = src, *qh = src + 128;
        const int8_t *sc = (const int8_t *)(src + 192);
        float d = f16_at(src + 208);
        for (int half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, dst += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int q1 = ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32;
                int q2 = ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32;
                int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
                int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
                dst[l] = d * (float)sc[is] * (float)q1;
                dst[l + 32] = d * (float)sc[is + 2] * (float)q2;
                dst[l + 64] = d * (float)sc[is + 4] * (float)q3;
                dst[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

typedef void (*dequant_fn)(const uint8_t *, float *, size_t);

static dequant_fn fn_of(uint32_t type) {
    switch (type) {
    case GGML_F32: return dequant_f32;
    case GGML_F16: return dequant_f16;
    case GGML_BF16: return dequant_bf16;
    case GGML_Q8_0: return dequant_q8_0;
    case GGML_Q4_0: return dequant_q4_0;
    case GGML_Q4_1: return dequant_q4_1;
    case GGML_Q5_0: return dequant_q5_0;
    case GGML_Q5_1: return dequant_q5_1;
    case GGML_Q4_K: return dequant_q4_k;
    case GGML_Q5_K: return dequant_q5_k;
    case GGML_Q6_K: return dequant_q6_k;
    default: return NULL;
    }
}

bool gguf_can_dequantize(uint32_t type) { return fn_of(type) != NULL; }

int gguf_dequantize(uint32_t type, const uint8_t *src, float *dst, size_t n) {
    dequant_fn f = fn_of(type);
    const char *name = ggml_type_name(type);
    if (!f)
        return gf_fail("tensor type %s cannot be dequantized (supported: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 "
                       "q4_k q5_k q6_k)", name ? name : "unknown");
    size_t be = ggml_block_elems(type);
    if (n % be != 0) return gf_fail("%zu elements are not a whole number of %s blocks", n, name);
    f(src, dst, n);
    return 0;
}
