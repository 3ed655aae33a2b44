/* Reading GGUF files (versions 2 and 3), little-endian:
 *   "GGUF", uint32 version, uint64 tensor count, uint64 metadata count,
 *   metadata: key (uint64 length + bytes), uint32 value type, value
 *             (arrays: uint32 element type, uint64 count, elements),
 *   tensor infos: name, uint32 n_dims, uint64 ne[n_dims] (ne[0] varies
 *             fastest), uint32 ggml type, uint64 offset into the data section,
 *   padding to general.alignment (default 32), the data section.
 *
 * The file is memory-mapped. Every length, count, offset and alignment is
 * checked against the file size before anything points into it, so a
 * truncated or lying file fails with a one-line error, never a crash. */
#ifndef GRAFT_FORMATS_GGUF_READER_H
#define GRAFT_FORMATS_GGUF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mapped_file.h"
#include "core/strmap.h"

typedef enum {
    GGUF_UINT8 = 0, GGUF_INT8 = 1, GGUF_UINT16 = 2, GGUF_INT16 = 3, GGUF_UINT32 = 4, GGUF_INT32 = 5,
    GGUF_FLOAT32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_UINT64 = 10, GGUF_INT64 = 11,
    GGUF_FLOAT64 = 12
} gguf_value_type;

/* ggml tensor types graft knows the size of (others are refused on open). */
typedef enum {
    GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q4_1 = 3, GGML_Q5_0 = 6, GGML_Q5_1 = 7, GGML_Q8_0 = 8,
    GGML_Q8_1 = 9, GGML_Q2_K = 10, GGML_Q3_K = 11, GGML_Q4_K = 12, GGML_Q5_K = 13, GGML_Q6_K = 14,
    GGML_Q8_K = 15, GGML_BF16 = 30
} ggml_type;

#define GGUF_MAX_DIMS 4

/* A string inside the mapping (not NUL-terminated). */
typedef struct {
    const char *p;
    size_t len;
} gguf_str;

typedef struct {
    char *key;
    gguf_value_type type;
    /* scalars, converted on read */
    union { uint64_t u; int64_t i; double f; bool b; } v;
    gguf_str str;              /* GGUF_STRING */
    gguf_value_type arr_type;  /* GGUF_ARRAY */
    uint64_t arr_n;
    const uint8_t *arr_data;   /* fixed-size elements, little-endian, unaligned */
    gguf_str *arr_str;         /* [arr_n] for string arrays */
} gguf_kv;

typedef struct {
    char *name;
    int n_dims;
    uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the row length */
    ggml_type type;
    uint64_t n_elems;
    const uint8_t *data;        /* into the mapping */
    size_t nbytes;
} gguf_tensor;

typedef struct {
    mapped_file mf;
    uint32_t version;
    gguf_kv *kv;
    size_t n_kv;
    gguf_tensor *tensors;
    size_t n_tensors;
    size_t alignment;
    size_t data_offset;
    strmap kv_index, tensor_index;
} gguf_file;

int gguf_open(gguf_file *g, const char *path);
void gguf_close(gguf_file *g);

/* NULL when absent. */
const gguf_kv *gguf_find_kv(const gguf_file *g, const char *key);
const gguf_tensor *gguf_find_tensor(const gguf_file *g, const char *name);

/* Typed getters: 1 when found (value in *out), 0 when absent (*out untouched),
 * -1 with an error when present with an unusable type or value. Integers
 * accept any integer type whose value fits; floats accept float32/64. */
int gguf_get_int(const gguf_file *g, const char *key, int64_t *out);
int gguf_get_float(const gguf_file *g, const char *key, double *out);
int gguf_get_bool(const gguf_file *g, const char *key, bool *out);
int gguf_get_str(const gguf_file *g, const char *key, gguf_str *out);
/* Arrays of the given element type (any type for GGUF_ARRAY not allowed). */
const gguf_kv *gguf_get_array(const gguf_file *g, const char *key, gguf_value_type elem);

/* Element i of a numeric array as double / int64 (the caller checked i < arr_n). */
double gguf_arr_float(const gguf_kv *kv, uint64_t i);
int64_t gguf_arr_int(const gguf_kv *kv, uint64_t i);

/* s as a NUL-terminated string for messages: at most cap-1 bytes, control
 * characters (newlines included) shown as '?'. Returns buf. */
const char *gguf_printable(gguf_str s, char *buf, size_t cap);

const char *ggml_type_name(uint32_t t);       /* "q4_k", ... or NULL when unknown */
/* Elements per block and bytes per block; 0 when the type is unknown. */
size_t ggml_block_elems(uint32_t t);
size_t ggml_block_bytes(uint32_t t);

#endif
