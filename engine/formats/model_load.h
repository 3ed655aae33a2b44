/* Loading a teacher from any of the formats graft reads. */
#ifndef GRAFT_FORMATS_MODEL_LOAD_H
#define GRAFT_FORMATS_MODEL_LOAD_H

#include "model/model.h"

/* Loads a teacher from a Hugging Face folder (config.json + safetensors), a
 * llama2.c .bin checkpoint, or a .gguf file (or a folder holding one .gguf
 * file and no config.json). Weights go from the file's mapping to the model's
 * block in chunks of at most MODEL_STAGE_BYTES converted on the host
 * (model_put_chunked): host memory never holds a whole tensor, so a teacher
 * larger than host RAM loads onto a device. On error returns -1 with a
 * one-line message in gf_last_error() ("out of memory: ..." when the block
 * does not fit). */
int model_load(model *m, const char *path, const model_load_opts *opts);
/* The same with hooks (NULL: none). */
int model_load_hooked(model *m, const char *path, const model_load_opts *opts, const model_load_hooks *hooks);

#endif
