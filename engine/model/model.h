/* A loaded teacher: config, its parameters in one backend block with named
 * views (engine/model/layout.h, every layer attention), tokenizer. */
#ifndef GRAFT_MODEL_MODEL_H
#define GRAFT_MODEL_MODEL_H

#include "backend/backend.h"
#include "model/config.h"
#include "model/layout.h"
#include "tokenizer/tokenizer.h"

typedef struct {
    model_config cfg;
    gf_backend *be;         /* where the parameters live (not owned) */
    param_layout layout;    /* every layer attention */
    gf_buf params;          /* ACT [layout.total] */
    model_views w;          /* views into params */
    tokenizer *tok;         /* may be NULL when no tokenizer was found */
    char *path;             /* what the user named */
    char *name;             /* short display name */
    char weights_dtype[16]; /* dtype on disk: "f32", "bf16", "f16", "q8_0", ... */
    void *stage;            /* loaders: the host staging buffer (model_put_chunked) */
    size_t stage_bytes;
    const struct model_load_hooks *loading; /* while model_load_hooked runs */
} model;

typedef struct {
    const char *tokenizer_path; /* --tokenizer; NULL: look beside the weights */
    gf_backend *be;             /* NULL: be_default() */
} model_load_opts;

/* What a caller may add to a load (model_load_hooked). */
typedef struct model_load_hooks {
    /* Called once the config is known and checked, before the parameters are
     * allocated (the memory check of a command); -1 stops the load with its
     * message. NULL: none. */
    int (*on_config)(void *ud, const model_config *cfg, gf_backend *be);
    void *ud;
    size_t stage_bytes;         /* host staging per chunk (0: MODEL_STAGE_BYTES; tests use small ones) */
} model_load_hooks;

void model_free(model *m);

/* The loaders' host staging: values are converted and uploaded per chunk of this size. */
#define MODEL_STAGE_BYTES ((size_t)32 << 20)

/* For loaders, once m->cfg is final: runs the load's on_config hook, then
 * the zeroed block on m->be (-1: the hook's message, or out of memory). */
int model_alloc_params(model *m);
/* Fills dst[n] (of the host type given to model_put_chunked) with elements
 * [off, off + n) of one tensor. */
typedef int (*model_chunk_fn)(void *ud, size_t off, void *dst, size_t n);
/* Tensor (layer, kind) of `total` elements, written by fn chunk after chunk
 * into the host staging buffer as host_t (GF_F32, or GF_BF16 for bf16 weights
 * going to a bf16 block: no conversion at all) and uploaded at its offset.
 * Chunks hold whole granules (a quantization block, a row, a head's rows:
 * what fn cannot split) and at most MODEL_STAGE_BYTES unless one granule is larger. */
int model_put_chunked(model *m, int layer, tensor_kind k, size_t total, size_t granule, gf_dtype host_t,
                      model_chunk_fn fn, void *ud);
/* Uploads tensor (layer, kind) from host float32 src (its full size). */
int model_put(model *m, int layer, tensor_kind k, const float *src);
/* Downloads tensor (layer, kind) into host float32 dst; -1 when absent. */
int model_get(const model *m, int layer, tensor_kind k, float *dst);
/* Elements of (layer, kind) in this model (0 when absent). */
size_t model_tensor_elems(const model *m, int layer, tensor_kind k);

#endif
