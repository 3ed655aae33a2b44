/* Growable arrays of token ids. */
#ifndef GRAFT_CORE_VEC_H
#define GRAFT_CORE_VEC_H

#include <stddef.h>

typedef struct {
    int *data;
    size_t len, cap;
} int_vec;

void int_vec_push(int_vec *v, int x);
void int_vec_reserve(int_vec *v, size_t cap);
void int_vec_free(int_vec *v);

#endif
