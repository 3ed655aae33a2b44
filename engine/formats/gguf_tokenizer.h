/* Tokenizers from GGUF metadata (tokenizer.ggml.*), built on the same
 * pipeline as tokenizer.json (tokenizer/hf_tokenizer.h):
 * - model "gpt2": byte-level BPE from tokens + merges, the pre-tokenizer named
 *   by tokenizer.ggml.pre (llama-bpe/llama3, qwen2, smollm, gpt2/default);
 * - model "llama": SentencePiece-style BPE from tokens + scores (a pair merges
 *   when the joined piece is a token, highest score first), byte fallback to
 *   <0xXX> tokens, "▁" for spaces and a prefix space (add_space_prefix).
 * Control and user-defined tokens are cut out of the text like added tokens.
 * BOS is the tokenizer's BOS only when tokenizer.ggml.add_bos_token says so
 * (default: true for "llama", false for "gpt2"), since graft prepends the
 * tokenizer's BOS to every sequence. */
#ifndef GRAFT_FORMATS_GGUF_TOKENIZER_H
#define GRAFT_FORMATS_GGUF_TOKENIZER_H

#include "formats/gguf_reader.h"
#include "tokenizer/tokenizer.h"

int gguf_tokenizer_load(tokenizer **out, const gguf_file *g);

/* Loads only the tokenizer of a .gguf file (for --tokenizer). */
int tokenizer_load_gguf(tokenizer **out, const char *path);

#endif
