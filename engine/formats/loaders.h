/* Format-specific loaders behind model_load(). Each fills m->cfg, m->w and
 * m->tok (when a tokenizer is found) or fails with a one-line error. */
#ifndef GRAFT_FORMATS_LOADERS_H
#define GRAFT_FORMATS_LOADERS_H

#include "model/model.h"

int load_llama2c(model *m, const char *path, const model_load_opts *opts);
int load_hf_folder(model *m, const char *dir, const model_load_opts *opts);
int load_gguf(model *m, const char *path, const model_load_opts *opts);

/* m->tok from path (any tokenizer format, told by content); -1 with an error
 * when it does not load or has more tokens than m->cfg.vocab_size. */
int load_model_tokenizer(model *m, const char *path);

#endif
