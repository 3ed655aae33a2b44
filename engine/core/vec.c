#include "core/vec.h"

#include <stdlib.h>

#include "core/error.h"

void int_vec_reserve(int_vec *v, size_t cap) {
    if (cap <= v->cap) return;
    size_t c = v->cap ? v->cap : 16;
    while (c < cap) c *= 2;
    v->data = gf_realloc(v->data, c * sizeof *v->data);
    v->cap = c;
}

void int_vec_push(int_vec *v, int x) {
    if (v->len == v->cap) int_vec_reserve(v, v->len + 1);
    v->data[v->len++] = x;
}

void int_vec_free(int_vec *v) {
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}
