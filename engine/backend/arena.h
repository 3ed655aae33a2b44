/* Carving one backend allocation into typed views (the llm.c habit: one
 * allocation per shape, named views). Walk the same sequence of arena_take
 * calls twice: first over an arena with no base (it only counts bytes), then
 * over the allocated one. Offsets are 64-byte aligned. */
#ifndef GRAFT_BACKEND_ARENA_H
#define GRAFT_BACKEND_ARENA_H

#include "backend/backend.h"

typedef struct {
    gf_buf base; /* gf_none() while measuring */
    size_t off;  /* bytes taken so far */
} arena;

static inline gf_buf arena_take(arena *a, size_t n, gf_dtype t) {
    gf_buf b = gf_bytes(a->base, a->off, t);
    a->off += (n * gf_dtype_size(t) + 63) / 64 * 64;
    return n ? b : gf_none();
}

#endif
