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
    float *scratch;         /* loaders: one tensor of host memory at a time */
    size_t scratch_n;
} model;

typedef struct {
    const char *tokenizer_path; /* --tokenizer; NULL: look beside the weights */
    gf_backend *be;             /* NULL: be_default() */
} model_load_opts;

/* Loads a teacher from a Hugging Face folder (config.json + safetensors), a
 * llama2.c .bin checkpoint, or a .gguf file (or a folder holding one .gguf
 * file and no config.json). Each tensor is converted on the host and
 * uploaded into the model's block, one tensor of host scratch at a time. On
 * error returns -1 with a one-line message in gf_last_error() ("out of
 * memory: ..." when the block does not fit). */
int model_load(model *m, const char *path, const model_load_opts *opts);
void model_free(model *m);

/* For loaders, once m->cfg is final: the zeroed block on m->be (-1: out of memory). */
int model_alloc_params(model *m);
/* Host scratch of n floats (reused; freed when loading ends). */
float *model_scratch(model *m, size_t n);
/* Uploads tensor (layer, kind) from host float32 src (its full size). */
int model_put(model *m, int layer, tensor_kind k, const float *src);
/* Downloads tensor (layer, kind) into host float32 dst; -1 when absent. */
int model_get(const model *m, int layer, tensor_kind k, float *dst);
/* Elements of (layer, kind) in this model (0 when absent). */
size_t model_tensor_elems(const model *m, int layer, tensor_kind k);

#endif
