/* Loading a tokenizer from any of the files graft reads (the GGUF reader
 * is a format of its own, so this lives beside it, not in tokenizer/). */
#ifndef GRAFT_FORMATS_TOKENIZER_LOAD_H
#define GRAFT_FORMATS_TOKENIZER_LOAD_H

#include "tokenizer/tokenizer.h"

/* Any of tokenizer.h's formats (llama2.c, Hugging Face) or a GGUF file's, told apart by the file's content (not its name): a GGUF
 * file's metadata, a tokenizer.json (a JSON object), else a llama2.c
 * tokenizer.bin (vocab_size used only there). A directory means its
 * tokenizer.json. */
int tokenizer_load_path(tokenizer **out, const char *path, int vocab_size);

#endif
