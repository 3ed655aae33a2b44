/* The teacher tensors Stage 1 and Stage 2 read, captured in one teacher pass
 * over fixed-length sequences (forward_hooks.after_attention), plus the
 * per-head attention statistics of METHOD.md section 4 on the same tokens. */
#ifndef GRAFT_CALIBRATE_CAPTURE_H
#define GRAFT_CALIBRATE_CAPTURE_H

#include "core/progress.h"
#include "model/model.h"
#include "stats/attn_stats.h"

typedef struct {
    int L, D, H, hd;
    int n_seqs, T;     /* N = n_seqs * T rows per layer, sequence-major */
    float *xn;         /* [L, N, D]    input_layernorm output (GDN input x) */
    float *heads;      /* [L, N, H*hd] per-head softmax outputs before o_proj (tc) */
    float *attn_out;   /* [L, N, D]    attention block output after o_proj (Stage 2 target) */
    attn_stats stats;  /* accumulated over the same tokens */
} teacher_capture;

/* seqs: n_seqs * T ids. with_heads = 0 skips `heads` (held-out sets need only
 * xn and attn_out). Fails on cancel or bad tokens. */
int teacher_capture_run(teacher_capture *c, const model *m, const int *seqs, int n_seqs, int T, int with_heads,
                        const progress_sink *progress);
void teacher_capture_free(teacher_capture *c);

static inline size_t capture_rows(const teacher_capture *c) { return (size_t)c->n_seqs * c->T; }
static inline float *capture_xn(const teacher_capture *c, int l) {
    return c->xn + (size_t)l * capture_rows(c) * c->D;
}
static inline float *capture_heads(const teacher_capture *c, int l) {
    return c->heads + (size_t)l * capture_rows(c) * c->H * c->hd;
}
static inline float *capture_attn_out(const teacher_capture *c, int l) {
    return c->attn_out + (size_t)l * capture_rows(c) * c->D;
}

#endif
