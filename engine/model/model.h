/* A loaded teacher: config, float32 weights, tokenizer. */
#ifndef GRAFT_MODEL_MODEL_H
#define GRAFT_MODEL_MODEL_H

#include "model/config.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

typedef struct {
    model_config cfg;
    model_weights w;
    tokenizer *tok;      /* may be NULL when no tokenizer was found */
    char *path;          /* what the user named */
    char *name;          /* short display name */
    char weights_dtype[16]; /* dtype on disk: "f32", "bf16", "f16", "q8_0", ... */
} model;

typedef struct {
    const char *tokenizer_path; /* --tokenizer; NULL: look beside the weights */
} model_load_opts;

/* Loads a teacher from a Hugging Face folder (config.json + safetensors), a
 * llama2.c .bin checkpoint, or a .gguf file (or a folder holding one .gguf
 * file and no config.json). On error returns -1 with
 * a one-line message in gf_last_error(). */
int model_load(model *m, const char *path, const model_load_opts *opts);
void model_free(model *m);

#endif
