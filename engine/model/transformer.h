/* The one Transformer: teacher inference, statistics, captures, hybrid
 * students (any mix of attention and GDN layers), generation, Stage 2's
 * teacher side and training all run these functions, on any backend.
 *
 *   transformer  config + per-layer mixer kind + parameter views (and, when
 *                trainable, the flat master / gradient blocks it owns)
 *   tf_run       the activations of B sequences x T rows in ONE allocation:
 *                per layer what the backward needs (training), or one layer's
 *                worth plus the KV cache / GDN state (inference)
 *
 * Forward: tokens [B, T] at positions pos0 .. pos0+T-1 (pos0 > 0 continues
 * the cache / recurrent state of a decode run). Backward: from gradients of
 * the logits (row chunks, tf_lm_head_backward) and / or of the residual after
 * chosen layers, through every block down to the embedding, accumulating into
 * the trainable groups. One mixer interface (block_mixers.h): attention and
 * GDN each with forward (stateless or with state) and backward.
 *
 * Memory ownership: a transformer made with tf_view borrows the teacher's
 * block for every tensor it shares with it and each GDN layer's block from
 * its caller (an evaluation student copies nothing); tf_trainable owns one
 * parameter block (ACT), one F32 master (the same buffer when ACT is F32),
 * one F32 gradient block, all of one layout (layout.h). */
#ifndef GRAFT_MODEL_TRANSFORMER_H
#define GRAFT_MODEL_TRANSFORMER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "gdn/gdn.h"
#include "gdn/gdn_layer.h"
#include "model/layout.h"
#include "model/model.h"

typedef struct {
    model_config cfg;
    gdn_config gcfg;       /* every GDN layer's config */
    mixer_kind *kind;      /* [L] */
    gf_backend *be;
    model_views w;         /* parameter views (ACT) */
    /* owned blocks (tf_trainable) */
    param_layout layout;
    gf_buf params;         /* ACT [layout.total]; none when borrowed */
    gf_buf master;         /* F32; the same buffer as params when ACT is F32 */
    gf_buf grads;          /* F32 [layout.total] */
    model_views g;         /* gradient views */
    bool train[PGROUP_COUNT]; /* which groups the backward computes gradients for */
    unsigned char *fresh;  /* [L + 1] TF_FRESH_* bits (engine/model/grads.c): matrices tf_zero_grads left
                              for their first gradient to overwrite; [L] the LM head */
} transformer;

/* Borrowed views over teacher m: kinds [L] (NULL: every layer attention);
 * GDN layers' parameters are gdn_blocks[l] (ACT, gdn_param_count(g) elements). */
int tf_view(transformer *tf, const model *m, const gdn_config *g, const mixer_kind *kinds, const gf_buf *gdn_blocks);
/* The same tensors copied into one owned block, with master and gradient
 * blocks; every group trainable until the caller says otherwise. */
int tf_trainable(transformer *tf, const model *m, const gdn_config *g, const mixer_kind *kinds,
                 const gf_buf *gdn_blocks);
void tf_free(transformer *tf);
int tf_n_gdn(const transformer *tf);
bool tf_is_trainable(const transformer *tf);
/* KV-cache bytes per token (attention layers: 2 * KV * hd elements of ACT). */
size_t tf_kv_bytes_per_token(const transformer *tf);
/* Bytes a decode run keeps per sequence whatever its length: each GDN layer's
 * recurrent state (F32 H x dv x dk) and conv history (ACT, K-1 rows of q|k|v). */
size_t tf_state_bytes(const transformer *tf);

typedef struct {
    int B, T;          /* sequences and rows per call */
    int S;             /* positions per sequence the cache holds (>= T; 0: T) */
    bool train;        /* keep what the backward needs */
    bool stats;        /* per-head attention statistics (METHOD.md section 4) */
    bool decode;       /* carry GDN state between calls (pos0 > 0) */
    bool recompute;    /* training: keep only each layer's input residual; the backward runs each
                          layer's forward again before its backward (one set of layer activations
                          instead of L; the same gradients, bit for bit, for one more forward) */
    int logit_rows;    /* rows of the logits buffer (0: tf_logit_rows) */
    const atomic_int *cancel; /* non-zero: tf_forward / tf_backward stop between layers with
                                 "cancelled" (NULL: never) */
} tf_run_opts;

