/* Reading .safetensors files: an 8-byte little-endian header length, a JSON
 * header {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"},
 * then the raw tensor bytes. Files are memory-mapped, never read whole; every
 * header field is checked against the file size before anything points into it.
 *
 * A tensor set is one model's weights: a single model.safetensors, or the
 * shards named by model.safetensors.index.json ({"weight_map": {tensor: file}}). */
#ifndef GRAFT_FORMATS_SAFETENSORS_H
#define GRAFT_FORMATS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapped_file.h"
#include "core/strmap.h"

#define ST_MAX_DIMS 8

typedef enum { ST_F32 = 0, ST_F16 = 1, ST_BF16 = 2 } st_dtype;

typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    size_t n_elems;
    const uint8_t *data; /* into the mapping; not aligned in general */
    size_t nbytes;
    const char *file;    /* path of the file holding it (for messages) */
} st_tensor;

typedef struct {
    mapped_file mf;
    st_tensor *tensors; /* [n_tensors], in header order */
    size_t n_tensors;
    strmap by_name;     /* name -> index into tensors */
} st_file;

/* 0 on success; -1 with a one-line error ("PATH: ...") otherwise. */
int st_open(st_file *f, const char *path);
void st_close(st_file *f);
/* NULL when absent. */
const st_tensor *st_find(const st_file *f, const char *name);

/* Converts the tensor to float32 into dst; n must equal t->n_elems. */
int st_read_f32(const st_tensor *t, float *dst, size_t n);
/* Elements [off, off + n) of the tensor as float32 into dst. */
int st_read_f32_range(const st_tensor *t, size_t off, float *dst, size_t n);

size_t st_dtype_size(st_dtype d);

/* Exact conversions of one value (NaN payloads, infinities, subnormals kept). */
float st_f16_to_f32(uint16_t h);
float st_bf16_to_f32(uint16_t b);

/* All the safetensors files of one model folder. */
typedef struct {
    st_file *files;  /* [n_files] */
    int n_files;
    strmap where;    /* tensor name -> file index (sharded models only) */
    int sharded;
} st_set;

/* Opens DIR/model.safetensors.index.json and every shard it names (each once),
 * else DIR/model.safetensors, else the folder's only *.safetensors file. */
int st_set_open(st_set *s, const char *dir);
void st_set_close(st_set *s);
const st_tensor *st_set_find(const st_set *s, const char *name);

#endif
