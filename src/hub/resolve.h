/* MODEL arguments for every graft command: a local path, or a Hub repo
 * reference ORG/NAME[@REV][:PATH] resolved through the huggingface_hub cache
 * and downloaded when missing (unless HF_HUB_OFFLINE is set). */
#ifndef GRAFT_HUB_RESOLVE_H
#define GRAFT_HUB_RESOLVE_H

#include "hub/hub.h"

/* The default teacher of the workbench. */
#define HUB_DEFAULT_TEACHER "karpathy/tinyllamas:stories260K/stories260K.bin"

/* *local_path (caller frees) gets: arg itself when it exists on disk; else the
 * snapshot folder for a Hugging Face model, or the file for ORG/NAME:PATH (its
 * tokenizer linked beside it). cb may be NULL. 0, or -1 with a one-line error. */
int hub_resolve_model(const char *arg, char **local_path, const hub_callbacks *cb);

/* The cache-only half: 0 with *local_path when the cached snapshot is complete
 * (config.json and every safetensors shard of the index, or PATH and a
 * tokenizer beside it), -1 (no message) otherwise. */
int hub_resolve_cached(const char *arg, char **local_path);

#endif
