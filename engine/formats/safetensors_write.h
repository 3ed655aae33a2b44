/* Writing float32 .safetensors files (the reader is safetensors.h): an 8-byte
 * little-endian header length, a JSON header padded with spaces to a multiple
 * of 8 bytes, then the tensors' bytes back to back in the order added. The file
 * is written atomically (core/atomic_file.h). */
#ifndef GRAFT_FORMATS_SAFETENSORS_WRITE_H
#define GRAFT_FORMATS_SAFETENSORS_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    char *name;
    int ndim;
    int64_t shape[4];
    const float *data; /* borrowed until st_writer_save */
    size_t n;
} st_out_tensor;

typedef struct {
    st_out_tensor *t;
    size_t n, cap;
} st_writer;

void st_writer_init(st_writer *w);
/* Adds a float32 tensor; shape given by ndim dims (product must equal n). */
void st_writer_add(st_writer *w, const char *name, const float *data, int ndim, const int64_t *shape);
/* metadata: optional {"key": "value"} pairs as a NULL-terminated list of alternating strings. */
int st_writer_save(const st_writer *w, const char *path, const char *const *metadata);
/* The same bytes into an open stream (a file that commits with others). */
int st_writer_write(const st_writer *w, FILE *f, const char *const *metadata);
void st_writer_free(st_writer *w);

#endif
