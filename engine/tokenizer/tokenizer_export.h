/* tokenizer.json and tokenizer_config.json (the Hugging Face `tokenizers`
 * library and transformers' AutoTokenizer) for tokenizers graft read from
 * formats that have none: llama2.c tokenizer.bin and GGUF metadata (gpt2
 * byte-level BPE, llama SentencePiece BPE). The file describes graft's own
 * pipeline, so it encodes id for id like graft; the known exceptions (ties
 * between equally scored SentencePiece merges, literal special-token text in
 * llama2.c input, U+2581 in llama2.c input) are in docs/student-format.md. */
#ifndef GRAFT_TOKENIZER_TOKENIZER_EXPORT_H
#define GRAFT_TOKENIZER_TOKENIZER_EXPORT_H

#include <cjson/cJSON.h>

#include "tokenizer/tokenizer.h"

/* A new tokenizer.json object, or NULL with a one-line reason (gf_last_error)
 * when this tokenizer has no faithful tokenizer.json. */
cJSON *tokenizer_export_json(const tokenizer *t);

/* tokenizer_config.json: tokenizer class, special tokens (BOS only when graft
 * prepends one), model_max_length (left out when max_len <= 0). */
cJSON *tokenizer_export_config(const tokenizer *t, int max_len);

#endif
