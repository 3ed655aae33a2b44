/* Dequantization of GGUF tensor data to float32, one function per ggml type
 * (block layouts as ggml defines them; every scale is float16 unless noted). */
#ifndef GRAFT_FORMATS_GGUF_DEQUANT_H
#define GRAFT_FORMATS_GGUF_DEQUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True for the types gguf_dequantize handles: F32, F16, BF16, Q8_0, Q4_0,
 * Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K. */
bool gguf_can_dequantize(uint32_t type);

/* Converts n elements (a whole number of blocks) from src to dst. Returns 0,
 * or -1 with an error for an unsupported type or a partial block. */
int gguf_dequantize(uint32_t type, const uint8_t *src, float *dst, size_t n);

/* The same per type, n a multiple of the block size (32 or 256). */
void dequant_f32(const uint8_t *src, float *dst, size_t n);
void dequant_f16(const uint8_t *src, float *dst, size_t n);
void dequant_bf16(const uint8_t *src, float *dst, size_t n);
void dequant_q8_0(const uint8_t *src, float *dst, size_t n);
void dequant_q4_0(const uint8_t *src, float *dst, size_t n);
void dequant_q4_1(const uint8_t *src, float *dst, size_t n);
void dequant_q5_0(const uint8_t *src, float *dst, size_t n);
void dequant_q5_1(const uint8_t *src, float *dst, size_t n);
void dequant_q4_k(const uint8_t *src, float *dst, size_t n);
void dequant_q5_k(const uint8_t *src, float *dst, size_t n);
void dequant_q6_k(const uint8_t *src, float *dst, size_t n);

#endif
