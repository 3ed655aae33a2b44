/* What a layer plan saves at inference: the KV cache of the attention layers
 * at a given context length, against the fixed-size recurrent state of the
 * GDN layers (float32 H x dk x dv per layer, independent of the context).
 *   KV bytes per layer = 2 (K and V) * kv_heads * head_dim * dtype_bytes * tokens */
#ifndef GRAFT_SELECT_KV_COST_H
#define GRAFT_SELECT_KV_COST_H

typedef struct {
    long tokens;
    double kv_per_layer;        /* bytes of one attention layer's cache at `tokens` */
    double gdn_state_per_layer; /* bytes of one GDN layer's state */
    double teacher_bytes;       /* every layer attention */
    double student_bytes;       /* kept layers' cache + the GDN layers' states */
} kv_cost;

#define KV_COST_TOKENS 32768L

/* dtype_bytes: bytes per cached value (4 for float32 teachers, 2 for bf16/f16). */
kv_cost kv_cost_compute(int n_layers, int n_kept, int n_heads, int kv_heads, int head_dim, int dtype_bytes,
                        long tokens);
/* Bytes per cached value for a teacher whose weights are stored as dtype ("f32", "bf16", ...). */
int kv_dtype_bytes(const char *weights_dtype);
/* "5.0 MB", "768 KB", "12 B" (powers of 1024). */
void kv_format_bytes(char *buf, int n, double bytes);

#endif
