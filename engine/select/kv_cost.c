#include "select/kv_cost.h"

#include <stdio.h>
#include <string.h>

kv_cost kv_cost_compute(int n_layers, int n_kept, int n_heads, int kv_heads, int head_dim, int dtype_bytes,
                        long tokens) {
    kv_cost c = {0};
    c.tokens = tokens;
    c.kv_per_layer = 2.0 * kv_heads * head_dim * (double)dtype_bytes * (double)tokens;
    c.gdn_state_per_layer = (double)n_heads * head_dim * head_dim * 4.0; /* dk = dv = head_dim, float32 */
    c.teacher_bytes = c.kv_per_layer * n_layers;
    c.student_bytes = c.kv_per_layer * n_kept + c.gdn_state_per_layer * (n_layers - n_kept);
    return c;
}

int kv_dtype_bytes(const char *weights_dtype) {
    if (weights_dtype && (!strcmp(weights_dtype, "bf16") || !strcmp(weights_dtype, "f16"))) return 2;
    return 4;
}

void kv_format_bytes(char *buf, int n, double bytes) {
    static const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
    if (u == 0) snprintf(buf, (size_t)n, "%.0f B", bytes);
    else snprintf(buf, (size_t)n, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}
