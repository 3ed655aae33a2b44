#include "formats/weights_agree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int tensor_layer(const char *name, const char *prefix) {
    const size_t k = strlen(prefix);
    if (strncmp(name, prefix, k) != 0 || name[k] < '0' || name[k] > '9') return -1;
    char *end;
    const long l = strtol(name + k, &end, 10);
    return *end == '.' && l <= 1 << 24 ? (int)l : -1;
}

int config_disagrees(const char *file, const char *field, long long value, const char *fmt, ...) {
    char held[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(held, sizeof held, fmt, ap);
    va_end(ap);
    return gf_fail("%s: %s = %lld, but %s", file, field, value, held);
}

int heads_agree(const char *file, const char *field, int heads, int head_dim, const char *tensor,
                unsigned long long rows) {
    if (head_dim < 1) return config_disagrees(file, field, heads, "the head size is %d", head_dim);
    if (rows == (unsigned long long)heads * (unsigned long long)head_dim) return 0;
    const unsigned long long hd = (unsigned long long)head_dim;
    if (rows % hd == 0)
        return config_disagrees(file, field, heads, "%s has %llu rows: %llu heads of size %d", tensor, rows,
                                rows / hd, head_dim);
    return config_disagrees(file, field, heads, "%s has %llu rows, not a whole number of heads of size %d", tensor,
                            rows, head_dim);
}