/* Hooks of a forward pass (capture for Stage 1 / Stage 2 and the alignment loss). */
typedef struct {
    /* after layer l's attention (before the residual add): xn [N, D] its
     * input_layernorm output, heads [N, H*hd] per-head outputs before o_proj,
     * out [N, D] after o_proj. Attention layers only. */
    int (*on_attention)(void *ud, int layer, gf_buf xn, gf_buf heads, gf_buf out, int N);
    void *ud;
    const gf_buf *after_layer; /* [L] or NULL: copy the residual after layer l (N x D) where not none */
    /* after GDN layer l's forward: the gates that forward computed, g [N, H]
     * (log decay, <= 0) and beta [N, H] (write strength), both F32 on the
     * run's backend (graft halflife reads them). GDN layers only. */
    int (*on_gdn)(void *ud, int layer, gf_buf g, gf_buf beta, int N);
} tf_hooks;

typedef struct tf_run tf_run;

/* Logits are made in row chunks of at most TF_LOGIT_CHUNK values ([rows, V]
 * ACT; TF_LOGIT_CHUNK_DEVICE on a device) so that a large vocabulary stays
 * bounded in memory. Fewer, larger chunks are cheaper in training: each
 * chunk's lm_head weight gradient reads and writes the whole [V, D] F32
 * gradient (on the H200, qwen2.5-1.5b at 4 x 2048 in 38 chunks of 220 rows,
 * the 32M-value chunks before: 27 ms of a 211 ms step for ~6 ms of
 * arithmetic). That traffic is what a GPU's step waits on, so a device takes
 * chunks five times larger (on an H100, the same step in five 256M-value
 * chunks against one of 1280M: 180.2 against 177.5 ms; 2.5 GB of bf16 logits a
 * run); on the host the products' arithmetic dominates and 256M values (1 GB of
 * f32) stay the bound. */
#define TF_LOGIT_CHUNK ((size_t)256 << 20)
#define TF_LOGIT_CHUNK_DEVICE ((size_t)1280 << 20)
/* Rows of a logits chunk for N rows: min(N, the chunk's values / V), at least
 * 1; device: the run's backend is a device (TF_LOGIT_CHUNK_DEVICE). */
int tf_logit_rows(size_t N, int vocab_size, bool device);

int tf_run_open(tf_run **out, transformer *tf, const tf_run_opts *o);
/* The bytes tf_run_open allocates on a backend of compute type act for a
 * model of config c, GDN config g and kinds (NULL: every layer attention);
 * device: the backend is a device, not the host (!be_is_host), so its
 * training runs keep the GDN WY products (be_gdn_keeps_wy) and its logits come
 * in the device's chunks (tf_logit_rows). */
size_t tf_run_measure(const model_config *c, const gdn_config *g, const mixer_kind *kinds, const tf_run_opts *o,
                      gf_dtype act, bool device);
void tf_run_close(tf_run *r);
/* What the run's one allocation holds, in bytes as it was carved: all of it,
 * the KV cache of its attention layers ([B, S] rows each; 0 in training runs)
 * and the GDN layers' recurrent state and conv history (decode runs). Any
 * pointer may be NULL. */
void tf_run_bytes(const tf_run *r, size_t *total, size_t *kv_cache, size_t *gdn_state);

/* tokens [B*T] host ids (B <= opts.B, T <= opts.T), positions pos0 ..;
 * -1 with a message for bad tokens or positions, or a backend error. */
int tf_forward(tf_run *r, const int *tokens, int B, int T, int pos0, const tf_hooks *hooks);
/* logits [n, V] of rows row0 .. row0+n-1 (row = b*T + t) of the last forward. */
void tf_logits(tf_run *r, int row0, int n, gf_buf out);
/* The run's logits buffer ([logit_rows, V] ACT) and its row count. */
gf_buf tf_run_logits(const tf_run *r, int *rows);
/* The residual after layer l of the last forward ([N, D]; training runs only). */
gf_buf tf_run_layer_output(const tf_run *r, int l);

/* Training: dlogits [n, V] of rows row0.. of the last forward -> the gradient
 * of the hidden states (accumulated) and of the LM head. */
void tf_lm_head_backward(tf_run *r, int row0, int n, gf_buf dlogits);
/* Backward of the last forward: from the hidden-state gradient (when any
 * tf_lm_head_backward ran) plus d_after[l] ([N, D], optional entries) added
 * to the residual after layer l. Accumulates into tf->grads for the groups
 * in tf->train. */
int tf_backward(tf_run *r, const gf_buf *d_after);

/* Statistics accumulated by the run since it opened (stats runs), added to
 * attn_stats-style sums by the caller: out [L, H, GF_STAT_COUNT], rows per head. */
int tf_run_stats(tf_run *r, double *out, long *rows);

/* Starts a step's gradients: afterwards the block reads as zeros to every
 * backward op (the first micro-batch's writes replace, later ones add). The
 * weight matrices the next backward writes are not zeroed but overwritten by
 * it (engine/model/grads.c); read the block only after that backward. */
void tf_zero_grads(transformer *tf);

#endif
